"""The teamsync exception tree.

Every error teamsync raises on purpose is a :class:`TeamsyncError`; the CLI
maps it to exit code 1 and prints its message (one line: what failed and what
to do). Third-party errors (YAML, GitPython, httpx2, the Anthropic SDK) are
translated at the module boundary with ``raise ... from exc``.

::

    TeamsyncError
    ├── UsageError              bad arguments or configuration (exit 2)
    ├── ConfigError             missing or invalid configuration
    ├── ToolMissing             git (or another program teamsync runs) is not installed
    ├── MemoryFormatError       a memory file or index that cannot be parsed
    ├── SettingsFileError       a file teamsync edits for the user (hooks, settings) is malformed
    ├── LockBusy                another live process holds a teamsync lock
    ├── SecurityError
    │   ├── KeyRejected         a key failed validation (carries .key, .reason)
    │   ├── UnsafePath          a symlink, escape or loop on the filesystem
    │   └── SecretFound         content holds a secret (carries .findings, never the text)
    ├── SyncError
    │   ├── BackendError        the remote failed or answered nonsense
    │   ├── AuthError           401/403 or git credentials refused (permanent)
    │   └── ConflictError       a precondition failed after the bounded retries
    ├── ServerError             the self-hosted server's own failures
    ├── LLMError                the model call failed (callers fall back)
    └── PlanRefused             a consolidation plan broke a guard rail (nothing changed)

Security errors never carry secret text: only paths, lines, rule ids and
fingerprints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class TeamsyncError(Exception):
    """Base class: an expected failure with a one-line, actionable message."""

    exit_code: int = 1


class UsageError(TeamsyncError):
    """The command line or configuration asks for something impossible."""

    exit_code = 2


class ConfigError(TeamsyncError):
    """Configuration is missing or invalid."""


class ToolMissing(TeamsyncError):
    """A program teamsync runs (git) is not installed or cannot be started."""

    @classmethod
    def from_args(cls, program: str, strerror: str | None = None) -> ToolMissing:
        why = f" ({strerror})" if strerror else ""
        return cls(f"could not run {program}{why}; install {program} and make sure it is on PATH")


class SettingsFileError(TeamsyncError):
    """A file teamsync edits on the user's behalf (git hooks, Claude Code settings) is not as expected."""

    @classmethod
    def from_args(
        cls, path: object, problem: str, remedy: str = "fix it and rerun"
    ) -> SettingsFileError:
        return cls(f"{path}: {problem}; {remedy}")


class LockBusy(TeamsyncError):
    """Another live process holds a teamsync lock; its work must finish first."""

    @classmethod
    def held_by(cls, holder: str, path: object) -> LockBusy:
        return cls(f"{holder} holds the lock {path}; wait for it to finish, then rerun")


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
        rules = ", ".join(
            sorted({f"{f.rule} (the file name)" if f.line == 0 else f"{f.rule} (line {f.line})"
                    for f in findings})
        )  # fmt: skip
        super().__init__(
            f"{path}: refused, it contains a likely secret: {rules}. Team memory is shared "
            "with every collaborator: keep the secret in a secret manager or an environment "
            "variable, and write only where it is kept."
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


class PlanRefused(TeamsyncError):
    """The consolidation plan broke a guard rail; nothing was changed."""
