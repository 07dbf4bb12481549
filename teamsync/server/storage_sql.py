"""The one transactional algorithm both SQL databases run.

A write locks the repository row first (SQLite: ``BEGIN IMMEDIATE``;
PostgreSQL: ``SELECT … FOR UPDATE``), so every precondition below is checked
and applied against a state nobody else can change meanwhile:

1. ``If-None-Match: *`` (create-only) and per-key ``baseChecksums`` (409);
2. ``If-Match`` against the store checksum (412);
3. clashes of new keys with live keys: equal after case/NFKC folding,
   or a file whose name another key needs as a folder (``a.md``,
   ``A.md/x.md``). The candidates are found through the ``folded`` column
   (an index, compared in byte order), and the clash itself is decided by
   :func:`~teamsync.security.keys.clashes_with` on their keys; the column is
   re-folded at startup when the folding changes (:data:`FOLDING`). A key
   deleted in the same request frees its name, so a case-only rename (delete
   ``Deploy.md``, upsert ``deploy.md``) passes. A clashing new key is left out of
   the write and reported (:attr:`WriteOk.clashed`); the rest is written;
4. the entries cap counted after the merge (413), from the live count kept
   with the digest;

then upserts and tombstones are written, each with an append-only history row.
A write costs O(changed keys), whatever the size of the store: it reads only
the rows its keys name (and, for new keys, the few that could clash), and
updates the store checksum from a running digest kept per repository
(``ts_digests``; :func:`teamsync.wire.store_digest`), never from every row.
A tombstone keeps the content it deleted (:meth:`SqlStorage.last_content`).
SQL is written with ``?`` placeholders; the PostgreSQL transaction rewrites them.
"""

from __future__ import annotations

import abc
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from teamsync._version import __version__
from teamsync.security.keys import clashes_with, fold_key
from teamsync.server.storage import (
    Delta,
    Head,
    HistoryItem,
    RepoState,
    TokenRecord,
    Tombstone,
    WriteOk,
    WriteRefused,
    WriteRequest,
)
from teamsync.wire import (
    EMPTY_CHECKSUM,
    LEGACY_EMPTY_CHECKSUM,
    checksum,
    digest_add,
    digest_checksum,
    entry_element,
    store_digest,
)

Row = tuple[Any, ...]
WriteResult = WriteOk | WriteRefused
FOLDING = f"teamsync {__version__}, Unicode {unicodedata.unidata_version}"
"""What built the ``folded`` column: :func:`~teamsync.security.keys.fold_key` may change
with either; the column is then re-folded at startup (:meth:`SqlStorage._upgrade`)."""
LIVE = "+deleted = 0"
"""Live rows, as a filter only: the unary plus keeps SQLite from choosing the
``(repo_id, deleted)`` index, which is every live row of the repository, over the
key or folded-key index a lookup means."""
IN_CHUNK = 500
"""Keys per ``IN (…)`` list (well under SQLite's and PostgreSQL's parameter limits)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS ts_repos (
  id {serial}, name TEXT NOT NULL UNIQUE, version BIGINT NOT NULL DEFAULT 0,
  checksum TEXT NOT NULL, updated_at {real} NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS ts_entries (
  repo_id BIGINT NOT NULL REFERENCES ts_repos(id), key TEXT NOT NULL, folded TEXT NOT NULL,
  content TEXT, checksum TEXT, deleted INTEGER NOT NULL DEFAULT 0,
  updated_at {real} NOT NULL, updated_by TEXT NOT NULL, PRIMARY KEY (repo_id, key));
CREATE INDEX IF NOT EXISTS ts_entries_live ON ts_entries (repo_id, deleted);
CREATE TABLE IF NOT EXISTS ts_history (
  id {serial}, repo_id BIGINT NOT NULL REFERENCES ts_repos(id), at {real} NOT NULL,
  who TEXT NOT NULL, key TEXT NOT NULL, checksum TEXT, action TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS ts_history_repo ON ts_history (repo_id, id);
CREATE TABLE IF NOT EXISTS ts_serials (
  repo_id BIGINT NOT NULL REFERENCES ts_repos(id), version BIGINT NOT NULL,
  history_id BIGINT NOT NULL, PRIMARY KEY (repo_id, version));
CREATE TABLE IF NOT EXISTS ts_serial_sums (
  repo_id BIGINT NOT NULL REFERENCES ts_repos(id), version BIGINT NOT NULL,
  checksum TEXT NOT NULL, PRIMARY KEY (repo_id, version));
CREATE TABLE IF NOT EXISTS ts_tokens (
  id TEXT PRIMARY KEY, token_hash TEXT NOT NULL, repo TEXT NOT NULL, read_only INTEGER NOT NULL,
  label TEXT NOT NULL, created_at {real} NOT NULL, revoked_at {real});
CREATE TABLE IF NOT EXISTS ts_token_expiry (
  id TEXT PRIMARY KEY REFERENCES ts_tokens(id), expires_at {real} NOT NULL);
CREATE TABLE IF NOT EXISTS ts_digests (
  repo_id BIGINT PRIMARY KEY REFERENCES ts_repos(id), version BIGINT NOT NULL,
  live BIGINT NOT NULL, digest TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS ts_entries_fold ON ts_entries (repo_id, folded{binary});
CREATE TABLE IF NOT EXISTS ts_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# Token expiries live in their own table so databases created before expiries
# existed need no ALTER TABLE (portable across SQLite and PostgreSQL); so do the
# serials: repository version -> the last history row it includes (the delta view);
# serial sums: version -> the store checksum at that version (a client checks its mark: a
# restored database that was written again holds other content under that number);
# and the digests: per repository, the running store digest and live count at
# one version (a write updates them in O(changed keys); see teamsync.wire.store_digest).
# ts_meta records which folding built the ``folded`` column (FOLDING): a newer
# fold_key or Unicode database re-folds the column once, at startup.

UPSERT = (
    "INSERT INTO ts_entries (repo_id, key, folded, content, checksum, deleted, updated_at,"
    " updated_by) VALUES (?, ?, ?, ?, ?, 0, ?, ?) ON CONFLICT (repo_id, key) DO UPDATE SET"
    " folded = excluded.folded, content = excluded.content, checksum = excluded.checksum,"
    " deleted = 0, updated_at = excluded.updated_at, updated_by = excluded.updated_by"
)
TOMBSTONE = "UPDATE ts_entries SET deleted = 1, updated_at = ?, updated_by = ? WHERE repo_id = ? AND key = ?"
"""A tombstone keeps the last content and its checksum: a delete stays recoverable."""
HISTORY = (
    "INSERT INTO ts_history (repo_id, at, who, key, checksum, action) VALUES (?, ?, ?, ?, ?, ?)"
)
SERIAL = (
    "INSERT INTO ts_serials (repo_id, version, history_id) SELECT ?, ?, id FROM ts_history"
    " WHERE repo_id = ? ORDER BY id DESC LIMIT 1"
)
"""A version's serial: the last history row it includes (the index's last row; MAX() with
a WHERE scans the repository)."""
SERIAL_SUM = "INSERT INTO ts_serial_sums (repo_id, version, checksum) VALUES (?, ?, ?)"
TOKEN_COLS = "id, token_hash, repo, read_only, label, created_at, revoked_at"
TOKEN_SELECT = (
    "SELECT t.id, t.token_hash, t.repo, t.read_only, t.label, t.created_at, t.revoked_at,"
    " e.expires_at FROM ts_tokens t LEFT JOIN ts_token_expiry e ON e.id = t.id"
)


Step = tuple[str, Sequence[Sequence[object]]]
"""A statement and the parameter rows to run it with (no result read)."""


class Tx(Protocol):
    def q(self, sql: str, params: Sequence[object] = ()) -> list[Row]: ...

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None: ...

    def batch(self, steps: Sequence[Step]) -> None:
        """Run every step, in order, reading no result (PostgreSQL: one pipeline, one
        round trip for all)."""
        ...

    def stream(self, sql: str, params: Sequence[object], size: int) -> Iterator[list[Row]]:
        """The rows of ``sql`` in pages of ``size``, never all at once (a server-side
        cursor where the database has one)."""
        ...


PAGE_ROWS = {"content": 32, "checksum": 2000, "updated_at": 2000}
"""Rows per page of a streamed listing: contents are up to 250,000 bytes each."""


class SqlListing:
    """:class:`~teamsync.server.storage.Listing` over an open read transaction."""

    def __init__(self, head: Head, repo_id: int, tx: Tx, done: Callable[[], None]) -> None:
        self.head, self._repo_id, self._tx, self._done = head, repo_id, tx, done

        self._held: dict[str, list[Row]] = {}

    def pages(self, column: Literal["content", "checksum", "updated_at"]) -> Iterator[list[Row]]:
        if column in self._held:
            yield self._held[column]
            return
        sql = f"SELECT key, {column} FROM ts_entries WHERE repo_id = ? AND {LIVE} ORDER BY key"
        yield from self._tx.stream(sql, (self._repo_id,), PAGE_ROWS[column])

    def hold(self, columns: Sequence[Literal["content", "checksum", "updated_at"]]) -> None:
        """Read ``columns`` now (each within one page) and end the transaction: a small
        listing then holds no connection while a slow client reads it."""
        for column in columns:
            self._held[column] = [row for page in self.pages(column) for row in page]
        self.close()

    def close(self) -> None:
        done, self._done = self._done, lambda: None
        done()


def check_request(req: WriteRequest, live: Mapping[str, str], head: Locked) -> WriteRefused | None:
    """The preconditions of :class:`WriteRequest`, against the locked state.

    ``live`` holds the live rows among the keys the request names (every upsert,
    delete and ``baseChecksums`` key), so nothing here reads the whole repository.
    """
    if req.create_only and head.version > 0:
        return WriteRefused("precondition")
    if req.base_checksums:
        bad = sorted(k for k, want in req.base_checksums.items() if live.get(k) != want)
        if bad:
            return WriteRefused("conflict", keys=tuple(bad))
    if req.if_match is not None and not head.matches(req.if_match):
        return WriteRefused("precondition")
    return None


def clashing(
    req: WriteRequest, live: Mapping[str, str], neighbours: Callable[[Sequence[str]], Iterable[str]]
) -> list[tuple[str, str]]:
    """``(new, other)`` pairs: the new keys of ``req`` that clash with a stored key (or
    with another new key) once the request is applied; each such key is left out of the
    write, the rest goes ahead. ``neighbours(new)`` gives the stored live keys that
    could clash with the ``new`` keys (same folding, or a folder/file relation). A key
    deleted in the same request frees its name (a case-only rename)."""
    new = [key for key in req.upserts if key not in live]
    if not new:
        return []
    deletes = set(req.deletes) - set(req.upserts)
    return clashes_with(new, (set(neighbours(new)) - deletes) | set(req.upserts))


def check_cap(req: WriteRequest, live: Mapping[str, str], head: Locked) -> WriteRefused | None:
    """The entries cap, counted after the merge (413)."""
    deletes = set(req.deletes) - set(req.upserts)
    new = [key for key in req.upserts if key not in live]
    count = head.live - len(deletes & live.keys()) + len(new)
    if count > req.max_entries and count > head.live:
        return WriteRefused("too_many_entries", max_entries=req.max_entries, received_entries=count)
    return None


def without(req: WriteRequest, keys: Collection[str]) -> WriteRequest:
    """``req`` with the upserts of ``keys`` left out (and their per-key preconditions)."""
    if not keys:
        return req
    base = req.base_checksums
    return replace(
        req,
        upserts={k: v for k, v in req.upserts.items() if k not in keys},
        base_checksums=None if base is None else {k: v for k, v in base.items() if k not in keys},
    )


@dataclass
class Locked:
    """A repository's row under the write lock: its version, checksum, digest and size."""

    repo_id: int
    version: int
    updated: float
    checksum: str
    digest: int
    live: int

    def matches(self, tag: str) -> bool:
        """``If-Match`` holds: the store checksum, or the legacy one of an empty store."""
        return tag == self.checksum or (self.live == 0 and tag == LEGACY_EMPTY_CHECKSUM)


class SqlStorage(abc.ABC):
    """:class:`~teamsync.server.storage.Storage` over a DB-API database."""

    url: str
    serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
    real = "REAL"
    lock_suffix = ""
    lock_of_repo = ""
    """How the write's first statement locks the ``ts_repos`` row it joins (PostgreSQL)."""
    binary = ""
    """How ``folded`` compares in byte order (SQLite's default; PostgreSQL's ``COLLATE "C"``)."""

    @abc.abstractmethod
    def _tx(self, *, write: bool) -> AbstractContextManager[Tx]:
        """A transaction; ``write`` ones serialize against each other."""

    def _write_queue(self, repo: str) -> AbstractContextManager[object]:
        """Where a write to ``repo`` waits before its transaction (nothing by default)."""
        return nullcontext()

    def _write_tx(self, repo: str, work: Callable[[Tx], WriteResult]) -> WriteResult:
        """Run ``work`` in a write transaction and return its result once committed
        (SQLite: in a transaction shared with concurrent writers, one commit for all)."""
        with self._write_queue(repo), self._tx(write=True) as tx:
            return work(tx)

    @abc.abstractmethod
    def _read_apart(self) -> AbstractContextManager[Tx]:
        """A read transaction on a connection of its own, which may outlive the thread that
        opened it (a streamed listing is read a page at a time from pool threads)."""

    def listing(self, repo: str, *, contents: bool = True) -> SqlListing | None:
        stack = ExitStack()
        try:
            tx = stack.enter_context(self._read_apart())
            head = _repo_head(tx, repo)
            if head is None:
                stack.close()
                return None
            listing = SqlListing(head[1], head[0], tx, stack.close)
            columns: list[Literal["content", "checksum", "updated_at"]] = ["checksum", "updated_at"]
            columns += ["content"] if contents else []
            live = tx.q("SELECT live FROM ts_digests WHERE repo_id = ?", (head[0],))
            if live and int(live[0][0]) <= min(PAGE_ROWS[c] for c in columns):
                listing.hold(columns)  # one page of each: read now, connection released
        except BaseException:
            stack.close()
            raise
        return listing

    def _schema(self) -> list[str]:
        ddl = SCHEMA.format(serial=self.serial, real=self.real, binary=self.binary)
        return [stmt.strip() for stmt in ddl.split(";") if stmt.strip()]

    # -- repositories ---------------------------------------------------------------
    def head(self, repo: str) -> Head | None:
        with self._tx(write=False) as tx:
            rows = tx.q(
                "SELECT version, checksum, updated_at FROM ts_repos WHERE name = ?", (repo,)
            )
        if not rows or rows[0][0] == 0:
            return None
        return Head(int(rows[0][0]), str(rows[0][1]), float(rows[0][2]))

    def state(self, repo: str, *, contents: bool) -> RepoState | None:
        cols = "key, checksum, updated_at" + (", content" if contents else "")
        with self._tx(write=False) as tx:
            rows = tx.q(
                "SELECT id, version, checksum, updated_at FROM ts_repos WHERE name = ?", (repo,)
            )
            if not rows or rows[0][1] == 0:
                return None
            repo_id, version, check, updated = rows[0]
            entries = tx.q(
                f"SELECT {cols} FROM ts_entries WHERE repo_id = ? AND deleted = 0", (repo_id,)
            )
        return RepoState(
            head=Head(int(version), str(check), float(updated)),
            checksums={r[0]: r[1] for r in entries},
            updated_at={r[0]: float(r[2]) for r in entries},
            entries={r[0]: r[3] for r in entries} if contents else None,
        )

    def entries(self, repo: str, keys: Sequence[str]) -> RepoState | None:
        wanted = list(dict.fromkeys(keys))
        with self._tx(write=False) as tx:
            head = _repo_head(tx, repo)
            if head is None:
                return None
            repo_id, current = head
            rows = _rows_for(tx, "key, checksum, updated_at, content", LIVE, repo_id, wanted)
        return RepoState(
            head=current,
            checksums={r[0]: r[1] for r in rows},
            updated_at={r[0]: float(r[2]) for r in rows},
            entries={r[0]: r[3] for r in rows},
        )

    def changes_since(self, repo: str, version: int) -> Delta | None:
        with self._tx(write=False) as tx:
            head = _repo_head(tx, repo)
            if head is None or version > head[1].version:
                return None
            repo_id, current = head
            if version == current.version:
                return Delta(current, version, {}, {}, (), current.checksum)
            mark = tx.q(
                "SELECT history_id FROM ts_serials WHERE repo_id = ? AND version = ?",
                (repo_id, version),
            )
            if not mark:
                return None
            at = tx.q(
                "SELECT checksum FROM ts_serial_sums WHERE repo_id = ? AND version = ?",
                (repo_id, version),
            )
            keys = [
                str(r[0])
                for r in tx.q(
                    "SELECT DISTINCT key FROM ts_history WHERE repo_id = ? AND id > ?",
                    (repo_id, mark[0][0]),
                )
            ]
            rows = _rows_for(tx, "key, checksum, updated_at, deleted", "1 = 1", repo_id, keys)
        live = [r for r in rows if not r[3]]
        gone = [r for r in rows if r[3]]
        return Delta(
            head=current,
            since=version,
            checksums={r[0]: r[1] for r in live},
            updated_at={r[0]: float(r[2]) for r in live},
            deleted=tuple(sorted(r[0] for r in gone)),
            since_checksum=str(at[0][0]) if at else None,
            tombstones={str(r[0]): Tombstone(float(r[2]), str(r[1])) for r in gone},
        )

    def _lock_repo(self, tx: Tx, repo: str) -> Locked:
        """Lock the repository's row (creating it) and read its head and running digest:
        one statement for a repository that exists."""
        sql = (
            "SELECT r.id, r.version, r.updated_at, d.version, d.live, d.digest FROM ts_repos r"
            " LEFT JOIN ts_digests d ON d.repo_id = r.id WHERE r.name = ?" + self.lock_of_repo
        )
        rows = tx.q(sql, (repo,))
        if not rows:
            tx.q(
                "INSERT INTO ts_repos (name, checksum) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                (repo, EMPTY_CHECKSUM),
            )
            rows = tx.q(sql, (repo,))
        repo_id, version, updated, at, live, digest = rows[0]
        if at is None or int(at) != int(version):
            # PostgreSQL, READ COMMITTED: when the row lock was waited for, the locked row
            # is re-read at its latest version but the joined digest is not, so it is read
            # again, in a statement of its own (which sees every committed write).
            again = tx.q(
                "SELECT version, live, digest FROM ts_digests WHERE repo_id = ?", (repo_id,)
            )
            at, live, digest = again[0] if again else (None, 0, "")
        if at is None or int(at) != int(version):
            # none yet (a new repository) or written by an older server: rebuilt once
            return _rebuild_digest(tx, int(repo_id), int(version), float(updated))
        value = int(digest, 16)
        return Locked(
            int(repo_id), int(version), float(updated), digest_checksum(value), value, int(live)
        )

    def _neighbours(self, tx: Tx, repo_id: int, live: int, new: Sequence[str]) -> list[str]:
        """Stored live keys that may clash with ``new``: the same folding, a folded
        ancestor, or a folded descendant (by the ``folded`` index, in byte order)."""
        if live <= 8 * len(new):  # a request this large may read the (small) repository
            rows = tx.q("SELECT key FROM ts_entries WHERE repo_id = ? AND deleted = 0", (repo_id,))
            return [str(r[0]) for r in rows]
        folds = {fold_key(key) for key in new}
        exact = sorted(
            {"/".join(parts[:depth]) for f in folds for parts in [f.split("/")]
             for depth in range(1, len(parts) + 1)}
        )  # fmt: skip
        col = "folded" + self.binary
        found = _rows_for(tx, "key", LIVE, repo_id, exact, column=col)
        for fold in sorted(folds):  # keys below it, as a folder: fold + "/" <= x < fold + "0"
            found += tx.q(
                f"SELECT key FROM ts_entries WHERE repo_id = ? AND {LIVE} AND {col} >= ?"
                f" AND {col} < ?",
                (repo_id, fold + "/", fold + "0"),
            )
        return [str(r[0]) for r in found]

    def write(self, repo: str, request: WriteRequest, now: float) -> WriteOk | WriteRefused:
        """Apply ``request`` in O(changed keys): only the named rows (and the rows that could
        clash with new keys) are read, and the store checksum is updated from the running
        digest. What needs no lock (content checksums, their digest elements) is
        computed before the lock is taken."""
        sums = {key: checksum(text) for key, text in request.upserts.items()}
        elements = {key: entry_element(key, value) for key, value in sums.items()}
        named = sorted(
            set(request.upserts) | set(request.deletes) | set(request.base_checksums or ())
        )

        def apply(tx: Tx) -> WriteOk | WriteRefused:
            head = self._lock_repo(tx, repo)
            rows = _rows_for(tx, "key, checksum", LIVE, head.repo_id, named)
            live = {str(r[0]): str(r[1]) for r in rows}

            def neighbours(new: Sequence[str]) -> list[str]:
                return self._neighbours(tx, head.repo_id, head.live, new)

            refused = check_request(request, live, head)
            if refused is not None:
                return refused
            clashed = tuple(clashing(request, live, neighbours))
            req = without(request, {new for new, _ in clashed})
            refused = check_cap(req, live, head)
            if refused is not None:
                return refused
            before = dict(live)
            changed, changes = _apply(head.repo_id, req, sums, live, now)
            if not changed:
                return WriteOk(Head(head.version, head.checksum, head.updated), (), clashed)
            gone = [entry_element(k, before[k]) for k in changed if k in before]
            added = [elements[k] for k in changed if k in live]
            digest = digest_add(head.digest, added, gone)
            version, new_sum = head.version + 1, digest_checksum(digest)
            count = len(live) - len(before) + head.live
            tx.batch(
                [
                    *changes,
                    *_head_steps(head.repo_id, version, new_sum, now, digest, count),
                    (SERIAL, [(head.repo_id, version, head.repo_id)]),
                    (SERIAL_SUM, [(head.repo_id, version, new_sum)]),
                ]
            )
            return WriteOk(Head(version, new_sum, now), tuple(changed), clashed)

        return self._write_tx(repo, apply)

    def _upgrade(self, tx: Tx) -> None:
        """At startup, inside the schema transaction: re-fold the ``folded`` column when
        the folding changed, and rebuild every digest that is missing or stale (a
        database from before digests, or written by an older server)."""
        mark = tx.q("SELECT value FROM ts_meta WHERE name = 'folding'")
        if not mark or mark[0][0] != FOLDING:
            refold = [
                (fold_key(str(key)), repo_id, key)
                for repo_id, key, folded in tx.q("SELECT repo_id, key, folded FROM ts_entries")
                if fold_key(str(key)) != folded
            ]
            if refold:
                tx.many("UPDATE ts_entries SET folded = ? WHERE repo_id = ? AND key = ?", refold)
            tx.q(
                "INSERT INTO ts_meta (name, value) VALUES ('folding', ?) ON CONFLICT (name)"
                " DO UPDATE SET value = excluded.value",
                (FOLDING,),
            )
        stale = tx.q(
            "SELECT r.id, r.version, r.updated_at FROM ts_repos r LEFT JOIN ts_digests d"
            " ON d.repo_id = r.id WHERE d.repo_id IS NULL OR d.version <> r.version"
        )
        for repo_id, version, updated in stale:
            _rebuild_digest(tx, int(repo_id), int(version), float(updated))

    def last_content(self, repo: str, key: str) -> tuple[str, bool] | None:
        """``(content, deleted)`` of ``key``: a tombstone still holds what was deleted."""
        with self._tx(write=False) as tx:
            rows = tx.q(
                "SELECT e.content, e.deleted FROM ts_entries e JOIN ts_repos r"
                " ON r.id = e.repo_id WHERE r.name = ? AND e.key = ?",
                (repo, key),
            )
        if not rows or rows[0][0] is None:
            return None
        return str(rows[0][0]), bool(rows[0][1])

    def redact_deleted(self, repo: str, key: str) -> Literal["redacted", "live", "none"]:
        """Blank a tombstone's kept text (see :class:`~teamsync.server.storage.Storage`)."""
        with self._tx(write=True) as tx:
            rows = tx.q(
                "SELECT e.repo_id, e.deleted, e.content FROM ts_entries e JOIN ts_repos r"
                " ON r.id = e.repo_id WHERE r.name = ? AND e.key = ?",
                (repo, key),
            )
            if not rows or (rows[0][1] and rows[0][2] is None):
                return "none"
            if not rows[0][1]:
                return "live"
            tx.q(
                "UPDATE ts_entries SET content = NULL WHERE repo_id = ? AND key = ? AND deleted = 1",
                (rows[0][0], key),
            )
        self._scrub()
        return "redacted"

    def _scrub(self) -> None:
        """After a redaction: rewrite the storage so the old text leaves the files where
        the engine allows it in place (SQLite: VACUUM). By default (PostgreSQL) nothing:
        the old row version stays until (auto)vacuum reclaims it (docs/server.md)."""
        return None

    def history(self, repo: str, *, after: int, limit: int) -> list[HistoryItem]:
        with self._tx(write=False) as tx:
            rows = tx.q(
                "SELECT h.id, h.at, h.who, h.key, h.checksum, h.action FROM ts_history h"
                " JOIN ts_repos r ON r.id = h.repo_id WHERE r.name = ? AND h.id > ?"
                " ORDER BY h.id LIMIT ?",
                (repo, after, limit),
            )
        return [HistoryItem(int(r[0]), float(r[1]), r[2], r[3], r[4], r[5]) for r in rows]

    def tombstones(self, repo: str) -> dict[str, Tombstone]:
        """key -> when it was deleted and the checksum it held, for every deleted key not
        written again."""
        with self._tx(write=False) as tx:
            rows = tx.q(
                "SELECT e.key, e.updated_at, e.checksum FROM ts_entries e JOIN ts_repos r"
                " ON r.id = e.repo_id WHERE r.name = ? AND e.deleted = 1",
                (repo,),
            )
        return {str(r[0]): Tombstone(float(r[1]), str(r[2])) for r in rows}

    # -- tokens -----------------------------------------------------------------------
    def add_token(self, record: TokenRecord) -> None:
        with self._tx(write=True) as tx:
            tx.q(
                f"INSERT INTO ts_tokens ({TOKEN_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.token_hash,
                    record.repo,
                    int(record.read_only),
                    record.label,
                    record.created_at,
                    record.revoked_at,
                ),
            )
            if record.expires_at is not None:
                tx.q(
                    "INSERT INTO ts_token_expiry (id, expires_at) VALUES (?, ?)",
                    (record.id, record.expires_at),
                )

    def get_token(self, token_id: str) -> TokenRecord | None:
        with self._tx(write=False) as tx:
            rows = tx.q(f"{TOKEN_SELECT} WHERE t.id = ?", (token_id,))
        return _token(rows[0]) if rows else None

    def list_tokens(self) -> list[TokenRecord]:
        with self._tx(write=False) as tx:
            rows = tx.q(f"{TOKEN_SELECT} ORDER BY t.created_at, t.id")
        return [_token(r) for r in rows]

    def revoke_token(self, token_id: str, now: float) -> bool:
        with self._tx(write=True) as tx:
            rows = tx.q(
                "UPDATE ts_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"
                " RETURNING id",
                (now, token_id),
            )
        return bool(rows)


def _repo_head(tx: Tx, repo: str) -> tuple[int, Head] | None:
    """(row id, head) of a repository that holds something, else None."""
    rows = tx.q("SELECT id, version, checksum, updated_at FROM ts_repos WHERE name = ?", (repo,))
    if not rows or rows[0][1] == 0:
        return None
    repo_id, version, check, updated = rows[0]
    return int(repo_id), Head(int(version), str(check), float(updated))


def _rows_for(
    tx: Tx, cols: str, where: str, repo_id: int, keys: Sequence[str], *, column: str = "key"
) -> list[Row]:
    """``SELECT cols`` of the entries whose ``column`` is among ``keys`` (chunked ``IN``
    lists, by primary key or the ``folded`` index)."""
    rows: list[Row] = []
    for start in range(0, len(keys), IN_CHUNK):
        chunk = keys[start : start + IN_CHUNK]
        marks = ", ".join("?" for _ in chunk)
        rows += tx.q(
            f"SELECT {cols} FROM ts_entries WHERE repo_id = ? AND {where}"
            f" AND {column} IN ({marks})",
            (repo_id, *chunk),
        )
    return rows


def _shared_at(req: WriteRequest, key: str, now: float) -> float:
    """A created key's change time: the sharer's own (extension), when it is a sane past."""
    claimed = (req.modified or {}).get(key)
    return claimed if claimed is not None and 946_684_800.0 < claimed < now else now


def _apply(
    repo_id: int,
    req: WriteRequest,
    sums: Mapping[str, str],
    live: dict[str, str],
    now: float,
) -> tuple[list[str], list[Step]]:
    """The upserts then tombstones of ``req``, as statements to run; mutates ``live`` (the
    named rows). Returns the keys that change and the steps. ``sums`` holds the
    checksum of every upsert."""
    upserts: list[Sequence[object]] = []
    history: list[Sequence[object]] = []
    for key in sorted(req.upserts):
        value = sums[key]
        if live.get(key) == value:
            continue
        at = now if key in live else _shared_at(req, key, now)
        upserts.append((repo_id, key, fold_key(key), req.upserts[key], value, at, req.who))
        history.append((repo_id, now, req.who, key, value, "upsert"))
        live[key] = value
    tombstones: list[Sequence[object]] = []
    for key in sorted(set(req.deletes) - set(req.upserts)):
        if key in live:
            tombstones.append((now, req.who, repo_id, key))
            history.append((repo_id, now, req.who, key, None, "delete"))
            del live[key]
    pairs = ((UPSERT, upserts), (TOMBSTONE, tombstones), (HISTORY, history))
    steps: list[Step] = [(sql, rows) for sql, rows in pairs if rows]
    return [str(h[3]) for h in history], steps


def _head_steps(
    repo_id: int, version: int, check: str, now: float, digest: int, live: int
) -> list[Step]:
    """The repository's new version and checksum, and its digest at that version."""
    return [
        (
            "UPDATE ts_repos SET version = ?, checksum = ?, updated_at = ? WHERE id = ?",
            [(version, check, now, repo_id)],
        ),
        (
            "INSERT INTO ts_digests (repo_id, version, live, digest) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (repo_id) DO UPDATE SET version = excluded.version,"
            " live = excluded.live, digest = excluded.digest",
            [(repo_id, version, live, format(digest, "x"))],
        ),
    ]


def _rebuild_digest(tx: Tx, repo_id: int, version: int, updated: float) -> Locked:
    """Recompute a repository's digest from all its live rows (once: an upgrade, or a
    repository an older server wrote), store it, and return the locked head."""
    rows = tx.q(
        "SELECT key, checksum FROM ts_entries WHERE repo_id = ? AND deleted = 0", (repo_id,)
    )
    digest = store_digest({str(r[0]): str(r[1]) for r in rows})
    check = digest_checksum(digest)
    tx.q("UPDATE ts_repos SET checksum = ? WHERE id = ?", (check, repo_id))
    tx.batch(_head_steps(repo_id, version, check, updated, digest, len(rows)))
    return Locked(repo_id, version, updated, check, digest, len(rows))


def _token(row: Row) -> TokenRecord:
    return TokenRecord(
        id=row[0],
        token_hash=row[1],
        repo=row[2],
        read_only=bool(row[3]),
        label=row[4],
        created_at=float(row[5]),
        revoked_at=None if row[6] is None else float(row[6]),
        expires_at=None if row[7] is None else float(row[7]),
    )
