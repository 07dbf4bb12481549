"""``teamsync serve``: run the self-hosted server under uvicorn."""

from __future__ import annotations

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
    output.info(f"teamsync server on http://{host}:{port} (storage {redact_url(url)})")
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="info",
        proxy_headers=False,
        server_header=False,
        timeout_graceful_shutdown=5,
    )
    return 0
