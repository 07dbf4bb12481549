"""The MCP wiring: :class:`~teamsync.mcp.memories.MemoryService` over stdio, on the official SDK.

The low-level ``mcp.server.lowlevel.Server`` is used (not the decorator API)
so the tool schemas are written out here, the tool list can leave
``memory_remember`` out, and resources are listed from the directory on
each request. Each call runs in a worker thread (recall may embed a query),
and every refusal comes back as a tool result with ``isError`` set, its
message from the service.

This is the only module that imports the ``mcp`` SDK (the ``mcp`` extra).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO

from teamsync._version import __version__
from teamsync.errors import HandshakeMismatch
from teamsync.mcp import handshake
from teamsync.mcp.handshake import INSTRUCTIONS, NAME
from teamsync.mcp.memories import MAX_SEARCH, MEMORY_TYPES, TEAM_TYPES, MemoryService, ToolRefused

_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}

TOOLS: dict[str, dict[str, Any]] = {
    "memory_search": {
        "description": "Find the team memories relevant to a question or task (at most `limit`; "
        "none when nothing is relevant). Returns path, name, type, description, age and "
        "staleness for each, with its text.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what you want to know or do"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH, "default": 5},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        "annotations": _READ_ONLY,
    },
    "memory_get": {
        "description": "Read one memory file (or MEMORY.md) by the path memory_list or "
        "memory_search gave.",
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": False,
        },
        "annotations": _READ_ONLY,
    },
    "memory_list": {
        "description": "The manifest: every memory's path, name, type, description and age, "
        "newest first; optionally only one type.",
        "inputSchema": {
            "type": "object",
            "properties": {"type": {"type": "string", "enum": list(MEMORY_TYPES)}},
            "additionalProperties": False,
        },
        "annotations": _READ_ONLY,
    },
    "memory_remember": {
        "description": "Save a new memory for the whole team (team/). It is checked like any "
        "write to team memory and refused if it holds a credential or breaks a rule; it "
        "reaches teammates at the next sync. Never put secrets, code or transient state in it.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "a short title"},
                "type": {"type": "string", "enum": list(TEAM_TYPES)},
                "description": {"type": "string", "description": "one line: when it matters"},
                "body": {"type": "string", "description": "the memory itself, in Markdown"},
            },
            "required": ["name", "type", "description", "body"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
    },
}


def _calls(service: MemoryService) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    return {
        "memory_search": lambda a: service.search(a.get("query"), a.get("limit", 5)),
        "memory_get": lambda a: service.get(a.get("path")),
        "memory_list": lambda a: service.manifest(a.get("type")),
        "memory_remember": lambda a: service.remember(
            a.get("name"), a.get("type"), a.get("description"), a.get("body")
        ),
    }


def offered(service: MemoryService) -> list[str]:
    """The tool names this server lists: ``memory_remember`` only when writing is on."""
    return [n for n in TOOLS if n != "memory_remember" or service.remember_enabled]


def build(service: MemoryService) -> Any:
    """The SDK ``Server`` for ``service`` (typed ``Any``: the SDK is an optional extra)."""
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server

    names = offered(service)
    calls = _calls(service)

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(
            tools=[types.Tool.model_validate({"name": n, **TOOLS[n]}) for n in names]
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        arguments = dict(params.arguments or {})
        if params.name not in names:
            return _error(
                types, f"unknown tool {params.name!r}; this server offers {', '.join(names)}"
            )
        try:
            result = await anyio.to_thread.run_sync(calls[params.name], arguments)
        except ToolRefused as exc:
            return _error(types, str(exc))
        text = json.dumps(result, ensure_ascii=False, indent=1)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=result
        )

    async def list_resources(ctx: Any, params: Any) -> Any:
        found = await anyio.to_thread.run_sync(service.resources)
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=r["uri"],
                    name=r["name"],
                    description=r["description"],
                    mime_type="text/markdown",
                )
                for r in found
            ]
        )

    async def read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        try:
            text = await anyio.to_thread.run_sync(service.read_resource, uri)
        except ToolRefused as exc:
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )

    return Server(
        NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def _error(types: Any, message: str) -> Any:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


class _Replay:
    """The wire's input for the SDK: the first line (already read here), then the rest."""

    def __init__(self, first: bytes, rest: BinaryIO) -> None:
        self._first = first
        self._rest = rest

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        import anyio.to_thread

        if self._first:
            yield self._first.decode("utf-8", errors="replace")
        while line := await anyio.to_thread.run_sync(self._rest.readline):
            yield line.decode("utf-8", errors="replace")


class _Wire:
    """The wire's output for the SDK; its answer to an ``initialize`` answered here is
    checked against that answer and not sent twice."""

    def __init__(self, out: BinaryIO, answered: tuple[Any, dict[str, Any]] | None) -> None:
        self._out = out
        self._answered = answered

    async def write(self, text: str) -> None:
        if self._answered is not None and self._is_the_answer(text):
            return
        self._out.write(text.encode("utf-8"))

    async def flush(self) -> None:
        self._out.flush()

    def _is_the_answer(self, text: str) -> bool:
        assert self._answered is not None
        request_id, sent = self._answered
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("id") != request_id:
            return False
        self._answered = None
        if message != sent:
            raise HandshakeMismatch(
                "the MCP SDK's answer to initialize differs from the one teamsync sent at "
                "start-up (an SDK teamsync does not know?); start the server with "
                "TEAMSYNC_MCP_QUICK_START=0 and report it"
            )
        return True


def _claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The protocol's own copies of stdin and stdout; fd 0 then reads nothing and fd 1
    goes to stderr, so nothing printed by a library or a child reaches the wire."""
    import os

    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def serve_stdio(service: MemoryService, *, quick_start: bool = True) -> None:
    """Serve ``service`` on stdin/stdout until the client closes the stream.

    With ``quick_start``, the SDK is imported in a thread while the first line
    is read, and a well-formed ``initialize`` is answered at once
    (:mod:`teamsync.mcp.handshake`); the SDK then serves everything, that
    ``initialize`` included, and its answer must equal the one sent.
    """
    import threading

    wire_in, wire_out = _claim_stdio()
    built: dict[str, Any] = {}

    def prepare() -> None:
        try:
            built["server"] = build(service)
            from mcp.server.stdio import stdio_server

            built["stdio"] = stdio_server
        except BaseException as exc:  # re-raised below, in the main thread
            built["error"] = exc

    thread = threading.Thread(target=prepare, name="teamsync-mcp-import", daemon=True)
    thread.start()
    first = wire_in.readline()
    answered = handshake.quick_answer(first) if quick_start and first else None
    if answered is not None:
        wire_out.write(handshake.encode(answered[1]))
        wire_out.flush()
    thread.join()
    if "error" in built:
        raise built["error"]
    server, stdio_server = built["server"], built["stdio"]

    import anyio

    async def main() -> None:
        stdin, stdout = _Replay(first, wire_in), _Wire(wire_out, answered)
        async with stdio_server(stdin, stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    except BaseExceptionGroup as group:
        mismatch = group.subgroup(HandshakeMismatch)
        if mismatch is None:
            raise
        raise mismatch.exceptions[0] from None
