"""A server that lost history, lies about a PUT, or faces an unreadable folder: a real
uvicorn on loopback over real SQLite and PostgreSQL, teammates running the real
``teamsync`` executable (one of them as an unprivileged user).

Each event ends with every teammate still holding every memory, exit 1 with a
clear message, and the documented way forward working.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from teamsync.server.storage import Storage, open_storage
from testing.gitrepos import folder_memories, memory, stopped
from testing.hostile_server import Relay
from testing.server import RestMate, app_for, make_rest_team, token_for, uvicorn_server

MEMORIES = {f"m{i}.md": memory(f"Memory {i}", f"fact number {i}\n") for i in range(6)}


class Site:
    """One server URL whose database the test can lose, back up and restore."""

    def __init__(self, db_url: str, relay: Relay | None = None) -> None:
        self.db_url = db_url
        self.storage: Storage = open_storage(db_url)
        self.relay = relay or Relay(app_for(self.storage))

    def serve(self, db_url: str) -> None:
        """The server restarts on ``db_url`` (same URL for the clients)."""
        old, self.db_url = self.storage, db_url
        self.storage = open_storage(db_url)
        self.relay.inner = app_for(self.storage)
        old.close()

    def backup(self, new_db: str) -> str:
        """Copy the live database to a new one; return its URL."""
        if self.db_url.startswith("sqlite:///"):
            target = new_db.removeprefix("sqlite:///")
            with sqlite3.connect(self.db_url.removeprefix("sqlite:///")) as src:
                dst = sqlite3.connect(target)
                src.backup(dst)
                dst.close()
            return new_db
        import psycopg

        source = self.db_url.rsplit("/", 1)[1]
        name = new_db.rsplit("/", 1)[1]
        self.storage.close()  # a template database must have no open connections
        admin = new_db.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}"')
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
        self.storage = open_storage(self.db_url)
        self.relay.inner = app_for(self.storage)
        return new_db

    def entries(self, repo: str = "acme/widgets") -> dict[str, str]:
        state = self.storage.state(repo, contents=True)
        return dict(state.entries or {}) if state is not None else {}


@pytest.fixture
def fresh_db(request: pytest.FixtureRequest, db_url: str, tmp_path: Path) -> Iterator[object]:
    """A factory of fresh, empty databases of the same kind as ``db_url``."""
    n = iter(range(1000))

    def make() -> str:
        if db_url.startswith("sqlite:///"):
            return f"sqlite:///{tmp_path / f'fresh-{next(n)}.sqlite3'}"
        return str(request.getfixturevalue("pg_cluster").create_database())

    yield make


@pytest.fixture
def site(db_url: str) -> Iterator[tuple[Site, str]]:
    s = Site(db_url)
    try:
        with uvicorn_server(s.relay) as url:
            yield s, url
    finally:
        s.storage.close()


def _team(site: Site, url: str, root: Path) -> tuple[RestMate, RestMate]:
    tokens = [token_for(site.storage, label=n) for n in ("alice", "bob")]
    alice, bob = make_rest_team(root, url, tokens)
    for key, text in MEMORIES.items():
        alice.write(key, text)
    assert alice.cli("sync").returncode == 0
    assert bob.cli("sync").returncode == 0
    assert alice.files() == bob.files() == site.entries() == MEMORIES
    return alice, bob


def test_database_deleted_stops_and_restore_remote_repushes(
    site: tuple[Site, str], fresh_db: object, tmp_path: Path
) -> None:
    s, url = site
    alice, bob = _team(s, url, tmp_path)
    s.serve(fresh_db())  # type: ignore[operator]  # the database is gone; the admin starts over
    alice.token, bob.token = (token_for(s.storage, label=n) for n in ("alice", "bob"))
    err = stopped(bob, "sync")
    assert "holds nothing" in err and "lost history" in err
    assert "teamsync sync --restore-remote" in err
    stopped(alice, "pull")
    assert alice.files() == bob.files() == MEMORIES
    result = bob.cli("push", "--restore-remote")  # `push` re-creates the store as well
    assert result.returncode == 0, result.stderr
    assert s.entries() == MEMORIES
    result = alice.cli("sync")
    assert result.returncode == 0, result.stderr
    assert alice.files() == bob.files() == s.entries() == MEMORIES


def test_server_restored_from_an_older_backup_stops(
    site: tuple[Site, str], fresh_db: object, tmp_path: Path
) -> None:
    s, url = site
    alice, bob = _team(s, url, tmp_path)
    backup = s.backup(fresh_db())  # type: ignore[operator]  # last night's backup
    v2 = memory("Memory 1", "fact number 1, version 2\n")
    alice.write("m1.md", v2)
    alice.write("later.md", memory("Later", "written after the backup\n"))
    assert alice.cli("sync").returncode == 0
    assert bob.cli("sync").returncode == 0
    want = alice.files()
    s.serve(backup)  # restored: m1.md is back at v1 there, later.md gone
    err = stopped(bob, "sync")
    assert "older than version" in err and "--restore-remote" in err
    stopped(alice, "sync")
    assert alice.files() == bob.files() == want  # v2 survives on both machines
    assert bob.cli("sync", "--restore-remote").returncode == 0
    assert s.entries() == want
    assert alice.cli("sync").returncode == 0
    assert alice.files() == bob.files() == want


def test_a_put_the_server_does_not_store_is_reported_and_nothing_is_overwritten(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    s, url = site
    alice, bob = _team(s, url, tmp_path)
    s.relay.lying = True  # answers 200 to every PUT, stores nothing
    edit = memory("Memory 2", "bob's newer fact\n")
    bob.write("m2.md", edit)
    for _ in range(2):  # the second run must not "pull back" the server's old copy
        result = bob.cli("sync")
        assert result.returncode == 1
        assert "acknowledged the push but does not hold it" in result.stderr
        assert "m2.md" in result.stderr
        assert bob.read("m2.md") == edit
    assert s.relay.lies == 2
    assert alice.cli("sync").returncode == 0
    assert alice.files() == MEMORIES  # alice keeps hers; nothing was lost anywhere
    s.relay.lying = False  # the server is fixed: the documented way forward is a plain sync
    assert bob.cli("sync").returncode == 0
    assert alice.cli("sync").returncode == 0
    assert alice.read("m2.md") == bob.read("m2.md") == s.entries()["m2.md"] == edit


def test_tombstone_keeps_the_deleted_content(site: tuple[Site, str], tmp_path: Path) -> None:
    s, url = site
    alice, bob = _team(s, url, tmp_path)
    alice.delete("m4.md")
    assert alice.cli("sync").returncode == 0
    assert "m4.md" not in s.entries()
    assert s.storage.last_content("acme/widgets", "m4.md") == (MEMORIES["m4.md"], True)  # type: ignore[attr-defined]
    assert bob.cli("sync").returncode == 0 and "m4.md" not in bob.files()
    assert bob.cli("restore", "m4.md").returncode == 0  # bob's base kept it as well
    assert bob.read("m4.md") == MEMORIES["m4.md"]


# -- a folder at mode 000, for a teammate who is not root --------------------------------


def _unprivileged() -> list[str] | None:
    """argv prefix running the installed teamsync as an unprivileged user, or None."""
    if os.geteuid() != 0:
        return [sys.executable, "-m", "teamsync"]
    minor = f"python{sys.version_info.major}.{sys.version_info.minor}"
    python = shutil.which(minor, path="/usr/bin:/usr/local/bin")
    site_dir = sysconfig.get_paths()["purelib"]
    if python is None or shutil.which("setpriv") is None:
        return None
    code = (
        f"import site, sys; site.addsitedir({site_dir!r}); "
        "from teamsync.cli import main; sys.argv[0] = 'teamsync'; sys.exit(main())"
    )
    argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", python, "-c", code]
    probe = subprocess.run([*argv, "--version"], capture_output=True, text=True, check=False)
    return argv if probe.returncode == 0 else None


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_folder_at_mode_000_is_unknown_not_deleted(site: tuple[Site, str]) -> None:
    argv = _unprivileged()
    if argv is None:
        pytest.skip("cannot run teamsync as an unprivileged user here (no setpriv or python)")
    s, url = site
    root = Path(tempfile.mkdtemp(prefix="teamsync-mode000-"))
    try:
        os.chmod(root, 0o755)
        tokens = [token_for(s.storage, label=n) for n in ("alice", "bob")]
        alice, bob = make_rest_team(root, url, tokens, init=False)
        bob.init()
        files = folder_memories()
        for key, text in files.items():
            alice.write(key, text)
        subprocess.run(["chown", "-R", "nobody:nogroup", str(alice.home), str(alice.memdir)])

        def as_alice(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [*argv, *args],
                env={**alice.environ, "XDG_STATE_HOME": "", "XDG_CACHE_HOME": ""},
                capture_output=True,
                text=True,
                cwd=alice.home,
                timeout=120,
                check=False,
            )

        result = as_alice("init", "--rest", url, "--repo", "acme/widgets")
        assert result.returncode == 0, result.stderr
        assert as_alice("sync").returncode == 0
        assert bob.cli("sync").returncode == 0 and bob.files() == files
        os.chmod(alice.team / "notes", 0o000)
        bob.write("notes/a.md", memory("A", "a, edited by bob\n"))
        assert bob.cli("sync").returncode == 0
        result = as_alice("sync")
        assert result.returncode == 1, result.stderr
        assert "team/notes: cannot be listed (Permission denied)" in result.stderr
        assert result.stderr.count("team/notes:") == 1
        assert "its 2 synced memories left alone" in result.stderr
        assert set(s.entries()) == set(files)  # no delete was pushed
        assert bob.cli("sync").returncode == 0 and set(bob.files()) == set(files)
        os.chmod(alice.team / "notes", 0o755)
        assert alice.read("notes/a.md") == files["notes/a.md"]  # nothing was written into it
        result = as_alice("--json", "sync")  # the way out: fix the permissions, sync again
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["written"] == ["notes/a.md"]
        assert alice.files() == bob.files() == s.entries()
    finally:
        shutil.rmtree(root, ignore_errors=True)
