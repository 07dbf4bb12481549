"""``teamsync mcp``: the team memory as a Model Context Protocol server.

:mod:`teamsync.mcp.memories` holds what the server does (search, get, list,
remember) with no MCP import at all; :mod:`teamsync.mcp.server` wires it to the
official ``mcp`` SDK (the ``mcp`` extra, imported only there); and
:mod:`teamsync.mcp.clients` writes each assistant's MCP configuration for
``teamsync install-mcp``.
"""
