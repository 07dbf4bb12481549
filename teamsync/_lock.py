"""The one lock teamsync uses: an exclusive ``flock`` on a file under the state directory.

The kernel holds the lock for the open file description, so

- there is no stale lock to take over: a holder that dies, however it dies,
  releases it, and no second process can slip in between a create and a pid
  write (the race a pid file has);
- a lock can be handed to a child process by letting it inherit the
  descriptor (:meth:`FileLock.fileno`, ``pass_fds``), which is how a hook hands
  its background job the lock it took;
- waiting is explicit: :meth:`FileLock.acquire` tries once, then tells the
  user what it waits for (as pre-commit's ``file_lock`` does) and waits up to a
  bounded time before raising :class:`~teamsync.errors.LockBusy`.

The file holds the holder's pid, for messages only; it is never trusted for
ownership. POSIX only, as the rest of the state directory handling.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from teamsync.errors import LockBusy

__all__ = ["FileLock", "held"]

POLL_S = 0.05


class FileLock:
    """An exclusive lock on ``path``; ``what`` names the holder's work in messages."""

    def __init__(self, path: Path, what: str = "another teamsync process") -> None:
        self.path = path
        self.what = what
        self._fd: int | None = None

    @classmethod
    def adopt(cls, path: Path, fd: int, what: str = "another teamsync process") -> FileLock:
        """Take over a descriptor inherited from the parent that locked it."""
        lock = cls(path, what)
        lock._fd = fd
        return lock

    @property
    def locked(self) -> bool:
        return self._fd is not None

    def fileno(self) -> int:
        if self._fd is None:
            raise RuntimeError(f"{self.path} is not locked")
        return self._fd

    def owner(self) -> int | None:
        """The pid recorded by the last holder, if any (informational)."""
        try:
            text = self.path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return int(text) if text.isdigit() else None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; never waits."""
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError:
            self._close()
            raise
        self.record(os.getpid())
        return True

    def record(self, pid: int) -> None:
        """Write ``pid`` into the lock file (the holder changed hands)."""
        fd = self.fileno()
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(pid).encode("ascii"), 0)

    def acquire(
        self,
        *,
        timeout: float = 0.0,
        on_wait: Callable[[str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Take the lock, waiting at most ``timeout`` seconds; raise :class:`LockBusy`.

        ``on_wait`` is told once, with a one-line message, when the lock is busy
        and we are about to wait for it.
        """
        if self.try_acquire():
            return
        if timeout > 0:
            if on_wait is not None:
                on_wait(f"waiting for {self._holder()} to finish (lock {self.path})")
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                sleep(POLL_S)
                if self.try_acquire():
                    return
        holder = self._holder()
        self._close()
        raise LockBusy.held_by(holder, self.path)

    def release(self) -> None:
        """Unlock (and close our descriptor); a no-op when not held."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._close()

    def hand_over(self, pid: int) -> None:
        """Give the lock to child ``pid``, which inherited our descriptor (``pass_fds``).

        Records the child as the holder and closes our copy *without* unlocking:
        the lock lives on in the child's descriptor until the child exits.
        """
        self.record(pid)
        self._close()

    def unlock_keep_open(self) -> None:
        """Unlock but keep the descriptor, to try again later with :meth:`try_acquire`."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _holder(self) -> str:
        pid = self.owner()
        return f"{self.what} (PID {pid})" if pid else self.what

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def held(
    path: Path,
    what: str,
    *,
    timeout: float = 0.0,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[FileLock]:
    """``with held(path, "a teamsync dream"): ...`` — acquire (bounded wait), run, release."""
    lock = FileLock(path, what)
    lock.acquire(timeout=timeout, on_wait=on_wait)
    try:
        yield lock
    finally:
        lock.release()
