"""The guards on plain data: history-loss rules, the mass-change share, restore
planning, unknown subtrees, NUL-framed git log parsing and the config knobs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from teamsync.errors import ConfigError
from teamsync.security.fs import SafeDir
from teamsync.security.keys import MAX_DEPTH
from teamsync.sync.base import Snapshot
from teamsync.sync.config import load_config
from teamsync.sync.gitcmd import parse_change_times
from teamsync.sync.guards import (
    Safety,
    lost_history,
    mass_change,
    missing_here,
    restore_local,
    restore_plan,
)
from teamsync.sync.plan import DELETE_LOCAL, MERGE, PULL, PUSH, is_below, plan
from teamsync.sync.state import BaseStore, RemoteMark

BASE = {"a.md": "sha256:a", "b.md": "sha256:b"}


def _seen(mark: RemoteMark | None, snap: Snapshot, descends: bool | None = None) -> str | None:
    stop = lost_history(mark, BASE, snap, (lambda _v: descends), "the server")
    return None if stop is None else stop.message


def test_a_missing_or_empty_remote_with_a_base_is_a_stop() -> None:
    assert "holds nothing" in (_seen(RemoteMark("v1", 3), Snapshot(None, {})) or "")
    assert "holds nothing" in (_seen(None, Snapshot(None, {})) or "")  # a base, no mark yet
    assert "is empty" in (_seen(RemoteMark("v1", 3), Snapshot("v2", {})) or "")
    # emptied by ordinary deletes that descend from the mark: a change, not a loss
    assert _seen(RemoteMark("v1", 3), Snapshot("v2", {}, serial=4)) is None
    assert _seen(RemoteMark("v1"), Snapshot("v2", {}), descends=True) is None
    # nothing synced yet: a missing remote is just new
    assert lost_history(None, {}, Snapshot(None, {}), None, "x") is None


def test_a_version_counter_going_back_or_reused_is_a_stop() -> None:
    same = Snapshot("v9", {"a.md": "sha256:a"}, serial=7)
    assert "older than version 8" in (_seen(RemoteMark("v1", 8), same) or "")
    assert "same version 7" in (_seen(RemoteMark("v1", 7), same) or "")
    assert _seen(RemoteMark("v1", 6), same) is None
    assert _seen(RemoteMark("v9", 7), same) is None  # exactly what we saw


def test_a_commit_not_descending_from_the_mark_is_a_stop() -> None:
    snap = Snapshot("c2" * 20, {"a.md": "sha256:a"})
    assert "does not descend" in (_seen(RemoteMark("c1" * 20), snap, descends=False) or "")
    assert _seen(RemoteMark("c1" * 20), snap, descends=True) is None
    assert _seen(RemoteMark("c1" * 20), snap, descends=None) is None  # cannot tell


def test_a_remote_holding_everything_synced_is_never_a_stop() -> None:
    snap = Snapshot("other", {**BASE, "new.md": "sha256:n"}, serial=1)
    assert _seen(RemoteMark("v1", 50), snap, descends=False) is None


def test_restore_plan_pushes_what_the_remote_lost_or_holds_older() -> None:
    base = {"lost.md": "b1", "older.md": "b2", "edited.md": "b3", "gone.md": "b4"}
    local = {"lost.md": "b1", "older.md": "b2", "edited.md": "l3"}
    remote = {"older.md": "old2", "edited.md": "theirs3", "gone.md": "b4"}
    steps = plan(base, local, remote)
    past = {"older.md": {"old2"}}
    out = {s.key: s.action for s in restore_plan(steps, base, lambda k: past.get(k, set()))}
    assert out == {
        "lost.md": PUSH,  # was DELETE_LOCAL
        "older.md": PUSH,  # was PULL of a version this machine had before
        "edited.md": MERGE,  # a remote version never seen: merged as usual
        "gone.md": "delete_remote",  # deleted here: ordinary rules
    }
    assert {s.key: s.action for s in steps}["lost.md"] == DELETE_LOCAL


def test_mass_change_share_and_minimum() -> None:
    base = {f"k{i}.md": f"c{i}" for i in range(20)}
    local = dict(list(base.items())[6:])  # six deleted here
    steps = plan(base, local, base)
    none: set[str] = set()
    stop = mass_change(steps, base, lambda _k: none, Safety(), "sync")
    assert stop is not None and "6 of the team's 20" in stop.message
    assert any("--yes" in w for w in stop.way_forward)
    assert mass_change(steps, base, lambda _k: none, Safety(yes=True), "sync") is None
    assert mass_change(steps, base, lambda _k: none, Safety(mass_share=0.5), "sync") is None
    assert mass_change(steps, base, lambda _k: none, Safety(mass_min=7), "sync") is None
    # a pull bringing back versions this machine replaced before counts as a revert
    remote = {k: ("old" if i < 6 else v) for i, (k, v) in enumerate(base.items())}
    steps = plan(base, base, remote)
    assert {s.action for s in steps} == {PULL}
    assert mass_change(steps, base, lambda _k: none, Safety(), "pull") is None
    stop = mass_change(steps, base, lambda _k: {"old"}, Safety(), "pull")
    assert stop is not None and "revert 6" in stop.message


def test_unknown_paths_cover_their_whole_subtree() -> None:
    base = {"notes/a.md": "1", "notes/deep/b.md": "2", "notesX.md": "3", "top.md": "4"}
    steps = plan(base, {"top.md": "4", "notesX.md": "3"}, base, unknown={"notes"})
    assert steps == []
    assert is_below("notes/deep/b.md", {"notes"}) and not is_below("notesX.md", {"notes"})
    assert is_below("notes", {"notes"}) and not is_below("a.md", ())


def test_a_folder_nested_too_deeply_is_opaque(tmp_path: Path) -> None:
    path = tmp_path / "team"
    for i in range(MAX_DEPTH + 1):
        path = path / f"d{i}"
    path.mkdir(parents=True)
    (path / "x.md").write_text("x", encoding="utf-8")
    with SafeDir(tmp_path / "team") as team:
        [item] = list(team.walk())
    assert item.opaque and item.problem == "directory nested too deeply"


def test_git_log_records_are_nul_framed() -> None:
    out = (
        b"\x001700000300\x00"  # an empty commit
        b"\x001700000200\x00\nodd\x01name.md\x00line\nbreak.md\x001700000100\x00"
        b"\x001700000100\x00\n\nlead.md\x00odd\x01name.md\x00"
    )
    assert parse_change_times(out) == {
        "odd\x01name.md": 1700000200.0,
        "line\nbreak.md": 1700000200.0,
        "1700000100": 1700000200.0,  # a path that looks like a timestamp is still a path
        "\nlead.md": 1700000100.0,
    }
    assert parse_change_times(b"") == {}
    assert parse_change_times(b"\x00garbage\x00\npath.md\x00") == {}  # no usable stamp


def test_base_keeps_past_versions_and_the_remote_mark(tmp_path: Path) -> None:
    store = BaseStore(tmp_path / "base.sqlite3")
    assert store.remote_mark() is None
    store.set_remote_mark(RemoteMark("sha256:x", 4))
    assert store.remote_mark() == RemoteMark("sha256:x", 4)
    store.advance({"a.md": ("c1", "one")})
    store.advance({"a.md": ("c2", "two")})
    store.advance({"a.md": None})
    past = store.past("a.md")
    assert [(v.content, v.why) for v in past] == [("two", "deleted"), ("one", "replaced")]
    assert store.past_checksums("a.md") == {"c1", "c2"}
    for i in range(30):
        store.advance({"b.md": (f"c{i}", str(i))})
    assert len(store.past("b.md")) == 20  # bounded
    store.close()


@pytest.mark.parametrize(
    ("line", "ok"),
    [
        ("mass_change_share: 0.5", True),
        ("mass_change_share: 1", True),
        ("mass_change_share: off", True),
        ("mass_change_share: 0", False),
        ("mass_change_share: 1.5", False),
        ("mass_change_share: lots", False),
        ("mass_change_min: 0", False),
        ("mass_change_min: 3", True),
    ],
)
def test_mass_change_config_is_validated(tmp_path: Path, line: str, ok: bool) -> None:
    (tmp_path / "teamsync.yaml").write_text(f"backend: git\nurl: /x\n{line}\n", encoding="utf-8")
    if ok:
        config = load_config(tmp_path)
        assert config.mass_change_share in (None, 0.5, 1.0)
    else:
        with pytest.raises(ConfigError, match="mass_change"):
            load_config(tmp_path)


def _past(rows: dict[str, set[str]]) -> Callable[[str], set[str]]:
    return lambda key: rows.get(key, set())


def test_a_server_with_other_content_at_the_mark_stops_only_if_it_would_revert() -> None:
    """Issue 24 §1a: restored, then written past the mark; the server says what it held
    at the mark's serial."""
    past = _past({"a.md": {"sha256:a0"}})
    old = {"a.md": "sha256:a0", "b.md": "sha256:b"}  # a.md back at a version replaced here
    mark = RemoteMark("v7", 7)
    snap = Snapshot("v9", old, serial=9, checksum_at=(7, "other"))
    stop = lost_history(mark, BASE, snap, None, "x", past)
    assert stop is not None and "other content at version 7" in stop.message
    same = Snapshot("v9", old, serial=9, checksum_at=(7, "v7"))  # the mark as seen: go on
    assert lost_history(mark, BASE, same, None, "x", past) is None
    # nothing this machine synced reads as a revert (a teammate restored it already): go on
    newer = {"a.md": "sha256:a2", "b.md": "sha256:b"}
    moved = Snapshot("v9", newer, serial=9, checksum_at=(7, "other"))
    assert lost_history(mark, BASE, moved, None, "x", past) is None


def test_a_server_without_counter_or_history_stops_on_a_revert() -> None:
    """Issue 24 §1b: no counter, no history: an older version of a synced memory stops."""
    past = _past({"a.md": {"sha256:a0"}})
    snap = Snapshot("v2", {"a.md": "sha256:a0", "b.md": "sha256:b"})
    stop = lost_history(RemoteMark("v1"), BASE, snap, None, "x", past)
    assert stop is not None and "no version counter" in stop.message and "a.md" in stop.message
    fresh = Snapshot("v2", {"a.md": "sha256:a1", "b.md": "sha256:b"})  # a newer edit
    assert lost_history(RemoteMark("v1"), BASE, fresh, None, "x", past) is None
    # git tells by descent: no guess from contents
    assert lost_history(RemoteMark("v1"), BASE, snap, lambda _v: True, "x", past) is None


def test_restore_remote_pulls_a_write_made_after_the_restore() -> None:
    base = {"m0.md": "v2", "m1.md": "c1", "m2.md": "c2"}
    remote = {"m0.md": "v1", "m1.md": "c1", "m2.md": "carol"}
    when = {"m0.md": 10.0, "m1.md": 20.0, "m2.md": 30.0}
    steps = plan(base, dict(base), remote)
    past = _past({"m0.md": {"v1"}})
    out = restore_plan(steps, base, past, remote, when)
    assert {s.key: s.action for s in out} == {"m0.md": PUSH, "m2.md": PULL}
    older = {**when, "m2.md": 15.0}  # from before the newest one seen: lost, re-pushed
    out = restore_plan(steps, base, past, remote, older)
    assert {s.key: s.action for s in out} == {"m0.md": PUSH, "m2.md": PUSH}


def test_a_pull_with_most_files_missing_stops_and_offers_to_download_first() -> None:
    base = {f"k{i}.md": f"c{i}" for i in range(8)}
    steps = plan(base, {}, base)  # every file gone here, the remote unchanged
    stop = missing_here(steps, base, Safety(), "pull")
    assert stop is not None and "8 of the 8 memories synced here are missing" in stop.message
    assert stop.way_forward[0].startswith("`teamsync pull --restore-local`")
    assert all("--yes" not in w for w in stop.way_forward[:2])
    assert missing_here(steps, base, Safety(restore_local=True), "pull") is None
    assert {s.action for s in restore_local(steps)} == {PULL}
    stop = mass_change(steps, base, _past({}), Safety(), "sync")
    assert stop is not None and "--restore-local" in stop.way_forward[0]
    assert "for everyone" in stop.way_forward[2]
