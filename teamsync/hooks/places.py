"""Where a Claude Code hook call is: the session's project, its memory directories, its paths.

Claude Code keeps a session's memory directory where the session *started*; the
payload's ``cwd`` follows every ``cd`` the model runs. So the guard resolves the
project once, from what the model cannot move:

1. ``--dir`` / ``TEAMSYNC_DIR`` (the person's explicit choice), else
2. ``CLAUDE_PROJECT_DIR`` (set by Claude Code for its hooks: the session's project), else
3. the hook's own start-up directory (Claude Code starts hooks in the project).

Every memory directory the call could reach is guarded, not only that one: the
one of the project above, the one beside the session's transcript
(``~/.claude/projects/<project>/<session>.jsonl`` → ``…/<project>/memory``), and
the one of the payload's ``cwd``. Guarding one too many costs a path comparison;
guarding one too few lets a write through.

Tool paths are resolved the way Claude Code resolves them: ``~`` and ``~/…`` from
``HOME``, a relative path against the payload's ``cwd``. Stdlib only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from teamsync.config import Settings

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class Places:
    """One hook call's places, resolved once."""

    project: Path
    """The session's project directory (allowlist and policy files are found from it)."""
    cwd: str
    """Where relative tool paths are resolved: the payload's ``cwd`` when absolute."""
    home: str
    memdir: Path
    """The primary memory directory (the project's)."""
    teams: tuple[Path, ...]
    """Every team directory this call could reach, the primary one first (no duplicates)."""
    settings: Settings


def _memdir_for(settings: Settings, cwd: Path) -> Path:
    from teamsync.memdir.paths import memory_dir

    return memory_dir(replace(settings, cwd=cwd))


def _transcript_memdir(transcript: Any) -> Path | None:
    if not isinstance(transcript, str) or not os.path.isabs(transcript):
        return None
    parent = os.path.dirname(transcript)
    if os.path.basename(os.path.dirname(parent)) != "projects":
        return None  # not Claude Code's ~/.claude/projects/<project>/<session>.jsonl
    return Path(parent) / "memory"


def session_project(settings: Settings) -> Path:
    """``CLAUDE_PROJECT_DIR`` when Claude Code set it, else the hook's start-up directory."""
    env = settings.environ.get("CLAUDE_PROJECT_DIR")
    if env and os.path.isabs(env):
        return Path(env)
    return settings.cwd


def candidates(settings: Settings, payload: dict[str, Any]) -> tuple[Path, str, list[Path]]:
    """The project, the call's ``cwd``, and every memory directory the call could reach
    (the primary one first; duplicates and all)."""
    project = session_project(settings)
    raw_cwd = payload.get("cwd")
    cwd = raw_cwd if isinstance(raw_cwd, str) and os.path.isabs(raw_cwd) else str(project)
    memdir = _memdir_for(settings, project)
    plain = settings if settings.dir is None else replace(settings, dir=None)
    found = [
        memdir,
        _memdir_for(plain, project),  # with --dir, Claude Code's own directory is guarded too
        _transcript_memdir(payload.get("transcript_path")),
        _memdir_for(plain, Path(cwd)),
    ]
    return project, cwd, [c for c in found if c is not None]


def resolve(settings: Settings, payload: dict[str, Any]) -> Places:
    """The :class:`Places` of the hook call ``payload``."""
    project, cwd, found = candidates(settings, payload)
    memdir = found[0]
    teams: list[Path] = []
    seen: set[str] = set()
    for candidate in found:
        team = candidate / "team"
        key = os.path.realpath(team)
        if key not in seen:
            seen.add(key)
            teams.append(team)
    return Places(project, cwd, str(settings.home), memdir, tuple(teams), settings)


def expand(path: str, cwd: str, home: str) -> str:
    """``path`` as Claude Code's file tools resolve it: ``~`` from ``HOME``, relative to ``cwd``."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return path if os.path.isabs(path) else os.path.join(cwd, path)


__all__ = ["Places", "candidates", "expand", "resolve", "session_project"]
