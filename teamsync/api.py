"""The one-call library entry points: ``teamsync.sync``, ``check``, ``scan_paths``, ``recall``.

Each builds :class:`~teamsync.config.Settings` the way the CLI does (the
arguments first, then ``environ``, then the defaults) and calls the same
library code the commands call, so a script gets exactly what the CLI does,
minus the printing::

    import teamsync

    report = teamsync.sync("~/.claude/projects/x/memory")   # SyncReport
    problems = teamsync.check(memdir).problems              # LintReport
    findings = teamsync.scan_paths(["docs/"])               # [Finding]
    hits = teamsync.recall("how do we deploy?", memdir)     # RecallResult (offline by default)

Errors are the :mod:`teamsync.errors` tree, as everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from teamsync.config import Settings

if TYPE_CHECKING:
    from teamsync.memdir.lint import FixResult, LintReport
    from teamsync.recall.recall import RecallResult
    from teamsync.security.secrets import Finding
    from teamsync.sync.engine import Mode, SyncReport

__all__ = ["check", "recall", "scan_paths", "sync"]

PathLike = str | os.PathLike[str]


def _settings(
    dir: PathLike | None, environ: Mapping[str, str] | None, cwd: PathLike | None
) -> Settings:
    return Settings.build(
        dir=dir, environ=environ, cwd=Path(cwd).expanduser() if cwd is not None else None
    )


def sync(
    dir: PathLike | None = None,
    *,
    mode: Mode = "sync",
    dry_run: bool = False,
    yes: bool = False,
    environ: Mapping[str, str] | None = None,
    cwd: PathLike | None = None,
) -> SyncReport:
    """One sync of the memory directory ``dir`` (``None``: Claude Code's layout for ``cwd``).

    ``mode`` is ``sync``, ``pull``, ``push`` or ``status``; ``yes`` goes past the
    mass-change guard as ``--yes`` does. The directory must have been set up
    with ``teamsync init``.
    """
    from teamsync.commands.sync import sync_once

    return sync_once(_settings(dir, environ, cwd), mode=mode, dry_run=dry_run, yes=yes)


def check(
    dir: PathLike | None = None,
    *,
    fix: bool = False,
    environ: Mapping[str, str] | None = None,
    cwd: PathLike | None = None,
) -> LintReport | FixResult:
    """Lint the memory directory (``.problems``); with ``fix``, repair its indexes first."""
    from teamsync.memdir.lint import check_memdir, fix_memdir
    from teamsync.memdir.paths import working_memory_dir

    memdir = working_memory_dir(_settings(dir, environ, cwd))
    return fix_memdir(memdir) if fix else check_memdir(memdir)


def scan_paths(
    paths: Iterable[PathLike],
    *,
    generic: bool = True,
    inline_allow: bool = True,
    baseline: Iterable[str] = (),
    cwd: PathLike | None = None,
) -> list[Finding]:
    """Secrets in files and directories, as ``teamsync scan PATH…`` finds them.

    ``inline_allow`` honours ``teamsync: allow`` comments in ordinary code (never
    in a memory path); ``baseline`` holds fingerprints to leave out.
    """
    from teamsync.security.secrets import Scanner
    from teamsync.security.sources import Chunk, list_files, read_file

    root = Path(cwd).expanduser() if cwd is not None else Path.cwd()
    scanner = Scanner(generic=generic, inline_allow=inline_allow, baseline=frozenset(baseline))
    for full, shown in list_files([os.fspath(p) for p in paths], root):
        for item in read_file(full, shown):
            if isinstance(item, Chunk):
                scanner.add_chunk(item)
    return scanner.finish()


def recall(
    query: str,
    dir: PathLike | None = None,
    *,
    limit: int = 5,
    offline: bool = True,
    environ: Mapping[str, str] | None = None,
    cwd: PathLike | None = None,
) -> RecallResult:
    """The memories relevant to ``query`` (at most ``limit``; fewer, or none, when fewer clear
    the relevance floor). Offline by default; ``offline=False`` asks Claude when
    ``ANTHROPIC_API_KEY`` is set and falls back to the offline ranking."""
    from teamsync.recall.recall import recall as run

    return run(_settings(dir, environ, cwd), query, limit=limit, offline=offline)
