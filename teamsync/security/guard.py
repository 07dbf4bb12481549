"""The write guard: every writer in teamsync goes through :func:`safe_write`.

Sync apply, extraction, dream, the server and the Claude Code hook all call
:func:`guard_write` (check only) or :func:`safe_write` (check, then write
through :class:`~teamsync.security.fs.SafeDir`). Before any byte is written:

1. the key is validated (:func:`teamsync.security.keys.validate_key`) and, for
   memory writes, must name a ``*.md`` file;
2. the content must be valid Unicode and at most
   :data:`teamsync.limits.MAX_MEMORY_BYTES` UTF-8 bytes;
3. the *whole* resulting content is scanned for secrets
   (:func:`teamsync.security.secrets.scan_text`), not just the edited fragment.

Failures raise :class:`~teamsync.errors.KeyRejected`,
:class:`~teamsync.errors.MemoryFormatError` or
:class:`~teamsync.errors.SecretFound` (which carries findings, never the text).
"""

from __future__ import annotations

from teamsync.errors import KeyRejected, MemoryFormatError, SecretFound
from teamsync.limits import MAX_MEMORY_BYTES
from teamsync.security.fs import SafeDir
from teamsync.security.keys import is_memory_key, validate_key

__all__ = ["guard_write", "safe_write"]


def _check_size(key: str, content: str) -> None:
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise MemoryFormatError(key, "content holds lone surrogates, not valid Unicode") from exc
    if size > MAX_MEMORY_BYTES:
        raise MemoryFormatError(
            key, f"content is {size:,} bytes, over the {MAX_MEMORY_BYTES:,}-byte limit; split it"
        )


def guard_write(
    key: str,
    content: str,
    *,
    baseline: frozenset[str] = frozenset(),
    memory: bool = True,
) -> None:
    """Refuse to write ``content`` at ``key`` unless the key and the whole content are safe.

    ``baseline`` holds allowlisted finding fingerprints. ``memory=False`` drops
    the ``*.md`` and size rules for the rare non-memory file.
    """
    validate_key(key)
    if memory:
        if not is_memory_key(key):
            raise KeyRejected(key, "not a memory file (must end in .md)")
        _check_size(key, content)
    from teamsync.security.secrets import scan_text

    findings = scan_text(content, key, baseline=baseline)
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
