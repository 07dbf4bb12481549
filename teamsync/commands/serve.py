"""``teamsync serve``: run the self-hosted server under uvicorn."""

from __future__ import annotations

import copy
import socket
from typing import Any

from teamsync.config import Settings
from teamsync.errors import UsageError
from teamsync.output import Output
from teamsync.server.limits import ServerConfig
from teamsync.server.storage import DEFAULT_MAX_ENTRIES, default_db_url, redact_url

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def resolve_db_url(settings: Settings, db: str | None) -> str:
    """``--db`` > ``TEAMSYNC_DB`` > ``sqlite:///<data dir>/server.sqlite3``."""
    return db or settings.environ.get("TEAMSYNC_DB") or default_db_url(settings.data_dir)


def serve(
    settings: Settings,
    output: Output,
    *,
    host: str,
    port: int,
    db: str | None,
    max_entries: int = DEFAULT_MAX_ENTRIES,
) -> int:
    """Serve until interrupted; returns 0 after a clean shutdown."""
    from teamsync._extras import require

    require("fastapi")
    require("uvicorn")
    import uvicorn

    from teamsync.server.app import create_app

    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: use 0-65535")
    if max_entries < 1:
        raise UsageError("--max-entries must be at least 1")
    url = resolve_db_url(settings, db)
    app = create_app(ServerConfig(db_url=url, max_entries=max_entries))
    if host not in LOOPBACK:
        output.warn(f"listening on {host} without TLS: put a TLS-terminating proxy in front")
    sock = _bind(host, port)  # bound first, so `--port 0` can print the port it got
    real_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    output.info(f"teamsync server on http://{shown}:{real_port} (storage {redact_url(url)})")
    config = uvicorn.Config(
        app,
        log_config=log_config(),
        log_level="info",
        proxy_headers=False,
        server_header=False,
        timeout_graceful_shutdown=5,
    )
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


def log_config() -> dict[str, Any]:
    """uvicorn's logging, plus a handler for ``teamsync.server`` (the per-PUT audit line).

    Without it the server's logger has no handler under uvicorn and its INFO
    lines are dropped. Lines go to stderr beside uvicorn's own.
    """
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["formatters"]["teamsync"] = {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}
    config["handlers"]["teamsync"] = {
        "formatter": "teamsync",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
    }
    config["loggers"]["teamsync"] = {"handlers": ["teamsync"], "level": "INFO", "propagate": False}
    return config
