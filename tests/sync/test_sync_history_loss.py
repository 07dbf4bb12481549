"""A git remote that lost history, unknown local folders, the mass-change guard and
restore: real teammates, a real bare repository, the real ``teamsync`` executable.

Each event ends the same way: every teammate still holds every memory, the sync
exits 1 with a message that says what it saw, and the documented way forward
works (docs/sync.md, "What teamsync will never do").
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from testing.gitrepos import (
    BRANCH,
    Teammate,
    commit_files,
    folder_memories,
    git,
    make_team,
    memory,
    remote_files,
    stopped,
)

MEMORIES = {f"m{i}.md": memory(f"Memory {i}", f"fact number {i}\n") for i in range(6)}


def _shared(tmp_path: Path) -> tuple[Teammate, Teammate]:
    alice, bob = make_team(tmp_path)
    for key, text in MEMORIES.items():
        alice.write(key, text)
    assert alice.cli("sync").returncode == 0
    assert bob.cli("sync").returncode == 0
    assert alice.files() == bob.files() == remote_files(alice.remote) == MEMORIES
    return alice, bob


def _head(remote: Path) -> str:
    return git("--git-dir", str(remote), "rev-parse", f"refs/heads/{BRANCH}")


def test_branch_deleted_stops_and_restore_remote_repushes(tmp_path: Path) -> None:
    alice, bob = _shared(tmp_path)
    git("--git-dir", str(alice.remote), "update-ref", "-d", f"refs/heads/{BRANCH}")
    err = stopped(bob, "sync")
    assert "holds nothing" in err and "lost history" in err and "nothing was changed" in err
    assert "teamsync sync --restore-remote" in err and "--accept-remote" in err
    err = stopped(alice, "pull")
    assert "lost history" in err
    # --json carries the stop too
    out = json.loads(bob.cli("--json", "status").stdout)
    assert out["stopped"]["kind"] == "remote_lost_history" and out["stopped"]["way_forward"]
    # the way forward: re-push the local copies; the teammate then syncs normally
    assert bob.cli("sync", "--restore-remote").returncode == 0
    assert remote_files(bob.remote) == MEMORIES
    result = alice.cli("sync")
    assert result.returncode == 0, result.stderr
    assert alice.files() == bob.files() == MEMORIES


def test_branch_force_pushed_to_an_older_commit_stops(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    alice.write("plan.md", memory("Plan", "v1\n"))
    alice.write("other.md", memory("Other", "kept\n"))
    assert alice.cli("sync").returncode == 0
    old = _head(alice.remote)
    alice.write("plan.md", memory("Plan", "v2\n"))
    alice.write("new.md", memory("New", "added after\n"))
    assert alice.cli("sync").returncode == 0
    assert bob.cli("sync").returncode == 0
    want = alice.files()
    git("--git-dir", str(alice.remote), "update-ref", f"refs/heads/{BRANCH}", old)  # rewound
    err = stopped(bob, "sync")
    assert "does not descend from" in err and "--restore-remote" in err
    stopped(alice, "sync")
    assert bob.files() == alice.files() == want  # v2 and new.md survive on both
    assert bob.cli("sync", "--restore-remote").returncode == 0
    assert remote_files(alice.remote) == want
    assert alice.cli("sync").returncode == 0
    assert alice.files() == bob.files() == want


def test_accept_remote_takes_the_rewind_and_restore_brings_a_memory_back(tmp_path: Path) -> None:
    alice, bob = _shared(tmp_path)
    git("--git-dir", str(alice.remote), "update-ref", "-d", f"refs/heads/{BRANCH}")
    commit_files(alice.remote, {"m0.md": MEMORIES["m0.md"].encode()}, parent=False)
    stopped(bob, "sync")
    # the person chooses the remote's state: five memories go, recoverably
    result = bob.cli("sync", "--accept-remote")
    assert result.returncode == 0, result.stderr
    assert bob.files() == {"m0.md": MEMORIES["m0.md"]}
    listed = json.loads(bob.cli("--json", "restore", "--list").stdout)
    assert {v["key"] for v in listed["versions"]} == set(MEMORIES) - {"m0.md"}
    result = bob.cli("restore", "m3.md")
    assert result.returncode == 0 and "teamsync sync" in result.stdout
    assert bob.read("m3.md") == MEMORIES["m3.md"]
    assert bob.cli("sync").returncode == 0
    assert remote_files(bob.remote) == {k: MEMORIES[k] for k in ("m0.md", "m3.md")}


def test_mass_delete_asks_for_yes_and_deleted_memories_stay_restorable(tmp_path: Path) -> None:
    alice, bob = _shared(tmp_path)
    for key in ("m0.md", "m1.md", "m2.md", "m3.md", "m4.md"):
        alice.delete(key)
    err = stopped(alice, "sync")
    assert "would delete or revert 5 of the team's 6 memories" in err and "--yes" in err
    assert remote_files(alice.remote) == MEMORIES  # nothing was pushed
    assert alice.cli("sync", "--yes").returncode == 0
    assert set(remote_files(alice.remote)) == {"m5.md"}
    err = stopped(bob, "sync")  # the teammate is asked too, before his copies go
    assert "would delete or revert 5" in err
    assert bob.files() == MEMORIES
    assert bob.cli("sync", "--yes").returncode == 0
    assert set(bob.files()) == {"m5.md"}
    assert bob.cli("restore", "m2.md").returncode == 0
    assert bob.read("m2.md") == MEMORIES["m2.md"]
    # a team that wants no guard says so in teamsync.yaml
    config = alice.memdir / "teamsync.yaml"
    config.write_text(config.read_text() + "mass_change_share: 1\n", encoding="utf-8")
    alice.write("m5.md", memory("Memory 5", "changed\n"))
    assert alice.cli("sync").returncode == 0


def test_restore_refuses_to_overwrite_a_different_file_without_force(tmp_path: Path) -> None:
    alice, bob = _shared(tmp_path)
    alice.write("m1.md", memory("Memory 1", "newer\n"))
    assert alice.cli("sync").returncode == 0
    assert bob.cli("sync").returncode == 0  # bob's m1.md is replaced: the old text is kept
    bob.write("m1.md", memory("Memory 1", "bob's own edit\n"))
    result = bob.cli("restore", "m1.md")
    assert result.returncode == 1 and "--force" in result.stderr
    assert "bob's own edit" in bob.read("m1.md")
    assert bob.cli("restore", "--force", "m1.md").returncode == 0
    assert bob.read("m1.md") == MEMORIES["m1.md"]
    assert bob.cli("restore", "--force", "m1.md").returncode == 0  # and the edit comes back
    assert "bob's own edit" in bob.read("m1.md")
    assert bob.cli("restore", "nothing-here.md").returncode == 1


def test_folder_relocated_behind_a_symlink_is_unknown_not_deleted(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    files = folder_memories()
    for key, text in files.items():
        alice.write(key, text)
    assert alice.cli("sync").returncode == 0
    assert bob.cli("sync").returncode == 0
    elsewhere = tmp_path / "elsewhere"
    shutil.move(alice.team / "notes", elsewhere)
    os.symlink(elsewhere, alice.team / "notes")
    bob.write("notes/a.md", memory("A", "a, edited by bob\n"))
    assert bob.cli("sync").returncode == 0
    result = alice.cli("sync")
    assert result.returncode == 1
    assert result.stderr.count("team/notes:") == 1  # told once, with the way out
    assert "its 2 synced memories left alone" in result.stderr
    assert "move the folder back" in result.stderr
    assert remote_files(alice.remote)["notes/b.md"] == files["notes/b.md"]  # no delete pushed
    assert (elsewhere / "a.md").read_text() == files["notes/a.md"]  # nothing written into it
    assert bob.cli("sync").returncode == 0
    assert set(bob.files()) == set(files)
    # the way out: move the folder back; the next sync is ordinary
    (alice.team / "notes").unlink()
    shutil.move(elsewhere, alice.team / "notes")
    assert alice.cli("sync").returncode == 0
    assert alice.read("notes/a.md") == memory("A", "a, edited by bob\n")
    assert alice.files() == bob.files() == remote_files(alice.remote)


def test_a_path_with_byte_0x01_in_history_does_not_break_sync(tmp_path: Path) -> None:
    """Regression: `git log` output split on 0x01 crashed every later sync (exit 3)."""
    alice, bob = make_team(tmp_path)
    alice.write("plain.md", memory("Plain", "plain\n"))
    assert alice.cli("sync").returncode == 0
    odd = {"odd\x01name.md": b"odd\n", "line\nbreak.md": b"nl\n", "1796115458": b"digits\n"}
    commit_files(alice.remote, {k: v for k, v in odd.items()})
    result = bob.cli("sync")
    assert result.returncode == 1, result.stderr  # the odd keys are refused, not fatal
    assert "unexpected" not in result.stderr and bob.read("plain.md") == alice.read("plain.md")
    # remove them: the paths stay in history, and sync stays healthy
    head = _head(alice.remote)
    tree = git("--git-dir", str(alice.remote), "mktree", stdin=_plain_tree(alice.remote, head))
    commit = git("--git-dir", str(alice.remote), "commit-tree", tree, "-p", head, "-m", "rm")
    git("--git-dir", str(alice.remote), "update-ref", f"refs/heads/{BRANCH}", commit)
    for mate in (alice, bob):
        result = mate.cli("sync")
        assert result.returncode == 0, result.stderr


def _plain_tree(remote: Path, head: str) -> bytes:
    listing = git("--git-dir", str(remote), "ls-tree", head)
    keep = [line for line in listing.splitlines() if line.endswith("\tplain.md")]
    return ("\n".join(keep) + "\n").encode()
