"""The legacy dialect, reading: Claude Code's team-memory listing, vetted entry by entry.

Pure functions over the decoded JSON (no I/O): the full view (``content.entries``)
and ``view=hashes`` (``entryChecksums``) become a :class:`~teamsync.sync.base.Snapshot`
after every entry is checked: key, ``*.md``, size, UTF-8, NUL bytes, the checksum
the server claims, case/NFKC collisions and file/folder clashes, the entry cap.
Refused entries land in :attr:`Snapshot.rejected` with a reason. Claude Code
2.1.197's ``deletedEntries`` become :attr:`Snapshot.deleted` and a 200 answer's
``rejectedEntries`` the held keys of a push (:func:`refused_entries`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from teamsync.errors import BackendError
from teamsync.security.keys import key_clashes
from teamsync.security.names import printable
from teamsync.sync.base import Snapshot, checksum
from teamsync.sync.local import file_problem

Cap = Callable[[int], int]
"""How many entries to take from a listing of ``n`` (the client's cap, maybe the server's)."""


def json_object(body: bytes, where: str) -> dict[str, Any]:
    """``body`` as a JSON object, or a :class:`BackendError` naming ``where``."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise BackendError(f"{where} answered something that is not JSON; refused") from exc
    if not isinstance(data, dict):
        raise BackendError(f"{where} answered JSON that is not an object; refused")
    return data


def serial(data: Mapping[str, Any]) -> int | None:
    """The server's version counter (``version``), when it is a plain non-negative integer."""
    value = data.get("version")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def store_version(data: Mapping[str, Any], head: Mapping[str, str], where: str) -> str:
    """The store checksum an answer names (its ``checksum``, else its ETag)."""
    version = data.get("checksum") or head.get("etag", "").strip('"') or None
    if not isinstance(version, str):
        raise BackendError(f"{where} answered a non-string checksum; refused")
    return version


def parse_full(
    data: Mapping[str, Any], head: Mapping[str, str], where: str, cap: Cap
) -> tuple[Snapshot, dict[str, str]]:
    """The full view: the snapshot and the texts it lists (each one vetted)."""
    content = data.get("content")
    entries = content.get("entries") if isinstance(content, dict) else None
    if not isinstance(content, dict) or not isinstance(entries, dict):
        raise BackendError(f"{where} answered without content.entries; refused")
    claimed = content.get("entryChecksums") if isinstance(content, dict) else None
    claimed = claimed if isinstance(claimed, dict) else {}
    version = store_version(data, head, where)
    texts, rejected = validate(entries, claimed, cap(len(entries)))
    stamps = data.get("entryLastModified")
    changed = times(stamps, texts) if isinstance(stamps, dict) else {}
    snap = Snapshot(
        version=version,
        checksums={k: checksum(t) for k, t in texts.items()},
        changed_at=changed,
        rejected=rejected,
        serial=serial(data),
        deleted=(gone := deleted_at(content.get("deletedEntries"), texts)),
        deleted_sums=deleted_sums(content.get("deletedChecksums"), gone),
    )
    return snap, texts


def parse_hashes(
    data: Mapping[str, Any], head: Mapping[str, str], where: str, cap: Cap
) -> Snapshot:
    """``view=hashes``: keys are checked now (names, clashes, cap); contents at fetch."""
    sums = data.get("entryChecksums")
    if not isinstance(sums, dict):
        raise BackendError(f"{where} answered without entryChecksums; refused")
    version = store_version(data, head, where)
    listed, rejected = _split(sums, cap(len(sums)), _hash_problem)
    stamps = data.get("entryLastModified")
    changed = times(stamps, listed) if isinstance(stamps, dict) else {}
    return Snapshot(
        version=version,
        checksums=listed,
        changed_at=changed,
        rejected=rejected,
        deleted=(gone := deleted_at(data.get("deletedEntries"), listed)),
        deleted_sums=deleted_sums(data.get("deletedChecksums"), gone),
        serial=serial(data),
    )


def validate(
    entries: Mapping[Any, Any], claimed: Mapping[Any, Any], cap: int
) -> tuple[dict[str, str], dict[str, str]]:
    """Split a server listing into acceptable texts and ``key -> reason`` refusals."""

    def problem(key: str, text: object) -> str | None:
        if not isinstance(text, str):
            return "content is not text"
        return entry_problem(key, text, claimed.get(key))

    return _split(entries, cap, problem)


def _split(
    items: Mapping[Any, Any], cap: int, problem: Callable[[str, Any], str | None]
) -> tuple[dict[str, Any], dict[str, str]]:
    """``items`` (only string keys, sorted, at most ``cap``) split into the kept ones and
    ``key -> reason`` refusals: ``problem(key, value)``, then case/NFKC and file/folder
    clashes among the kept."""
    kept: dict[str, Any] = {}
    rejected: dict[str, str] = {}
    for n, key in enumerate(sorted(k for k in items if isinstance(k, str))):
        value = items[key]
        why = (
            f"over the client's limit of {cap} entries per repository"
            if n >= cap
            else problem(key, value)
        )
        if why is None:
            kept[key] = value
        else:
            rejected[key] = why
    for key, reason in key_clashes(kept).items():
        rejected[key] = reason
        kept.pop(key, None)
    return kept, rejected


def _hash_problem(key: str, value: object) -> str | None:
    if not isinstance(value, str) or not value.startswith("sha256:"):
        return "the server listed no usable checksum for it"
    return file_problem(key)


def entry_problem(key: str, text: str, claimed: object) -> str | None:
    """Why one entry cannot be taken (None: it can)."""
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return "content is not valid UTF-8"
    problem = file_problem(key, size)
    if problem is not None:
        return problem
    if "\x00" in text:
        return "content holds NUL bytes (not a text memory)"
    if claimed is not None and claimed != checksum(text):
        return "content does not match the checksum the server listed for it"
    return None


def fetched_problem(key: str, text: object, planned: str | None) -> str | None:
    """Why a fetched entry is not the version the snapshot planned on (None: it is)."""
    if not isinstance(text, str):
        return "content is not text"
    problem = entry_problem(key, text, None)
    if problem is None and checksum(text) != planned:
        return "content does not match the checksum the server listed for it"
    return problem


def deleted_at(raw: object, live: Mapping[str, str]) -> dict[str, float]:
    """``deletedEntries`` (key -> deletion time, in ms since the epoch as Claude Code
    sends it, or s): only safe memory keys that are not live, only sane times."""
    out: dict[str, float] = {}
    for key, when in raw.items() if isinstance(raw, dict) else ():
        if not isinstance(key, str) or key in live or file_problem(key) is not None:
            continue
        if isinstance(when, bool) or not isinstance(when, int | float) or when <= 0:
            continue
        seconds = when / 1000 if when > 1e11 else float(when)
        if seconds < time.time() + 86_400:
            out[key] = seconds
    return out


def deleted_sums(raw: object, deleted: Mapping[str, float]) -> dict[str, str]:
    """``deletedChecksums`` (teamsync's extension: key -> checksum of what was deleted),
    only for keys ``deletedEntries`` listed, only well-formed checksums."""
    out: dict[str, str] = {}
    for key, value in raw.items() if isinstance(raw, dict) else ():
        if key in deleted and isinstance(value, str) and _is_sha(value):
            out[key] = value
    return out


def _is_sha(value: str) -> bool:
    digest = value.removeprefix("sha256:")
    return len(value) == 71 and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)


def times(stamps: Mapping[Any, Any], keys: Mapping[str, str]) -> dict[str, float]:
    """``entryLastModified`` (ISO times) for ``keys``; an unreadable time is left out."""
    out: dict[str, float] = {}
    for key in keys:
        raw = stamps.get(key)
        if isinstance(raw, str):
            try:
                out[key] = datetime.fromisoformat(raw).timestamp()
            except ValueError:
                continue
    return out


def refused_entries(data: Mapping[str, Any]) -> dict[str, str]:
    """``rejectedEntries`` of a 200 answer: key -> the server's reason (printable)."""
    items = data.get("rejectedEntries")
    out: dict[str, str] = {}
    for item in items if isinstance(items, list) else []:
        key = item.get("key") if isinstance(item, dict) else None
        why = item.get("reason") if isinstance(item, dict) else None
        if isinstance(key, str):
            out[key] = printable(why[:300]) if isinstance(why, str) else "refused by the server"
    return out
