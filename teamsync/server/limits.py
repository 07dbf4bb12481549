"""Server limits, the structured error body, and the bounded body reader.

Every refusal the server sends has one shape::

    {"error": {"message": "...", "details": {"error_code": "...", ...}}}

which is the shape Claude Code's client parses for the entries cap (413
``team_memory_too_many_entries`` with ``max_entries`` and ``received_entries``).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from teamsync.errors import UsageError
from teamsync.server.storage import DEFAULT_MAX_ENTRIES

MAX_ENTRY_BYTES = 250_000
"""Per entry (UTF-8 bytes), as Claude Code."""
MAX_BODY_BYTES = 1_048_576
"""Per PUT body. Clients batch to 200,000 bytes; a lone 250,000-byte entry, JSON
escaped, must still fit, so the server allows 1 MiB and not a byte more."""
HISTORY_PAGE = 100
MAX_HISTORY_PAGE = 1_000
MAX_REPO_LENGTH = 200
_REPO_RE = re.compile(r"[a-z0-9][a-z0-9._-]*(/[a-z0-9._-]+)+")


@dataclass(frozen=True)
class ServerConfig:
    db_url: str
    max_entries: int = DEFAULT_MAX_ENTRIES
    max_entry_bytes: int = MAX_ENTRY_BYTES
    max_body_bytes: int = MAX_BODY_BYTES
    allowlist: tuple[tuple[str, str], ...] = ()
    """The operator's reviewed allowlist: (repo or ``*``, fingerprint) pairs (``serve --allowlist``)."""

    def allowed(self, repo: str | None) -> frozenset[str]:
        """Fingerprints the operator allowed for ``repo`` (and for every repo)."""
        return frozenset(fp for r, fp in self.allowlist if r == "*" or r == repo)


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


def error_body(code: str, message: str, **details: Any) -> dict[str, Any]:
    return {"error": {"message": message, "details": {"error_code": code, **details}}}


def iso(ts: float) -> str:
    """``2026-11-30T04:34:05.123Z``."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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


class BodyTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"request body over {limit} bytes")
        self.limit = limit


async def read_limited(
    content_length: str | None, chunks: AsyncIterator[bytes], limit: int
) -> bytes:
    """Read a body of at most ``limit`` bytes.

    A declared Content-Length over the limit is refused before a byte is read;
    a chunked or lying body is refused as soon as the running count passes it.
    """
    if content_length is not None:
        try:
            declared = int(content_length)
        except ValueError:
            declared = -1
        if declared > limit:
            raise BodyTooLarge(limit)
    buf = bytearray()
    async for chunk in chunks:
        buf += chunk
        if len(buf) > limit:
            raise BodyTooLarge(limit)
    return bytes(buf)
