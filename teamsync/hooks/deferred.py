"""The debounced push started by the PostToolUse hook (run as ``python -m teamsync.hooks.deferred``).

Each PostToolUse on a team-memory file moves the *due time* (a small file under
the state directory) to "now + debounce" and makes sure one waiter runs per
memory directory. The waiter sleeps until the due time stops moving, runs
``teamsync --dir <memdir> push`` once, and goes round again if new edits arrived
while it pushed. Usage: ``deferred MEMDIR DUE_FILE LOCK_FILE``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from teamsync.hooks.background import PidLock

PUSH_TIMEOUT = 300.0


def read_due(path: Path) -> float | None:
    try:
        return float(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def write_due(path: Path, due: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(repr(due), encoding="ascii")
    os.replace(tmp, path)


def _push(memdir: str) -> int:
    cmd = [sys.executable, "-m", "teamsync", "--dir", memdir, "push"]
    print(f"[{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}] teamsync push", flush=True)
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, timeout=PUSH_TIMEOUT).returncode
    except subprocess.TimeoutExpired:
        print(f"teamsync push timed out after {PUSH_TIMEOUT:.0f} s", flush=True)
        return 1


def run(memdir: str, due_file: Path, lock: PidLock) -> int:
    """Wait for the edits to settle, push, repeat while edits keep coming."""
    me = os.getpid()
    while True:
        due = read_due(due_file)
        now = time.time()
        if due is not None and now < due:
            time.sleep(min(due - now, 5.0))
            continue
        started = time.time()
        _push(memdir)
        later = read_due(due_file)
        if later is not None and later > started:
            continue
        lock.release(me)
        later = read_due(due_file)  # a hook may have seen our lock just before release
        if later is not None and later > started and lock.acquire(me):
            continue
        return 0


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m teamsync.hooks.deferred MEMDIR DUE_FILE LOCK_FILE", file=sys.stderr)
        return 2
    memdir, due_file, lock_file = argv
    return run(memdir, Path(due_file), PidLock(Path(lock_file)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
