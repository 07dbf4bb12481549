"""A PID lock file for ``teamsync dream`` with safe takeover of stale locks.

The lock file holds ``<pid>\\n<nonce>\\n`` and is created with ``O_CREAT |
O_EXCL``. A lock is respected while its process is alive and it is younger
than :data:`STALE_AFTER` (60 minutes, as Claude Code). A stale lock (dead PID,
unreadable, or too old) is taken over like this:

1. rename it aside to a name unique to this process (only one contender's
   rename can succeed; the others get ``FileNotFoundError`` and retry);
2. re-read what was moved: if it is not the stale lock that was judged
   (another process took over in between), put it back with ``os.link``
   (which never overwrites) and give up;
3. create the lock with ``O_EXCL``, then re-read it to confirm it holds our
   nonce before doing any work.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

from teamsync._process import pid_alive
from teamsync.errors import TeamsyncError

STALE_AFTER = 60 * 60.0


class LockBusy(TeamsyncError):
    """Another live process holds the lock."""


def _read(path: Path) -> tuple[str, float] | None:
    try:
        return path.read_text(encoding="utf-8"), path.stat().st_mtime
    except (OSError, UnicodeDecodeError):
        return None


def _holder(text: str) -> int:
    first = text.split("\n", 1)[0].strip()
    return int(first) if first.isdigit() else -1


def is_stale(text: str, mtime: float, now: float) -> bool:
    return not pid_alive(_holder(text)) or now - mtime > STALE_AFTER


def _take_over(path: Path, judged: str) -> bool:
    """Move a stale lock aside; False when someone else got there first."""
    aside = path.with_name(f"{path.name}.stale-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return False
    moved = _read(aside)
    if moved is None or moved[0] != judged:
        with contextlib.suppress(OSError):
            os.link(aside, path)  # put the live lock back; never overwrites a new one
        aside.unlink(missing_ok=True)
        return False
    aside.unlink(missing_ok=True)
    return True


def acquire(path: Path, *, now: float | None = None) -> str:
    """Take the lock at ``path``; returns the nonce written. Raises :class:`LockBusy`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    nonce = secrets.token_hex(8)
    content = f"{os.getpid()}\n{nonce}\n"
    for _ in range(3):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            found = _read(path)
            if found is None:
                continue  # vanished between open and read: retry
            text, mtime = found
            if not is_stale(text, mtime, time.time() if now is None else now):
                raise LockBusy(
                    f"another teamsync dream is running (PID {_holder(text)}, lock {path}); "
                    "wait for it to finish"
                ) from None
            _take_over(path, text)
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
        confirmed = _read(path)
        if confirmed is not None and confirmed[0] == content:
            return nonce
        raise LockBusy(f"lost the race for {path} to another process; try again")
    raise LockBusy(f"could not take the lock {path}; another process keeps taking it")


def release(path: Path, nonce: str) -> None:
    """Remove the lock if it is still ours."""
    found = _read(path)
    if found is not None and found[0].split("\n")[1:2] == [nonce]:
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def held(path: Path) -> Iterator[None]:
    """``with held(lock): ...`` — acquire, run, release."""
    nonce = acquire(path)
    try:
        yield
    finally:
        release(path, nonce)
