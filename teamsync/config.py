"""Settings: one explicit, frozen object built once per invocation.

Resolution order, highest first: command-line options → environment →
defaults. The environment is read in exactly one function
(:func:`Settings.build` takes ``environ`` as an argument), so tests pass a dict
instead of patching ``os.environ``. Settings has no configuration file of its
own: where a memory directory syncs to is that directory's ``teamsync.yaml``
(:mod:`teamsync.sync.config`), read by the commands that sync.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


def _xdg(environ: Mapping[str, str], var: str, fallback: str) -> Path:
    value = environ.get(var)
    if value and os.path.isabs(value):
        return Path(value) / "teamsync"
    home = environ.get("HOME") or str(Path.home())
    return Path(home) / fallback / "teamsync"


@dataclass(frozen=True)
class Settings:
    """Everything a command needs to know about where and how to run."""

    dir: Path | None = None
    """Memory directory override (``--dir`` > ``TEAMSYNC_DIR``); ``None`` = Claude Code's layout."""
    json: bool = False
    color: bool = False
    cwd: Path = field(default_factory=Path.cwd)
    environ: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        *,
        dir: str | os.PathLike[str] | None = None,
        json: bool = False,
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        isatty: bool = False,
    ) -> Settings:
        """Build settings: CLI values first, then the environment, then defaults."""
        env = dict(os.environ if environ is None else environ)
        chosen = dir if dir is not None else (env.get("TEAMSYNC_DIR") or None)
        color = isatty and "NO_COLOR" not in env and env.get("TERM") != "dumb" and not json
        return cls(
            dir=Path(chosen).expanduser() if chosen is not None else None,
            json=json,
            color=color,
            cwd=cwd if cwd is not None else Path.cwd(),
            environ=env,
        )

    @property
    def home(self) -> Path:
        return Path(self.environ.get("HOME") or str(Path.home()))

    @property
    def state_dir(self) -> Path:
        """Per-user state (sync bases, cursors); never synced."""
        return _xdg(self.environ, "XDG_STATE_HOME", ".local/state")

    @property
    def cache_dir(self) -> Path:
        """Per-user cache (git cache clones)."""
        return _xdg(self.environ, "XDG_CACHE_HOME", ".cache")

    @property
    def data_dir(self) -> Path:
        """Per-user data (the server's default SQLite database)."""
        return _xdg(self.environ, "XDG_DATA_HOME", ".local/share")
