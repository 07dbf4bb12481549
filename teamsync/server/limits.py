"""The server's configuration of limits and its bounded body reader.

The limits themselves and the structured error body are the wire format's,
shared with the client: :mod:`teamsync.limits` and :mod:`teamsync.wire`
(re-exported here for the server's modules).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

from teamsync.limits import DEFAULT_MAX_ENTRIES
from teamsync.limits import MAX_BODY_BYTES as MAX_BODY_BYTES
from teamsync.limits import MAX_MEMORY_BYTES as MAX_ENTRY_BYTES
from teamsync.wire import MAX_REPO_LENGTH as MAX_REPO_LENGTH
from teamsync.wire import error_body as error_body
from teamsync.wire import normalize_repo as normalize_repo
from teamsync.wire import parse_etags as parse_etags

HISTORY_PAGE = 100
MAX_HISTORY_PAGE = 1_000


@dataclass(frozen=True)
class ServerConfig:
    db_url: str
    max_entries: int = DEFAULT_MAX_ENTRIES
    max_entry_bytes: int = MAX_ENTRY_BYTES
    max_body_bytes: int = MAX_BODY_BYTES
    allowlist: tuple[tuple[str, str], ...] = ()
    """The operator's reviewed allowlist: (repo or ``*``, fingerprint) pairs (``serve --allowlist``)."""
    pool_size: int | None = None
    """Connections this process's PostgreSQL pool may open (None: the default, 16)."""

    def allowed(self, repo: str | None) -> frozenset[str]:
        """Fingerprints the operator allowed for ``repo`` (and for every repo)."""
        return frozenset(fp for r, fp in self.allowlist if r == "*" or r == repo)


def iso(ts: float) -> str:
    """``2026-11-30T04:34:05.123Z``."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class BodyTimeout(Exception):
    """The request body did not arrive in time (raised by ``runtime.Guard``'s receive)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"request body not received within {seconds:.0f} s")
        self.seconds = seconds


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
