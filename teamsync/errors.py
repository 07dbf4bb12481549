"""The teamsync exception tree.

Every error teamsync raises on purpose is a :class:`TeamsyncError`; the CLI
maps it to exit code 1 and prints its message (one line: what failed and what
to do). Third-party errors (YAML, GitPython, httpx2, the Anthropic SDK) are
translated at the module boundary with ``raise ... from exc``.

::

    TeamsyncError
    ├── UsageError              bad arguments or configuration (exit 2)
    ├── ConfigError             missing or invalid configuration
    ├── MemoryFormatError       a memory file or index that cannot be parsed
    ├── SecurityError
    │   ├── KeyRejected         a key failed validation (carries .key, .reason)
    │   ├── UnsafePath          a symlink, escape or loop on the filesystem
    │   └── SecretFound         content holds a secret (carries .findings, never the text)
    ├── SyncError
    │   ├── BackendError        the remote failed or answered nonsense
    │   ├── AuthError           401/403 or git credentials refused (permanent)
    │   └── ConflictError       a precondition failed after the bounded retries
    ├── ServerError             the self-hosted server's own failures
    └── LLMError                the model call failed (callers fall back)

Security errors never carry secret text: only paths, lines, rule ids and
fingerprints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class TeamsyncError(Exception):
    """Base class: an expected failure with a one-line, actionable message."""

    exit_code: int = 1
    kind: str | None = None
    """A stable machine-readable name for ``--json`` errors (default: from the class name)."""


class UsageError(TeamsyncError):
    """The command line or configuration asks for something impossible."""

    exit_code = 2


class ConfigError(TeamsyncError):
    """Configuration is missing or invalid."""


class MemoryFormatError(TeamsyncError):
    """A memory file or the index cannot be parsed."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class SecurityError(TeamsyncError):
    """A security gate refused something."""


class KeyRejected(SecurityError):
    """A key (a relative path inside ``team/``) failed validation."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"rejected key {key!r}: {reason}")
        self.key = key
        self.reason = reason


class UnsafePath(SecurityError):
    """A filesystem path is a symlink, escapes its root, or loops."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"unsafe path {key!r}: {reason}")
        self.key = key
        self.reason = reason


class SecretFound(SecurityError):
    """Content holds one or more secrets. Carries findings, never the secret."""

    def __init__(self, path: str, findings: Sequence[Any]) -> None:
        rules = ", ".join(sorted({f"{f.rule} (line {f.line})" for f in findings}))
        super().__init__(
            f"{path}: refused, it contains a likely secret: {rules}. "
            "Remove it, or allowlist it with a `teamsync: allow` comment if it is not secret."
        )
        self.path = path
        self.findings = list(findings)


class SyncError(TeamsyncError):
    """Synchronisation failed."""


class BackendError(SyncError):
    """The remote failed or answered something we refuse to trust."""


class AuthError(SyncError):
    """The remote refused our credentials; retrying will not help."""


class ConflictError(SyncError):
    """A precondition kept failing after the bounded retries."""


class ServerError(TeamsyncError):
    """The self-hosted server failed."""


class LLMError(TeamsyncError):
    """A model call failed; callers fall back to the offline path."""
