"""The sync configuration file, kept *beside* ``team/`` (never inside it, so it
is never synced): ``<memory dir>/teamsync.yaml``.

Written by ``teamsync init``; read with ``yaml.safe_load`` only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from teamsync.errors import ConfigError

CONFIG_NAME = "teamsync.yaml"
CONFIG_VERSION = 1


@dataclass(frozen=True)
class SyncConfig:
    backend: str
    """``git`` or ``rest``."""
    url: str
    """Git remote URL/path, or the REST server's base URL."""
    branch: str = "teamsync/memory"
    """Git backend: the branch that holds the memory files."""
    repo: str | None = None
    """REST backend: ``owner/name``; None = derive from the project's ``origin``."""
    token_file: str | None = None
    """REST backend: a 0600 file holding the bearer token (else ``TEAMSYNC_TOKEN``)."""

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
    except IsADirectoryError:
        raise ConfigError(
            f"{path} is a directory, where teamsync keeps its configuration file; move it "
            f"away (`mv {path} {path}.old`), then run `teamsync init` again"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}; check its permissions") from exc
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
    return SyncConfig(**fields)


def save_config(memdir: Path, config: SyncConfig) -> Path:
    path = config_path(memdir)
    memdir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{CONFIG_NAME}.tmp")
    tmp.write_text(yaml.safe_dump(config.to_dict(), sort_keys=False), encoding="utf-8")
    tmp.replace(path)
    return path
