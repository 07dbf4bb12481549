"""The sync configuration file, kept *beside* ``team/`` (never inside it, so it
is never synced): ``<memory dir>/teamsync.yaml``.

Written by ``teamsync init``; read with ``yaml.safe_load`` only.

:func:`remote_identity` gives every remote one name, however it is spelled,
so re-running ``init`` with another spelling of the same remote keeps the
same base store (a fresh base would make the next sync a first sync, and a
memory the team deleted would come back).
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

from teamsync._files import write_atomic
from teamsync.errors import ConfigError
from teamsync.limits import CONFIG_NAME, DEFAULT_BRANCH
from teamsync.sync import BACKENDS

CONFIG_VERSION = 1
CASE_FOLDING_HOSTS = frozenset({"github.com", "www.github.com", "gitlab.com", "bitbucket.org"})
"""Hosts whose repository paths are case-insensitive."""
_DEFAULT_PORTS = {"http": 80, "https": 443, "ssh": 22, "git": 9418}


@dataclass(frozen=True)
class SyncConfig:
    backend: str
    """``git``, ``rest`` or ``memstore``."""
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
    memory_store: str | None = None
    """Memory Stores backend: the store's id (``memstore_…``); ``url`` is the API's base
    URL, empty for the SDK's default (Anthropic's API)."""
    path_prefix: str | None = None
    """Memory Stores backend: the folder of the store that ``team/`` mirrors (``/team/``;
    None: the whole store)."""

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
        or data.get("backend") not in BACKENDS  # git, rest, memstore (and a test's own)
        or not isinstance(data.get("url"), str)
        or (data.get("backend") == "memstore" and not isinstance(data.get("memory_store"), str))
    ):
        raise ConfigError(
            f"{path}: needs `backend: git|rest|memstore` and `url` (and `memory_store` for "
            "memstore); re-run `teamsync init`"
        )
    names = ("backend", "url", "branch", "repo", "token_file", "memory_store", "path_prefix")
    fields = {k: data[k] for k in names if k in data}
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


def normalize_url(url: str, cwd: Path | None = None) -> str:
    """One spelling per remote: ``host/path`` for network remotes, ``file:<real path>`` locally.

    - the scheme, user, default port and credentials do not count: the ssh
      (``git@host:o/n.git``, ``ssh://git@host/o/n``) and https forms of one
      host and path are one remote;
    - a trailing slash and the ``.git`` suffix do not count; on hosts with
      case-insensitive paths (GitHub, GitLab, Bitbucket) neither does case;
    - ``file:///x.git``, ``/x.git``, ``/x.git/`` and ``x.git`` relative to
      ``cwd`` are one path; ``/x`` is ``/x.git`` when only the latter exists
      (git's own lookup), and symlinks are resolved.
    """
    raw = url.strip()
    if "://" not in raw:
        head = raw.split("/", 1)[0]
        scp = ":" in head and not re.fullmatch(r"[A-Za-z]:", head[:2])
        if scp and not (cwd or Path.cwd()).joinpath(raw).exists():
            userhost, _, path = raw.partition(":")
            return _host_path(userhost.rpartition("@")[2], path, "ssh", None)
        return _local(raw, cwd)
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return _local(unquote(parts.path), cwd)
    try:
        port = parts.port
    except ValueError:
        port = None
    return _host_path(parts.hostname or "", unquote(parts.path), scheme, port)


def _host_path(host: str, path: str, scheme: str, port: int | None) -> str:
    host = host.strip("[]").lower().rstrip(".")
    clean = re.sub(r"/+", "/", path).strip("/").removesuffix(".git").rstrip("/")
    if host in CASE_FOLDING_HOSTS:
        clean = clean.lower()
    where = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    return f"{where}/{clean}"


def _local(path: str, cwd: Path | None) -> str:
    p = Path(path).expanduser()
    if not p.is_absolute():
        p = (cwd or Path.cwd()) / p
    for candidate in (p, p.with_name(p.name + ".git")):
        if candidate.is_dir():
            return "file:" + os.path.realpath(candidate)
    return "file:" + os.path.normpath(p)


def server_identity(url: str) -> str:
    """A REST server's base URL, one spelling: scheme and host folded, default port and
    trailing slash dropped, credentials never kept."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    host = (parts.hostname or "").lower()
    where = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    return f"{scheme}://{where}{re.sub(r'/+', '/', parts.path).rstrip('/')}"


def remote_identity(config: SyncConfig, cwd: Path | None = None) -> str:
    """The base store's name for ``config``'s remote: backend, normalised URL, branch or repo."""
    if config.backend == "git":
        return f"git:{normalize_url(config.url, cwd)}#{config.branch}"
    if config.backend == "memstore":
        where = server_identity(config.url) if config.url else "default"
        folder = (config.path_prefix or "/").strip("/")
        return f"memstore:{where}#{config.memory_store}/{folder + '/' if folder else ''}"
    repo = (config.repo or "").strip().lower()
    return f"rest:{server_identity(config.url)}#{repo}"
