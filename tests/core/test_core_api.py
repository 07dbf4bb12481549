"""The one-call library entry points: teamsync.sync, check, scan_paths and recall."""

from __future__ import annotations

import importlib
from pathlib import Path

import teamsync
from testing.gitrepos import make_team, memory
from testing.hooks import fake_github_token


def test_sync_is_callable_again_after_its_subpackage_is_imported(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    alice.write("deploy.md", memory("Deploys", "No deploys on Friday.\n"))
    first = teamsync.sync(alice.memdir, environ=alice.environ, cwd=alice.home)
    assert first.pushed == ["deploy.md"]
    # running it imported teamsync.sync.*: the name still means the function
    assert callable(teamsync.sync) and importlib.import_module("teamsync.sync").__name__
    pulled = teamsync.sync(bob.memdir, mode="pull", environ=bob.environ, cwd=bob.home)
    assert pulled.written == ["deploy.md"]
    assert bob.read("deploy.md") == alice.read("deploy.md")


def test_check_reports_and_fixes(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    (memdir / "team").mkdir(parents=True)
    (memdir / "team" / "deploy.md").write_text(memory("Deploys", "Fridays: none.\n"))
    kinds = {p.kind for p in teamsync.check(memdir, environ={"HOME": str(tmp_path)}).problems}
    assert kinds  # the memory is not in any index yet
    teamsync.check(memdir, fix=True, environ={"HOME": str(tmp_path)})
    assert "deploy.md" in (memdir / "team" / "MEMORY.md").read_text()


def test_scan_paths_finds_a_secret_and_honours_only_reviewed_allows(tmp_path: Path) -> None:
    token = fake_github_token()
    (tmp_path / "app.py").write_text(f'TOKEN = "{token}"  # teamsync: allow\n')
    memory_dir = tmp_path / "memory" / "team"
    memory_dir.mkdir(parents=True)
    (memory_dir / "x.md").write_text(f"token: {token} <!-- teamsync: allow -->\n")
    findings = teamsync.scan_paths(["."], cwd=tmp_path)
    assert [(f.path, f.rule) for f in findings] == [("memory/team/x.md", "github-pat")]
    assert token not in repr(findings)
    assert teamsync.scan_paths(["."], cwd=tmp_path, baseline=[findings[0].fingerprint]) == []


def test_recall_offline_returns_the_relevant_memory_only(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    (memdir / "team").mkdir(parents=True)
    (memdir / "team" / "deploy.md").write_text(
        memory("Deploy freeze", "No production deploys after Friday noon.\n")
    )
    (memdir / "team" / "lunch.md").write_text(memory("Lunch", "Tacos on Tuesday.\n"))
    env = {"HOME": str(tmp_path)}
    result = teamsync.recall("production deploys friday", memdir, environ=env)
    assert [m.path for m in result.memories] == ["team/deploy.md"]
    assert callable(teamsync.recall)
