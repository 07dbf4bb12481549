"""PostgreSQL storage (``postgresql://…``), for several server replicas on one database.

psycopg 3 and its connection pool (``psycopg_pool``) are imported here only,
when a PostgreSQL URL is used. Writes run in
READ COMMITTED transactions that first take ``SELECT … FOR UPDATE`` on the
repository row, so replicas serialize per repository; reads run in REPEATABLE
READ READ ONLY transactions, so a pull sees one consistent version. The schema
is created under a transaction-scoped advisory lock (replicas may start together).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from teamsync.errors import MissingExtra, ServerError
from teamsync.server.fairlock import WRITER_WAIT_S, KeyedLocks
from teamsync.server.storage_sql import Row, SqlStorage, Step
from teamsync.wire import redact_url

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

POOL_SIZE = 16
POOL_WAIT_S = 30.0
SCHEMA_LOCK = 7_272_737
LOCK_TIMEOUT = "-c lock_timeout=30s"
"""Set on every pooled connection (a startup option, so no statement of its own per
write): a writer queued on a repository's row lock gives up (503) in time."""


_cursors = itertools.count()


def _pg(sql: str) -> str:
    return sql.replace("?", "%s")


class _Tx:
    def __init__(self, conn: psycopg.Connection[Row]) -> None:
        self.conn = conn

    def q(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        cur = self.conn.execute(_pg(sql), params)
        return cur.fetchall() if cur.description else []

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(_pg(sql), rows)

    def batch(self, steps: Sequence[Step]) -> None:
        with self.conn.pipeline(), self.conn.cursor() as cur:
            for sql, rows in steps:
                cur.executemany(_pg(sql), rows)

    def stream(self, sql: str, params: Sequence[object], size: int) -> Iterator[list[Row]]:
        # a server-side cursor: rows come over in pages, never the whole result at once
        with self.conn.cursor(name=f"ts_page_{next(_cursors)}") as cur:
            cur.execute(_pg(sql), params)
            while rows := cur.fetchmany(size):
                yield rows


class PostgresStorage(SqlStorage):
    serial = "BIGSERIAL PRIMARY KEY"
    real = "DOUBLE PRECISION"
    lock_suffix = " FOR UPDATE"
    lock_of_repo = " FOR UPDATE OF r"
    binary = ' COLLATE "C"'

    def __init__(self, url: str, *, pool_size: int = POOL_SIZE) -> None:
        try:
            import psycopg  # noqa: F401
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise MissingExtra("psycopg", "postgres", "PostgreSQL storage") from exc
        self.url = url
        self._queues = KeyedLocks()
        self._connect().close()  # a wrong URL or a database that is down fails here, fast
        self._pool: psycopg_pool.ConnectionPool[psycopg.Connection[Row]] = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True, "connect_timeout": 10, "options": LOCK_TIMEOUT},
            timeout=POOL_WAIT_S,
            open=True,
        )
        with self._tx(write=True) as tx:
            tx.q("SELECT pg_advisory_xact_lock(?)", (SCHEMA_LOCK,))
            for stmt in self._schema():
                tx.q(stmt)
            self._upgrade(tx)

    def _connect(self) -> psycopg.Connection[Row]:
        import psycopg

        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            error = ServerError(
                f"cannot connect to PostgreSQL at {redact_url(self.url)}: {connect_failure(exc)}"
            )
            error.detail = _libpq_words(exc)
            raise error from exc

    @contextmanager
    def _checkout(self) -> Iterator[psycopg.Connection[Row]]:
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise ServerError("PostgreSQL connection pool exhausted; retry later") from exc

    @contextmanager
    def _tx(self, *, write: bool) -> Iterator[_Tx]:
        import psycopg

        begin = "BEGIN" if write else "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
        with self._checkout() as conn:
            try:
                conn.execute(begin)
                yield _Tx(conn)
                conn.execute("COMMIT")
            except psycopg.Error as exc:
                _rollback(conn)
                state = getattr(exc, "sqlstate", None)
                raise ServerError(f"PostgreSQL failed: {type(exc).__name__} ({state})") from exc
            except BaseException:
                _rollback(conn)
                raise

    @contextmanager
    def _write_queue(self, repo: str) -> Iterator[None]:
        """Writers of one repository queue here, in arrival order, before taking a
        connection: queued on the row lock instead, each would hold a pooled
        connection, and a busy repository would leave none for the reads."""
        lock = self._queues.get(repo)
        if not lock.acquire(WRITER_WAIT_S):
            raise ServerError(f"writers to {repo} queued over {WRITER_WAIT_S:.0f} s")
        try:
            yield
        finally:
            lock.release()

    def _read_apart(self) -> AbstractContextManager[_Tx]:
        return self._tx(write=False)  # a pooled connection is not tied to a thread

    def close(self) -> None:
        self._pool.close()


_SETUP = 'see docs/server.md, "A PostgreSQL database"'
_CAUSES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r'role "([^"]*)" does not exist'),
        "create the role (`createuser --pwprompt {0}` as the postgres user) or name an "
        "existing one in --db; " + _SETUP,
    ),
    (
        re.compile(r'database "([^"]*)" does not exist'),
        "create it (`createdb -O ROLE {0}` as the postgres user) or name an existing one in "
        "--db; " + _SETUP,
    ),
    (
        re.compile(r'password authentication failed for user "([^"]*)"'),
        "check the password for {0} (in --db, PGPASSWORD or ~/.pgpass)",
    ),
    (
        re.compile(r"no pg_hba\.conf entry"),
        "the server's pg_hba.conf does not admit this host, role or database; " + _SETUP,
    ),
    (
        re.compile(
            r"(connection refused|could not translate host name|no such file or directory"
            r"|timeout expired)",
            re.IGNORECASE,
        ),  # fmt: skip
        "check the host and port in --db and that PostgreSQL is running and listening there",
    ),
)


def _libpq_words(exc: Exception) -> str:
    """libpq's whole message on one line, redacted and escaped (for ``--verbose``)."""
    from teamsync.security.names import printable

    return f"{type(exc).__name__}: " + printable(redact_url(" ".join(str(exc).split())))[:1000]


def connect_failure(exc: Exception) -> str:
    """libpq's own reason (``role "x" does not exist``) and what to do about it.

    libpq never repeats a password in its messages; a URL in them is redacted
    all the same, and the text is escaped (a server's words can hold control
    characters). With ``-v`` the CLI prints libpq's whole message as well.
    """
    from teamsync.security.names import printable

    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    fatal = next((ln for ln in lines if "FATAL:" in ln), lines[0] if lines else "")
    reason = printable(redact_url(fatal.rpartition("FATAL:")[2].strip() or fatal))[:300]
    for pattern, hint in _CAUSES:
        found = pattern.search(fatal)
        if found is not None:
            name = printable(found.group(1)) if found.groups() else ""
            return f"{reason or type(exc).__name__}; {hint.format(name)}"
    return f"{reason or type(exc).__name__}; check --db and that the database is running"


def _rollback(conn: psycopg.Connection[Row]) -> None:
    import psycopg

    try:
        conn.execute("ROLLBACK")
    except psycopg.Error:
        conn.close()
