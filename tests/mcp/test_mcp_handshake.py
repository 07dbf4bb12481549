"""`teamsync mcp` answers `initialize` before the SDK is imported, and the SDK's own
answer (which the server checks at run time, stopping when it differs) is the same."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from teamsync.errors import HandshakeMismatch
from teamsync.mcp import handshake

pytest.importorskip("mcp")


def _initialize(version: Any, request_id: Any = 1) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def _session(
    memdir: Path, first: dict[str, Any] | str, *, quick: bool, then_initialize: bool = False
) -> list[dict[str, Any]]:
    """Send ``first`` (then an `initialize` if asked), `initialized` and `tools/list`;
    the replies, in order."""
    lines = [first if isinstance(first, str) else json.dumps(first)]
    if then_initialize:
        lines.append(json.dumps(_initialize("2025-06-18", request_id=3)))
    lines += [
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ]
    env = {**os.environ, "TEAMSYNC_MCP_QUICK_START": "1" if quick else "0"}
    done = subprocess.run(
        [sys.executable, "-m", "teamsync", "--dir", str(memdir), "mcp"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    (tmp_path / "team").mkdir()
    return tmp_path


def test_the_revisions_answered_here_are_the_sdks() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert handshake.HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", "2026-07-28", "1999-01-01"])
def test_the_quick_answer_is_the_sdks_answer(memdir: Path, version: str) -> None:
    # With quick start on, the server stops if the SDK answers otherwise: a clean
    # exit with tools listed means the SDK agreed. The answer is also the one the
    # SDK gives alone.
    quick = _session(memdir, _initialize(version), quick=True)
    assert [reply["id"] for reply in quick] == [1, 2]
    assert "tools" in quick[1]["result"]
    alone = _session(memdir, _initialize(version), quick=False)
    assert quick[0] == alone[0]
    expected = version if version in handshake.HANDSHAKE_VERSIONS else "2025-11-25"
    assert quick[0]["result"]["protocolVersion"] == expected


@pytest.mark.parametrize(
    "first",
    [
        _initialize(20251125),  # a version that is not a string: the SDK's error, not ours
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        "not json",
    ],
    ids=["bad-params", "ping-first", "garbage"],
)
def test_anything_but_a_well_formed_initialize_is_left_to_the_sdk(
    memdir: Path, first: dict[str, Any] | str
) -> None:
    assert handshake.quick_answer(first if isinstance(first, str) else json.dumps(first)) is None
    quick = _session(memdir, first, quick=True, then_initialize=True)
    alone = _session(memdir, first, quick=False, then_initialize=True)
    assert quick == alone
    assert [reply["id"] for reply in quick][-2:] == [3, 2]


def test_an_sdk_answering_otherwise_stops_the_server() -> None:
    from teamsync.mcp.server import _Wire

    class Sink:
        def __init__(self) -> None:
            self.data = b""

        def write(self, data: bytes) -> None:
            self.data += data

        def flush(self) -> None:
            pass

    request_id, sent = handshake.quick_answer(json.dumps(_initialize("2025-06-18")))  # type: ignore[misc]
    sink = Sink()
    wire = _Wire(sink, (request_id, sent))  # type: ignore[arg-type]
    other = {**sent, "result": {**sent["result"], "protocolVersion": "2025-03-26"}}
    with pytest.raises(HandshakeMismatch, match="TEAMSYNC_MCP_QUICK_START=0"):
        asyncio.run(wire.write(json.dumps(other) + "\n"))
    assert sink.data == b""
    # The same answer is dropped (it was sent already); what follows passes through.
    wire = _Wire(sink, (request_id, sent))  # type: ignore[arg-type]
    asyncio.run(wire.write(json.dumps(sent) + "\n"))
    asyncio.run(wire.write('{"jsonrpc":"2.0","id":2,"result":{}}\n'))
    assert sink.data == b'{"jsonrpc":"2.0","id":2,"result":{}}\n'
