"""What a ``teamsync serve`` token may do, asked of the server (``teamsync mcp`` uses it).

The capabilities document names the caller's token scope when the request
carries a valid bearer token (``{"token": {"read_only": …, "repo": …}}``).
A server that does not say (an older one, or another implementation) gives
``None``, and callers treat that as "may not write".
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from teamsync.errors import BackendError
from teamsync.sync.config import SyncConfig
from teamsync.sync.rest_http import Http, load_token
from teamsync.wire import CAPABILITIES_PATH

PROBE_TIMEOUT_S = 5.0


def token_read_only(config: SyncConfig, environ: Mapping[str, str]) -> bool | None:
    """True/False as the server reports the token's scope; None when it does not say."""
    http = Http(config.url, load_token(config, environ), timeout=PROBE_TIMEOUT_S)
    try:
        status, _, body = http.send("GET", CAPABILITIES_PATH, params={})
    finally:
        http.close()
    if status != 200:
        raise BackendError(f"{http.where} answered {status} to the capabilities request")
    try:
        scope = json.loads(body).get("token")
    except (ValueError, AttributeError):
        return None
    if not isinstance(scope, dict) or not isinstance(scope.get("read_only"), bool):
        return None
    return bool(scope["read_only"])
