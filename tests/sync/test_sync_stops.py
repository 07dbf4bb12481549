"""A stop changes nothing, before any local write (issue 31 §2).

Carol renames ``Deploy.md`` to ``deploy.md`` and deletes 5 of 8 memories (``--yes``);
Bob has appended a line to ``Deploy.md``. Bob's ``sync``, ``pull`` and ``push`` must
stop on the mass-change guard with the whole memory directory byte-identical, a
report that lists no action, and the remote untouched; ``push`` never writes the
local tree at all (it deletes nothing, so no guard stops it). A git branch rewritten under a pending rename stops the same way.
Both backends: a bare git remote and a real ``teamsync serve`` on loopback.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.gitrepos import BRANCH, Member, git, memory, seed_remote
from testing.teams import BACKENDS, Team, team

MEMORIES = {
    "Deploy.md": memory("Deploy", "Deploys go through the release train on Tuesdays.\n"),
    **{f"m{i}.md": memory(f"Memory {i}", f"fact number {i}\n") for i in range(7)},
}
LINE = "Bob: the train leaves at 10:00 UTC.\n"
ACTIONS = ("written", "deleted", "pushed", "remote_deleted", "merged", "renamed", "conflicts")


def tree_hash(root: Path) -> str:
    """One hash of every name and byte below ``root`` (links and folders included)."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        if path.is_symlink():
            h.update(b"L" + str(path.readlink()).encode())
        elif path.is_file():
            h.update(b"F" + path.read_bytes())
        else:
            h.update(b"D")
    return h.hexdigest()


@pytest.fixture(params=BACKENDS)
def trio(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Team]:
    with team(request.param, tmp_path, ("alice", "bob", "carol")) as t:
        alice, bob, carol = t.mates
        for key, text in MEMORIES.items():
            alice.write(key, text)
        for mate in t.mates:
            assert mate.sync().exit_code() == 0
        yield t


def _carol_renames_and_deletes(carol: Member) -> None:
    (carol.team / "Deploy.md").rename(carol.team / "deploy.md")
    for i in range(5):
        carol.delete(f"m{i}.md")
    report = carol.sync(yes=True)
    assert report.exit_code() == 0 and report.remote_deleted, report.to_json()


def _assert_stopped_unchanged(mate: Member, t: Team, *args: str, kind: str) -> dict[str, object]:
    before, remote = tree_hash(mate.memdir), t.remote_files()
    result = mate.cli("--json", *args)
    assert result.returncode == 1, (result.stdout, result.stderr)
    out = json.loads(result.stdout)
    assert out["stopped"]["kind"] == kind and out["stopped"]["way_forward"], out
    assert all(not out[name] for name in ACTIONS), out  # a stopped run lists no action
    assert tree_hash(mate.memdir) == before, f"{args} changed the local tree"
    assert t.remote_files() == remote, f"{args} changed the remote"
    return out


def test_a_mass_change_stop_moves_no_local_file(trio: Team) -> None:
    alice, bob, carol = trio.mates
    _carol_renames_and_deletes(carol)
    bob.write("Deploy.md", bob.read("Deploy.md") + LINE)
    for args in (["sync"], ["pull"]):
        _assert_stopped_unchanged(bob, trio, *args, kind="mass_change")
    # push deletes nothing, so no guard stops it; it moves no local file either
    before = tree_hash(bob.memdir)
    report = bob.sync("push")
    assert tree_hash(bob.memdir) == before and not report.renamed
    assert [h.key for h in report.held_back] == ["Deploy.md"], report.to_json()
    # the way forward works, and the edit follows the rename
    report = bob.sync(yes=True)
    assert report.exit_code() == 0, report.to_json()
    for mate in (carol, alice, bob):  # Alice takes Carol's mass delete on purpose too
        assert mate.sync(yes=True).exit_code() == 0
    want = {"deploy.md": MEMORIES["Deploy.md"] + LINE, "m5.md": MEMORIES["m5.md"]}
    want["m6.md"] = MEMORIES["m6.md"]
    assert alice.files() == bob.files() == carol.files() == trio.remote_files() == want


def test_push_never_writes_the_local_tree(trio: Team) -> None:
    """No guard involved: the teammate's rename is for ``sync`` to follow, not ``push``."""
    alice, bob, carol = trio.mates
    (carol.team / "Deploy.md").rename(carol.team / "deploy.md")
    assert carol.sync().exit_code() == 0
    bob.write("Deploy.md", bob.read("Deploy.md") + LINE)
    before, remote = tree_hash(bob.memdir), trio.remote_files()
    report = bob.sync("push")
    assert tree_hash(bob.memdir) == before
    assert trio.remote_files() == remote
    assert [h.key for h in report.held_back] == ["Deploy.md"], report.to_json()
    assert "teamsync sync" in report.held_back[0].reason
    assert report.exit_code() == 1 and not report.renamed
    # sync follows the rename with the edit
    assert bob.sync().exit_code() == 0
    for mate in (carol, alice):
        assert mate.sync().exit_code() == 0
    assert alice.files()["deploy.md"] == MEMORIES["Deploy.md"] + LINE
    assert alice.files() == bob.files() == carol.files() == trio.remote_files()


def test_a_lost_history_stop_moves_no_local_file(tmp_path: Path) -> None:
    with team("git", tmp_path, ("alice", "bob")) as t:
        alice, bob = t.mates
        alice.write("Deploy.md", MEMORIES["Deploy.md"])
        alice.write("m0.md", MEMORIES["m0.md"])
        for mate in t.mates:
            assert mate.sync().exit_code() == 0
        (alice.team / "Deploy.md").rename(alice.team / "deploy.md")
        assert alice.sync().exit_code() == 0
        assert t.remote is not None
        # the branch is rewritten: the same files, a history that does not descend
        git("--git-dir", str(t.remote), "update-ref", "-d", f"refs/heads/{BRANCH}")
        seed_remote(t.remote, t.remote_files() or alice.files())
        bob.write("Deploy.md", bob.read("Deploy.md") + LINE)
        for args in (["sync"], ["pull"], ["push"]):
            _assert_stopped_unchanged(bob, t, *args, kind="remote_lost_history")
