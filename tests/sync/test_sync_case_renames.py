"""Case-only and normalisation-only renames, and keys that cannot live side by side.

Both backends: a bare git remote and a real uvicorn serving the teamsync app.
A case-insensitive file system is simulated by :mod:`testing.casefold`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from teamsync.errors import BackendError
from teamsync.server.storage import open_storage
from teamsync.sync.base import ChangeSet
from teamsync.sync.git import GitBackend
from testing.casefold import CaseInsensitiveDir, sync_case_insensitive
from testing.gitrepos import Member, make_team, memory, remote_files, seed_remote
from testing.memory_backend import make_memory_team
from testing.server import app_for, make_rest_team, token_for, uvicorn_server

DEPLOY = memory("Deploy", "Deploys go through the release train on Tuesdays.\n")


@pytest.fixture(params=["git", "rest", "memory"])
def team(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[Member]]:
    """Alice and Bob on one backend (``memory``: the contract's in-memory backend)."""
    if request.param == "git":
        yield list(make_team(tmp_path))
        return
    if request.param == "memory":
        yield list(make_memory_team(tmp_path))
        return
    store = open_storage(f"sqlite:///{tmp_path / 'server.sqlite3'}")
    tokens = [token_for(store, label=n) for n in ("alice", "bob")]
    with uvicorn_server(app_for(store)) as url:
        yield list(make_rest_team(tmp_path, url, tokens))
    store.close()


def _share(mates: list[Member], key: str, text: str) -> None:
    mates[0].write(key, text)
    for mate in mates:
        assert mate.sync().exit_code() == 0
    assert all(m.files() == {key: text} for m in mates)


def _rename(mate: Member, old: str, new: str) -> None:
    (mate.team / old).rename(mate.team / new)


@pytest.mark.parametrize(
    ("old", "new"),
    [("Deploy.md", "deploy.md"), ("notes/Deploy.md", "notes/DEPLOY.md"), ("ﬁle.md", "file.md")],
    ids=["case", "case-in-folder", "nfkc"],
)
def test_case_or_normalisation_only_rename_travels(team: list[Member], old: str, new: str) -> None:
    alice, bob = team
    _share(team, old, DEPLOY)
    _rename(alice, old, new)
    report = alice.sync()
    assert report.exit_code() == 0, report.rejected + report.held_back
    assert report.pushed == [new] and report.remote_deleted == [old]
    report = bob.sync()
    assert report.exit_code() == 0 and report.written == [new] and report.deleted == [old]
    assert alice.files() == bob.files() == {new: DEPLOY}
    # the rename does not block later pushes (issue 18: every later sync got a 422)
    alice.write("later.md", memory("Later", "still syncing\n"))
    assert alice.sync().pushed == ["later.md"]
    assert bob.sync().written == ["later.md"]


def test_rename_back_and_forth_converges(team: list[Member]) -> None:
    alice, bob = team
    _share(team, "Deploy.md", DEPLOY)
    for old, new in [("Deploy.md", "deploy.md"), ("deploy.md", "DEPLOY.md")]:
        _rename(alice, old, new)
        assert alice.sync().exit_code() == 0
        assert bob.sync().exit_code() == 0
        assert alice.files() == bob.files() == {new: DEPLOY}


def test_pull_of_a_case_rename_onto_a_case_insensitive_disk(team: list[Member]) -> None:
    """Bob's disk folds case: the delete of Deploy.md must not take deploy.md with it."""
    alice, bob = team
    _share(team, "Deploy.md", DEPLOY)
    _rename(alice, "Deploy.md", "deploy.md")
    assert alice.sync().exit_code() == 0
    report = sync_case_insensitive(bob)
    assert report.exit_code() == 0, report.rejected
    assert report.deleted == ["Deploy.md"] and report.written == ["deploy.md"]
    assert bob.files() == {"deploy.md": DEPLOY}  # in one sync, nothing lost
    again = sync_case_insensitive(bob)
    assert again.exit_code() == 0 and not again.written and not again.deleted


def test_case_rename_made_on_a_case_insensitive_disk(team: list[Member]) -> None:
    alice, bob = team
    _share(team, "Deploy.md", DEPLOY)
    _rename(alice, "Deploy.md", "deploy.md")
    report = sync_case_insensitive(alice)
    assert report.pushed == ["deploy.md"] and report.remote_deleted == ["Deploy.md"]
    assert sync_case_insensitive(bob).exit_code() == 0
    assert alice.files() == bob.files() == {"deploy.md": DEPLOY}


def test_case_insensitive_dir_really_folds(tmp_path: Path) -> None:
    """The simulation itself: one name opens its case variant, as on APFS or NTFS."""
    (tmp_path / "Deploy.md").write_text("x", encoding="utf-8")
    team = CaseInsensitiveDir(tmp_path)
    assert team.read_text("deploy.md") == "x" and team.exists("DEPLOY.md")
    team.write_text("deploy.md", "y")
    assert [p.name for p in tmp_path.iterdir()] == ["Deploy.md"]
    assert team.delete("DEPLOY.md") and list(tmp_path.iterdir()) == []


def test_edit_against_a_teammates_case_rename_follows_the_rename(team: list[Member]) -> None:
    """Bob edits Deploy.md after Alice pushed its rename: his edit moves to deploy.md."""
    alice, bob = team
    _share(team, "Deploy.md", DEPLOY)
    _rename(alice, "Deploy.md", "deploy.md")
    assert alice.sync().exit_code() == 0
    edited = DEPLOY + "Bob: and on Thursdays.\n"
    bob.write("Deploy.md", edited)
    report = bob.sync()
    assert report.exit_code() == 0, report.rejected + report.held_back
    assert report.renamed == ["Deploy.md -> deploy.md"] and report.pushed == ["deploy.md"]
    assert bob.files() == {"deploy.md": edited}
    assert alice.sync().written == ["deploy.md"]
    assert alice.files() == bob.files()


def test_the_cli_says_an_edit_followed_a_rename(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    _share([alice, bob], "Deploy.md", DEPLOY)
    _rename(alice, "Deploy.md", "deploy.md")
    assert alice.sync().exit_code() == 0
    bob.write("Deploy.md", DEPLOY + "Bob: and on Thursdays.\n")
    done = bob.cli("sync")
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "spells team/Deploy.md as team/deploy.md: your version moved to team/deploy.md" in said
    assert bob.files() == {"deploy.md": DEPLOY + "Bob: and on Thursdays.\n"}


def test_edits_on_both_sides_of_a_case_rename_merge(team: list[Member]) -> None:
    alice, bob = team
    text = memory("Deploy", "one\ntwo\nthree\nfour\nfive\n")
    _share(team, "Deploy.md", text)
    _rename(alice, "Deploy.md", "deploy.md")
    alice.write("deploy.md", text.replace("one", "ONE by alice"))
    assert alice.sync().exit_code() == 0
    bob.write("Deploy.md", text.replace("five", "FIVE by bob"))
    report = bob.sync()
    assert report.exit_code() == 0 and report.merged == ["deploy.md"]
    assert alice.sync().exit_code() == 0
    both = text.replace("one", "ONE by alice").replace("five", "FIVE by bob")
    assert alice.files() == bob.files() == {"deploy.md": both}


def test_case_rename_against_a_teammates_edit_keeps_both(team: list[Member]) -> None:
    """The fuzzer's shrunk case (issue 18): Bob's edit of Deploy.md lands first, Alice's
    rename second. Before: Alice got Deploy.md back beside deploy.md, refused forever."""
    alice, bob = team
    _share(team, "Deploy.md", DEPLOY)
    edited = DEPLOY + "Bob: and on Thursdays.\n"
    bob.write("Deploy.md", edited)
    assert bob.sync().pushed == ["Deploy.md"]
    _rename(alice, "Deploy.md", "deploy.md")
    report = alice.sync()
    assert report.exit_code() == 0, report.rejected + report.held_back
    assert alice.files() == {"deploy.md": edited}  # the rename and the edit, together
    assert bob.sync().exit_code() == 0
    assert alice.files() == bob.files() == {"deploy.md": edited}


@pytest.mark.parametrize("kind", ["git", "rest", "memory"])
def test_fuzzer_shrunk_case_rename_race_converges(kind: str, tmp_path: Path) -> None:
    """h18's 5-operation reproduction, replayed through the fuzzer's own oracle."""
    from testing.fuzz import replay, rest_host

    ops = [
        ("create", 0, 1, False),
        ("sync", 0, "push"),
        ("together", (1, 0, 2)),
        ("edit", 1, 753, 946),
        ("case_rename", 2),
    ]
    if kind in ("git", "memory"):
        assert replay(kind, ops, 3, None).stats.violations == []
    else:
        with rest_host(tmp_path / "fuzz") as host:
            assert replay("rest", ops, 3, host).stats.violations == []


def test_new_key_that_clashes_with_a_remote_key_is_held(team: list[Member]) -> None:
    alice, bob = team
    _share(team, "ok.md", memory("Ok", "fine\n"))
    alice.write("plan.md", memory("Plan", "the plan\n"))
    assert alice.sync().pushed == ["plan.md"]
    bob.write("Plan.md/x.md", memory("X", "nested under a teammate's file name\n"))
    report = bob.sync()
    assert report.exit_code() == 1 and not report.pushed and not report.written
    reasons = {r.key: r.reason for r in report.rejected + report.held_back}
    assert "plan.md" in reasons["Plan.md/x.md"] and "rename" in reasons["Plan.md/x.md"]
    assert "Plan.md/x.md" in reasons["plan.md"]
    assert set(bob.files()) == {"ok.md", "Plan.md/x.md"}  # kept, and plan.md not planted
    assert "Plan.md/x.md" not in alice.files()


def test_local_file_and_folder_of_one_name_are_reported(team: list[Member]) -> None:
    alice, bob = team
    _share(team, "MEMORY.md", "# Index\n")
    bob.write("memory.md/x.md", memory("X", "nested under the index's name\n"))
    bob.write("ok.md", memory("Ok", "fine\n"))
    report = bob.sync()
    assert report.exit_code() == 1 and report.pushed == ["ok.md"]
    reasons = {r.key: r.reason for r in report.rejected}
    assert "needs 'MEMORY.md' as a folder" in reasons["memory.md/x.md"]
    assert "is a file" in reasons["MEMORY.md"]
    assert "ok.md" in alice.sync().written  # (MEMORY.md is regenerated to link it)
    assert set(alice.files()) == {"MEMORY.md", "ok.md"}


def test_git_backend_refuses_clashing_keys_in_one_push(tmp_path: Path) -> None:
    (alice,) = make_team(tmp_path, ["alice"])
    seed_remote(alice.remote, {"MEMORY.md": "# Index\n", "Notes.md": "n\n"})
    backend = GitBackend(str(alice.remote), cache_dir=tmp_path / "cache")
    try:
        snap = backend.snapshot()
        for upserts, deletes in [
            ({"memory.md/x.md": "x\n"}, []),
            ({"notes.md": "n2\n"}, []),
            ({"a.md": "a\n", "A.md/b.md": "b\n"}, []),
        ]:
            change = ChangeSet(upserts, deletes, snap.version, {k: None for k in upserts})
            with pytest.raises(BackendError, match="rename one of them"):
                backend.apply(change)
        rename = ChangeSet({"notes.md": "n\n"}, ["Notes.md"], snap.version, {"notes.md": None})
        assert backend.apply(rename).version != snap.version  # a case-only rename passes
    finally:
        backend.close()
    assert remote_files(alice.remote) == {"MEMORY.md": "# Index\n", "notes.md": "n\n"}


def test_git_remote_with_a_file_and_its_folder_is_refused_not_written(tmp_path: Path) -> None:
    (bob,) = make_team(tmp_path, ["bob"])
    first = {"plan.md": "the plan\n", "ok.md": "ok\n"}
    seed_remote(bob.remote, first)
    assert bob.sync().exit_code() == 0 and bob.files() == first
    seed_remote(bob.remote, {**first, "Plan.md/x.md": "x\n"})
    report = bob.sync()
    assert report.exit_code() == 1
    assert {"plan.md", "Plan.md/x.md"} <= {r.key for r in report.rejected}
    assert bob.files() == first  # plan.md kept as a file, never turned into a folder
    assert bob.sync().exit_code() == 1 and bob.files() == first  # and stays so


@pytest.mark.parametrize(
    ("old", "new"),
    [("ﬁle.md", "file.md"), ("Deploy.md", "deploy.md"), ("plan.md", "later.md")],
    ids=["nfkc", "case", "plain"],
)
def test_renaming_back_to_a_name_the_history_held_keeps_the_file(
    team: list[Member], old: str, new: str
) -> None:
    """The fuzzer's shrunk loss (issue 18): Bob renames, Alice renames it back. The old
    name's content was in the remote's history, so it was "recovered" as its base and the
    plan deleted it here while the other name was deleted on the remote: gone everywhere."""
    alice, bob = team
    _share(team, old, DEPLOY)
    _rename(bob, old, new)
    assert bob.sync().exit_code() == 0
    assert alice.sync().written == [new]
    _rename(alice, new, old)
    report = alice.sync()
    assert report.exit_code() == 0 and not report.recovered
    assert report.pushed == [old] and report.remote_deleted == [new]
    assert bob.sync().written == [old]
    assert alice.files() == bob.files() == {old: DEPLOY}


def test_one_memory_created_under_two_spellings_meets_as_a_conflict(team: list[Member]) -> None:
    """The fuzzer's git seed 5: Alice shares Deploy.md, Bob (never synced it) creates
    deploy.md. Before: held on both sides, forever. Now: Bob's file takes the remote's
    spelling and meets Alice's as a create/create, kept as a conflict copy."""
    alice, bob = team
    alice.write("Deploy.md", DEPLOY)
    assert alice.sync().pushed == ["Deploy.md"]
    mine = memory("deploy", "Bob's own deploy notes.\n")
    bob.write("deploy.md", mine)
    report = bob.sync()
    assert report.renamed == ["deploy.md -> Deploy.md"]
    [conflict] = report.conflicts
    assert conflict.copy is not None and bob.read(conflict.copy) == mine
    assert bob.read("Deploy.md") == DEPLOY
    assert bob.sync().exit_code() == 0 and alice.sync().exit_code() == 0
    assert alice.files() == bob.files() == {"Deploy.md": DEPLOY, conflict.copy: mine}


def test_move_local_keeps_bytes_and_mtime_and_never_overwrites(tmp_path: Path) -> None:
    from teamsync.security.fs import SafeDir
    from teamsync.sync.renames import move_local
    from teamsync.sync.state import BaseStore

    root = tmp_path / "team"
    root.mkdir()
    (root / "Deploy.md").write_bytes(b"one\r\n")
    os.utime(root / "Deploy.md", (1_600_000_000, 1_600_000_000))
    (root / "other.md").write_bytes(b"other\n")
    state = BaseStore(tmp_path / "state.sqlite3")
    with SafeDir(root) as team:
        assert move_local(team, state, "Deploy.md", "deploy.md")
        assert sorted(p.name for p in root.iterdir()) == ["deploy.md", "other.md"]
        assert (root / "deploy.md").read_bytes() == b"one\r\n"
        assert (root / "deploy.md").stat().st_mtime == 1_600_000_000
        assert not move_local(team, state, "deploy.md", "other.md")  # exists: left alone
        assert (root / "other.md").read_bytes() == b"other\n"
    assert [p.why for p in state.past("Deploy.md")] == ["renamed to deploy.md"]
    state.close()
