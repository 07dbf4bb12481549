"""Process helpers shared by the lock files (dream's lock, the hooks' background jobs)."""

from __future__ import annotations

import contextlib
import os

__all__ = ["pid_alive"]


def pid_alive(pid: int) -> bool:
    """True when a process with ``pid`` exists (zombies of ours count as gone)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(ChildProcessError, OSError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    try:  # Linux: an unreaped zombie (a container's pid 1 may never reap) is gone too
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rpartition(")")[2].split()[:1] != ["Z"]
    except OSError:
        return True
