"""The sync configuration file, kept *beside* ``team/`` (never inside it, so it
is never synced): ``<memory dir>/teamsync.yaml``.

Written by ``teamsync init``; read with ``yaml.safe_load`` only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from teamsync._files import write_atomic
from teamsync.errors import ConfigError
from teamsync.limits import DEFAULT_BRANCH

CONFIG_NAME = "teamsync.yaml"
CONFIG_VERSION = 1


@dataclass(frozen=True)
class SyncConfig:
    backend: str
    """``git`` or ``rest``."""
    url: str
    """Git remote URL/path, or the REST server's base URL."""
    branch: str = DEFAULT_BRANCH
    """Git backend: the branch that holds the memory files."""
    repo: str | None = None
    """REST backend: ``owner/name``; None = derive from the project's ``origin``."""
    token_file: str | None = None
    """REST backend: a 0600 file holding the bearer token (else ``TEAMSYNC_TOKEN``)."""
    mass_change_share: float | None = None
    """Stop a sync that would delete or revert more than this share of the team's
    memories (0 < share <= 1; 1 turns the guard off); None: the default, 0.25."""
    mass_change_min: int | None = None
    """…but only when at least this many would go (None: the default, 5)."""

    def to_dict(self) -> dict[str, Any]:
        data = {"version": CONFIG_VERSION, **asdict(self)}
        return {k: v for k, v in data.items() if v is not None}


def config_path(memdir: Path) -> Path:
    return memdir / CONFIG_NAME


def load_config(memdir: Path) -> SyncConfig:
    """Load ``<memdir>/teamsync.yaml`` or explain how to create it."""
    path = config_path(memdir)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{memdir} is not set up for sync: run `teamsync init --git URL` "
            "or `teamsync init --rest URL` first"
        ) from None
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"{path}: not valid YAML ({exc.__class__.__name__}); fix or re-run init"
        ) from exc
    if (
        not isinstance(data, dict)
        or data.get("backend") not in ("git", "rest")
        or not isinstance(data.get("url"), str)
    ):
        raise ConfigError(f"{path}: needs `backend: git|rest` and `url`; re-run `teamsync init`")
    fields = {k: data[k] for k in ("backend", "url", "branch", "repo", "token_file") if k in data}
    return SyncConfig(**fields, **_guard_fields(path, data))


def _guard_fields(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    share, least = data.get("mass_change_share"), data.get("mass_change_min")
    if share is False or share == "off":
        share = 1.0
    if share is not None and (
        isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1
    ):
        raise ConfigError(
            f"{path}: mass_change_share must be a number above 0 and at most 1 (1 or off: no guard)"
        )
    if least is not None and (isinstance(least, bool) or not isinstance(least, int) or least < 1):
        raise ConfigError(f"{path}: mass_change_min must be a whole number of at least 1")
    return {
        "mass_change_share": None if share is None else float(share),
        "mass_change_min": least,
    }


def save_config(memdir: Path, config: SyncConfig) -> Path:
    path = config_path(memdir)
    memdir.mkdir(parents=True, exist_ok=True)
    write_atomic(path, yaml.safe_dump(config.to_dict(), sort_keys=False), new_mode=0o644)
    return path
