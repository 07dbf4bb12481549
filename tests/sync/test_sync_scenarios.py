"""Every row of the reconciliation table, with real teammates: a bare git remote, and the
contract's in-memory backend (``testing/memory_backend.py``) through the same engine."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from teamsync.memdir.lint import lint_memdir
from testing.gitrepos import Member, converge, make_team, memory, remote_files
from testing.memory_backend import MemoryMate, make_memory_team

Make = Callable[..., list[Member]]

CONFLICT = re.compile(r"^notes\.conflict-\d{8}T\d{6}Z-(alice|bob|carol)(-\d+)?\.md$", re.I)


@pytest.fixture(params=["git", "memory"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Make:
    """Teammates on one fresh remote of the backend under test."""

    def mates(names: tuple[str, ...] = ("alice", "bob")) -> list[Member]:
        if request.param == "memory":
            return list(make_memory_team(tmp_path, names))
        return list(make_team(tmp_path, names))

    return mates


def _remote(mate: Member) -> dict[str, str]:
    if isinstance(mate, MemoryMate):
        return mate.remote.files()
    return remote_files(mate.remote)  # type: ignore[attr-defined]


def _shared(make: Make, names: tuple[str, ...] = ("alice", "bob")) -> list[Member]:
    """Teammates who already share notes.md (synced once)."""
    mates = make(names)
    mates[0].write("notes.md", "one\ntwo\nthree\nfour\nfive\n")
    converge(mates, rounds=1)
    for mate in mates:
        assert mate.read("notes.md") == "one\ntwo\nthree\nfour\nfive\n"
    return mates


def _same_everywhere(mates: list[Member]) -> dict[str, str]:
    trees = [m.files() for m in mates]
    assert all(t == trees[0] for t in trees), trees
    assert _remote(mates[0]) == trees[0]
    return trees[0]


def test_edit_edit_non_overlapping_merges(make: Make) -> None:
    alice, bob = _shared(make)
    alice.write("notes.md", "ONE\ntwo\nthree\nfour\nfive\n")
    bob.write("notes.md", "one\ntwo\nthree\nfour\nFIVE\n")
    assert alice.sync().pushed == ["notes.md"]
    report = bob.sync()
    assert report.merged == ["notes.md"] and not report.conflicts
    assert "notes.md" in report.pushed
    converge([alice, bob], rounds=1)
    tree = _same_everywhere([alice, bob])
    assert tree == {"notes.md": "ONE\ntwo\nthree\nfour\nFIVE\n"}


def test_edit_edit_overlapping_keeps_both_as_conflict_copy(make: Make) -> None:
    alice, bob = _shared(make)
    alice.write("notes.md", "one\ntwo\nALICE\nfour\nfive\n")
    bob.write("notes.md", "one\ntwo\nBOB\nfour\nfive\n")
    alice.sync()
    report = bob.sync()
    assert report.exit_code() == 1
    [conflict] = report.conflicts
    assert conflict.key == "notes.md" and conflict.copy and CONFLICT.match(conflict.copy)
    assert "-Bob" in conflict.copy
    assert bob.read("notes.md") == "one\ntwo\nALICE\nfour\nfive\n"  # the remote wins the name
    assert bob.read(conflict.copy) == "one\ntwo\nBOB\nfour\nfive\n"  # ours is kept beside it
    converge([alice, bob], rounds=1)
    tree = _same_everywhere([alice, bob])
    assert set(tree) == {"notes.md", conflict.copy}  # the copy travels to teammates too


def test_identical_edits_are_not_a_conflict(make: Make) -> None:
    alice, bob = _shared(make)
    for mate in (alice, bob):
        mate.write("notes.md", "one\ntwo\nsame\n")
    alice.sync()
    report = bob.sync()
    assert report.exit_code() == 0
    assert not (report.conflicts or report.pushed or report.written)
    assert _same_everywhere([alice, bob]) == {"notes.md": "one\ntwo\nsame\n"}


def test_edit_here_delete_there_keeps_the_edit(make: Make) -> None:
    alice, bob = _shared(make)
    alice.write("notes.md", "one\ntwo\nedited by alice\n")
    bob.delete("notes.md")
    alice.sync()
    report = bob.sync()  # bob deleted, alice modified: the modified file comes back
    assert report.written == ["notes.md"] and not report.remote_deleted
    converge([alice, bob], rounds=1)
    assert _same_everywhere([alice, bob]) == {"notes.md": "one\ntwo\nedited by alice\n"}


def test_delete_here_edit_there_keeps_the_edit(make: Make) -> None:
    alice, bob = _shared(make)
    bob.delete("notes.md")
    assert bob.sync().remote_deleted == ["notes.md"]
    alice.write("notes.md", "one\ntwo\nedited after the delete\n")
    report = alice.sync()  # the remote deleted, alice modified: alice's edit is pushed back
    assert report.pushed == ["notes.md"] and not report.deleted
    converge([alice, bob], rounds=1)
    assert _same_everywhere([alice, bob]) == {"notes.md": "one\ntwo\nedited after the delete\n"}


def test_unchanged_file_deleted_there_is_deleted_here(make: Make) -> None:
    alice, bob = _shared(make)
    alice.delete("notes.md")
    assert alice.sync().remote_deleted == ["notes.md"]
    report = bob.sync()
    assert report.deleted == ["notes.md"]
    assert _same_everywhere([alice, bob]) == {}


def test_delete_delete(make: Make) -> None:
    alice, bob = _shared(make)
    alice.delete("notes.md")
    bob.delete("notes.md")
    alice.sync()
    report = bob.sync()
    assert report.exit_code() == 0 and not (
        report.deleted or report.remote_deleted or report.written
    )
    assert _same_everywhere([alice, bob]) == {}
    bob.write("notes.md", "reborn\n")  # the forgotten base does not resurrect or block anything
    converge([bob, alice], rounds=1)
    assert _same_everywhere([alice, bob]) == {"notes.md": "reborn\n"}


def test_both_create_same_key_identically(make: Make) -> None:
    alice, bob = make()
    alice.write("new.md", "same\n")
    bob.write("new.md", "same\n")
    alice.sync()
    assert bob.sync().exit_code() == 0
    assert _same_everywhere([alice, bob]) == {"new.md": "same\n"}


def test_both_create_same_key_differently(make: Make) -> None:
    alice, bob = make()
    alice.write("notes.md", "alice wrote this\n")
    bob.write("notes.md", "bob wrote this\n")
    alice.sync()
    report = bob.sync()
    [conflict] = report.conflicts
    assert conflict.copy is not None
    converge([alice, bob], rounds=1)
    tree = _same_everywhere([alice, bob])
    assert tree == {"notes.md": "alice wrote this\n", conflict.copy: "bob wrote this\n"}


def test_rename_travels_as_delete_plus_create(make: Make) -> None:
    alice, bob = _shared(make)
    (alice.team / "notes.md").rename(alice.team / "renamed.md")
    report = alice.sync()
    assert report.pushed == ["renamed.md"] and report.remote_deleted == ["notes.md"]
    report = bob.sync()
    assert report.written == ["renamed.md"] and report.deleted == ["notes.md"]
    assert _same_everywhere([alice, bob]) == {"renamed.md": "one\ntwo\nthree\nfour\nfive\n"}


def test_first_sync_with_files_on_both_sides_deletes_nothing(make: Make) -> None:
    alice, bob = make()
    alice.write("a.md", "from alice\n")
    alice.write("same.md", "same\n")
    alice.write("differs.md", "alice's version\n")
    bob.write("b.md", "from bob\n")
    bob.write("same.md", "same\n")
    bob.write("differs.md", "bob's version\n")
    alice.sync()
    report = bob.sync()
    assert not report.deleted and not report.remote_deleted
    converge([alice, bob], rounds=1)
    tree = _same_everywhere([alice, bob])
    [copy] = [k for k in tree if k.startswith("differs.conflict-")]
    assert tree == {
        "a.md": "from alice\n",
        "b.md": "from bob\n",
        "same.md": "same\n",
        "differs.md": "alice's version\n",
        copy: "bob's version\n",
    }


def test_three_teammates_merge_and_converge(make: Make) -> None:
    alice, bob, carol = _shared(make, ("alice", "bob", "carol"))
    alice.write("notes.md", "ONE\ntwo\nthree\nfour\nfive\n")
    bob.write("notes.md", "one\ntwo\nTHREE\nfour\nfive\n")
    carol.write("notes.md", "one\ntwo\nthree\nfour\nFIVE\n")
    carol.write("carol.md", "carol's own\n")
    converge([alice, bob, carol], rounds=2)
    tree = _same_everywhere([alice, bob, carol])
    assert tree == {"notes.md": "ONE\ntwo\nTHREE\nfour\nFIVE\n", "carol.md": "carol's own\n"}


def test_three_teammates_overlapping_edits_keep_every_version(make: Make) -> None:
    mates = _shared(make, ("alice", "bob", "carol"))
    for mate in mates:
        mate.write("notes.md", f"one\ntwo\n{mate.name}\nfour\nfive\n")
    converge(mates, rounds=2)
    tree = _same_everywhere(mates)
    texts = "".join(tree.values())
    for mate in mates:
        assert f"\n{mate.name}\n" in texts
    assert sum(1 for k in tree if CONFLICT.match(k)) == 2


def test_conflict_copies_are_indexed(make: Make) -> None:
    alice, bob = make()
    alice.write("notes.md", memory("Notes", "shared line\n"))
    alice.write("MEMORY.md", "- [Notes](notes.md) — Notes in one line\n")
    converge([alice, bob], rounds=1)
    alice.write("notes.md", memory("Notes", "alice's line\n"))
    bob.write("notes.md", memory("Notes", "bob's line\n"))
    alice.sync()
    report = bob.sync()
    [conflict] = report.conflicts
    assert conflict.copy is not None
    index = bob.read("MEMORY.md")
    assert f"]({conflict.copy})" in index and "](notes.md)" in index
    converge([alice, bob], rounds=1)
    assert f"]({conflict.copy})" in _same_everywhere([alice, bob])["MEMORY.md"]
    index_kinds = {"dead-link", "bad-link", "orphan", "index-limit", "index-version"}
    for mate in (alice, bob):  # what sync leaves passes `teamsync check`'s index rules
        team_problems = [p for p in lint_memdir(mate.memdir) if p.path.startswith("team/")]
        assert not [p for p in team_problems if p.kind in index_kinds], team_problems


def test_index_merged_from_both_sides_lists_both_new_memories(make: Make) -> None:
    alice, bob = make()
    alice.write("MEMORY.md", "- [Base](base.md) — the base memory\n")
    alice.write("base.md", memory("Base", "base\n"))
    converge([alice, bob], rounds=1)
    alice.write("x.md", memory("Xray", "x\n"))
    alice.write("MEMORY.md", "- [Base](base.md) — the base memory\n- [Xray](x.md) — alice's\n")
    bob.write("y.md", memory("Yankee", "y\n"))
    bob.write("MEMORY.md", "- [Base](base.md) — the base memory\n- [Yankee](y.md) — bob's\n")
    converge([alice, bob], rounds=2)
    index = _same_everywhere([alice, bob])["MEMORY.md"]
    for target in ("base.md", "x.md", "y.md"):
        assert index.count(f"]({target})") == 1, index
    assert not [p for p in lint_memdir(alice.memdir) if p.kind in {"dead-link", "orphan"}]
