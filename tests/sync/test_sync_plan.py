"""Planning on plain data: the reconciliation table, conflict names, the base store."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from teamsync.security.keys import fold_key, key_clashes, key_problem
from teamsync.sync.plan import (
    ADOPT,
    DELETE_LOCAL,
    DELETE_REMOTE,
    FORGET,
    MERGE,
    PULL,
    PUSH,
    classify,
    conflict_name,
    is_conflict_copy_of,
    plan,
)
from teamsync.sync.state import BaseStore, FileStat, store_path


@pytest.mark.parametrize(
    ("base", "local", "remote", "action"),
    [
        ("b", "b", "b", None),
        ("b", "l", "b", PUSH),
        ("b", "b", "r", PULL),
        ("b", "x", "x", ADOPT),
        ("b", "l", "r", MERGE),
        ("b", None, "b", DELETE_REMOTE),
        ("b", "b", None, DELETE_LOCAL),
        ("b", None, None, FORGET),
        ("b", None, "r", PULL),  # deleted here, edited there: keep the edit
        ("b", "l", None, PUSH),  # edited here, deleted there: keep the edit
        (None, "l", None, PUSH),  # first sync: never a delete
        (None, None, "r", PULL),
        (None, "x", "x", ADOPT),
        (None, "l", "r", MERGE),
        (None, None, None, None),
    ],
)
def test_classify_table(
    base: str | None, local: str | None, remote: str | None, action: str | None
) -> None:
    assert classify(base, local, remote) == action


def test_plan_skips_refused_keys_and_sorts() -> None:
    steps = plan(
        {"a.md": "1"}, {"a.md": "1", "b.md": "2", "z.md": "3"}, {"a.md": "1"}, skip={"z.md"}
    )
    assert [(s.key, s.action) for s in steps] == [("b.md", PUSH)]


def test_conflict_names_are_valid_unique_and_do_not_grow() -> None:
    now = 1_764_000_000.0
    first = conflict_name("dir/notes.md", "Bob Smith/../x", now, taken=())
    assert first.startswith("dir/notes.conflict-") and first.endswith("-Bob-Smith-x.md")
    assert key_problem(first) is None
    assert time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now)) in first
    second = conflict_name(
        "dir/notes.md", "bob", now, taken={conflict_name("dir/notes.md", "bob", now, ())}
    )
    assert second.endswith("-bob-2.md")
    again = conflict_name(first, "bob", now + 60, taken=())
    assert again.count(".conflict-") == 1
    assert is_conflict_copy_of(first, "dir/notes.md") and not is_conflict_copy_of(
        "dir/notes.md", "dir/notes.md"
    )
    long_key = "x" * 250 + ".md"
    assert key_problem(conflict_name(long_key, "bob", now, ())) is None


def test_base_store_round_trip_and_location(tmp_path: Path) -> None:
    team = tmp_path / "team"
    team.mkdir()
    state = BaseStore.open(tmp_path / "state", team, "git:/r#b")
    state.advance({"a.md": ("sha256:1", "one\n"), "b.md": ("sha256:2", "two\n")})
    state.advance({"b.md": None})
    state.close()
    path = store_path(tmp_path / "state", team, "git:/r#b")
    assert path.exists() and team not in path.parents
    assert store_path(tmp_path / "state", team, "git:/other#b") != path
    again = BaseStore.open(tmp_path / "state", team, "git:/r#b")
    assert again.checksums() == {"a.md": "sha256:1"} and again.content("a.md") == "one\n"
    again.close()


def test_stat_cache_distrusts_racy_entries(tmp_path: Path) -> None:
    state = BaseStore(tmp_path / "s.sqlite3")
    old = FileStat(3, 1_000_000_000, 7)
    fresh = FileStat(3, time.time_ns(), 7)
    state.remember_stats([("old.md", old, "sha256:o"), ("new.md", fresh, "sha256:n")])
    assert state.cached_checksum("old.md", old) == "sha256:o"
    assert state.cached_checksum("old.md", FileStat(3, 1_000_000_001, 7)) is None
    assert state.cached_checksum("new.md", fresh) is None  # too recent to trust
    state.remember_stats([], gone=["old.md"])
    assert state.cached_checksum("old.md", old) is None
    state.close()
    assert os.path.exists(tmp_path / "s.sqlite3")


def test_a_conflict_name_never_folds_like_a_taken_one() -> None:
    """Fuzzer, REST seed 1 with NFKC renames: conflicts on ``ﬁle.md`` and ``file.md`` in
    one second made ``ﬁle.conflict-…`` and ``file.conflict-…``, refused side by side."""
    now = 1_700_000_000.0
    first = conflict_name("\ufb01le.md", "bob", now, ())
    second = conflict_name("file.md", "bob", now, {first})
    assert fold_key(first) != fold_key(second) and second.endswith("-bob-2.md")
    assert key_clashes({first: "a", second: "b"}) == {}


def test_a_tombstone_proves_only_its_exact_bytes_never_synced_never_renamed_here() -> None:
    from teamsync.sync.tombstones import tombstoned_bases

    deleted = {"a.md": "sha256:" + "a" * 64, "b.md": "sha256:" + "b" * 64}
    local = {"a.md": "sha256:" + "a" * 64, "b.md": "sha256:" + "c" * 64}

    def run(**kw: object) -> dict[str, str]:
        args: dict[str, object] = {
            "deleted_sums": deleted,
            "base": {},
            "local": local,
            "remote": {},
            "synced_here": lambda key: False,
            "known": lambda: (),
            **kw,
        }
        return tombstoned_bases(**args)  # type: ignore[arg-type]

    assert run() == {"a.md": "sha256:" + "a" * 64}  # b.md's bytes differ: a memory, pushed
    assert run(deleted_sums={}) == {}  # a plain server: a time only, no proof
    assert run(synced_here=lambda key: key == "a.md") == {}  # synced or renamed here
    assert run(known=lambda: {"sha256:" + "a" * 64}) == {}  # its bytes were held here: a rename
    assert run(remote={"a.md": "sha256:" + "d" * 64}) == {}  # written again since
    assert run(base={"a.md": "sha256:" + "a" * 64}) == {}  # the ordinary plan deletes it
