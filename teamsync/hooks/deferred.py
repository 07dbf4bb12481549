"""The debounced push started by the PostToolUse hook (run as ``python -m teamsync.hooks.deferred``).

Each PostToolUse on a team-memory file moves the *due time* (a small file under
the state directory) to "now + debounce" and makes sure one waiter runs per
memory directory. The waiter sleeps until the due time stops moving, runs
``teamsync --dir <memdir> push`` once, and goes round again if new edits arrived
while it pushed. Usage: ``deferred MEMDIR DUE_FILE LOCK_FILE LOCK_FD``: the hook
locked LOCK_FILE and handed the locked descriptor LOCK_FD down to this process.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from teamsync._files import write_atomic
from teamsync._lock import FileLock

PUSH_TIMEOUT = 300.0


def read_due(path: Path) -> float | None:
    try:
        return float(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def write_due(path: Path, due: float) -> None:
    write_atomic(path, repr(due), durable=False)


def _push(memdir: str) -> int:
    cmd = [sys.executable, "-m", "teamsync", "--dir", memdir, "push"]
    print(f"[{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}] teamsync push", flush=True)
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, timeout=PUSH_TIMEOUT).returncode
    except subprocess.TimeoutExpired:
        print(f"teamsync push timed out after {PUSH_TIMEOUT:.0f} s", flush=True)
        return 1


def run(memdir: str, due_file: Path, lock: FileLock) -> int:
    """Wait for the edits to settle, push, repeat while edits keep coming."""
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
        lock.unlock_keep_open()
        later = read_due(due_file)  # a hook may have seen our lock just before release
        if later is not None and later > started and lock.try_acquire():
            continue
        lock.release()
        return 0


def main(argv: list[str]) -> int:
    if len(argv) != 4 or not argv[3].isdigit():
        print(
            "usage: python -m teamsync.hooks.deferred MEMDIR DUE_FILE LOCK_FILE LOCK_FD",
            file=sys.stderr,
        )
        return 2
    memdir, due_file, lock_file, lock_fd = argv
    return run(memdir, Path(due_file), FileLock.adopt(Path(lock_file), int(lock_fd)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
