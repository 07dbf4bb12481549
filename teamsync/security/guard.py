"""The write guard: the one write policy every gate into team memory applies.

Sync apply (pull and push), extraction, dream, the server, ``SafeDir`` writers
and the Claude Code hook (:mod:`teamsync.hooks.guard`) all call
:func:`write_problem` (the reason, or None), :func:`guard_write` (raise) or
:func:`safe_write` (check, then write through
:class:`~teamsync.security.fs.SafeDir`). Before any byte is written:

1. the key is validated (:func:`teamsync.security.keys.key_problem`) and, for
   memory writes, must name a ``*.md`` file with a name (``team/.md`` is refused);
2. the key itself is scanned for secrets like content (a file named for a token
   is refused by rule, and the refusal never repeats the name);
3. the content must be valid Unicode (no lone surrogates) and at most
   :data:`MAX_MEMORY_BYTES` UTF-8 bytes;
4. the *whole* resulting content is scanned for secrets
   (:func:`teamsync.security.secrets.scan_text`), not just the edited fragment.
   Inline ``teamsync: allow`` pragmas do **not** count here: the writer could add
   them itself. Only ``allowlist`` (fingerprints a person recorded in the reviewed
   allowlist, :mod:`teamsync.security.allowlist`) lets a finding through.

No reason this module produces tells the writer how to get past it: it says
what was found, where, and where the secret belongs instead. Importing this
module costs only the standard library (no yaml, no click), so the hook's fast
path stays fast.

Failures raise :class:`~teamsync.errors.KeyRejected`,
:class:`~teamsync.errors.MemoryFormatError` or
:class:`~teamsync.errors.SecretFound` (which carries findings, never the text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from teamsync.errors import KeyRejected, MemoryFormatError, SecretFound
from teamsync.limits import MAX_MEMORY_BYTES

if TYPE_CHECKING:
    from teamsync.security.fs import SafeDir
    from teamsync.security.secrets import Finding

__all__ = ["MAX_MEMORY_BYTES", "SECRET_ADVICE", "guard_write", "safe_write", "write_problem"]

SECRET_ADVICE = (
    "Team memory is shared with every collaborator of this repository: keep the secret "
    "in a secret manager or an environment variable, and write only where it is kept"
)
"""What every refusal for a secret says instead of how to get past the gate."""


def found_summary(findings: list[Finding]) -> str:
    """``rule (line N), …`` for a refusal: rules and lines, never the secret."""
    return ", ".join(
        sorted({f"{f.rule} (the file name)" if f.line == 0 else f"{f.rule} (line {f.line})"
                for f in findings})
    )  # fmt: skip


def _key_checks(key: str, memory: bool) -> tuple[str, str] | None:
    """(shown key, problem) for a key that cannot be written, else None."""
    from teamsync.security.keys import is_memory_key, key_problem
    from teamsync.security.names import name_findings, redact_name

    secret_in_name = name_findings(key) if isinstance(key, str) else []
    if secret_in_name:
        return redact_name(key), (
            f"the file name holds a likely secret: {found_summary(secret_in_name)}; "
            "name the file for its topic"
        )
    problem = key_problem(key)
    if problem is not None:
        return (key if isinstance(key, str) else repr(key)), problem
    if memory and not is_memory_key(key):  # team/.md is not a memory file either
        return key, "not a memory file (must end in .md)"
    return None


def _content_check(content: str) -> str | None:
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:
        return "content holds lone surrogates, not valid Unicode"
    if size > MAX_MEMORY_BYTES:
        return f"content is {size:,} bytes, over the {MAX_MEMORY_BYTES:,}-byte limit; split it"
    return None


def _scan(key: str, content: str, allowlist: frozenset[str]) -> list[Finding]:
    from teamsync.security.secrets import scan_text

    return scan_text(content, key, baseline=allowlist)


def write_problem(
    key: str,
    content: str,
    *,
    allowlist: frozenset[str] = frozenset(),
    memory: bool = True,
) -> str | None:
    """Why ``content`` must not be written at ``key`` (one line, no secret), or None."""
    refused = _key_checks(key, memory)
    if refused is not None:
        return f"`{refused[0]}`: {refused[1]}"
    if memory:
        problem = _content_check(content)
        if problem is not None:
            return f"`{key}`: {problem}"
    findings = _scan(key, content, allowlist)
    if findings:
        return f"`{key}` would hold a likely secret: {found_summary(findings)}. {SECRET_ADVICE}"
    return None


def guard_write(
    key: str,
    content: str,
    *,
    baseline: frozenset[str] = frozenset(),
    memory: bool = True,
) -> None:
    """Refuse to write ``content`` at ``key`` unless the key and the whole content are safe.

    ``baseline`` holds fingerprints from the reviewed allowlist. ``memory=False``
    drops the ``*.md`` and size rules for the rare non-memory file.
    """
    refused = _key_checks(key, memory)
    if refused is not None:
        raise KeyRejected(*refused)
    if memory:
        problem = _content_check(content)
        if problem is not None:
            raise MemoryFormatError(key, problem)
    findings = _scan(key, content, baseline)
    if findings:
        raise SecretFound(key, findings)


def safe_write(
    d: SafeDir,
    key: str,
    content: str,
    *,
    mtime: float | None = None,
    baseline: frozenset[str] = frozenset(),
    memory: bool = True,
) -> None:
    """:func:`guard_write`, then an atomic no-follow write through ``d``."""
    guard_write(key, content, baseline=baseline, memory=memory)
    d.write_text(key, content, mtime=mtime)
