"""SQLite storage: the embedded default (``sqlite:///PATH``).

WAL journal (readers never block the writer), ``busy_timeout`` so concurrent
writers wait instead of failing (and, within one process, queue on a lock so waiting
is FIFO-fair rather than SQLite's sleep-and-poll), ``BEGIN IMMEDIATE`` for every write so the
repository state read inside a write transaction cannot change under it, and
``synchronous=FULL`` so an acknowledged PUT survives a power cut. Each thread
gets its own connection; several server processes may share one file.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from teamsync.errors import ConfigError, ServerError
from teamsync.server.fairlock import WRITER_WAIT_S, FairLock
from teamsync.server.groupcommit import GroupCommit, Job, QueueTimeout
from teamsync.server.storage_sql import Row, SqlStorage, Step, Tx, WriteResult

BUSY_TIMEOUT_MS = 30_000


class _Tx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def q(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        return self.conn.execute(sql, params).fetchall()

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        self.conn.executemany(sql, rows)

    def batch(self, steps: Sequence[Step]) -> None:
        for sql, rows in steps:
            self.conn.executemany(sql, rows)

    def stream(self, sql: str, params: Sequence[object], size: int) -> Iterator[list[Row]]:
        cursor = self.conn.execute(sql, params)
        try:
            while rows := cursor.fetchmany(size):
                yield rows
        finally:
            cursor.close()


class SqliteStorage(SqlStorage):
    writer_wait_s = WRITER_WAIT_S
    """Longest a PUT waits to be taken into a transaction (then 503)."""

    def __init__(self, url: str) -> None:
        self.url = url
        raw = url.removeprefix("sqlite:///")
        if not raw or raw == ":memory:":
            raise ConfigError("SQLite storage needs a file: use sqlite:///PATH")
        self.path = Path(raw if raw.startswith("/") else "/" + raw)
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        self._writer = FairLock()
        self._group: GroupCommit[Tx] = GroupCommit(self._run_batch)
        self._create_file()
        with self._tx(write=True) as tx:
            for stmt in self._schema():
                tx.q(stmt)
            self._upgrade(tx)

    def _create_file(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        except OSError as exc:
            raise ConfigError(f"cannot create the database {self.path}: {exc.strerror}") from exc
        os.close(fd)

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
            with self._guard:
                self._conns.append(conn)
        return conn

    @contextmanager
    def _read_apart(self) -> Iterator[_Tx]:
        """A read transaction on a connection of its own (WAL: a snapshot that writers
        do not block), closed with it."""
        try:
            conn = self._open()
        except sqlite3.Error as exc:
            raise ServerError(f"SQLite database {self.path} unavailable: {exc}") from exc
        try:
            yield from self._begin(conn, write=False)
        finally:
            conn.close()

    @contextmanager
    def _tx(self, *, write: bool) -> Iterator[_Tx]:
        if not write:
            yield from self._run(write=False)
            return
        # Writers queue on a process-local FIFO lock first: SQLite's busy handler polls
        # with growing sleeps, which is unfair and spikes tail latency under contention.
        # BEGIN IMMEDIATE still serializes against other processes on the same file.
        if not self._writer.acquire(WRITER_WAIT_S):
            raise ServerError(
                f"SQLite database {self.path}: writers queued over {WRITER_WAIT_S:.0f} s"
            )
        try:
            yield from self._run(write=True)
        finally:
            self._writer.release()

    def _write_tx(self, repo: str, work: Callable[[Tx], WriteResult]) -> WriteResult:
        """Concurrent PUTs share a transaction and its one fsync (:mod:`groupcommit`);
        each is answered after that commit."""
        try:
            return self._group.submit(work, self.writer_wait_s)
        except QueueTimeout:
            raise ServerError(
                f"SQLite database {self.path}: writers queued over {self.writer_wait_s:g} s"
            ) from None

    def _run_batch(self, jobs: list[Job[Tx]]) -> None:
        """One write transaction for ``jobs``, each in a savepoint of its own."""
        with self._tx(write=True) as tx:
            conn = tx.conn
            for job in jobs:
                conn.execute("SAVEPOINT ts_put")
                try:
                    job.result = job.work(tx)
                except BaseException as exc:  # this write alone is undone
                    conn.execute("ROLLBACK TO ts_put")  # raises if the transaction is lost
                    job.error = (
                        ServerError(f"SQLite database {self.path} failed: {exc}")
                        if isinstance(exc, sqlite3.Error)
                        else exc
                    )
                conn.execute("RELEASE ts_put")

    def _run(self, *, write: bool) -> Iterator[_Tx]:
        try:
            conn = self._conn()
        except sqlite3.Error as exc:
            raise ServerError(f"SQLite database {self.path} unavailable: {exc}") from exc
        yield from self._begin(conn, write=write)

    def _begin(self, conn: sqlite3.Connection, *, write: bool) -> Iterator[_Tx]:
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.Error as exc:
            raise ServerError(f"SQLite database {self.path} unavailable: {exc}") from exc
        try:
            yield _Tx(conn)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(conn)
            raise ServerError(f"SQLite database {self.path} failed: {exc}") from exc
        except BaseException:
            _rollback(conn)
            raise

    def _scrub(self) -> None:
        """The redacted text out of the file: VACUUM rebuilds it without free pages, and
        a truncating checkpoint copies that over the main file and empties the WAL."""
        try:
            conn = self._conn()
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            raise ServerError(
                f"SQLite database {self.path}: the text is blanked, but may remain in free "
                f"pages until a VACUUM succeeds: {exc}"
            ) from exc

    def close(self) -> None:
        with self._guard:
            for conn in self._conns:
                conn.close()
            self._conns.clear()
        self._local = threading.local()


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")
