"""Three teammates sync through the Memory Stores backend (the official SDK) against a real
``teamsync serve``: the scenarios the git and REST backends pass, on a store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from teamsync.errors import BackendError, UsageError
from teamsync.sync.memstore import MemstoreBackend, normalize_prefix
from testing.gitrepos import memory
from testing.memstore import PREFIX, StoreTeam, sdk, store_team

FAKE_PAT = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def converge(t: StoreTeam) -> None:
    for _ in range(2):
        for mate in t.mates:
            mate.sync()


def memory_id(t: StoreTeam, key: str) -> str:
    with sdk(t.url, t.admin) as client:
        [m] = [
            m
            for m in client.beta.memory_stores.memories.list(t.store_id, path_prefix=PREFIX)
            if m.path == PREFIX + key
        ]
        return str(m.id)


def test_merge_conflict_copy_delete_and_rename(tmp_path: Path) -> None:
    with store_team(tmp_path) as t:
        alice, bob, carol = t.mates
        alice.write("deploy.md", memory("Deploy", "one\ntwo\nthree\nfour\nfive\n"))
        alice.write("old-name.md", memory("Moved", "travels by id\n"))
        alice.write("doomed.md", memory("Doomed", "going\n"))
        converge(t)
        assert bob.files() == carol.files() == alice.files() == t.remote_files()
        moved_id = memory_id(t, "old-name.md")

        # non-overlapping edits merge; the store holds the merge
        bob.write("deploy.md", memory("Deploy", "ONE\ntwo\nthree\nfour\nfive\n"))
        carol.write("deploy.md", memory("Deploy", "one\ntwo\nthree\nfour\nFIVE\n"))
        bob.sync()
        carol.sync()
        assert t.remote_files()["deploy.md"] == memory("Deploy", "ONE\ntwo\nthree\nfour\nFIVE\n")

        # overlapping edits keep both: one in place, one as a conflict copy
        bob.sync()
        alice.sync()
        alice.write("deploy.md", memory("Deploy", "alice's line\n"))
        bob.write("deploy.md", memory("Deploy", "bob's line\n"))
        alice.sync()
        report = bob.sync()
        assert report.conflicts
        texts = "".join(bob.files().values())
        assert "alice's line" in texts and "bob's line" in texts

        # a delete and a rename travel; the rename keeps the memory's id
        alice.sync()
        alice.delete("doomed.md")
        (alice.team / "old-name.md").rename(alice.team / "new-name.md")
        alice.sync()
        converge(t)
        for mate in t.mates:
            assert "doomed.md" not in mate.files() and "new-name.md" in mate.files()
        assert "doomed.md" not in t.remote_files()
        assert memory_id(t, "new-name.md") == moved_id
        assert alice.files() == bob.files() == carol.files() == t.remote_files()
        with sdk(t.url, t.admin) as client:
            ops = [
                v.operation
                for v in client.beta.memory_stores.memory_versions.list(
                    t.store_id, memory_id=moved_id
                )
            ]
        assert ops == ["modified", "created"]  # the rename is one update of path


def test_secret_oversize_and_bad_names_are_held_back(tmp_path: Path) -> None:
    with store_team(tmp_path, ("alice", "bob")) as t:
        alice, bob = t.mates
        alice.write("ok.md", memory("Ok", "fine\n"))
        alice.write("creds.md", memory("Creds", f"token: {FAKE_PAT}\n"))
        alice.write("big.md", memory("Big", "x" * 110_000 + "\n"))
        deep = "/".join(["d"] * 20) + "/x.md"  # 21 segments under /team/: over the store's 20
        alice.write(deep, memory("Deep", "deep\n"))
        report = alice.sync()
        held = {r.key: r.reason for r in report.held_back}
        assert set(held) >= {"creds.md", "big.md", deep}
        assert "102,400" in held["big.md"] and "20" in held[deep]
        assert FAKE_PAT not in str(report.to_json())
        assert set(t.remote_files()) == {"ok.md"}
        bob.sync()
        assert set(bob.files()) == {"ok.md"}


def test_a_hostile_server_is_refused_entry_by_entry(tmp_path: Path) -> None:
    with store_team(tmp_path, ("alice", "bob")) as t:
        alice, bob = t.mates
        alice.write("a.md", memory("A", "honest\n"))
        alice.write("b.md", memory("B", "honest too\n"))
        alice.sync()
        db = sqlite3.connect(tmp_path / "server.sqlite3")
        with db:  # the server lies: a content that is not what its hash says, a hostile path
            db.execute("UPDATE ms_memories SET content = 'forged' WHERE path = '/team/a.md'")
            db.execute(
                "INSERT INTO ms_memories SELECT 'mem_evil', store_id, '/team/../../etc/x.md',"
                " content, sha, size, 'memver_evil', created_at, updated_at FROM ms_memories"
                " WHERE path = '/team/b.md'"
            )
        db.close()
        report = bob.sync()
        refused = {r.key for r in report.rejected}
        assert "../../etc/x.md" in refused and "a.md" in refused
        assert bob.files() == {"b.md": memory("B", "honest too\n")}
        assert not (tmp_path / "etc").exists()


def test_a_store_that_lost_history_stops_the_sync(tmp_path: Path) -> None:
    with store_team(tmp_path, ("alice", "bob")) as t:
        alice, bob = t.mates
        for n in range(6):
            alice.write(f"m{n}.md", memory(f"M{n}", "kept\n"))
        converge(t)
        with sdk(t.url, t.admin) as client:  # the store is deleted (and its history with it)
            client.beta.memory_stores.delete(t.store_id)
        report = bob.sync()
        assert report.stop is not None and report.stop.kind == "remote_lost_history"
        assert len(bob.files()) == 6  # nothing deleted here


def test_a_no_op_sync_is_one_conditional_request(tmp_path: Path) -> None:
    with store_team(tmp_path, ("alice",)) as t:
        (alice,) = t.mates
        for n in range(150):  # two listing pages
            alice.write(f"n{n:03}.md", memory(f"N{n}", "x\n"))
        alice.sync()
        alice.sync()  # reads the listing after the push; keeps its ETag
        backend = _backend(alice)
        try:
            snap = backend.snapshot()
            assert len(snap.checksums) == 150 and backend.requests == 1
        finally:
            backend.close()


def _backend(mate: object) -> MemstoreBackend:
    from teamsync.sync.memstore import from_config

    return from_config(mate.config(), mate.settings)  # type: ignore[attr-defined]


def test_prefixes_and_unreachable_server(tmp_path: Path) -> None:
    assert normalize_prefix("team") == normalize_prefix("/team/") == "/team/"
    assert normalize_prefix(None) == "/"
    with pytest.raises(UsageError):
        normalize_prefix("/a/../b/")
    backend = MemstoreBackend(
        "memstore_x", "tsm_0123456789ab_" + "s" * 43, base_url="http://127.0.0.1:9", max_retries=0
    )
    with pytest.raises(BackendError, match="cannot reach"):
        backend.snapshot()
    backend.close()


def test_log_and_restore_at_read_the_stores_versions(tmp_path: Path) -> None:
    from teamsync.commands.log import changes

    with store_team(tmp_path, ("alice", "bob")) as t:
        alice, bob = t.mates
        alice.write("plan.md", memory("Plan", "first\n"))
        alice.sync()
        bob.sync()
        bob.write("plan.md", memory("Plan", "second\n"))
        bob.sync()
        rows = changes(alice.settings, "plan.md")
        assert [r.action for r in rows] == ["upsert", "upsert"]
        assert all(r.version.startswith("memver_") for r in rows)
        # named by the token's label (teamsync serve's extension) and the API's own id
        assert rows[0].who.startswith("bob (API key apikey_") and rows[0].who.endswith(")")
        assert rows[1].who.startswith("alice (API key apikey_")
        result = alice.cli("restore", "plan.md", "--at", rows[1].version)
        assert result.returncode == 0, result.stderr
        assert alice.read("plan.md") == memory("Plan", "first\n")
        shown = alice.cli("log", "plan.md")
        assert rows[1].version in shown.stdout + shown.stderr
        assert "alice (API key apikey_" in shown.stdout


def test_a_writer_is_named_by_what_the_store_tells() -> None:
    """The API's actors name an id and its kind, never a person: each kind is shown as
    such; a label (teamsync serve's extension) leads; a server's words are made printable."""
    from anthropic.types.beta.memory_stores import (
        BetaManagedAgentsAPIActor,
        BetaManagedAgentsServiceAccountActor,
        BetaManagedAgentsSessionActor,
        BetaManagedAgentsUserActor,
    )

    from teamsync.sync.memstore import _actor

    assert _actor(BetaManagedAgentsUserActor(type="user_actor", user_id="user_01")) == (
        "user user_01"
    )
    assert _actor(BetaManagedAgentsSessionActor(type="session_actor", session_id="sesn_01")) == (
        "session sesn_01"
    )
    svc = BetaManagedAgentsServiceAccountActor(
        type="service_account_actor", service_account_id="svac_01"
    )
    assert _actor(svc) == "service account svac_01"
    key = BetaManagedAgentsAPIActor.model_validate(
        {"type": "api_actor", "api_key_id": "apikey_01", "label": "carol\x1b[2J"}
    )
    assert _actor(key).startswith("carol") and "\x1b" not in _actor(key)
    assert _actor(key).endswith("(API key apikey_01)")
    assert _actor(BetaManagedAgentsAPIActor(type="api_actor", api_key_id="apikey_02")) == (
        "API key apikey_02"
    )
    assert _actor(None) == "?"


def test_claude_codes_mount_manifest(tmp_path: Path) -> None:
    from teamsync.errors import ConfigError

    with store_team(tmp_path, ("alice", "bob")) as t:
        alice, bob = t.mates
        (alice.team / ".memory-sync").write_text(
            f'{{"memory_store_id": "{t.store_id}", "path": "/team/"}}\n', encoding="utf-8"
        )
        alice.write("a.md", memory("A", "a\n"))
        report = alice.sync()
        assert report.exit_code() == 0 and not report.rejected
        assert set(t.remote_files()) == {"a.md"}  # the manifest is bookkeeping, never synced
        checked = alice.cli("check")
        assert ".memory-sync" not in checked.stdout + checked.stderr  # never listed by check
        (bob.team / ".memory-sync").write_text('{"memory_store_id": "memstore_other"}\n')
        with pytest.raises(ConfigError, match="memstore_other"):
            bob.sync()
        assert not (bob.team / "a.md").exists()


def test_redact_blanks_a_version_on_a_store_and_explains_git(tmp_path: Path) -> None:
    from teamsync.commands.log import changes

    with store_team(tmp_path, ("alice",)) as t:
        (alice,) = t.mates
        alice.write("ops.md", memory("Ops", "the old, leaked line\n"))
        alice.sync()
        alice.write("ops.md", memory("Ops", "cleaned\n"))
        alice.sync()
        old = changes(alice.settings, "ops.md")[1].version
        done = alice.cli("redact", old)
        assert done.returncode == 0, done.stderr
        with sdk(t.url, t.admin) as client:
            v = client.beta.memory_stores.memory_versions.retrieve(old, memory_store_id=t.store_id)
        assert v.redacted_at is not None and v.content is None and v.path is None
        current = changes(alice.settings, "ops.md")[0].version
        refused = alice.cli("redact", current)  # the live version: update or delete it first
        assert refused.returncode != 0 and "current version" in refused.stderr


def test_redact_on_git_changes_nothing_and_says_what_to_do(tmp_path: Path) -> None:
    from testing.gitrepos import make_team

    (alice,) = make_team(tmp_path, ["alice"])
    result = alice.cli("redact", "0123abc")
    assert result.returncode == 1 and "filter-repo" in result.stderr and "Rotate" in result.stderr


def test_scan_a_stores_retained_versions(tmp_path: Path) -> None:
    import os
    import subprocess

    from teamsync.security.secrets import scan_text
    from teamsync.server.app import create_app
    from teamsync.server.limits import ServerConfig
    from teamsync.server.storage import open_storage
    from testing.gitrepos import TEAMSYNC
    from testing.server import token_for, uvicorn_server

    leaked = f"deploy token {FAKE_PAT}\n"
    [finding] = scan_text(leaked, "team/ops.md")
    storage = open_storage(f"sqlite:///{tmp_path / 's.sqlite3'}")
    token = token_for(storage)
    # an operator allowlist let it in once (say, before the rule existed): it is in history now
    config = ServerConfig(db_url=storage.url, allowlist=(("acme/widgets", finding.fingerprint),))
    try:
        with uvicorn_server(create_app(config, storage=storage)) as url:
            with sdk(url, token) as client:
                store = client.beta.memory_stores.create(name="Team").id
                mems = client.beta.memory_stores.memories
                m = mems.create(store, path="/team/ops.md", content=leaked)
                mems.update(m.id, memory_store_id=store, content="rotated, gone\n")
            env = {**os.environ, "TEAMSYNC_TOKEN": token, "HOME": str(tmp_path)}
            env.pop("ANTHROPIC_API_KEY", None)
            base = [TEAMSYNC, "--json", "scan", "--memory-store", store, "--base-url", url]
            now = subprocess.run(base, env=env, capture_output=True, text=True, timeout=120)
            past = subprocess.run(
                [*base, "--history"], env=env, capture_output=True, text=True, timeout=120
            )
    finally:
        storage.close()
    assert now.returncode == 0, now.stderr  # the current memory is clean
    assert past.returncode == 1 and FAKE_PAT not in past.stdout + past.stderr
    [hit] = __import__("json").loads(past.stdout)["findings"]
    assert hit["path"].startswith(f"{store}:/team/ops.md@memver_")


def _copy_db(src: Path, dst: Path) -> None:
    """An online copy of a live SQLite database (the backup API), either way."""
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)


def test_a_store_restored_to_an_older_state_stops_the_sync(tmp_path: Path) -> None:
    with store_team(tmp_path, ("alice", "bob")) as t:
        alice, bob = t.mates
        alice.write("a.md", memory("A", "one\n"))
        alice.write("b.md", memory("B", "two\n"))
        converge(t)
        db = tmp_path / "server.sqlite3"
        _copy_db(db, tmp_path / "backup.sqlite3")
        alice.write("a.md", memory("A", "one, then two\n"))
        (alice.team / "b.md").unlink()
        converge(t)
        # a teammate writing old content again is a new version, not a lost history
        bob.write("a.md", memory("A", "one\n"))
        assert bob.sync().stop is None and alice.sync().stop is None
        bob.write("a.md", memory("A", "one, then two\n"))
        converge(t)
        _copy_db(tmp_path / "backup.sqlite3", db)  # the server's database is restored
        assert t.remote_files()["a.md"] == memory("A", "one\n")
        for _ in range(2):  # told again on the next run, not cached away
            report = alice.sync()
            assert report.stop is not None and report.stop.kind == "remote_lost_history"
            assert "--restore-remote" in " ".join(report.stop.way_forward)
        assert alice.files() == {"a.md": memory("A", "one, then two\n")}  # nothing changed here
        result = alice.cli("sync", "--restore-remote")
        assert result.returncode == 0, result.stderr
        assert t.remote_files()["a.md"] == memory("A", "one, then two\n")
        assert bob.sync().stop is None and alice.sync().stop is None


def test_a_name_a_teammate_took_meanwhile_is_held_here_and_the_rest_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26 §4 on a store: between bob's listing and his push, alice shares
    ``plan.md``; bob's new ``plan.md/step.md`` needs that name as a folder. The server
    refuses that one create (409 ``memory_path_conflict_error`` naming
    ``conflicting_path``, decided under the store's lock); bob's client holds it back
    with the reason, keeps the file, and pushes the rest."""
    with store_team(tmp_path, ("alice", "bob")) as t:
        alice, bob = t.mates
        bob.write("plan.md/step.md", memory("Step", "bob's step\n"))
        bob.write("other.md", memory("Other", "bob's other\n"))
        listed = MemstoreBackend.snapshot

        def snapshot_then_alice_writes(self: MemstoreBackend) -> object:
            snap = listed(self)
            monkeypatch.setattr(MemstoreBackend, "snapshot", listed)
            alice.write("plan.md", memory("Plan", "alice's plan\n"))
            assert alice.sync().pushed == ["plan.md"]
            return snap

        monkeypatch.setattr(MemstoreBackend, "snapshot", snapshot_then_alice_writes)
        report = bob.sync()
        assert report.pushed == ["other.md"]
        (held,) = report.held_back
        assert held.key == "plan.md/step.md" and "/team/plan.md" in held.reason
        assert set(t.remote_files()) == {"plan.md", "other.md"}
        assert bob.read("plan.md/step.md") == memory("Step", "bob's step\n")


def test_a_restore_to_a_version_this_machine_never_saw_is_told_by_its_age(
    tmp_path: Path,
) -> None:
    """The backup was taken between two edits bob did not see apart (he saw v1, then v3):
    the restored v2 is no version bob saw superseded, but it is older than v3 (its
    ``updated_at``), so the store went back: the sync stops and names the memory."""
    with store_team(tmp_path, ("alice", "bob")) as t:
        alice, bob = t.mates
        alice.write("a.md", memory("A", "v1\n"))
        alice.write("z.md", memory("Z", "stays\n"))
        converge(t)
        alice.write("a.md", memory("A", "v2\n"))
        alice.sync()
        db = tmp_path / "server.sqlite3"
        _copy_db(db, tmp_path / "backup.sqlite3")
        alice.write("a.md", memory("A", "v3\n"))
        alice.sync()
        assert bob.sync().stop is None and bob.read("a.md") == memory("A", "v3\n")
        _copy_db(tmp_path / "backup.sqlite3", db)
        assert t.remote_files()["a.md"] == memory("A", "v2\n")
        report = bob.sync()
        assert report.stop is not None and report.stop.kind == "remote_lost_history"
        assert "1 memory at an older version than this machine saw there (a.md)" in (
            report.stop.message
        )
        assert bob.read("a.md") == memory("A", "v3\n")  # nothing changed here


def test_a_memory_that_is_not_markdown_is_reported_and_left_alone(tmp_path: Path) -> None:
    """teamsync syncs ``*.md`` memories; a store may hold any path (a ``.txt`` from a
    Claude Code teammate, a tool's notes). Such a memory is listed as refused, never
    pulled here, and never deleted from the store by a sync."""
    with store_team(tmp_path, ("alice",)) as t:
        (alice,) = t.mates
        with sdk(t.url, t.admin) as client:
            client.beta.memory_stores.memories.create(
                t.store_id, path=PREFIX + "notes.txt", content="plain text\n"
            )
        alice.write("a.md", memory("A", "one\n"))
        report = alice.sync()
        assert "notes.txt" in {r.key for r in report.rejected}
        assert set(alice.files()) == {"a.md"}
        alice.sync()
        assert t.remote_files() == {"a.md": memory("A", "one\n"), "notes.txt": "plain text\n"}
