"""``teamsync log [KEY]`` (issue 15 §4) on both backends, through the real CLI:
a real teamsync server on loopback (its history view) and a real bare git repo
(the sync branch's commits)."""

from __future__ import annotations

import json
from pathlib import Path

from teamsync.server.storage import open_storage
from testing.gitrepos import Member, make_team, memory
from testing.minimal_server import create_minimal_app
from testing.server import app_for, make_rest_team, token_for, uvicorn_server


def story(alice: Member, bob: Member) -> None:
    alice.write("plan.md", memory("Plan", "first\n"))
    alice.write("other.md", memory("Other", "x\n"))
    alice.sync()
    bob.sync()
    bob.write("plan.md", memory("Plan", "second, by bob\n"))
    bob.sync()
    alice.sync()
    alice.delete("other.md")
    alice.sync()


def log_json(mate: Member, *args: str) -> list[dict[str, object]]:
    done = mate.cli("--json", "log", *args)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, object]] = json.loads(done.stdout)["changes"]
    return rows


def check(alice: Member, bob: Member, alice_name: str, bob_name: str) -> None:
    plan = log_json(bob, "plan.md")
    assert [(r["key"], r["action"]) for r in plan] == [
        ("plan.md", "upsert"),
        ("plan.md", "upsert"),
    ]
    assert [r["who"] for r in plan] == [bob_name, alice_name]  # newest first
    everything = log_json(alice)
    assert ("other.md", "delete") == (everything[0]["key"], everything[0]["action"])
    assert {r["key"] for r in everything} == {"plan.md", "other.md"} | (
        {"MEMORY.md"} if any(r["key"] == "MEMORY.md" for r in everything) else set()
    )
    assert len(log_json(alice, "-n", "1")) == 1
    human = alice.cli("log", "plan.md")
    assert human.returncode == 0 and "changed team/plan.md" in (human.stdout + human.stderr)


def test_log_from_the_servers_history(tmp_path: Path) -> None:
    store = open_storage(f"sqlite:///{tmp_path / 'server.sqlite3'}")
    try:
        with uvicorn_server(app_for(store)) as url:
            alice, bob = make_rest_team(
                tmp_path, url, [token_for(store, label="alice"), token_for(store, label="bob")]
            )
            story(alice, bob)
            check(alice, bob, "alice", "bob")
    finally:
        store.close()


def test_log_from_the_git_branch(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    story(alice, bob)
    check(alice, bob, "Alice", "Bob")


def test_log_against_a_plain_server_says_it_keeps_no_history(tmp_path: Path) -> None:
    with uvicorn_server(create_minimal_app()) as url:
        (alice,) = make_rest_team(tmp_path, url, ["tok"], names=("alice",))
        alice.write("a.md", memory("A", "a\n"))
        alice.sync()
        done = alice.cli("log")
        assert done.returncode != 0
        assert "keeps no history" in done.stderr and "teamsync server" in done.stderr


def restore_at_and_share(alice: Member, bob: Member) -> None:
    """Bring back the deleted other.md and the first plan.md from remote versions."""
    other = log_json(alice, "other.md")
    assert [r["action"] for r in other] == ["delete", "upsert"]
    gone = alice.cli("restore", "other.md", "--at", str(other[0]["version"]))
    assert gone.returncode != 0 and "was a delete" in gone.stderr
    done = alice.cli("--json", "restore", "other.md", "--at", str(other[1]["version"]))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["restored"]["version"] == other[1]["version"]
    assert alice.read("other.md") == memory("Other", "x\n")
    plan = log_json(alice, "plan.md")
    first = str(plan[-1]["version"])
    refused = alice.cli("restore", "plan.md", "--at", first)
    assert refused.returncode != 0 and "--force" in refused.stderr
    assert "second, by bob" in alice.read("plan.md")  # untouched without --force
    assert alice.cli("restore", "plan.md", "--at", first, "--force").returncode == 0
    assert alice.read("plan.md") == memory("Plan", "first\n")
    shared = alice.sync()
    assert {"other.md", "plan.md"} <= set(shared.pushed), shared
    got = bob.sync()
    assert bob.read("other.md") == memory("Other", "x\n"), got  # the teammate receives it
    assert bob.read("plan.md") == memory("Plan", "first\n")
    bad = alice.cli("restore", "plan.md", "--at", "not-a-version")
    assert bad.returncode != 0 and "teamsync log" in bad.stderr


def test_restore_at_a_server_version(tmp_path: Path) -> None:
    store = open_storage(f"sqlite:///{tmp_path / 'server.sqlite3'}")
    try:
        with uvicorn_server(app_for(store)) as url:
            alice, bob = make_rest_team(
                tmp_path, url, [token_for(store, label="alice"), token_for(store, label="bob")]
            )
            story(alice, bob)
            restore_at_and_share(alice, bob)
    finally:
        store.close()


def test_restore_at_a_git_commit(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    story(alice, bob)
    restore_at_and_share(alice, bob)
