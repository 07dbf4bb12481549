"""Group commit on SQLite: writers that queue share one transaction (one fsync), each is
answered only after it committed, and a writer that fails is undone alone."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from teamsync.errors import ServerError
from teamsync.server.storage import WriteOk, WriteRequest
from teamsync.server.storage_sql import Tx
from teamsync.server.storage_sqlite import SqliteStorage


def _put(key: str, text: str) -> WriteRequest:
    return WriteRequest(
        upserts={key: text},
        deletes=[],
        if_match=None,
        create_only=False,
        base_checksums=None,
        who="t",
        max_entries=100,
    )


def _queued(storage: SqliteStorage, n: int) -> None:
    deadline = time.monotonic() + 10
    while len(storage._group._queue) < n:  # noqa: SLF001 - the queue is what is observed
        assert time.monotonic() < deadline, "writers did not queue"
        time.sleep(0.001)


def _hold_first_batch(storage: SqliteStorage) -> tuple[threading.Event, threading.Thread]:
    """A writer whose transaction stays open until the event is set: the others queue."""
    release, inside = threading.Event(), threading.Event()

    def slow(tx: Tx) -> None:
        tx.q("INSERT INTO ts_meta (name, value) VALUES ('held', 'yes')")
        inside.set()
        assert release.wait(10)

    thread = threading.Thread(target=storage._group.submit, args=(slow, 10))  # noqa: SLF001
    thread.start()
    assert inside.wait(10)
    return release, thread


def test_queued_writers_share_one_commit_and_each_is_durable(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/db.sqlite3"
    storage = SqliteStorage(url)
    release, first = _hold_first_batch(storage)
    results: dict[int, object] = {}

    def writer(n: int) -> None:
        results[n] = storage.write("acme/r", _put(f"k{n}.md", f"value {n}\n"), time.time())

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    _queued(storage, 6)
    assert not results  # nobody is answered before its commit
    release.set()
    for thread in [first, *threads]:
        thread.join(10)
    assert all(isinstance(results[n], WriteOk) for n in range(6))
    assert (storage._group.batches, storage._group.jobs) == (2, 7)  # noqa: SLF001
    versions = sorted(r.head.version for r in results.values() if isinstance(r, WriteOk))
    assert versions == [1, 2, 3, 4, 5, 6]  # one after another inside the shared transaction
    storage.close()
    reopened = SqliteStorage(url)  # what was acknowledged is on disk
    state = reopened.state("acme/r", contents=True)
    assert state is not None and state.entries == {f"k{n}.md": f"value {n}\n" for n in range(6)}
    assert len(reopened.history("acme/r", after=0, limit=100)) == 6
    reopened.close()


def test_a_failing_writer_is_undone_alone(tmp_path: Path) -> None:
    storage = SqliteStorage(f"sqlite:///{tmp_path}/db.sqlite3")
    release, first = _hold_first_batch(storage)
    outcome: dict[str, object] = {}

    def broken(tx: Tx) -> None:
        tx.q("INSERT INTO ts_meta (name, value) VALUES ('broken', 'half')")
        raise RuntimeError("fails after writing")

    def run_broken() -> None:
        try:
            storage._group.submit(broken, 10)  # noqa: SLF001
        except RuntimeError as exc:
            outcome["broken"] = exc

    def run_good() -> None:
        outcome["good"] = storage.write("acme/r", _put("a.md", "a\n"), time.time())

    threads = [threading.Thread(target=run_broken), threading.Thread(target=run_good)]
    threads[0].start()
    _queued(storage, 1)
    threads[1].start()
    _queued(storage, 2)
    release.set()
    for thread in [first, *threads]:
        thread.join(10)
    assert isinstance(outcome["broken"], RuntimeError)
    assert isinstance(outcome["good"], WriteOk)
    with storage._tx(write=False) as tx:  # noqa: SLF001
        names = {row[0] for row in tx.q("SELECT name FROM ts_meta")}
    assert "held" in names and "broken" not in names
    state = storage.state("acme/r", contents=True)
    assert state is not None and state.entries == {"a.md": "a\n"}
    storage.close()


def test_a_writer_not_taken_in_time_gets_503_and_never_runs(tmp_path: Path) -> None:
    storage = SqliteStorage(f"sqlite:///{tmp_path}/db.sqlite3")
    storage.writer_wait_s = 0.05
    release, first = _hold_first_batch(storage)
    ran = threading.Event()
    with pytest.raises(ServerError, match="queued over"):
        storage._write_tx("acme/r", lambda tx: ran.set())  # type: ignore[arg-type,return-value]  # noqa: SLF001
    release.set()
    first.join(10)
    assert not ran.is_set() and not storage._group._queue  # noqa: SLF001
    storage.close()
