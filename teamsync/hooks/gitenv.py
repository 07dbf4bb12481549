"""The hooks' git helpers, over the one runner in :mod:`teamsync._git`.

:func:`no_git_env` is the environment policy (for the Python children a hook
starts); :func:`git` and :func:`git_maybe` run git with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from teamsync import _git
from teamsync.errors import ConfigError

__all__ = ["git", "git_maybe", "no_git_env"]


def no_git_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` without the ``GIT_*`` variables that pin a repository or index."""
    return _git.clean_env(environ)


def git(args: list[str], cwd: Path, environ: Mapping[str, str] | None = None) -> str:
    """Run ``git args`` in ``cwd`` with a clean environment; return stripped stdout."""
    result = _git.run(args, cwd=cwd, environ=environ)
    if not result.ok:
        raise ConfigError(f"git {' '.join(args[:2])} failed in {cwd}: {result.reason()}")
    return result.text()


def git_maybe(args: list[str], cwd: Path, environ: Mapping[str, str] | None = None) -> str | None:
    """Like :func:`git`, but ``None`` when git exits non-zero (e.g. an unset config key)."""
    result = _git.run(args, cwd=cwd, environ=environ)
    return result.text() if result.ok else None
