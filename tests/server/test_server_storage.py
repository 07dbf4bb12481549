"""The storage suite: the same tests against SQLite and a real PostgreSQL."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from teamsync.server.storage import (
    EMPTY_CHECKSUM,
    Storage,
    TokenRecord,
    WriteOk,
    WriteRefused,
    WriteRequest,
    open_storage,
    store_checksum,
)
from teamsync.sync.base import checksum

REPO = "acme/widgets"


def put(storage: Storage, upserts: dict[str, str], **kw: object) -> WriteOk | WriteRefused:
    return storage.write(REPO, WriteRequest(upserts=upserts, **kw), time.time())  # type: ignore[arg-type]


def test_empty_repo_has_no_head_and_no_state(storage: Storage) -> None:
    assert storage.head(REPO) is None
    assert storage.state(REPO, contents=True) is None
    assert storage.history(REPO, after=0, limit=10) == []


def test_write_then_read_back_with_deterministic_checksum(storage: Storage) -> None:
    result = put(storage, {"b.md": "two", "a.md": "one"}, if_match=EMPTY_CHECKSUM)
    assert isinstance(result, WriteOk)
    assert result.head.version == 1
    assert sorted(result.changed) == ["a.md", "b.md"]
    expected = store_checksum({"a.md": checksum("one"), "b.md": checksum("two")})
    assert result.head.checksum == expected
    state = storage.state(REPO, contents=True)
    assert state is not None
    assert state.entries == {"a.md": "one", "b.md": "two"}
    assert state.checksums["a.md"] == checksum("one")
    hashes = storage.state(REPO, contents=False)
    assert hashes is not None and hashes.entries is None and hashes.head == state.head


def test_upsert_does_not_replace_the_store_and_noop_keeps_version(storage: Storage) -> None:
    put(storage, {"a.md": "one"})
    put(storage, {"b.md": "two"})
    again = put(storage, {"b.md": "two"})
    assert isinstance(again, WriteOk) and again.changed == () and again.head.version == 2
    state = storage.state(REPO, contents=True)
    assert state is not None and set(state.checksums) == {"a.md", "b.md"}


def test_if_match_and_create_only_preconditions(storage: Storage) -> None:
    first = put(storage, {"a.md": "one"}, create_only=True)
    assert isinstance(first, WriteOk)
    assert put(storage, {"b.md": "x"}, create_only=True) == WriteRefused("precondition")
    assert put(storage, {"b.md": "x"}, if_match=EMPTY_CHECKSUM) == WriteRefused("precondition")
    ok = put(storage, {"b.md": "x"}, if_match=first.head.checksum)
    assert isinstance(ok, WriteOk) and ok.head.version == 2
    assert set(storage.state(REPO, contents=False).checksums) == {"a.md", "b.md"}  # type: ignore[union-attr]


def test_base_checksums_conflict_lists_keys_and_changes_nothing(storage: Storage) -> None:
    put(storage, {"a.md": "one", "b.md": "two"})
    refused = put(
        storage,
        {"a.md": "mine", "c.md": "new"},
        base_checksums={"a.md": checksum("old"), "b.md": checksum("two"), "c.md": None},
    )
    assert refused == WriteRefused("conflict", keys=("a.md",))
    state = storage.state(REPO, contents=True)
    assert state is not None and state.entries == {"a.md": "one", "b.md": "two"}
    ok = put(storage, {"a.md": "mine"}, base_checksums={"a.md": checksum("one"), "z.md": None})
    assert isinstance(ok, WriteOk)


def test_case_and_nfkc_collisions_with_stored_keys_are_refused(storage: Storage) -> None:
    put(storage, {"Notes.md": "one", "caf\u00e9.md": "x"})
    # the clashing key alone is left out; the rest of the request is written
    clash = put(storage, {"notes.md": "two", "other.md": "o"})
    assert isinstance(clash, WriteOk) and clash.clashed == (("notes.md", "Notes.md"),)
    assert clash.changed == ("other.md",)
    clash = put(storage, {"CAF\u00c9.md": "y"})
    assert isinstance(clash, WriteOk) and clash.clashed == (("CAF\u00c9.md", "caf\u00e9.md"),)
    assert clash.changed == () and clash.head.version == 2
    put(storage, {}, deletes=["other.md"])
    # Replacing the stored spelling in the same request is fine.
    ok = put(storage, {"notes.md": "two"}, deletes=["Notes.md"])
    assert isinstance(ok, WriteOk)
    assert set(storage.state(REPO, contents=False).checksums) == {"notes.md", "caf\u00e9.md"}  # type: ignore[union-attr]


def test_entries_cap_counts_after_merge(storage: Storage) -> None:
    put(storage, {f"k{i}.md": str(i) for i in range(3)}, max_entries=3)
    refused = put(storage, {"k0.md": "new", "k9.md": "x"}, max_entries=3)
    assert refused == WriteRefused("too_many_entries", max_entries=3, received_entries=4)
    assert isinstance(put(storage, {"k0.md": "new"}, max_entries=3), WriteOk)
    assert isinstance(put(storage, {"k9.md": "x"}, deletes=["k1.md"], max_entries=3), WriteOk)


def test_deletes_leave_tombstones_in_history_and_keys_can_return(storage: Storage) -> None:
    put(storage, {"a.md": "one", "b.md": "two"})
    gone = put(storage, {}, deletes=["a.md", "never.md"])
    assert isinstance(gone, WriteOk) and gone.changed == ("a.md",)
    state = storage.state(REPO, contents=True)
    assert state is not None and state.entries == {"b.md": "two"}
    put(storage, {"a.md": "back"})
    items = storage.history(REPO, after=0, limit=100)
    assert [(i.key, i.action) for i in items] == [
        ("a.md", "upsert"),
        ("b.md", "upsert"),
        ("a.md", "delete"),
        ("a.md", "upsert"),
    ]
    assert items[2].checksum is None and items[3].checksum == checksum("back")
    page = storage.history(REPO, after=items[1].id, limit=1)
    assert [i.id for i in page] == [items[2].id]


def test_deleting_everything_keeps_a_versioned_empty_store(storage: Storage) -> None:
    put(storage, {"a.md": "one"})
    put(storage, {}, deletes=["a.md"])
    head = storage.head(REPO)
    assert head is not None and head.version == 2 and head.checksum == EMPTY_CHECKSUM


def test_repositories_are_isolated(storage: Storage) -> None:
    put(storage, {"a.md": "one"})
    storage.write("other/repo", WriteRequest(upserts={"z.md": "zz"}), time.time())
    state = storage.state("other/repo", contents=True)
    assert state is not None and state.entries == {"z.md": "zz"}
    assert storage.history("other/repo", after=0, limit=10)[0].key == "z.md"


def test_tokens_round_trip_and_revoke(storage: Storage) -> None:
    rec = TokenRecord("0123456789ab", "f" * 64, REPO, True, "alice", 1.0)
    storage.add_token(rec)
    assert storage.get_token("0123456789ab") == rec
    assert storage.list_tokens() == [rec]
    assert storage.revoke_token("0123456789ab", 2.0) is True
    assert storage.revoke_token("0123456789ab", 3.0) is False
    got = storage.get_token("0123456789ab")
    assert got is not None and got.revoked_at == 2.0
    assert storage.get_token("ffffffffffff") is None


def test_concurrent_writers_lose_no_update(db_url: str) -> None:
    """8 threads, each with its own connection, CAS-increment one counter 15 times."""
    stores = [open_storage(db_url) for _ in range(8)]
    stores[0].write(REPO, WriteRequest(upserts={"n.md": "0"}), time.time())
    errors: list[BaseException] = []

    def worker(store: Storage) -> None:
        try:
            for _ in range(15):
                while True:
                    state = store.state(REPO, contents=True)
                    assert state is not None and state.entries is not None
                    n = int(state.entries["n.md"])
                    req = WriteRequest(upserts={"n.md": str(n + 1)}, if_match=state.head.checksum)
                    if isinstance(store.write(REPO, req, time.time()), WriteOk):
                        break
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    final = stores[0].state(REPO, contents=True)
    assert final is not None and final.entries == {"n.md": "120"}
    assert final.head.version == 121
    for s in stores:
        s.close()


def test_default_database_lives_in_the_data_dir_with_private_mode(tmp_path: Path) -> None:
    import stat

    from teamsync.commands.serve import resolve_db_url
    from teamsync.config import Settings

    settings = Settings.build(environ={"HOME": str(tmp_path)}, cwd=tmp_path)
    url = resolve_db_url(settings, None)
    assert url == f"sqlite:///{tmp_path}/.local/share/teamsync/server.sqlite3"
    assert resolve_db_url(settings, "sqlite:////x.db") == "sqlite:////x.db"
    env = Settings.build(environ={"HOME": str(tmp_path), "TEAMSYNC_DB": "postgresql://h/db"})
    assert resolve_db_url(env, None) == "postgresql://h/db"
    store = open_storage(url)
    store.close()
    path = Path(url.removeprefix("sqlite:///"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_unsupported_urls_are_refused_without_leaking_passwords() -> None:
    import pytest

    from teamsync.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        open_storage("mysql://admin:" + "hunter2" + "@db/x")
    assert "hunter2" not in str(info.value) and "sqlite:///" in str(info.value)


def test_entries_reads_only_the_named_live_keys(storage: Storage) -> None:
    put(storage, {"a.md": "one", "b.md": "two", "c.md": "three"})
    storage.write(REPO, WriteRequest(upserts={}, deletes=["c.md"]), time.time())
    state = storage.entries(REPO, ["b.md", "c.md", "missing.md", "b.md"])
    full = storage.state(REPO, contents=True)
    assert state is not None and full is not None
    assert state.entries == {"b.md": "two"} and state.checksums == {"b.md": checksum("two")}
    assert state.head == full.head
    many = [f"k{i}.md" for i in range(1200)]  # more than one IN list
    put(storage, {k: k for k in many})
    got = storage.entries(REPO, many)
    assert got is not None and got.entries is not None and len(got.entries) == 1200
    assert storage.entries("nobody/here", ["a.md"]) is None


def test_changes_since_names_what_changed_after_a_version(storage: Storage) -> None:
    first = put(storage, {"a.md": "one", "b.md": "two"})
    assert isinstance(first, WriteOk) and first.head.version == 1
    put(storage, {"a.md": "one, edited"})
    storage.write(REPO, WriteRequest(upserts={"c.md": "new"}, deletes=["b.md"]), time.time())
    delta = storage.changes_since(REPO, 1)
    head = storage.head(REPO)
    assert delta is not None and head is not None and delta.head == head and head.version == 3
    assert delta.since == 1 and delta.deleted == ("b.md",)
    assert delta.checksums == {"a.md": checksum("one, edited"), "c.md": checksum("new")}
    assert set(delta.updated_at) == {"a.md", "c.md"}
    later = storage.changes_since(REPO, 2)
    assert later is not None and set(later.checksums) == {"c.md"} and later.deleted == ("b.md",)
    same = storage.changes_since(REPO, 3)
    assert same is not None and not same.checksums and not same.deleted
    assert storage.changes_since(REPO, 4) is None  # from the future: unknown
    assert storage.changes_since(REPO, 0) is None  # never recorded
    assert storage.changes_since("nobody/here", 1) is None
