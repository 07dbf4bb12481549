"""Is the URL given to ``teamsync init --rest`` a team-memory server at all?

A repository with no team memory yet answers ``GET …/team_memory`` with 404,
and so does any web server at any wrong path. ``init`` tells them apart
before writing a configuration: a teamsync server answers the
``/capabilities`` probe; a Claude Code-style server's 404 carries a JSON
``{"error": {…}}`` body. Anything else (an HTML page, an empty body, plain
text) is refused with what was seen and what to do.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from teamsync.errors import ConfigError
from teamsync.security.names import printable
from teamsync.wire import PATH as TEAM_MEMORY_PATH


def _json_error(body: bytes) -> bool:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and isinstance(data.get("error"), dict | str)


def check_empty_answer(
    where: str, head: Mapping[str, str], body: bytes, *, capabilities: bool
) -> None:
    """Raise ConfigError unless a 404 for the repository came from a team-memory server."""
    if capabilities or _json_error(body):
        return
    lowered = {k.lower(): v for k, v in head.items()}
    ctype = printable(lowered.get("content-type", "no content type").split(";")[0][:60])
    hint = (
        f" The URL already ends in {TEAM_MEMORY_PATH}: give only the server's base URL."
        if where.rstrip("/").endswith(TEAM_MEMORY_PATH)
        else " Give the server's base URL (what `teamsync serve` prints, e.g. "
        "http://HOST:8787), without the API path."
    )
    raise ConfigError(
        f"{where} is not a team-memory server, or the path is wrong: {TEAM_MEMORY_PATH} "
        f"answered 404 with {ctype} instead of a team-memory JSON error, and there is no "
        f"teamsync capabilities endpoint.{hint} Nothing was written."
    )
