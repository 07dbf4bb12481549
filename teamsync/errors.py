"""The teamsync exception tree.

Every error teamsync raises on purpose is a :class:`TeamsyncError`; the CLI
maps it to exit code 1 and prints its message (one line: what failed and what
to do). Third-party errors (YAML, git, httpx2, the Anthropic SDK) are
translated at the module boundary with ``raise ... from exc``.

::

    TeamsyncError
    ├── UsageError              bad arguments or configuration (exit 2)
    ├── ConfigError             missing or invalid configuration
    │   ├── MissingExtra        an optional dependency is not installed (names the extra)
    │   ├── ScannerUnsupported  the installed detect-secrets lacks what the scanner drives
    │   └── HandshakeMismatch   the installed MCP SDK answers initialize otherwise than teamsync
    ├── EmbedUnavailable        hybrid recall asked for, its extra or model files missing
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
    │   │   └── TooManyEntries  the server's entry cap refused a push (413)
    │   ├── RestoreError        no kept version to restore, or a current file in the way
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

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any


class TeamsyncError(Exception):
    """Base class: an expected failure with a one-line, actionable message."""

    exit_code: int = 1
    kind: str | None = None
    """A stable machine-readable name for ``--json`` errors (default: from the class name)."""
    detail: str | None = None
    """More about the cause, printed with ``--verbose`` (set only by a raiser that made it
    safe to print: redacted and escaped, never a secret or memory content)."""


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


class MissingExtra(ConfigError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, module: str, extra: str = "all", what: str = "this feature") -> None:
        super().__init__(
            f"{what} needs the optional package {module!r}, which is not installed: "
            f"pip install 'teamsync[{extra}] @ git+URL' (see docs/ci.md#install)"
        )
        self.module = module
        self.extra = extra


class ScannerUnsupported(ConfigError):
    """The installed detect-secrets does not have the internals the generic layer drives.

    Not a :class:`SecurityError`: no memory is at fault, so a gate stops as a whole
    (nothing is written or sent unscanned) instead of refusing each memory in turn.
    """


class HandshakeMismatch(ConfigError):
    """The installed MCP SDK answered ``initialize`` otherwise than ``teamsync mcp``'s
    quick answer (an SDK release teamsync does not know)."""


class EmbedUnavailable(TeamsyncError):
    """Hybrid recall was asked for but the extra (or its model files) is missing or damaged."""


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


SECRET_ADVICE = (
    "Team memory is shared with every collaborator of this repository: keep the secret "
    "in a secret manager or an environment variable, and write only where it is kept"
)
"""What every refusal for a secret says instead of how to get past the gate."""


def where_found(findings: Sequence[Any]) -> str:
    """``rule (line N), …`` for a refusal: rules and lines (or "the file name"), never the secret."""
    return ", ".join(
        sorted({f"{f.rule} (the file name)" if f.line == 0 else f"{f.rule} (line {f.line})"
                for f in findings})
    )  # fmt: skip


class SecretFound(SecurityError):
    """Content holds one or more secrets. Carries findings, never the secret."""

    def __init__(self, path: str, findings: Sequence[Any]) -> None:
        rules = where_found(findings)
        super().__init__(f"{path}: refused, it contains a likely secret: {rules}. {SECRET_ADVICE}.")
        self.path = path
        self.findings = list(findings)


class SyncError(TeamsyncError):
    """Synchronisation failed."""


class BackendError(SyncError):
    """The remote failed or answered something we refuse to trust."""


class TooManyEntries(BackendError):
    """The server's entry cap refused a batch (413 ``team_memory_too_many_entries``)."""

    def __init__(self, where: str, most: object, got: object, text: str | None = None) -> None:
        super().__init__(
            text
            or f"{where} holds at most {most} memories per repository and this push would "
            f"make {got}; delete memories the team no longer needs, then push again"
        )
        self.where, self.most = where, most

    def after_partial_push(self, stored: int, total: int | None) -> TooManyEntries:
        """The message once earlier batches of the same push were already stored."""
        whole = f"this push would make {total}" if total is not None else "this push is larger"
        kept = (
            f"; {stored} of its memories were already stored (the rest were not sent)"
            if stored
            else ""
        )
        text = (
            f"{self.where} holds at most {self.most} memories per repository and {whole}{kept}. "
            "Delete memories the team no longer needs, then push again"
        )
        return TooManyEntries(self.where, self.most, total, text)


class RestoreError(SyncError):
    """``teamsync restore`` cannot bring the asked-for version back (none kept, or a newer file)."""


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
