"""The one transactional algorithm both SQL databases run.

A write locks the repository row first (SQLite: ``BEGIN IMMEDIATE``;
PostgreSQL: ``SELECT … FOR UPDATE``), so every precondition below is checked
and applied against a state nobody else can change meanwhile:

1. ``If-None-Match: *`` (create-only) and per-key ``baseChecksums`` (409);
2. ``If-Match`` against the store checksum (412);
3. clashes of new keys with live keys (422): equal after case/NFKC folding,
   or a file whose name another key needs as a folder (``a.md``,
   ``A.md/x.md``). Folding is recomputed from the keys (the ``folded`` column
   is informational), so a change to :func:`~teamsync.security.keys.fold_key`
   needs no migration. A key deleted in the same request frees its name, so a
   case-only rename (delete ``Deploy.md``, upsert ``deploy.md``) passes;
4. the entries cap counted after the merge (413);

then upserts and tombstones are written, each with an append-only history row.
A tombstone keeps the content it deleted (:meth:`SqlStorage.last_content`).
SQL is written with ``?`` placeholders; the PostgreSQL transaction rewrites them.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from teamsync.security.keys import clashes_with, fold_key
from teamsync.server.storage import (
    Delta,
    Head,
    HistoryItem,
    RepoState,
    TokenRecord,
    WriteOk,
    WriteRefused,
    WriteRequest,
    store_checksum,
)
from teamsync.wire import checksum

Row = tuple[Any, ...]
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
CREATE TABLE IF NOT EXISTS ts_tokens (
  id TEXT PRIMARY KEY, token_hash TEXT NOT NULL, repo TEXT NOT NULL, read_only INTEGER NOT NULL,
  label TEXT NOT NULL, created_at {real} NOT NULL, revoked_at {real});
CREATE TABLE IF NOT EXISTS ts_token_expiry (
  id TEXT PRIMARY KEY REFERENCES ts_tokens(id), expires_at {real} NOT NULL);
"""
# Token expiries live in their own table so databases created before expiries
# existed need no ALTER TABLE (portable across SQLite and PostgreSQL); so do the
# serials: repository version -> the last history row it includes (the delta view).

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
TOKEN_COLS = "id, token_hash, repo, read_only, label, created_at, revoked_at"
TOKEN_SELECT = (
    "SELECT t.id, t.token_hash, t.repo, t.read_only, t.label, t.created_at, t.revoked_at,"
    " e.expires_at FROM ts_tokens t LEFT JOIN ts_token_expiry e ON e.id = t.id"
)


class Tx(Protocol):
    def q(self, sql: str, params: Sequence[object] = ()) -> list[Row]: ...

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None: ...


def check_request(req: WriteRequest, live: Mapping[str, str], version: int) -> WriteRefused | None:
    """Every precondition of :class:`WriteRequest`, against the locked state."""
    if req.create_only and version > 0:
        return WriteRefused("precondition")
    if req.base_checksums:
        bad = sorted(k for k, want in req.base_checksums.items() if live.get(k) != want)
        if bad:
            return WriteRefused("conflict", keys=tuple(bad))
    if req.if_match is not None and req.if_match != store_checksum(live):
        return WriteRefused("precondition")
    deletes = set(req.deletes) - set(req.upserts)
    after = (set(live) - deletes) | set(req.upserts)
    new = [key for key in req.upserts if key not in live]
    pairs = clashes_with(new, after) if new else []
    if pairs:
        return WriteRefused("collision", keys=tuple(k for pair in pairs for k in pair))
    if len(after) > req.max_entries and len(after) > len(live):
        return WriteRefused(
            "too_many_entries", max_entries=req.max_entries, received_entries=len(after)
        )
    return None


class SqlStorage(abc.ABC):
    """:class:`~teamsync.server.storage.Storage` over a DB-API database."""

    url: str
    serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
    real = "REAL"
    lock_suffix = ""

    @abc.abstractmethod
    def _tx(self, *, write: bool) -> AbstractContextManager[Tx]:
        """A transaction; ``write`` ones serialize against each other."""

    def _schema(self) -> list[str]:
        ddl = SCHEMA.format(serial=self.serial, real=self.real)
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
            rows = _rows_for(
                tx, "key, checksum, updated_at, content", "deleted = 0", repo_id, wanted
            )
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
                return Delta(current, version, {}, {}, ())
            mark = tx.q(
                "SELECT history_id FROM ts_serials WHERE repo_id = ? AND version = ?",
                (repo_id, version),
            )
            if not mark:
                return None
            keys = [
                str(r[0])
                for r in tx.q(
                    "SELECT DISTINCT key FROM ts_history WHERE repo_id = ? AND id > ?",
                    (repo_id, mark[0][0]),
                )
            ]
            rows = _rows_for(tx, "key, checksum, updated_at, deleted", "1 = 1", repo_id, keys)
        live = [r for r in rows if not r[3]]
        return Delta(
            head=current,
            since=version,
            checksums={r[0]: r[1] for r in live},
            updated_at={r[0]: float(r[2]) for r in live},
            deleted=tuple(sorted(r[0] for r in rows if r[3])),
        )

    def _lock_repo(self, tx: Tx, repo: str) -> Row:
        tx.q(
            "INSERT INTO ts_repos (name, checksum) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
            (repo, store_checksum({})),
        )
        sql = "SELECT id, version, updated_at FROM ts_repos WHERE name = ?" + self.lock_suffix
        return tx.q(sql, (repo,))[0]

    def write(self, repo: str, request: WriteRequest, now: float) -> WriteOk | WriteRefused:
        with self._tx(write=True) as tx:
            repo_id, version, updated = self._lock_repo(tx, repo)
            rows = tx.q(
                "SELECT key, checksum FROM ts_entries WHERE repo_id = ? AND deleted = 0",
                (repo_id,),
            )
            live = {r[0]: r[1] for r in rows}
            refused = check_request(request, live, int(version))
            if refused is not None:
                return refused
            changed = _apply(tx, repo_id, request, live, now)
            new_sum = store_checksum(live)
            if changed:
                version, updated = int(version) + 1, now
                tx.q(
                    "UPDATE ts_repos SET version = ?, checksum = ?, updated_at = ? WHERE id = ?",
                    (version, new_sum, now, repo_id),
                )
                last = tx.q("SELECT MAX(id) FROM ts_history WHERE repo_id = ?", (repo_id,))
                tx.q(
                    "INSERT INTO ts_serials (repo_id, version, history_id) VALUES (?, ?, ?)",
                    (repo_id, version, last[0][0]),
                )
        return WriteOk(Head(int(version), new_sum, float(updated)), tuple(changed))

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

    def history(self, repo: str, *, after: int, limit: int) -> list[HistoryItem]:
        with self._tx(write=False) as tx:
            rows = tx.q(
                "SELECT h.id, h.at, h.who, h.key, h.checksum, h.action FROM ts_history h"
                " JOIN ts_repos r ON r.id = h.repo_id WHERE r.name = ? AND h.id > ?"
                " ORDER BY h.id LIMIT ?",
                (repo, after, limit),
            )
        return [HistoryItem(int(r[0]), float(r[1]), r[2], r[3], r[4], r[5]) for r in rows]

    def tombstones(self, repo: str) -> dict[str, float]:
        """key -> when it was deleted, for every deleted key not written again."""
        with self._tx(write=False) as tx:
            rows = tx.q(
                "SELECT e.key, e.updated_at FROM ts_entries e JOIN ts_repos r"
                " ON r.id = e.repo_id WHERE r.name = ? AND e.deleted = 1",
                (repo,),
            )
        return {str(r[0]): float(r[1]) for r in rows}

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


def _rows_for(tx: Tx, cols: str, where: str, repo_id: int, keys: Sequence[str]) -> list[Row]:
    """``SELECT cols`` of the entries among ``keys`` (chunked ``IN`` lists, by primary key)."""
    rows: list[Row] = []
    for start in range(0, len(keys), IN_CHUNK):
        chunk = keys[start : start + IN_CHUNK]
        marks = ", ".join("?" for _ in chunk)
        rows += tx.q(
            f"SELECT {cols} FROM ts_entries WHERE repo_id = ? AND {where} AND key IN ({marks})",
            (repo_id, *chunk),
        )
    return rows


def _shared_at(req: WriteRequest, key: str, now: float) -> float:
    """A created key's change time: the sharer's own (extension), when it is a sane past."""
    claimed = (req.modified or {}).get(key)
    return claimed if claimed is not None and 946_684_800.0 < claimed < now else now


def _apply(tx: Tx, repo_id: int, req: WriteRequest, live: dict[str, str], now: float) -> list[str]:
    """Write upserts then tombstones; mutate ``live``; return the keys that changed."""
    upserts: list[Sequence[object]] = []
    history: list[Sequence[object]] = []
    for key in sorted(req.upserts):
        value = checksum(req.upserts[key])
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
    if upserts:
        tx.many(UPSERT, upserts)
    if tombstones:
        tx.many(TOMBSTONE, tombstones)
    if history:
        tx.many(HISTORY, history)
    return [str(h[3]) for h in history]


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
