"""teamsync: share an AI coding assistant's team memory safely.

The public API is exactly :data:`__all__`; everything else is internal. Names
are loaded on first use, so ``import teamsync`` stays cheap (a git hook imports
it on every commit).
"""

from __future__ import annotations

import importlib
from typing import Any

from teamsync._version import __version__

_EXPORTS: dict[str, str] = {
    # errors: the whole tree (drawn in teamsync.errors)
    "TeamsyncError": "teamsync.errors",
    "UsageError": "teamsync.errors",
    "ConfigError": "teamsync.errors",
    "ToolMissing": "teamsync.errors",
    "SettingsFileError": "teamsync.errors",
    "LockBusy": "teamsync.errors",
    "MemoryFormatError": "teamsync.errors",
    "SecurityError": "teamsync.errors",
    "KeyRejected": "teamsync.errors",
    "UnsafePath": "teamsync.errors",
    "SecretFound": "teamsync.errors",
    "SyncError": "teamsync.errors",
    "BackendError": "teamsync.errors",
    "AuthError": "teamsync.errors",
    "ConflictError": "teamsync.errors",
    "ServerError": "teamsync.errors",
    "LLMError": "teamsync.errors",
    "PlanRefused": "teamsync.errors",
    # settings
    "Settings": "teamsync.config",
    # memdir core
    "Memory": "teamsync.memdir.format",
    "parse_memory": "teamsync.memdir.format",
    "render_memory": "teamsync.memdir.format",
    "parse_index": "teamsync.memdir.index",
    "regenerate_index": "teamsync.memdir.index",
    "lint_memdir": "teamsync.memdir.lint",
    "fix_memdir": "teamsync.memdir.lint",
    # security
    "validate_key": "teamsync.security.keys",
    "key_problem": "teamsync.security.keys",
    "SafeDir": "teamsync.security.fs",
    "Finding": "teamsync.security.secrets",
    "scan_text": "teamsync.security.secrets",
    "guard_write": "teamsync.security.guard",
    "safe_write": "teamsync.security.guard",
    # sync
    "Backend": "teamsync.sync.base",
    "checksum": "teamsync.sync.base",
    "run_sync": "teamsync.sync.engine",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'teamsync' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
