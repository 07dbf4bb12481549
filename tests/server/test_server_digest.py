"""Writes in O(changed keys): the running digest and the indexed checks give exactly
what recomputing from every row gave, on SQLite and PostgreSQL.

The reference below is the write algorithm as it was before the digest (read
every live row under the lock, check, apply, hash the whole listing), kept
here as the oracle. Random write sequences run through both; the outcome of
every write (accepted, or refused with the same kind and keys) and the store
checksum after it must agree, and the stored checksum must equal the one
recomputed from all live rows.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from typing import Any

import hypothesis
import pytest
from hypothesis import strategies as st

from teamsync.security.keys import clashes_with
from teamsync.server.storage import (
    EMPTY_CHECKSUM,
    Storage,
    WriteOk,
    WriteRefused,
    WriteRequest,
    open_storage,
)
from teamsync.wire import (
    LEGACY_EMPTY_CHECKSUM,
    checksum,
    digest_add,
    digest_checksum,
    entry_element,
    is_store_checksum,
    legacy_store_checksum,
    store_checksum,
    store_digest,
)

# Keys that clash with each other in every way the server checks: case, NFKC,
# the Turkic i, and a file whose name another key needs as a folder.
KEYS = [
    "a.md", "A.md", "a.md/x.md", "A.MD/y.md", "b.md", "notes/b.md", "Notes/B.md",
    "caf\u00e9.md", "CAFE\u0301.md", "\u0131.md", "I.md", "deep/er.md/c.md", "DEEP/er.md",
]  # fmt: skip
TEXTS = ["one\n", "two\n", "three\n"]
FILLER = {f"fill/f{i:02}.md": f"filler {i}\n" for i in range(40)}
"""Prefilled so the indexed neighbour lookup runs (a small store is read whole)."""
_repos = itertools.count()


def reference(
    req: WriteRequest, live: dict[str, str], version: int
) -> WriteRefused | tuple[list[str], tuple[tuple[str, str], ...]]:
    """The pre-digest algorithm on the whole live listing; mutates ``live`` on success.
    Returns the changed keys and the ``(new, other)`` clashes left out of the write."""
    if req.create_only and version > 0:
        return WriteRefused("precondition")
    if req.base_checksums:
        bad = sorted(k for k, want in req.base_checksums.items() if live.get(k) != want)
        if bad:
            return WriteRefused("conflict", keys=tuple(bad))
    accepted = {store_checksum(live)} | ({LEGACY_EMPTY_CHECKSUM} if not live else set())
    if req.if_match is not None and req.if_match not in accepted:
        return WriteRefused("precondition")
    deletes = set(req.deletes) - set(req.upserts)
    after = (set(live) - deletes) | set(req.upserts)
    new = [key for key in req.upserts if key not in live]
    pairs = tuple(clashes_with(new, after) if new else [])
    left_out = {key for key, _ in pairs}
    upserts = {k: v for k, v in req.upserts.items() if k not in left_out}
    after -= left_out
    if len(after) > req.max_entries and len(after) > len(live):
        return WriteRefused(
            "too_many_entries", max_entries=req.max_entries, received_entries=len(after)
        )
    changed = []
    for key in sorted(upserts):
        if live.get(key) != checksum(upserts[key]):
            live[key] = checksum(upserts[key])
            changed.append(key)
    for key in sorted(deletes):
        if key in live:
            del live[key]
            changed.append(key)
    return changed, pairs


keys = st.sampled_from(KEYS)
writes = st.lists(
    st.fixed_dictionaries(
        {
            "upserts": st.dictionaries(keys, st.sampled_from(TEXTS), max_size=3),
            "deletes": st.lists(keys, max_size=2, unique=True),
            "cas": st.dictionaries(keys, st.sampled_from([None, *TEXTS]), max_size=2),
            # weighted so most writes pass the store preconditions and reach the key checks
            "if_match": st.sampled_from(
                [None, None, "current", "current", "stale", "legacy-empty"]
            ),
            "create_only": st.sampled_from([False] * 5 + [True]),
            "cap": st.sampled_from([5000, 5000, 60, 3]),
        }
    ),
    min_size=1,
    max_size=8,
)


def _request(op: Mapping[str, Any], live: Mapping[str, str], stale: str) -> WriteRequest:
    tags = {"current": store_checksum(live), "stale": stale, "legacy-empty": LEGACY_EMPTY_CHECKSUM}
    cas = {k: None if t is None else checksum(t) for k, t in op["cas"].items()}
    return WriteRequest(
        upserts=op["upserts"],
        deletes=[k for k in op["deletes"] if k not in op["upserts"]],
        if_match=tags.get(op["if_match"]),
        create_only=op["create_only"],
        base_checksums=cas or None,
        max_entries=op["cap"],
    )


def _run_against_reference(storage: Storage, ops: list[dict[str, Any]], prefill: bool) -> None:
    repo = f"acme/prop{next(_repos)}"
    live: dict[str, str] = {}
    version = 0
    if prefill:
        storage.write(repo, WriteRequest(upserts=FILLER), time.time())
        live = {k: checksum(v) for k, v in FILLER.items()}
        version = 1
    stale = EMPTY_CHECKSUM
    for op in ops:
        req = _request(op, live, stale)
        before = store_checksum(live)
        expected = reference(req, live, version)
        got = storage.write(repo, req, time.time())
        if isinstance(expected, WriteRefused):
            assert got == expected, (req, live)
            continue
        assert isinstance(got, WriteOk), (req, got)
        assert sorted(got.changed) == sorted(expected[0])
        assert got.clashed == expected[1], (req, live)
        version += 1 if expected[0] else 0
        assert got.head.version == version
        assert got.head.checksum == store_checksum(live)
        stale = before
    state = storage.state(repo, contents=False)
    if state is None:
        assert version == 0
        return
    assert dict(state.checksums) == live
    assert state.head.checksum == store_checksum(state.checksums)  # recomputed from every row


@hypothesis.settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture],
)
@hypothesis.given(ops=writes, prefill=st.booleans())
def test_writes_agree_with_the_whole_store_algorithm(
    storage: Storage, ops: list[dict[str, Any]], prefill: bool
) -> None:
    _run_against_reference(storage, ops, prefill)


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(
    start=st.dictionaries(st.text(min_size=1, max_size=8), st.sampled_from(TEXTS), max_size=20),
    change=st.dictionaries(
        st.text(min_size=1, max_size=8), st.none() | st.sampled_from(TEXTS), max_size=8
    ),
)
def test_the_running_digest_equals_the_digest_of_the_whole_listing(
    start: dict[str, str], change: dict[str, str | None]
) -> None:
    before = {k: checksum(v) for k, v in start.items()}
    after = dict(before)
    add, remove = [], []
    for key, text in change.items():
        if key in after:
            remove.append(entry_element(key, after.pop(key)))
        if text is not None:
            after[key] = checksum(text)
            add.append(entry_element(key, after[key]))
    running = digest_add(store_digest(before), add, remove)
    assert running == store_digest(after)
    assert digest_checksum(running) == store_checksum(after)
    assert is_store_checksum(after, store_checksum(after))
    assert is_store_checksum(after, legacy_store_checksum(after))  # an older server's
    assert not is_store_checksum(after, store_checksum({**after, "other.md": "sha256:0"}))


def test_the_store_checksum_is_pinned() -> None:
    """The definition is part of the wire: a change here breaks every client's exact check."""
    sums = {"a.md": checksum("one"), "b.md": checksum("two")}
    assert store_checksum(sums) == store_checksum(dict(reversed(sums.items())))
    assert EMPTY_CHECKSUM == digest_checksum(0)
    assert store_checksum({}) == (
        "sha256:076a27c79e5ace2a3d47f9dd2e83e4ff6ea8872b3c2218f66c92b89b55f36560"
    )
    assert legacy_store_checksum(sums) != store_checksum(sums)


CLASHES = [
    ("a.md/x.md", "A.md"),  # a stored folder for a new file
    ("A.md", "a.md/x.md"),  # a stored file for a new folder
    ("deep/er.md/c.md", "DEEP/er.md"),  # a folder two levels up
    ("caf\u00e9.md", "CAFE\u0301.md"),  # NFC against NFD spelling, folded
    ("\u0131.md", "I.md"),  # dotless i
]


def test_every_clash_kind_is_found_in_a_store_read_by_index(storage: Storage) -> None:
    """A store large enough that new keys are checked through the ``folded`` index."""
    for n, (stored, new) in enumerate(CLASHES):
        repo = f"acme/clash{n}"
        storage.write(repo, WriteRequest(upserts={**FILLER, stored: "x\n"}), time.time())
        left_out = storage.write(repo, WriteRequest(upserts={new: "y\n"}), time.time())
        assert isinstance(left_out, WriteOk) and left_out.clashed == ((new, stored),), (stored, new)
        assert left_out.changed == ()
        renamed = storage.write(
            repo, WriteRequest(upserts={new: "y\n"}, deletes=[stored]), time.time()
        )
        assert isinstance(renamed, WriteOk), (stored, new)


def _sql(storage: Storage, sql: str, params: tuple[object, ...] = ()) -> list[Any]:
    with storage._tx(write=True) as tx:  # type: ignore[attr-defined]
        return list(tx.q(sql, params))


def test_a_database_from_before_digests_is_upgraded_at_startup(db_url: str) -> None:
    store = open_storage(db_url)
    store.write("acme/old", WriteRequest(upserts={"a.md": "one\n", "b.md": "two\n"}), time.time())
    old = legacy_store_checksum({"a.md": checksum("one\n"), "b.md": checksum("two\n")})
    _sql(store, "DELETE FROM ts_digests")
    _sql(store, "UPDATE ts_repos SET checksum = ?", (old,))
    _sql(store, "DELETE FROM ts_meta")
    _sql(store, "UPDATE ts_entries SET folded = 'stale'")
    store.close()
    store = open_storage(db_url)
    try:
        head = store.head("acme/old")
        want = store_checksum({"a.md": checksum("one\n"), "b.md": checksum("two\n")})
        assert head is not None and head.checksum == want and head.version == 1
        # the re-folded column finds the clash again
        clash = store.write("acme/old", WriteRequest(upserts={"A.md": "x\n"}), time.time())
        assert isinstance(clash, WriteOk) and clash.clashed == (("A.md", "a.md"),)
    finally:
        store.close()


def test_a_digest_an_older_server_left_behind_is_rebuilt_on_the_next_write(
    storage: Storage,
) -> None:
    storage.write("acme/mixed", WriteRequest(upserts={"a.md": "one\n"}), time.time())
    # an older server (no digests) wrote version 2 behind this one's back
    _sql(
        storage,
        "INSERT INTO ts_entries (repo_id, key, folded, content, checksum, deleted, updated_at,"
        " updated_by) SELECT id, 'b.md', 'b.md', 'two\n', ?, 0, 0, 'old' FROM ts_repos"
        " WHERE name = 'acme/mixed'",
        (checksum("two\n"),),
    )
    _sql(storage, "UPDATE ts_repos SET version = 2 WHERE name = 'acme/mixed'")
    ok = storage.write("acme/mixed", WriteRequest(upserts={"c.md": "three\n"}), time.time())
    assert isinstance(ok, WriteOk) and ok.head.version == 3
    listing = {"a.md": checksum("one\n"), "b.md": checksum("two\n"), "c.md": checksum("three\n")}
    assert ok.head.checksum == store_checksum(listing)


@pytest.mark.postgres
def test_a_writer_that_waited_for_the_row_lock_reads_the_current_digest(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes' storages on one database: the second writer waits for the row lock
    the first holds; after the first commits, the second must use the digest it left (the
    locking join re-reads only the locked row in READ COMMITTED), not rebuild it from every
    row. Caught by bench/server_load.py: CPU per PUT grew with the store under two workers."""
    import threading

    from teamsync.server import storage_sql

    first, second = open_storage(pg_url), open_storage(pg_url)
    try:
        req = WriteRequest(upserts={"a.md": "a\n"}, who="t")
        assert isinstance(first.write("acme/r", req, time.time()), WriteOk)
        rebuilt: list[int] = []
        rebuild = storage_sql._rebuild_digest  # noqa: SLF001

        def counted(*args: Any) -> Any:
            rebuilt.append(1)
            return rebuild(*args)

        monkeypatch.setattr(storage_sql, "_rebuild_digest", counted)
        inside, release = threading.Event(), threading.Event()
        run = first._write_tx  # type: ignore[attr-defined]  # noqa: SLF001

        def held(repo: str, work: Any) -> Any:
            def slow(tx: Any) -> Any:
                result = work(tx)
                inside.set()
                assert release.wait(10)
                return result

            return run(repo, slow)

        monkeypatch.setattr(first, "_write_tx", held)
        results: dict[str, object] = {}
        one = threading.Thread(
            target=lambda: results.update(
                first=first.write("acme/r", WriteRequest(upserts={"b.md": "b\n"}), time.time())
            )
        )
        one.start()
        assert inside.wait(10)
        two = threading.Thread(
            target=lambda: results.update(
                second=second.write("acme/r", WriteRequest(upserts={"c.md": "c\n"}), time.time())
            )
        )
        two.start()
        time.sleep(0.5)  # the second writer is now queued on the row lock
        assert "second" not in results
        release.set()
        one.join(10)
        two.join(10)
        assert isinstance(results["first"], WriteOk) and isinstance(results["second"], WriteOk)
        assert rebuilt == []
        state = second.state("acme/r", contents=False)
        assert state is not None and set(state.checksums) == {"a.md", "b.md", "c.md"}
        assert state.head.checksum == digest_checksum(store_digest(dict(state.checksums)))
    finally:
        first.close()
        second.close()
