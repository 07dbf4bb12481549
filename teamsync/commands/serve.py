"""``teamsync serve``: run the self-hosted server under uvicorn."""

from __future__ import annotations

import socket

from teamsync.config import Settings
from teamsync.errors import UsageError
from teamsync.output import Output
from teamsync.server.limits import ServerConfig, normalize_repo
from teamsync.server.storage import DEFAULT_MAX_ENTRIES, default_db_url
from teamsync.wire import redact_url

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def resolve_db_url(settings: Settings, db: str | None) -> str:
    """``--db`` > ``TEAMSYNC_DB`` > ``sqlite:///<data dir>/server.sqlite3``."""
    return db or settings.environ.get("TEAMSYNC_DB") or default_db_url(settings.data_dir)


def load_server_allowlist(settings: Settings, path: str) -> tuple[tuple[str, str], ...]:
    """The operator's allowlist file: entries with a ``repo`` apply to it, others to all repos.

    Same format as the project allowlist (``teamsync allow --file FILE``); only the
    operator, who owns the file, changes it, and a restart applies it.
    """
    from pathlib import Path

    from teamsync.security.allowlist import load_entries

    file = Path(path) if Path(path).is_absolute() else settings.cwd / path
    if not file.is_file():
        raise UsageError(
            f"--allowlist {path}: no such file; create it with `teamsync allow --file`"
        )
    pairs = []
    for entry in load_entries(file):
        pairs.append((normalize_repo(entry.repo) if entry.repo else "*", entry.fingerprint))
    return tuple(sorted(set(pairs)))


def serve(
    settings: Settings,
    output: Output,
    *,
    host: str,
    port: int,
    db: str | None,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    allowlist: str | None = None,
) -> int:
    """Serve until interrupted; returns 0 after a clean shutdown."""
    from teamsync._extras import require

    require("fastapi")
    require("uvicorn")
    import uvicorn

    from teamsync.server.app import create_app
    from teamsync.server.runtime import Limits, uvicorn_config

    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: use 0-65535")
    if max_entries < 1:
        raise UsageError("--max-entries must be at least 1")
    url = resolve_db_url(settings, db)
    allowed = load_server_allowlist(settings, allowlist) if allowlist else ()
    app = create_app(ServerConfig(db_url=url, max_entries=max_entries, allowlist=allowed))
    if host not in LOOPBACK:
        output.warn(f"listening on {host} without TLS: put a TLS-terminating proxy in front")
    sock = _bind(host, port)  # bound first, so `--port 0` can print the port it got
    real_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    output.info(f"teamsync server on http://{shown}:{real_port} (storage {redact_url(url)})")
    config = uvicorn_config(app, Limits(), timeout_graceful_shutdown=5)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
    return 0


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock
