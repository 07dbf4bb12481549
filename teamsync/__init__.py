"""teamsync: share an AI coding assistant's team memory safely.

The public API is exactly :data:`__all__`; everything else is internal. Names
are loaded on first use, so ``import teamsync`` stays cheap (a git hook imports
it on every commit). The one-call entry points are ``teamsync.sync``,
``teamsync.check``, ``teamsync.scan_paths`` and ``teamsync.recall``
(:mod:`teamsync.api`).
"""

from __future__ import annotations

import importlib
import sys
import types

from teamsync._version import __version__

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any

_EXPORTS: dict[str, str] = {
    # one-call entry points
    "sync": "teamsync.api",
    "check": "teamsync.api",
    "scan_paths": "teamsync.api",
    "recall": "teamsync.api",
    # errors: the whole tree (drawn in teamsync.errors)
    "TeamsyncError": "teamsync.errors",
    "UsageError": "teamsync.errors",
    "ConfigError": "teamsync.errors",
    "ToolMissing": "teamsync.errors",
    "SettingsFileError": "teamsync.errors",
    "LockBusy": "teamsync.errors",
    "MissingExtra": "teamsync.errors",
    "ScannerUnsupported": "teamsync.errors",
    "HandshakeMismatch": "teamsync.errors",
    "EmbedUnavailable": "teamsync.errors",
    "MemoryFormatError": "teamsync.errors",
    "SecurityError": "teamsync.errors",
    "KeyRejected": "teamsync.errors",
    "UnsafePath": "teamsync.errors",
    "SecretFound": "teamsync.errors",
    "SyncError": "teamsync.errors",
    "BackendError": "teamsync.errors",
    "TooManyEntries": "teamsync.errors",
    "RestoreError": "teamsync.errors",
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


class _Package(types.ModuleType):
    """The ``teamsync`` package object, whose API functions keep their names.

    ``sync`` and ``recall`` are both entry points and subpackages. Importing a
    subpackage normally rebinds the package attribute of that name to the
    module, which would turn ``teamsync.sync(...)`` into "module is not
    callable" after the first call. Here the functions keep the names; the
    subpackages stay importable as usual (``from teamsync.sync.engine import
    run_sync``, ``importlib.import_module("teamsync.sync")``).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if _EXPORTS.get(name) == "teamsync.api" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
