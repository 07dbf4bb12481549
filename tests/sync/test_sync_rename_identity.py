"""A rename is an identity, not a coincidence of bytes (issue 31 §1).

Three teammates on a bare git remote and on a real ``teamsync serve`` (uvicorn on
loopback, SQLite). Bob shares a memory; Carol renames it; Alice, who never held the
old name, syncs (the rename arrives) and renames it back with the same bytes. The
old name's bytes are in the remote's history, so base recovery used to take
Alice's file as "synced here, deleted by the team since": it deleted the file here
while the plan deleted the other name on the remote, and the memory was gone under
every name, every run exit 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from teamsync.commands.sync import open_state
from teamsync.sync.config import load_config
from teamsync.sync.state import BaseStore
from testing.gitrepos import Member, memory
from testing.teams import BACKENDS, Team, team

PAIRS = [("Deploy.md", "deploy.md"), ("plan.md", "roadmap.md")]
TEXT = memory("Deploy", "Deploys go through the release train on Tuesdays.\n")


@pytest.fixture(params=BACKENDS)
def trio(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Team]:
    with team(request.param, tmp_path, ("alice", "bob", "carol")) as t:
        yield t


def _rename(mate: Member, old: str, new: str) -> None:
    (mate.team / old).rename(mate.team / new)


def _ok(mate: Member) -> None:
    report = mate.sync()
    assert report.exit_code() == 0, report.to_json()
    assert not report.deleted or report.written, report.to_json()  # never a bare delete here


def _store(mate: Member) -> BaseStore:
    config = load_config(mate.memdir)
    assert config is not None
    return open_state(mate.settings, mate.team, config)


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=["case-only", "plain"])
def test_a_rename_back_by_another_teammate_keeps_the_memory(trio: Team, old: str, new: str) -> None:
    alice, bob, carol = trio.mates
    bob.write(old, TEXT)
    assert bob.sync().pushed == [old]
    assert carol.sync().written == [old]
    _rename(carol, old, new)
    report = carol.sync()
    assert report.pushed == [new] and report.remote_deleted == [old]
    assert alice.sync().written == [new]  # Alice's first sight of the memory: the new name
    _rename(alice, new, old)
    report = alice.sync()
    assert report.exit_code() == 0 and not report.recovered, report.to_json()
    assert report.pushed == [old] and report.remote_deleted == [new] and not report.deleted
    for mate in (carol, bob, alice):
        assert mate.sync().exit_code() == 0
    want = {old: TEXT}
    assert trio.remote_files() == want
    assert alice.files() == bob.files() == carol.files() == want
    # a second round changes nothing: the rename back is not undone by anyone
    for mate in trio.mates:
        again = mate.sync()
        assert not (again.written or again.deleted or again.pushed or again.remote_deleted)


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=["case-only", "plain"])
def test_the_base_records_the_renames_it_applied(trio: Team, old: str, new: str) -> None:
    alice, bob, carol = trio.mates
    bob.write(old, TEXT)
    assert bob.sync().exit_code() == 0
    assert alice.sync().exit_code() == 0
    _rename(bob, old, new)
    assert bob.sync().exit_code() == 0  # pushed as a rename
    assert alice.sync().exit_code() == 0  # pulled as a rename
    for mate in (alice, bob):
        store = _store(mate)
        try:
            assert (old, new) in store.renames()
        finally:
            store.close()


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=["case-only", "plain"])
def test_a_lost_base_still_recovers_a_memory_the_team_renamed(
    trio: Team, old: str, new: str
) -> None:
    """What recovery is for stays: Alice lost her state directory; her copy under the
    old name is the version the team renamed since, so she takes the rename instead of
    pushing the old name back (no duplicate)."""
    alice, bob, carol = trio.mates
    bob.write(old, TEXT)
    for mate in (bob, alice, carol):
        assert mate.sync().exit_code() == 0
    _rename(bob, old, new)
    assert bob.sync().exit_code() == 0
    store = _store(alice)
    path = store.path
    store.close()
    path.unlink()
    report = alice.sync()
    assert report.exit_code() == 0, report.to_json()
    assert alice.files() == {new: TEXT}
    assert trio.remote_files() == {new: TEXT}


@pytest.mark.parametrize("mode", ["sync", "pull"])
@pytest.mark.parametrize("edited", [False, True], ids=["same-bytes", "edited"])
def test_two_spellings_that_fold_alike_resolve_on_the_first_run(
    trio: Team, mode: str, edited: bool
) -> None:
    """Issue 31 §3: Alice renames ``fixnote.md`` to ``Fixnote.md``, Bob to ``ﬁxnote.md``
    (the ﬁ ligature). Before: Bob's next run failed (`rejected`, "rename one") and the
    run after moved his file silently. Now his first run takes the team's spelling and
    says so (`renamed`); an edit of his meets the team's version under it."""
    alice, bob, carol = trio.mates
    lig = "\ufb01xnote.md"
    alice.write("fixnote.md", TEXT)
    for mate in (alice, bob):
        assert mate.sync().exit_code() == 0
    _rename(alice, "fixnote.md", "Fixnote.md")
    assert alice.sync().exit_code() == 0
    _rename(bob, "fixnote.md", lig)
    if edited:
        bob.write(lig, TEXT + "Bob's line.\n")
    result = bob.cli("--json", mode)
    assert result.returncode == 0, (result.stdout, result.stderr)
    out = json.loads(result.stdout)
    assert out["renamed"] == [f"{lig} -> Fixnote.md"] and not out["rejected"], out
    assert "Fixnote.md" in result.stderr  # the user is told where the file went
    assert lig not in bob.files() and "Fixnote.md" in bob.files()
    for mate in (bob, alice, carol, bob):
        assert mate.sync().exit_code() == 0
    want = TEXT + ("Bob's line.\n" if edited else "")
    assert alice.files() == bob.files() == carol.files() == {"Fixnote.md": want}
    assert trio.remote_files() == {"Fixnote.md": want}
