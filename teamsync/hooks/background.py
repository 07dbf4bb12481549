"""Detached work for hooks: a hook must answer at once, so slow jobs run apart.

:func:`spawn` starts ``python -m teamsync …`` (or another module) in its own
session with the hook's ``GIT_*`` variables removed, stdin closed and output
appended to a log under the state directory. At most one background job of a
kind runs per memory directory: the hook takes a :class:`teamsync._lock.FileLock`
and hands it to the job, which inherits the locked descriptor (``pass_fds``),
so the lock lasts exactly as long as the job.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from teamsync.hooks.gitenv import no_git_env


def job_name(kind: str, subject: str) -> str:
    """A short file-name-safe id for job ``kind`` about ``subject`` (a path)."""
    import hashlib  # not at import: the PostToolUse hook loads this module on every call

    return f"{kind}-{hashlib.sha256(subject.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def spawn(
    args: list[str],
    *,
    cwd: Path,
    log: Path,
    environ: Mapping[str, str],
    module: str = "teamsync",
    pass_fds: tuple[int, ...] = (),
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
            pass_fds=pass_fds,
        )
    return proc.pid
