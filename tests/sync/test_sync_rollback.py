"""No silent revert (issue 24 §1): rollbacks that used to revert quietly, and a wiped folder.

- a real ``teamsync serve`` (uvicorn on loopback, SQLite) restored from a backup,
  after which teammate C, whose mark equals the restored state, syncs two writes:
  the counter moves past the others' marks, so only the checksum the server held at
  their mark tells the rollback;
- a plain third-party server that sends no version counter and keeps no history
  (:mod:`testing.minimal_server`, ``counter=False``) restored to an older state;
- a memory directory wiped (``rm -rf``) and initialised again at the same path.

Each ends with every teammate holding v2: the first sync after the event exits 1
with the way forward, and that way forward works.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from teamsync.server.storage import Storage, open_storage
from testing.gitrepos import Member, memory
from testing.hostile_server import Relay
from testing.minimal_server import MinimalStore, create_minimal_app
from testing.server import app_for, make_rest_team, token_for, uvicorn_server
from testing.teams import BACKENDS, team

MEMORIES = {f"m{i}.md": memory(f"Memory {i}", f"fact number {i}\n") for i in range(8)}
V2 = memory("Memory 0", "fact number 0, version 2\n")


def _stopped(mate: Member, *args: str) -> dict[str, object]:
    """``--json`` run that must stop: exit 1, nothing changed here; the stop object."""
    before = mate.files()
    result = mate.cli("--json", *args)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert mate.files() == before
    out = json.loads(result.stdout)
    stop = out["stopped"]
    assert stop is not None and stop["way_forward"], out
    assert "way forward" in result.stderr
    return dict(stop)


def _ok(mate: Member, *args: str) -> None:
    result = mate.cli(*args)
    assert result.returncode == 0, (result.stdout, result.stderr)


class _Site:
    """One server URL whose SQLite database is backed up and restored under it."""

    def __init__(self, root: Path) -> None:
        self.root, self.n = root, 0
        self.db = f"sqlite:///{root / 'live.sqlite3'}"
        self.storage: Storage = open_storage(self.db)
        self.relay = Relay(app_for(self.storage))

    def backup(self) -> str:
        self.n += 1
        target = self.root / f"backup-{self.n}.sqlite3"
        with sqlite3.connect(self.db.removeprefix("sqlite:///")) as src:
            dst = sqlite3.connect(target)
            src.backup(dst)
            dst.close()
        return f"sqlite:///{target}"

    def serve(self, db: str) -> None:
        old, self.storage = self.storage, open_storage(db)
        self.relay.inner = app_for(self.storage)
        old.close()

    def entries(self) -> dict[str, str]:
        state = self.storage.state("acme/widgets", contents=True)
        return dict(state.entries or {}) if state is not None else {}


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[_Site, str]]:
    s = _Site(tmp_path)
    try:
        with uvicorn_server(s.relay) as url:
            yield s, url
    finally:
        s.storage.close()


def test_restored_server_then_two_writes_by_a_teammate_at_the_restored_mark(
    site: tuple[_Site, str], tmp_path: Path
) -> None:
    s, url = site
    tokens = [token_for(s.storage, label=n) for n in ("alice", "bob", "carol")]
    alice, bob, carol = make_rest_team(tmp_path, url, tokens, ("alice", "bob", "carol"))
    for key, text in MEMORIES.items():
        alice.write(key, text)
    for mate in (alice, bob, carol):
        _ok(mate, "sync")
    backup = s.backup()
    alice.write("m0.md", V2)
    _ok(alice, "sync")
    _ok(bob, "sync")
    assert bob.read("m0.md") == V2
    s.serve(backup)  # m0.md is back at v1 on the server; carol never saw v2
    edits = {
        "m2.md": memory("Memory 2", "carol's edit\n"),
        "m3.md": memory("Memory 3", "carol's other edit\n"),
    }
    for key, text in edits.items():  # two writes: the counter moves past bob's mark
        carol.write(key, text)
        _ok(carol, "sync")
    stop = _stopped(bob, "sync")
    assert stop["kind"] == "remote_lost_history" and "restore-remote" in stop["way_forward"][0]
    assert "other content at version" in str(stop["message"])
    _stopped(alice, "sync")
    assert bob.read("m0.md") == alice.read("m0.md") == V2
    _ok(bob, "sync", "--restore-remote")  # v2 goes back; carol's two writes are pulled
    for mate in (alice, carol, bob):
        _ok(mate, "sync")
    want = {**MEMORIES, "m0.md": V2, **edits}
    assert alice.files() == bob.files() == carol.files() == s.entries() == want


def test_plain_server_without_a_counter_restored_to_an_older_state(tmp_path: Path) -> None:
    store = MinimalStore(counter=False)
    with uvicorn_server(create_minimal_app(store)) as url:
        alice, bob = make_rest_team(tmp_path, url, ["token-a", "token-b"])
        for key, text in MEMORIES.items():
            alice.write(key, text)
        _ok(alice, "sync")
        _ok(bob, "sync")
        backup = store.backup()
        alice.write("m0.md", V2)
        alice.write("m1.md", memory("Memory 1", "fact number 1, version 2\n"))
        alice.write("new.md", memory("New", "written after the backup\n"))
        _ok(alice, "sync")
        _ok(bob, "sync")
        want = alice.files()
        store.restore(backup)  # 2 edits reverted, 1 new memory gone: under the mass guard
        stop = _stopped(bob, "sync")
        assert stop["kind"] == "remote_lost_history"
        assert "older version" in str(stop["message"]) and "m0.md" in str(stop["message"])
        _stopped(alice, "pull")
        assert alice.files() == bob.files() == want
        _ok(bob, "sync", "--restore-remote")
        _ok(alice, "sync")
        _ok(bob, "sync")
        assert alice.files() == bob.files() == want
        assert store.repos["acme/widgets"] == want


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_wiped_folder_pulls_back_instead_of_up_to_date(kind: str, tmp_path: Path) -> None:
    with team(kind, tmp_path, ("alice", "bob")) as t:
        alice, bob = t.mates
        for key, text in MEMORIES.items():
            alice.write(key, text)
        _ok(alice, "sync")
        _ok(bob, "sync")
        shutil.rmtree(bob.memdir)  # rm -rf, then a fresh init at the same path
        bob.team.mkdir(parents=True)
        bob.init()  # type: ignore[attr-defined]
        alice.write("m0.md", V2)
        _ok(alice, "sync")
        stop = _stopped(bob, "pull")
        assert "missing" in str(stop["message"])
        assert stop["way_forward"][0].startswith("`teamsync pull --restore-local`")
        for args in (["status"], ["sync"]):  # no first hint that deletes for everyone
            stop = _stopped(bob, *args)
            first = str(stop["way_forward"][0])
            assert "--restore-local" in first and "--yes" not in first, stop
        assert t.remote_files() == {**MEMORIES, "m0.md": V2}
        _ok(bob, "pull", "--restore-local")
        _ok(bob, "sync")
        _ok(alice, "sync")
        want = {**MEMORIES, "m0.md": V2}
        assert bob.files() == alice.files() == t.remote_files() == want
