"""The server's storage interface and the plain data it trades in.

One :class:`Storage` per server process. Two implementations share one
transactional algorithm (:mod:`teamsync.server.storage_sql`):
:class:`~teamsync.server.storage_sqlite.SqliteStorage` (the default, embedded)
and :class:`~teamsync.server.storage_postgres.PostgresStorage` (several server
replicas on one database). :func:`open_storage` picks one from a URL.

A repository's *store checksum* is deterministic and order-free: sha256 of the
sum of one element per live ``(key, entry checksum)`` (:func:`store_checksum`),
so a write updates it from a running digest in O(changed keys).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

from teamsync.errors import ConfigError
from teamsync.limits import DEFAULT_MAX_ENTRIES as DEFAULT_MAX_ENTRIES
from teamsync.wire import EMPTY_CHECKSUM as EMPTY_CHECKSUM
from teamsync.wire import redact_url
from teamsync.wire import store_checksum as store_checksum

SQLITE_NAME = "server.sqlite3"
Row = tuple[Any, ...]


@dataclass(frozen=True)
class Head:
    """The cheap part of a repository's state (enough for ETag checks)."""

    version: int
    checksum: str
    last_modified: float


@dataclass(frozen=True)
class RepoState:
    """A consistent view of one repository's live entries."""

    head: Head
    checksums: Mapping[str, str]
    updated_at: Mapping[str, float]
    entries: Mapping[str, str] | None = None
    """key -> content; None when loaded without contents."""


class Listing(Protocol):
    """One repository's live rows, read in one transaction that stays open until
    :meth:`close`: the head it names and the pages are one version."""

    head: Head

    def pages(self, column: Literal["content", "checksum", "updated_at"]) -> Iterator[list[Row]]:
        """``(key, value)`` pairs of every live key in key order, a bounded page at a time."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Delta:
    """What changed in a repository since one of its versions (the ``delta`` extension)."""

    head: Head
    since: int
    checksums: Mapping[str, str]
    """key -> checksum of every live key written after ``since``."""
    updated_at: Mapping[str, float]
    deleted: tuple[str, ...]
    """Keys deleted after ``since`` (and not written again)."""
    since_checksum: str | None = None
    """The store checksum at version ``since`` (None: not recorded, e.g. an older write)."""
    tombstones: Mapping[str, Tombstone] = field(default_factory=dict)
    """key -> when each of ``deleted`` was deleted and the checksum it held then (what a
    full listing sends as ``deletedEntries`` / ``deletedChecksums``)."""


class Tombstone(NamedTuple):
    """A deleted key not written again: when it was deleted and the checksum of the
    content it held then (the tombstone keeps that content)."""

    at: float
    checksum: str


@dataclass(frozen=True)
class WriteRequest:
    """One PUT, already validated key by key by the app."""

    upserts: Mapping[str, str]
    deletes: Sequence[str] = ()
    if_match: str | None = None
    """The store checksum the client planned against (``EMPTY_CHECKSUM`` for none)."""
    create_only: bool = False
    """``If-None-Match: *``: refuse when the store already holds data."""
    base_checksums: Mapping[str, str | None] | None = None
    """Per-key compare-and-swap (extension): key -> expected checksum or None (absent)."""
    who: str = "unknown"
    max_entries: int = DEFAULT_MAX_ENTRIES
    modified: Mapping[str, float] | None = None
    """key -> the sharer's change time (extension), used only when the key is created."""


@dataclass(frozen=True)
class WriteOk:
    head: Head
    changed: tuple[str, ...]
    """Keys whose stored value changed (upserted or deleted)."""
    clashed: tuple[tuple[str, str], ...] = ()
    """``(new, stored)`` pairs: a new key that clashes with a stored one (equal after
    case / NFKC folding, or a file against a folder of one name) was not written; the
    rest of the request was. Decided under the write lock."""


RefusalKind = Literal["precondition", "conflict", "too_many_entries"]


@dataclass(frozen=True)
class WriteRefused:
    kind: RefusalKind
    keys: tuple[str, ...] = ()
    """Conflicting keys (``conflict``)."""
    max_entries: int = 0
    received_entries: int = 0


@dataclass(frozen=True)
class HistoryItem:
    id: int
    at: float
    who: str
    key: str
    checksum: str | None
    action: Literal["upsert", "delete"]


@dataclass(frozen=True)
class TokenRecord:
    id: str
    token_hash: str
    repo: str
    read_only: bool
    label: str
    created_at: float
    revoked_at: float | None = None
    expires_at: float | None = None
    """POSIX time after which the token is refused (None: never expires)."""


class Storage(Protocol):
    """What the app needs from a database. Every method is one transaction."""

    url: str

    def head(self, repo: str) -> Head | None:
        """None when the repository holds nothing yet."""
        ...

    def state(self, repo: str, *, contents: bool) -> RepoState | None: ...

    def listing(self, repo: str, *, contents: bool = True) -> Listing | None:
        """A streamed read of every live row (memory bounded by a page, not the store);
        None when the repository holds nothing yet. The caller closes it. A listing
        that fits in one page (of ``contents`` too, when asked) is read at once and
        holds no transaction while it is sent."""
        ...

    def entries(self, repo: str, keys: Sequence[str]) -> RepoState | None:
        """The head and the live entries among ``keys`` (with contents), reading only those."""
        ...

    def changes_since(self, repo: str, version: int) -> Delta | None:
        """What changed after ``version``; None when that version is unknown here (too
        old, from before deltas were recorded, or never this repository's)."""
        ...

    def write(self, repo: str, request: WriteRequest, now: float) -> WriteOk | WriteRefused:
        """Apply ``request`` atomically, or refuse it without changing anything."""
        ...

    def history(self, repo: str, *, after: int, limit: int) -> list[HistoryItem]: ...

    def tombstones(self, repo: str) -> dict[str, Tombstone]:
        """key -> when and what was deleted, for every deleted key not written again
        (``deletedEntries``, and the ``deletedChecksums`` extension)."""
        ...

    def redact_deleted(self, repo: str, key: str) -> Literal["redacted", "live", "none"]:
        """Blank the text a tombstone of ``key`` keeps (the legacy dialect's only past
        text; its checksum and history rows stay): ``live`` when ``key`` is not deleted
        (nothing changed), ``none`` when no text is kept for it."""
        ...

    def add_token(self, record: TokenRecord) -> None: ...

    def get_token(self, token_id: str) -> TokenRecord | None: ...

    def list_tokens(self) -> list[TokenRecord]: ...

    def revoke_token(self, token_id: str, now: float) -> bool: ...

    def close(self) -> None: ...


def default_db_url(data_dir: Path) -> str:
    return f"sqlite:///{data_dir / SQLITE_NAME}"


def open_storage(url: str, *, pool_size: int | None = None) -> Storage:
    """``sqlite:///path`` (``sqlite:///:memory:`` for tests) or ``postgresql://…``
    (``pool_size``: the most connections this process opens, None for the default)."""
    if url.startswith("sqlite:///"):
        from teamsync.server.storage_sqlite import SqliteStorage

        return SqliteStorage(url)
    if url.startswith(("postgresql://", "postgres://")):
        from teamsync.server.storage_postgres import PostgresStorage

        return (
            PostgresStorage(url) if pool_size is None else PostgresStorage(url, pool_size=pool_size)
        )
    raise ConfigError(
        f"unsupported database URL {redact_url(url)!r}: use sqlite:///PATH or postgresql://…"
    )
