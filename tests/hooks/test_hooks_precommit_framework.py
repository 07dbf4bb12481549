"""`teamsync install-hooks` beside the real pre-commit framework, in real git repositories.

pre-commit's hook script runs ``<hook>.legacy`` first (with
``PRE_COMMIT_RUNNING_LEGACY=1``). teamsync used to rename pre-commit's script
to ``.legacy``; pre-commit then ran itself and printed "bug: pre-commit's script
is installed in migration mode". Now teamsync's hook is the ``.legacy`` one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from testing.hooks import fake_aws_key, git, make_repo, run_teamsync

CONFIG = """\
repos:
- repo: local
  hooks:
  - id: note
    name: note
    entry: sh -c 'echo pre-commit-ran >> "$(git rev-parse --git-dir)/pc.log"'
    language: system
    pass_filenames: false
    always_run: true
"""
FOREIGN = '#!/bin/sh\necho foreign-ran >> "$(git rev-parse --git-dir)/foreign.log"\n'


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}


def _pre_commit(work: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=work, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def _repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    work, _ = make_repo(tmp_path)
    (work / ".pre-commit-config.yaml").write_text(CONFIG, encoding="utf-8")
    git(work, "add", ".pre-commit-config.yaml")
    git(work, "commit", "-q", "-m", "pre-commit config")
    return work, _env(tmp_path)


def _commit(
    work: Path, env: dict[str, str], name: str, text: str
) -> subprocess.CompletedProcess[str]:
    (work / name).write_text(text, encoding="utf-8")
    git(work, "add", name)
    return subprocess.run(
        ["git", "commit", "-q", "-m", f"add {name}"],
        cwd=work, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def _ran(work: Path, log: str) -> int:
    path = work / ".git" / log
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def _no_bug(proc: subprocess.CompletedProcess[str]) -> None:
    said = proc.stdout + proc.stderr
    assert "migration mode" not in said and "report this bug" not in said, said
    assert "it is a teamsync hook too" not in said, said


def test_installed_after_pre_commit_it_chains_pre_commit_and_says_what_it_installs(
    tmp_path: Path,
) -> None:
    work, env = _repo(tmp_path)
    assert _pre_commit(work, env, "install").returncode == 0
    hooks = work / ".git" / "hooks"
    framework = (hooks / "pre-commit").read_text(encoding="utf-8")
    done = run_teamsync(["install-hooks"], cwd=work, env=env)
    assert done.returncode == 0, done.stderr
    assert "the pre-commit framework's pre-commit hook runs it first as pre-commit.legacy" in (
        done.stdout
    )
    assert "refuses a commit whose staged changes hold a likely secret" in done.stdout
    assert "Claude Code hooks: not installed" in done.stdout and "--claude-code" in done.stdout
    assert (hooks / "pre-commit").read_text(encoding="utf-8") == framework  # not displaced
    clean = _commit(work, env, "notes.md", "plain words\n")
    assert clean.returncode == 0, clean.stderr
    _no_bug(clean)
    assert _ran(work, "pc.log") == 1
    head = git(work, "rev-parse", "HEAD")
    leak = _commit(work, env, "settings.py", f'KEY = "{fake_aws_key()}"\n')
    assert leak.returncode != 0 and "commit refused" in leak.stderr
    _no_bug(leak)
    assert fake_aws_key() not in leak.stdout + leak.stderr
    assert git(work, "rev-parse", "HEAD") == head
    git(work, "reset", "-q", "HEAD", "--", "settings.py")
    again = run_teamsync(["install-hooks"], cwd=work, env=env)
    assert "pre-commit: already installed (the pre-commit framework's" in again.stdout
    removed = run_teamsync(["install-hooks", "--uninstall"], cwd=work, env=env)
    assert removed.returncode == 0
    assert "pre-commit: removed; the pre-commit framework's hook stays" in removed.stdout
    assert (hooks / "pre-commit").read_text(encoding="utf-8") == framework
    assert not (hooks / "pre-commit.legacy").exists()
    after = _commit(work, env, "more.md", "more words\n")
    assert after.returncode == 0 and _ran(work, "pc.log") == 3  # the refused commit ran it too
    _no_bug(after)


def test_pre_commit_installed_after_teamsync_runs_both_without_a_bug_message(
    tmp_path: Path,
) -> None:
    work, env = _repo(tmp_path)
    assert run_teamsync(["install-hooks"], cwd=work, env=env).returncode == 0
    moved = _pre_commit(work, env, "install")
    assert moved.returncode == 0 and "migration mode" in moved.stdout  # pre-commit's own words
    clean = _commit(work, env, "notes.md", "plain words\n")
    assert clean.returncode == 0, clean.stderr
    _no_bug(clean)
    assert _ran(work, "pc.log") == 1
    leak = _commit(work, env, "settings.py", f'KEY = "{fake_aws_key()}"\n')
    assert leak.returncode != 0 and "commit refused" in leak.stderr
    _no_bug(leak)


def test_an_install_that_displaced_pre_commit_is_put_right(tmp_path: Path) -> None:
    """The state an earlier teamsync left: its hook in place, pre-commit's as .legacy."""
    work, env = _repo(tmp_path)
    assert _pre_commit(work, env, "install").returncode == 0
    hooks = work / ".git" / "hooks"
    framework = (hooks / "pre-commit").read_text(encoding="utf-8")
    assert run_teamsync(["install-hooks"], cwd=work, env=env).returncode == 0
    os.rename(hooks / "pre-commit.legacy", tmp_path / "ours")
    os.rename(hooks / "pre-commit", hooks / "pre-commit.legacy")
    os.rename(tmp_path / "ours", hooks / "pre-commit")
    broken = _commit(work, env, "a.md", "words\n")
    assert "migration mode" in broken.stdout + broken.stderr  # what issue 24 saw
    fixed = run_teamsync(["install-hooks"], cwd=work, env=env)
    assert fixed.returncode == 0 and "back in its place" in fixed.stdout
    assert (hooks / "pre-commit").read_text(encoding="utf-8") == framework
    clean = _commit(work, env, "b.md", "words\n")
    assert clean.returncode == 0, clean.stderr
    _no_bug(clean)


def test_a_hook_pre_commit_had_migrated_still_runs(tmp_path: Path) -> None:
    work, env = _repo(tmp_path)
    hooks = work / ".git" / "hooks"
    (hooks / "pre-commit").write_text(FOREIGN, encoding="utf-8")
    (hooks / "pre-commit").chmod(0o755)
    assert _pre_commit(work, env, "install").returncode == 0  # foreign -> pre-commit.legacy
    done = run_teamsync(["install-hooks"], cwd=work, env=env)
    assert "your earlier hook now runs first as pre-commit.legacy.legacy" in done.stdout
    assert (hooks / "pre-commit.legacy.legacy").read_text(encoding="utf-8") == FOREIGN
    clean = _commit(work, env, "notes.md", "plain words\n")
    assert clean.returncode == 0, clean.stderr
    _no_bug(clean)
    assert _ran(work, "foreign.log") == 1 and _ran(work, "pc.log") == 1
    removed = run_teamsync(["install-hooks", "--uninstall"], cwd=work, env=env)
    assert "runs your earlier one again" in removed.stdout
    assert (hooks / "pre-commit.legacy").read_text(encoding="utf-8") == FOREIGN
    assert not (hooks / "pre-commit.legacy.legacy").exists()


def test_settings_without_claude_code_is_refused(tmp_path: Path) -> None:
    work, env = _repo(tmp_path)
    done = run_teamsync(["install-hooks", "--settings", "project"], cwd=work, env=env)
    assert done.returncode == 2 and "give --claude-code too" in done.stderr
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
