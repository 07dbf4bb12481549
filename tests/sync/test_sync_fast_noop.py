"""The CLI's fast no-op path on the git backend (teamsync.commands.sync_fast, teamsync.sync.noop).

Real bare repositories and the real ``teamsync`` executable. Whether a run took
the fast path is read from Python's own import log (``PYTHONPROFILEIMPORTTIME``):
the fast path never imports click.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from teamsync.commands.sync_fast import noop_json, parse
from teamsync.sync.report import SyncReport
from teamsync.sync.state import BaseStore, RemoteMark
from testing.gitrepos import TEAMSYNC, Teammate, commit_files, make_team, memory

FILES = {f"m{i}.md": memory(f"M{i}", f"fact {i}\n") for i in range(5)}


def _age(mate: Teammate) -> None:
    """Put every file's mtime safely in the past, so the stat cache trusts it at once."""
    old = time.time() - 60
    for path in mate.team.rglob("*"):
        if path.is_file():
            os.utime(path, (old, old))


def _run(
    mate: Teammate, *args: str, full: bool = False
) -> tuple[subprocess.CompletedProcess[str], bool]:
    """Run ``teamsync args`` once; also say whether it took the fast path (click never
    imported, read from Python's import log, which is then cut from stderr)."""
    env = {**mate.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    if full:
        env["TEAMSYNC_NO_FAST_PATH"] = "1"
    result = subprocess.run([TEAMSYNC, *args], env=env, capture_output=True, text=True,
                            cwd=mate.home, timeout=120)  # fmt: skip
    lines = result.stderr.splitlines(keepends=True)
    log = [line for line in lines if line.startswith("import time:")]
    imported = {line.rpartition("|")[2].strip() for line in log}
    result.stderr = "".join(line for line in lines if line not in log)
    return result, "click" not in imported


def _certified(tmp_path: Path) -> tuple[Teammate, Teammate]:
    alice, bob = make_team(tmp_path)
    for key, text in FILES.items():
        alice.write(key, text)
    _age(alice)
    assert alice.cli("sync").returncode == 0  # pushes: the new commit is not vetted yet
    assert alice.cli("sync").returncode == 0  # a no-op: certifies it
    return alice, bob


def test_a_noop_takes_the_fast_path_and_says_exactly_what_the_full_path_says(
    tmp_path: Path,
) -> None:
    alice, _ = _certified(tmp_path)
    for args in (["sync"], ["status"], ["pull"], ["push"], ["--json", "sync"],
                 ["--json", "status"], ["-q", "sync"], ["--color", "never", "sync"],
                 ["--dir", str(alice.memdir), "--json", "sync"]):  # fmt: skip
        fast, took_fast = _run(alice, *args)
        full, took_full = _run(alice, *args, full=True)
        assert took_fast and not took_full, args
        assert (fast.returncode, fast.stdout, fast.stderr) == (
            full.returncode,
            full.stdout,
            full.stderr,
        ), args
        assert fast.returncode == 0
    assert json.loads(_run(alice, "--json", "status")[0].stdout)["dry_run"] is True


def test_forms_the_fast_path_does_not_serve_go_through_click(tmp_path: Path) -> None:
    alice, _ = _certified(tmp_path)
    for args in (["sync", "--dry-run"], ["-v", "sync"], ["sync", "--yes"]):
        result, took_fast = _run(alice, *args)
        assert not took_fast and result.returncode == 0, (args, result.stderr)
    assert parse(["--dir", "x", "--json", "-q", "--color=always", "status"]) is not None
    for bad in (["sync", "--json"], ["--color", "pink", "sync"], ["--dir=", "sync"],
                ["--verbose", "sync"], ["--dir"], ["log"], []):  # fmt: skip
        assert parse(bad) is None, bad


def test_every_change_falls_through_and_is_synced(tmp_path: Path) -> None:
    alice, bob = _certified(tmp_path)
    assert _run(alice, "sync")[1]

    # a teammate's push: the remote head moved
    bob.init()
    commit_files(alice.remote, {"new.md": memory("New", "from bob\n").encode()})
    result, took_fast = _run(alice, "sync")
    assert not took_fast and "1 written here" in result.stdout
    assert alice.read("new.md") == memory("New", "from bob\n")

    # a local edit, a new file, a deletion: each seen (the stat cache no longer matches)
    _age(alice)
    alice.cli("sync")
    assert _run(alice, "sync")[1]
    for change in ("edit", "add", "delete"):
        if change == "edit":
            alice.write("m1.md", memory("M1", "edited\n"))
        elif change == "add":
            alice.write("extra.md", memory("Extra", "more\n"))
        else:
            alice.delete("m2.md")
        result, took_fast = _run(alice, "status")
        assert not took_fast and "Local changes to push" in result.stdout, change
        result, took_fast = _run(alice, "sync")
        assert not took_fast and ("pushed" in result.stdout or "deleted on" in result.stdout)
        _age(alice)
        assert alice.cli("sync").returncode == 0  # certifies again
        assert _run(alice, "sync")[1]

    # only the stat changed (same content): the full path decides, and it is a no-op
    (alice.team / "m0.md").touch()
    result, took_fast = _run(alice, "sync")
    assert not took_fast and result.stdout.strip() == "Already up to date."


def test_a_changed_configuration_or_a_stray_file_takes_the_full_path(tmp_path: Path) -> None:
    alice, _ = _certified(tmp_path)
    config = alice.memdir / "teamsync.yaml"
    config.write_text(config.read_text() + "mass_change_share: 0.5\n")
    result, took_fast = _run(alice, "sync")
    assert not took_fast and result.returncode == 0
    assert _run(alice, "sync")[1]  # that full run certified the new configuration

    (alice.team / "notes.txt").write_text("not a memory")
    result, took_fast = _run(alice, "sync")
    assert not took_fast and result.returncode == 1 and "not a memory file" in result.stderr


def test_a_remote_with_a_refused_entry_is_never_certified(tmp_path: Path) -> None:
    alice, _ = _certified(tmp_path)
    commit_files(alice.remote, {"link.md": b"m0.md"}, modes={"link.md": "120000"})
    for _ in range(2):
        result, took_fast = _run(alice, "sync")
        assert not took_fast and result.returncode == 1 and "symlink" in result.stderr


def test_any_write_to_the_base_store_withdraws_the_certificate(tmp_path: Path) -> None:
    store = BaseStore(tmp_path / "s.sqlite3")
    store.set_remote_mark(RemoteMark("a" * 40))
    store.certify_noop("a" * 40)
    assert store.noop_version() == "a" * 40
    reader = BaseStore.open_readonly(tmp_path / "s.sqlite3")
    assert reader is not None and reader.noop_version() == "a" * 40
    reader.close()
    store.advance({"k.md": ("sha256:x", "text")})
    assert store.noop_version() is None
    store.certify_noop("a" * 40)
    BaseStore(tmp_path / "s.sqlite3").close()  # another process opening it for a run
    assert store.noop_version() is None
    store.close()
    assert BaseStore.open_readonly(tmp_path / "missing.sqlite3") is None


@pytest.mark.parametrize("dry_run", [False, True])
def test_the_noop_json_is_the_reports(dry_run: bool) -> None:
    mode = "status" if dry_run else "sync"
    assert noop_json(dry_run) == SyncReport(mode=mode, dry_run=dry_run).to_json()


def test_the_certificate_is_checked_against_the_store_as_it_is_recorded(tmp_path: Path) -> None:
    """Another run recorded a user's edit in the stat cache after this run loaded it: no certificate."""
    store = BaseStore(tmp_path / "s.sqlite3")
    store.set_remote_mark(RemoteMark("a" * 40))
    store.advance({"k.md": ("sha256:base", "text")})
    assert not store.certify_noop("a" * 40, {"k.md": "sha256:base"})  # no stat row yet
    other = BaseStore(tmp_path / "s.sqlite3")
    other._db.execute("INSERT INTO stat VALUES ('k.md', 1, 1, 1, 'sha256:edited', 1)")
    other.close()
    assert not store.certify_noop("a" * 40, {"k.md": "sha256:base"})
    assert store.noop_version() is None
    store._db.execute("UPDATE stat SET checksum = 'sha256:base'")
    assert not store.certify_noop("b" * 40, {"k.md": "sha256:base"})  # not the remote's mark
    assert store.certify_noop("a" * 40, {"k.md": "sha256:base"})
    assert store.noop_version() == "a" * 40
    store.close()
