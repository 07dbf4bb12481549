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

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field

from teamsync.errors import (
    SECRET_ADVICE,
    KeyRejected,
    MemoryFormatError,
    SecretFound,
    SecurityError,
    where_found,
)
from teamsync.limits import MAX_MEMORY_BYTES

TYPE_CHECKING = False  # typing's, without importing typing on the hook path

if TYPE_CHECKING:
    from teamsync.security.fs import SafeDir
    from teamsync.security.secrets import Finding

__all__ = [
    "MAX_MEMORY_BYTES",
    "SECRET_ADVICE",
    "Verdicts",
    "guard_many",
    "guard_write",
    "safe_write",
    "scanner_identity",
    "write_problem",
]


def _key_checks(key: str, memory: bool) -> tuple[str, str] | None:
    """(shown key, problem) for a key that cannot be written, else None."""
    from teamsync.security.keys import is_memory_key, key_problem
    from teamsync.security.names import name_findings, redact_name

    secret_in_name = name_findings(key) if isinstance(key, str) else []
    if secret_in_name:
        return redact_name(key), (
            f"the file name holds a likely secret: {where_found(secret_in_name)}; "
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
        return f"`{key}` would hold a likely secret: {where_found(findings)}. {SECRET_ADVICE}"
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


@dataclass
class Verdicts:
    """What :func:`guard_many` decided."""

    refused: dict[str, SecurityError | MemoryFormatError] = field(default_factory=dict)
    """key -> the error :func:`guard_write` would raise for it."""
    clean: set[str] = field(default_factory=set)
    """Keys whose content was scanned here and had no finding at all (before the
    allowlist): content a caller may remember as vetted under :func:`scanner_identity`."""


def guard_many(
    items: Iterable[tuple[str, str, bool]],
    *,
    baseline: frozenset[str] = frozenset(),
) -> Verdicts:
    """:func:`guard_write` for many ``(key, content, scan)`` at once (distinct keys).

    The key and content rules apply to every item. The secret scan applies to
    the items whose ``scan`` is True (False only for content this machine
    already scanned clean under the same :func:`scanner_identity`), all in one
    :class:`~teamsync.security.secrets.Scanner` pass: the findings are those of
    a separate :func:`guard_write` per item, and the generic layer runs once.
    """
    from teamsync.security.secrets import Scanner, engine_for

    items = list(items)
    verdicts = Verdicts()
    # raw findings (the allowlist is applied per key below), Hyperscan at once for a big pass
    scanner = Scanner(engine=engine_for(sum(len(c) for _, c, scan in items if scan)))
    scanned: list[str] = []
    for key, content, scan in items:
        refused = _key_checks(key, True)
        if refused is not None:
            verdicts.refused[key] = KeyRejected(*refused)
            continue
        problem = _content_check(content)
        if problem is not None:
            verdicts.refused[key] = MemoryFormatError(key, problem)
        elif scan:
            scanner.add(content, key)
            scanned.append(key)
    found: dict[str, list[Finding]] = {}
    for finding in scanner.finish():
        found.setdefault(finding.path, []).append(finding)
    for key in scanned:
        findings = found.get(key)
        if not findings:
            verdicts.clean.add(key)
            continue
        kept = [f for f in findings if f.fingerprint not in baseline]
        if kept:
            verdicts.refused[key] = SecretFound(key, kept)
    return verdicts


SCANNER_SOURCES = ("rules.py", "secrets.py", "_generic.py", "_prefilter.py", "names.py")
"""The files of this package a scan's verdict must come from (all must be readable)."""


@functools.cache
def scanner_identity() -> str | None:
    """What a clean verdict depends on: the scanner's own code (rules included),
    detect-secrets, and the interpreter whose ``re`` and Unicode tables run the rules.

    Content scanned clean under one identity need not be scanned again under it;
    any change to a file of :mod:`teamsync.security`, to detect-secrets, to the
    Python version or to its Unicode database gives a new identity. None when it cannot be established (sources not readable as
    files): then nothing counts as vetted. Reads files only (about 1 ms): no
    scanner module is imported.
    """
    import hashlib
    import importlib.util
    import sys
    import unicodedata
    from pathlib import Path

    here = Path(__file__).parent
    digest = hashlib.sha256(b"teamsync-scan-v1")
    digest.update(f"{sys.version}\0{unicodedata.unidata_version}\0".encode())
    try:
        names = sorted(p.name for p in here.glob("*.py"))
        if not set(SCANNER_SOURCES) <= set(names):
            return None
        for name in names:
            digest.update(name.encode() + b"\0" + (here / name).read_bytes())
        spec = importlib.util.find_spec("detect_secrets")
        folders = None if spec is None else spec.submodule_search_locations
        if not folders:
            return None
        digest.update((Path(next(iter(folders))) / "__version__.py").read_bytes())
    except (OSError, ImportError, ValueError):
        return None
    return "scan-v1:" + digest.hexdigest()


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
