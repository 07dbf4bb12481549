"""The ``initialize`` answer, written without the SDK so ``teamsync mcp`` answers at once.

Importing the official ``mcp`` SDK takes most of a second (its package imports
its client, its pydantic types for every protocol revision and asyncio). An
assistant waits for the answer to ``initialize`` before it offers any tool, so
:func:`quick_answer` writes that one answer from the constants below while the
SDK is imported beside it. The SDK then receives the same ``initialize``
itself (its session must see it) and its own answer is compared with this one:
they must be the same JSON (``tests/mcp/test_mcp_handshake.py`` checks every
revision; at run time a difference stops the server, see
:mod:`teamsync.mcp.server`).

Only a well-formed ``initialize`` request is answered here; anything else
(another method, a notification, params the SDK would refuse) is left to the
SDK, which then answers everything as before.
"""

from __future__ import annotations

import json
from typing import Any

from teamsync._version import __version__

NAME = "teamsync"

INSTRUCTIONS = (
    "Team memory: notes a team keeps about this project (decisions, guidance, references). "
    "Call memory_search before work that past decisions may affect; memory_get reads one "
    "memory in full. Memories can be stale: check what they say against the code."
)

# The revisions the SDK (mcp >=2.3,<3) negotiates through ``initialize``, oldest
# first; a client asking for any other gets the newest (the SDK's own rule).
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

# What the SDK's low-level server declares for the handlers teamsync registers
# (tools and resources; no prompts, no subscriptions, no list-changed notices).
CAPABILITIES: dict[str, Any] = {
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}


def initialize_result(requested: str) -> dict[str, Any]:
    """The ``result`` of ``initialize`` for a client asking for revision ``requested``."""
    version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": version,
        "serverInfo": {"name": NAME, "version": __version__},
    }


def _well_formed(params: Any) -> bool:
    if not isinstance(params, dict):
        return False
    info = params.get("clientInfo")
    return (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(params.get("capabilities"), dict)
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )


def quick_answer(line: str | bytes) -> tuple[Any, dict[str, Any]] | None:
    """``(request id, reply)`` for a well-formed ``initialize`` request line, else None."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    request_id = message.get("id")
    if message.get("method") != "initialize" or not isinstance(request_id, (int, str)):
        return None
    if isinstance(request_id, bool) or not _well_formed(message.get("params")):
        return None
    result = initialize_result(message["params"]["protocolVersion"])
    return request_id, {"jsonrpc": "2.0", "id": request_id, "result": result}


def encode(reply: dict[str, Any]) -> bytes:
    """One line of the stdio transport (compact JSON, as the SDK writes it)."""
    return (json.dumps(reply, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
