"""The wire format, shared by the REST client (:mod:`teamsync.sync.rest`) and the server.

What both ends must agree on lives here and nowhere else: the endpoint, the
checksums, repository ids, entity tags and the structured error body; and the
one URL redactor both sides print URLs through (git remotes, REST servers,
database URLs). It
depends only on the standard library, :mod:`teamsync.limits` and
:mod:`teamsync.errors`, so neither side imports the other.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any, Final

from teamsync.errors import UsageError
from teamsync.limits import WIRE_PATH

PATH: Final = WIRE_PATH
HISTORY_PATH: Final = WIRE_PATH + "/history"
CAPABILITIES_PATH: Final = WIRE_PATH + "/capabilities"
ENTRIES_PATH: Final = WIRE_PATH + "/entries"
"""``POST``: read the named entries (the ``delta`` extension's batched fetch)."""
CAPS_HEADER: Final = "X-Teamsync-Extensions"
MAX_REPO_LENGTH: Final = 200
_REPO_RE = re.compile(r"[a-z0-9][a-z0-9._-]*(/[a-z0-9._-]+)+")
_USERINFO = re.compile(r"(?<=://)[^\s'\"<>]*@")


def redact_url(text: str) -> str:
    """``text`` with the credentials of every URL in it masked: ``https://user:token@host``
    and ``postgresql://role:pw@host/db`` become ``https://***@host`` and
    ``postgresql://***@host/db``. The whole user part goes (a token is often the user
    name); up to the last ``@`` before a space or quote, so a password holding ``/`` or
    ``@`` is masked too. ``git@host:path`` (no scheme) carries no secret and stays."""
    return _USERINFO.sub("***@", text)


def checksum(content: str) -> str:
    """The wire checksum of one entry: ``sha256:<hex of UTF-8 bytes>``."""
    return "sha256:" + hashlib.sha256(content.encode("utf-8")).hexdigest()


def store_checksum(entry_checksums: Mapping[str, str]) -> str:
    """The store checksum: ``sha256:`` over ``key NUL checksum LF`` for sorted keys.

    Keys never contain NUL or LF (key validation rejects control characters),
    so the encoding is unambiguous. An empty store has a fixed checksum.
    """
    digest = hashlib.sha256()
    for key in sorted(entry_checksums):
        digest.update(key.encode("utf-8") + b"\0" + entry_checksums[key].encode("ascii") + b"\n")
    return "sha256:" + digest.hexdigest()


EMPTY_CHECKSUM: Final = store_checksum({})


def normalize_repo(repo: str) -> str:
    """``owner/name`` (or ``host/group/name``), case-folded; raise UsageError otherwise."""
    folded = repo.strip().lower()
    segments = folded.split("/")
    if (
        len(folded) > MAX_REPO_LENGTH
        or not _REPO_RE.fullmatch(folded)
        or any(s in (".", "..") for s in segments)
    ):
        raise UsageError(
            f"{repo[:MAX_REPO_LENGTH]!r} is not a repository id: use OWNER/NAME "
            "(letters, digits, ._- ; a host/path form for non-GitHub remotes)"
        )
    return folded


def repo_as_written(repo: str) -> str:
    """``repo`` stripped, its case kept (as Claude Code sends it); refused as
    :func:`normalize_repo` refuses it. The server looks repositories up folded, so
    ``Acme/Widgets`` and ``acme/widgets`` are one store (existing stores stay readable)."""
    normalize_repo(repo)
    return repo.strip()


def parse_etags(header: str | None) -> list[str]:
    """Entity tags from If-Match / If-None-Match, unquoted, weak marks dropped.

    Claude Code sends the bare ``sha256:…`` checksum; RFC clients send it quoted.
    """
    if not header:
        return []
    tags = []
    for part in header.split(","):
        tag = part.strip().removeprefix("W/").strip().strip('"')
        if tag:
            tags.append(tag)
    return tags


def error_body(code: str, message: str, **details: Any) -> dict[str, Any]:
    """Every refusal's shape: ``{"error": {"message", "details": {"error_code", ...}}}``.

    It is the shape Claude Code's client parses for the entries cap (413
    ``team_memory_too_many_entries`` with ``max_entries`` and ``received_entries``).
    """
    return {"error": {"message": message, "details": {"error_code": code, **details}}}


def parse_error_body(body: bytes) -> tuple[str, dict[str, Any]]:
    """``(error.message, error.details)`` of a structured error body; ``("", {})`` otherwise."""
    import json

    try:
        error = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return "", {}
    if not isinstance(error, dict):
        return "", {}
    message, details = error.get("message"), error.get("details")
    return (
        message if isinstance(message, str) else "",
        details if isinstance(details, dict) else {},
    )


# -- the Memory Stores API (the dialect Claude Code 2.1.332 speaks) ----------------------
MEMSTORES_PATH: Final = "/v1/memory_stores"
MEMSTORE_BETA: Final = "agent-memory-2026-07-22"
"""The beta header the official SDKs send with every Memory Stores call."""
MEMORY_MAX_BYTES: Final = 102_400
"""A memory's content, in UTF-8 bytes (the store's limit)."""
MEMORY_PATH_MAX_BYTES: Final = 1_024
MEMORY_PATH_MAX_SEGMENTS: Final = 20
MEMORY_PAGE_DEFAULT: Final = 20
MEMORY_PAGE_MAX: Final = 100
MEMORY_PAGE_MAX_FULL: Final = 20
"""A page of ``view=full`` items holds at most this many."""
MANIFEST_NAME: Final = ".memory-sync"
"""Claude Code's mount manifest: bookkeeping in a mounted store's directory, never a memory."""


def memory_sha256(content: str) -> str:
    """A memory's ``content_sha256``: lowercase hex SHA-256 of the UTF-8 bytes."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def memory_path_problem(path: str) -> str | None:
    """Why ``path`` is not a store path, or None (the API's rules, as the SDK documents them).

    Starts with ``/``; 1-20 segments, none empty, ``.`` or ``..``; no control or
    format character, no U+2028/U+2029; Unicode NFC; at most 1,024 UTF-8 bytes.
    """
    import unicodedata

    if not isinstance(path, str) or not path.startswith("/"):
        return "a memory path starts with /"
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        return "the path is not valid Unicode (a lone surrogate)"
    if size > MEMORY_PATH_MAX_BYTES:
        return f"the path is {size} bytes, over the store's {MEMORY_PATH_MAX_BYTES}-byte limit"
    segments = path[1:].split("/")
    if len(segments) > MEMORY_PATH_MAX_SEGMENTS:
        return f"the path has {len(segments)} segments, over the store's limit of 20"
    if any(seg in ("", ".", "..") for seg in segments):
        return "a path segment is empty, . or .."
    for ch in path:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            return f"the path holds the control or format character U+{ord(ch):04X}"
    if not unicodedata.is_normalized("NFC", path):
        return "the path is not in Unicode Normalization Form C"
    return None


def memstore_error(kind: str, message: str) -> dict[str, Any]:
    """The Anthropic API's error body: ``{"type": "error", "error": {"type", "message"}}``."""
    return {"type": "error", "error": {"type": kind, "message": message}}
