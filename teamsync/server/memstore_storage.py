"""Storage for the Memory Stores API: stores, memories and their versions, in their own tables.

It runs on the same database as the legacy dialect (SQLite or PostgreSQL,
through :class:`~teamsync.server.storage_sql.SqlStorage`'s transactions) and
shares none of its tables, so neither dialect's writes can disturb the other.
Every write locks its store's row first (SQLite: ``BEGIN IMMEDIATE``;
PostgreSQL: ``SELECT … FOR UPDATE``), so a precondition is checked against a
state nobody can change meanwhile. Every change of a memory appends one
version (``created``, ``modified``, ``deleted``); versions outlive their memory
and only :meth:`MemstoreDB.redact` changes one afterwards.

Paths are compared as the API says (case-sensitive, exactly): in code-point
order, which PostgreSQL is told with ``COLLATE "C"``.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any, Literal

from teamsync.server.storage_sql import Row, SqlStorage, Tx
from teamsync.wire import memory_sha256

SCHEMA = """
CREATE TABLE IF NOT EXISTS ms_stores (
  id TEXT PRIMARY KEY, scope TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL,
  metadata TEXT NOT NULL, created_at {real} NOT NULL, updated_at {real} NOT NULL,
  archived_at {real});
CREATE INDEX IF NOT EXISTS ms_stores_scope ON ms_stores (scope, created_at);
CREATE TABLE IF NOT EXISTS ms_memories (
  id TEXT PRIMARY KEY, store_id TEXT NOT NULL REFERENCES ms_stores(id), path TEXT NOT NULL,
  content TEXT NOT NULL, sha TEXT NOT NULL, size BIGINT NOT NULL, version_id TEXT NOT NULL,
  created_at {real} NOT NULL, updated_at {real} NOT NULL, UNIQUE (store_id, path));
CREATE TABLE IF NOT EXISTS ms_versions (
  seq {serial}, id TEXT NOT NULL UNIQUE, store_id TEXT NOT NULL REFERENCES ms_stores(id),
  memory_id TEXT NOT NULL, operation TEXT NOT NULL, path TEXT, content TEXT, sha TEXT,
  size BIGINT, created_at {real} NOT NULL, actor TEXT, redacted_at {real}, redacted_by TEXT);
CREATE INDEX IF NOT EXISTS ms_versions_store ON ms_versions (store_id, seq);
CREATE INDEX IF NOT EXISTS ms_versions_memory ON ms_versions (memory_id, seq)
"""
MEMORY_COLS = "id, store_id, path, content, sha, size, version_id, created_at, updated_at"
VERSION_COLS = (
    "seq, id, store_id, memory_id, operation, path, content, sha, size, created_at, actor,"
    " redacted_at, redacted_by"
)
STORE_COLS = "id, scope, name, description, metadata, created_at, updated_at, archived_at"

Operation = Literal["created", "modified", "deleted"]


@dataclass(frozen=True)
class StoreRow:
    id: str
    scope: str
    name: str
    description: str
    metadata: dict[str, str]
    created_at: float
    updated_at: float
    archived_at: float | None


@dataclass(frozen=True)
class MemoryRow:
    id: str
    store_id: str
    path: str
    content: str
    sha: str
    size: int
    version_id: str
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class VersionRow:
    seq: int
    id: str
    store_id: str
    memory_id: str
    operation: Operation
    path: str | None
    content: str | None
    sha: str | None
    size: int | None
    created_at: float
    actor: dict[str, str] | None
    redacted_at: float | None
    redacted_by: dict[str, str] | None


@dataclass(frozen=True)
class Failed:
    """Why a write did not happen (the routes turn it into the API's error)."""

    kind: Literal["not_found", "precondition", "path_conflict", "archived", "too_many", "current"]
    message: str
    details: dict[str, str] | None = None
    """Extra fields of the error object (a path conflict's ``conflicting_path`` and
    ``conflicting_memory_id``, as the API reference documents them)."""


def new_id(prefix: str) -> str:
    """``memstore_…``, ``mem_…``, ``memver_…``: 128 random bits, URL-safe."""
    return prefix + secrets.token_urlsafe(16).replace("-", "x").replace("_", "y")


def _store(row: Row) -> StoreRow:
    meta = json.loads(row[4]) if row[4] else {}
    return StoreRow(
        str(row[0]),
        str(row[1]),
        str(row[2]),
        str(row[3]),
        meta if isinstance(meta, dict) else {},
        float(row[5]),
        float(row[6]),
        None if row[7] is None else float(row[7]),
    )


def _memory(row: Row) -> MemoryRow:
    return MemoryRow(
        str(row[0]),
        str(row[1]),
        str(row[2]),
        str(row[3]),
        str(row[4]),
        int(row[5]),
        str(row[6]),
        float(row[7]),
        float(row[8]),
    )


def _actor(raw: object) -> dict[str, str] | None:
    if not isinstance(raw, str) or not raw:
        return None
    data = json.loads(raw)
    return data if isinstance(data, dict) else None


def _version(row: Row) -> VersionRow:
    op = str(row[4])
    return VersionRow(
        int(row[0]),
        str(row[1]),
        str(row[2]),
        str(row[3]),
        "created" if op == "created" else "deleted" if op == "deleted" else "modified",
        row[5],
        row[6],
        row[7],
        None if row[8] is None else int(row[8]),
        float(row[9]),
        _actor(row[10]),
        None if row[11] is None else float(row[11]),
        _actor(row[12]),
    )


def prefix_bounds(prefix: str) -> tuple[str, str]:
    """``[prefix, upper)``: every path that starts with ``prefix`` (which ends with ``/``)."""
    return prefix, prefix[:-1] + chr(ord("/") + 1)


class MemstoreDB:
    """The Memory Stores tables over one open :class:`SqlStorage`."""

    def __init__(self, storage: SqlStorage) -> None:
        self.sql = storage
        self.collate = ' COLLATE "C"' if storage.url.startswith("postgres") else ""
        ddl = SCHEMA.format(serial=storage.serial, real=storage.real)
        with storage._tx(write=True) as tx:  # noqa: SLF001 - the one transaction primitive
            for stmt in (s.strip() for s in ddl.split(";")):
                if stmt:
                    tx.q(stmt)

    def _tx(self, *, write: bool) -> Any:
        return self.sql._tx(write=write)  # noqa: SLF001

    # -- stores ---------------------------------------------------------------------
    def create_store(
        self, scope: str, name: str, description: str, metadata: dict[str, str], now: float
    ) -> StoreRow:
        row = StoreRow(new_id("memstore_"), scope, name, description, metadata, now, now, None)
        with self._tx(write=True) as tx:
            tx.q(
                f"INSERT INTO ms_stores ({STORE_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (row.id, scope, name, description, json.dumps(metadata), now, now, None),
            )
        return row

    def store(self, scope: str, store_id: str) -> StoreRow | None:
        with self._tx(write=False) as tx:
            rows = tx.q(
                f"SELECT {STORE_COLS} FROM ms_stores WHERE id = ? AND scope = ?", (store_id, scope)
            )
        return _store(rows[0]) if rows else None

    def stores(
        self,
        scope: str,
        *,
        include_archived: bool,
        after: tuple[float, str] | None,
        limit: int,
        created_gte: float | None,
        created_lte: float | None,
    ) -> list[StoreRow]:
        """Oldest first, ``limit`` of them after the ``(created_at, id)`` cursor."""
        where, params = ["scope = ?"], [scope]
        if not include_archived:
            where.append("archived_at IS NULL")
        if after is not None:
            where.append("(created_at > ? OR (created_at = ? AND id > ?))")
            params += [after[0], after[0], after[1]]  # type: ignore[list-item]
        if created_gte is not None:
            where.append("created_at >= ?")
            params.append(created_gte)  # type: ignore[arg-type]
        if created_lte is not None:
            where.append("created_at <= ?")
            params.append(created_lte)  # type: ignore[arg-type]
        sql = (
            f"SELECT {STORE_COLS} FROM ms_stores WHERE {' AND '.join(where)}"
            f" ORDER BY created_at, id{self.collate} LIMIT ?"
        )
        with self._tx(write=False) as tx:
            rows = tx.q(sql, (*params, limit))
        return [_store(r) for r in rows]

    def update_store(
        self,
        scope: str,
        store_id: str,
        changes: dict[str, Any],
        now: float,
        *,
        archive: bool = False,
    ) -> StoreRow | Failed:
        with self._tx(write=True) as tx:
            current = self._lock_store(tx, scope, store_id)
            if current is None:
                return Failed("not_found", f"no memory store {store_id}")
            if current.archived_at is not None and not archive:
                return Failed("archived", "the memory store is archived; it cannot be updated")
            if archive:
                if current.archived_at is not None:
                    return current
                tx.q(
                    "UPDATE ms_stores SET archived_at = ?, updated_at = ? WHERE id = ?",
                    (now, now, store_id),
                )
            else:
                meta = dict(current.metadata)
                for key, value in (changes.get("metadata") or {}).items():
                    if value is None:
                        meta.pop(key, None)
                    else:
                        meta[key] = value
                if len(meta) > 16:
                    return Failed("too_many", "a memory store holds at most 16 metadata pairs")
                name = changes.get("name") or current.name
                desc = changes.get("description")
                desc = current.description if desc is None else desc
                tx.q(
                    "UPDATE ms_stores SET name = ?, description = ?, metadata = ?, updated_at = ?"
                    " WHERE id = ?",
                    (name, desc, json.dumps(meta), now, store_id),
                )
            rows = tx.q(f"SELECT {STORE_COLS} FROM ms_stores WHERE id = ?", (store_id,))
        return _store(rows[0])

    def delete_store(self, scope: str, store_id: str) -> bool:
        with self._tx(write=True) as tx:
            if self._lock_store(tx, scope, store_id) is None:
                return False
            tx.q("DELETE FROM ms_versions WHERE store_id = ?", (store_id,))
            tx.q("DELETE FROM ms_memories WHERE store_id = ?", (store_id,))
            tx.q("DELETE FROM ms_stores WHERE id = ?", (store_id,))
        return True

    def _lock_store(self, tx: Tx, scope: str, store_id: str) -> StoreRow | None:
        rows = tx.q(
            f"SELECT {STORE_COLS} FROM ms_stores WHERE id = ? AND scope = ?{self.sql.lock_suffix}",
            (store_id, scope),
        )
        return _store(rows[0]) if rows else None

    # -- memories -------------------------------------------------------------------
    def memory(self, store_id: str, memory_id: str) -> MemoryRow | None:
        with self._tx(write=False) as tx:
            rows = tx.q(
                f"SELECT {MEMORY_COLS} FROM ms_memories WHERE store_id = ? AND id = ?",
                (store_id, memory_id),
            )
        return _memory(rows[0]) if rows else None

    def listing(
        self, store_id: str, prefix: str, after: str | None, limit: int, *, contents: bool
    ) -> list[MemoryRow]:
        """Memories below ``prefix`` in path order, after the path ``after``, at most ``limit``."""
        low, high = prefix_bounds(prefix)
        cols = MEMORY_COLS if contents else MEMORY_COLS.replace("content,", "'' AS content,")
        where = f"store_id = ? AND path{self.collate} >= ? AND path{self.collate} < ?"
        params: list[object] = [store_id, low, high]
        if after is not None:
            where += f" AND path{self.collate} > ?"
            params.append(after)
        sql = f"SELECT {cols} FROM ms_memories WHERE {where} ORDER BY path{self.collate} LIMIT ?"
        with self._tx(write=False) as tx:
            rows = tx.q(sql, (*params, limit))
        return [_memory(r) for r in rows]

    def last_below(self, store_id: str, prefix: str) -> str:
        """The greatest path below ``prefix`` (which holds at least one memory)."""
        low, high = prefix_bounds(prefix)
        with self._tx(write=False) as tx:
            rows = tx.q(
                f"SELECT MAX(path{self.collate}) FROM ms_memories WHERE store_id = ?"
                f" AND path{self.collate} >= ? AND path{self.collate} < ?",
                (store_id, low, high),
            )
        return str(rows[0][0]) if rows and rows[0][0] is not None else high

    def last_version(self, store_id: str) -> str:
        """``seq.id`` of the store's newest version ("0" for none): every write of a memory
        adds one, so it names the store's whole state in one index probe (the listing's
        ETag). A restored database written again to the same ``seq`` has another id."""
        with self._tx(write=False) as tx:
            rows = tx.q(
                "SELECT seq, id FROM ms_versions WHERE store_id = ? ORDER BY seq DESC LIMIT 1",
                (store_id,),
            )
        return f"{rows[0][0]}.{rows[0][1]}" if rows else "0"

    def create_memory(
        self,
        scope: str,
        store_id: str,
        path: str,
        content: str,
        actor: dict[str, str],
        now: float,
        max_memories: int,
    ) -> MemoryRow | Failed:
        with self._tx(write=True) as tx:
            store = self._lock_store(tx, scope, store_id)
            if store is None:
                return Failed("not_found", f"no memory store {store_id}")
            if store.archived_at is not None:
                return Failed(
                    "archived", "the memory store is archived; its memories are read-only"
                )
            taken = self._overlap(tx, store_id, path, None)
            if taken is not None:
                return taken
            count = tx.q("SELECT COUNT(*) FROM ms_memories WHERE store_id = ?", (store_id,))
            if int(count[0][0]) >= max_memories:
                return Failed("too_many", f"the memory store holds at most {max_memories} memories")
            row = MemoryRow(
                new_id("mem_"),
                store_id,
                path,
                content,
                memory_sha256(content),
                len(content.encode("utf-8")),
                new_id("memver_"),
                now,
                now,
            )
            tx.q(
                f"INSERT INTO ms_memories ({MEMORY_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row.id, store_id, path, content, row.sha, row.size, row.version_id, now, now),
            )
            self._add_version(tx, row, "created", actor, now)
        return row

    def update_memory(
        self,
        scope: str,
        store_id: str,
        memory_id: str,
        *,
        content: str | None,
        path: str | None,
        expect_sha: str | None,
        actor: dict[str, str],
        now: float,
    ) -> MemoryRow | Failed:
        """A precondition that fails is still a success when the memory already is what
        the update asks for (a retried request)."""
        with self._tx(write=True) as tx:
            store = self._lock_store(tx, scope, store_id)
            if store is None:
                return Failed("not_found", f"no memory store {store_id}")
            rows = tx.q(
                f"SELECT {MEMORY_COLS} FROM ms_memories WHERE store_id = ? AND id = ?"
                f"{self.sql.lock_suffix}",
                (store_id, memory_id),
            )
            if not rows:
                return Failed("not_found", f"no memory {memory_id} in this store")
            current = _memory(rows[0])
            new_content = current.content if content is None else content
            new_path = current.path if path is None else path
            same = new_content == current.content and new_path == current.path
            if expect_sha is not None and expect_sha != current.sha and not same:
                return Failed(
                    "precondition",
                    f"the memory's content_sha256 is not {expect_sha}: it changed since you read it",
                )
            if same:
                return current
            if store.archived_at is not None:
                return Failed(
                    "archived", "the memory store is archived; its memories are read-only"
                )
            if new_path != current.path:
                taken = self._overlap(tx, store_id, new_path, current.id)
                if taken is not None:
                    return taken
            row = MemoryRow(
                current.id,
                store_id,
                new_path,
                new_content,
                memory_sha256(new_content),
                len(new_content.encode("utf-8")),
                new_id("memver_"),
                current.created_at,
                now,
            )
            tx.q(
                "UPDATE ms_memories SET path = ?, content = ?, sha = ?, size = ?, version_id = ?,"
                " updated_at = ? WHERE id = ?",
                (row.path, row.content, row.sha, row.size, row.version_id, now, row.id),
            )
            self._add_version(tx, row, "modified", actor, now)
        return row

    def _overlap(self, tx: Tx, store_id: str, path: str, moving: str | None) -> Failed | None:
        """The path conflict of a create (or a rename of ``moving``) to ``path``, decided
        under the store's lock: another memory at ``path``, at one of its ancestors (a
        memory where ``path`` needs a folder), or below it (``path`` is their folder).
        The API reference documents all three as ``memory_path_conflict_error`` with the
        blocking ``conflicting_path`` and ``conflicting_memory_id``. Three index probes."""
        parts = path.split("/")
        exact = ["/".join(parts[:n]) for n in range(2, len(parts) + 1)]  # "/a", "/a/b", …
        marks = ", ".join("?" for _ in exact)
        rows = tx.q(
            f"SELECT id, path FROM ms_memories WHERE store_id = ? AND path IN ({marks})"
            f" ORDER BY path{self.collate}",
            (store_id, *exact),
        )
        below = f"path{self.collate} >= ? AND path{self.collate} < ?"
        rows += tx.q(
            f"SELECT id, path FROM ms_memories WHERE store_id = ? AND {below}"
            f" ORDER BY path{self.collate} LIMIT 2",
            (store_id, path + "/", path + "0"),
        )
        for memory_id, taken in rows:
            if memory_id == moving:
                continue
            if taken == path:
                why = "a memory already exists at this path"
            elif path.startswith(taken + "/"):
                why = f"the memory at {taken} is a file where this path needs a folder"
            else:
                why = f"this path is the folder of the memory at {taken}"
            return Failed(
                "path_conflict",
                f"{why} ({memory_id})",
                {"conflicting_path": str(taken), "conflicting_memory_id": str(memory_id)},
            )
        return None

    def delete_memory(
        self,
        scope: str,
        store_id: str,
        memory_id: str,
        expect_sha: str | None,
        actor: dict[str, str],
        now: float,
    ) -> MemoryRow | Failed:
        with self._tx(write=True) as tx:
            if self._lock_store(tx, scope, store_id) is None:
                return Failed("not_found", f"no memory store {store_id}")
            rows = tx.q(
                f"SELECT {MEMORY_COLS} FROM ms_memories WHERE store_id = ? AND id = ?",
                (store_id, memory_id),
            )
            if not rows:
                return Failed("not_found", f"no memory {memory_id} in this store")
            current = _memory(rows[0])
            if expect_sha is not None and expect_sha != current.sha:
                return Failed(
                    "precondition",
                    f"the memory's content_sha256 is not {expect_sha}; nothing was deleted",
                )
            tx.q("DELETE FROM ms_memories WHERE id = ?", (memory_id,))
            gone = MemoryRow(
                current.id, store_id, current.path, "", "", 0, new_id("memver_"), 0.0, now
            )
            self._add_version(tx, gone, "deleted", actor, now)
        return current

    def _add_version(
        self, tx: Tx, row: MemoryRow, op: Operation, actor: dict[str, str], now: float
    ) -> None:
        deleted = op == "deleted"
        tx.q(
            "INSERT INTO ms_versions (id, store_id, memory_id, operation, path, content, sha,"
            " size, created_at, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.version_id,
                row.store_id,
                row.id,
                op,
                row.path,
                None if deleted else row.content,
                None if deleted else row.sha,
                None if deleted else row.size,
                now,
                json.dumps(actor),
            ),
        )

    # -- versions -------------------------------------------------------------------
    def versions(
        self,
        store_id: str,
        *,
        before: int | None,
        limit: int,
        filters: dict[str, Any],
    ) -> list[VersionRow]:
        """Newest first, ``limit`` of them older than the sequence number ``before``."""
        where, params = ["store_id = ?"], [store_id]
        if before is not None:
            where.append("seq < ?")
            params.append(before)  # type: ignore[arg-type]
        for column, op, key in (
            ("memory_id", "=", "memory_id"),
            ("operation", "=", "operation"),
            ("created_at", ">=", "created_at_gte"),
            ("created_at", "<=", "created_at_lte"),
            ("actor", "=", "actor"),
        ):
            if filters.get(key) is not None:
                where.append(f"{column} {op} ?")
                params.append(filters[key])
        sql = (
            f"SELECT {VERSION_COLS} FROM ms_versions WHERE {' AND '.join(where)}"
            " ORDER BY seq DESC LIMIT ?"
        )
        with self._tx(write=False) as tx:
            rows = tx.q(sql, (*params, limit))
        return [_version(r) for r in rows]

    def version(self, store_id: str, version_id: str) -> VersionRow | None:
        with self._tx(write=False) as tx:
            rows = tx.q(
                f"SELECT {VERSION_COLS} FROM ms_versions WHERE store_id = ? AND id = ?",
                (store_id, version_id),
            )
        return _version(rows[0]) if rows else None

    def redact(
        self, scope: str, store_id: str, version_id: str, actor: dict[str, str], now: float
    ) -> VersionRow | Failed:
        """Blank one version's content, hash, size and path for good.

        The version a live memory currently holds is refused: update or delete
        the memory first, then redact the version that held the secret.
        """
        with self._tx(write=True) as tx:
            if self._lock_store(tx, scope, store_id) is None:
                return Failed("not_found", f"no memory store {store_id}")
            rows = tx.q(
                f"SELECT {VERSION_COLS} FROM ms_versions WHERE store_id = ? AND id = ?",
                (store_id, version_id),
            )
            if not rows:
                return Failed("not_found", f"no memory version {version_id} in this store")
            current = _version(rows[0])
            live = tx.q("SELECT id FROM ms_memories WHERE version_id = ?", (version_id,))
            if live:
                return Failed(
                    "current",
                    "this is the memory's current version: update or delete the memory first, "
                    "then redact this version",
                )
            if current.redacted_at is None:
                tx.q(
                    "UPDATE ms_versions SET content = NULL, sha = NULL, size = NULL, path = NULL,"
                    " redacted_at = ?, redacted_by = ? WHERE id = ?",
                    (now, json.dumps(actor), version_id),
                )
            rows = tx.q(f"SELECT {VERSION_COLS} FROM ms_versions WHERE id = ?", (version_id,))
        return _version(rows[0])
