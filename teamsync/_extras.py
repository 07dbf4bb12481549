"""Optional dependencies and the extra that installs each one.

A heavy library is imported lazily, where it is used. When it is missing, the
user gets "install teamsync[EXTRA]" (exit 1), never "this is a bug" (exit 3):
:func:`require` raises :class:`MissingExtra` up front, and the CLI's last-resort
handler maps any stray :class:`ModuleNotFoundError` for a module listed here
through :func:`missing_extra`.
"""

from __future__ import annotations

import importlib.util

from teamsync.errors import MissingExtra

EXTRAS: dict[str, tuple[str, str]] = {
    # top-level module -> (extra, what needs it)
    "anthropic": ("llm", "LLM recall, extraction and dream (the Anthropic SDK)"),
    "fastapi": ("server", "the team-memory server `teamsync serve`"),
    "uvicorn": ("server", "the team-memory server `teamsync serve`"),
    "starlette": ("server", "the team-memory server `teamsync serve`"),
    "psycopg": ("postgres", "PostgreSQL storage for the server"),
    "mcp": ("mcp", "the MCP server `teamsync mcp` (the official MCP SDK)"),
    "watchdog": ("watch", "file-system events for `teamsync watch` (or use --poll)"),
}


def available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(module: str) -> None:
    """Raise :class:`MissingExtra` unless ``module`` is importable."""
    if not available(module):
        raise missing_for(module)


def missing_extra(exc: BaseException) -> MissingExtra | None:
    """The :class:`MissingExtra` for a ModuleNotFoundError of an optional module, else None."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        root = exc.name.partition(".")[0]
        if root in EXTRAS:
            return missing_for(root)
    return None


def missing_for(module: str) -> MissingExtra:
    """The error for optional module ``module``, naming its extra."""
    extra, what = EXTRAS.get(module, ("all", "this feature"))
    return MissingExtra(module, extra, what)
