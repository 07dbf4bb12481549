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

from teamsync._env import wants_color, xdg_dir


def _xdg(environ: Mapping[str, str], var: str, fallback: str) -> Path:
    return Path(xdg_dir(environ, var, fallback))


@dataclass(frozen=True)
class Settings:
    """Everything a command needs to know about where and how to run."""

    dir: Path | None = None
    """Memory directory override (``--dir`` > ``TEAMSYNC_DIR``); ``None`` = Claude Code's layout."""
    json: bool = False
    color: bool = False
    """Colour on stdout."""
    err_color: bool = False
    """Colour on stderr (decided for that stream: it may be a terminal when stdout is not)."""
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
        err_isatty: bool | None = None,
        color: str = "auto",
    ) -> Settings:
        """Build settings: CLI values first, then the environment, then defaults.

        Colour: ``--color always|never`` wins; ``auto`` colours a stream only when
        it is a terminal, ``NO_COLOR`` is unset and ``TERM`` is not ``dumb``.
        Never on stdout under ``--json``.
        """
        env = dict(os.environ if environ is None else environ)
        chosen = dir if dir is not None else (env.get("TEAMSYNC_DIR") or None)

        def decide(tty: bool) -> bool:
            return wants_color(tty, color, env)

        return cls(
            dir=Path(chosen).expanduser() if chosen is not None else None,
            json=json,
            color=decide(isatty) and not json,
            err_color=decide(isatty if err_isatty is None else err_isatty),
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
