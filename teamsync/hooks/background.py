"""Detached work for hooks: a hook must answer at once, so slow jobs run apart.

:func:`spawn` starts ``python -m teamsync …`` (or another module) in its own
session with the hook's ``GIT_*`` variables removed, stdin closed and output
appended to a log under the state directory. :class:`PidLock` is a lock file
holding the owner's pid, so at most one background job of a kind runs per
memory directory; a lock whose process is gone is stale and taken over.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from teamsync._process import pid_alive
from teamsync.hooks.gitenv import no_git_env


def job_name(kind: str, subject: str) -> str:
    """A short file-name-safe id for job ``kind`` about ``subject`` (a path)."""
    return f"{kind}-{hashlib.sha256(subject.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def spawn(
    args: list[str],
    *,
    cwd: Path,
    log: Path,
    environ: Mapping[str, str],
    module: str = "teamsync",
) -> int:
    """Start ``python -m module args`` detached; return its pid."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=cwd,
            env=no_git_env(environ),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
            start_new_session=True,
            close_fds=True,
        )
    return proc.pid


class PidLock:
    """``<path>`` holds the pid of the process doing the job."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def owner(self) -> int | None:
        try:
            return int(self.path.read_text(encoding="ascii").strip() or "0")
        except (OSError, ValueError):
            return None

    def acquire(self, pid: int) -> bool:
        """Take the lock for ``pid``; False when a live process already holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                owner = self.owner()
                if owner is not None and pid_alive(owner):
                    return False
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
                continue
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(str(pid))
            return True
        return False

    def hand_over(self, pid: int) -> None:
        """Record ``pid`` as the owner (the spawner passes the lock to its child)."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(str(pid), encoding="ascii")
        os.replace(tmp, self.path)

    def release(self, pid: int) -> None:
        """Remove the lock if ``pid`` still owns it."""
        if self.owner() == pid:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
