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
from collections.abc import Callable
from typing import Any

from teamsync._version import __version__
from teamsync.mcp.memories import MAX_SEARCH, MEMORY_TYPES, TEAM_TYPES, MemoryService, ToolRefused

INSTRUCTIONS = (
    "Team memory: notes a team keeps about this project (decisions, guidance, references). "
    "Call memory_search before work that past decisions may affect; memory_get reads one "
    "memory in full. Memories can be stale: check what they say against the code."
)

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
        "teamsync",
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


def serve_stdio(service: MemoryService) -> None:
    """Serve ``service`` on stdin/stdout until the client closes the stream."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build(service)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
