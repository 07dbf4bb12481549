"""Where per-user files go and whether a stream gets colour: stdlib only, no dataclass.

:class:`teamsync.config.Settings` is built on these, and so is the CLI's fast
no-op path (:mod:`teamsync.commands.sync_fast`), which answers before the
dataclass machinery is even imported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["wants_color", "xdg_dir"]


def xdg_dir(environ: Mapping[str, str], var: str, fallback: str) -> str:
    """``$var/teamsync`` when ``var`` holds an absolute path, else ``$HOME/fallback/teamsync``."""
    value = environ.get(var)
    if value and os.path.isabs(value):
        return os.path.join(value, "teamsync")
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, fallback, "teamsync")


def wants_color(tty: bool, choice: str, environ: Mapping[str, str]) -> bool:
    """``--color always|never`` wins; ``auto`` colours a terminal unless ``NO_COLOR`` is set
    or ``TERM`` is ``dumb``."""
    if choice in ("always", "never"):
        return choice == "always"
    return tty and "NO_COLOR" not in environ and environ.get("TERM") != "dumb"
