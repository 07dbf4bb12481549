"""Paths: Claude Code's sanitizer (checked against values Node computed), git roots, overrides."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from teamsync.config import Settings
from teamsync.memdir.paths import (
    canonical_git_root,
    djb2_base36,
    memory_dir,
    sanitize_path,
    team_dir,
)

# Computed with Claude Code's sanitizePath under Node 18 (djb2 hash).
NODE = [
    ("/home/alice/src/teamsync", "-home-alice-src-teamsync"),
    ("/tmp/café/😀", "-tmp-caf----"),
    ("/srv/" + "x" * 230, "-srv-" + "x" * 195 + "-2b9oxz"),
    ("/r/" + "é" * 220, "-r" + "-" * 198 + "-upifh0"),
]


@pytest.mark.parametrize(("name", "expected"), NODE)
def test_sanitize_matches_claude_code_under_node(name: str, expected: str) -> None:
    assert sanitize_path(name) == expected


def test_djb2_base36() -> None:
    assert djb2_base36("hello") == "1n1e4y"  # 99162322
    assert djb2_base36("") == "0"


def test_sanitize_is_lossy_like_claude_code() -> None:
    assert sanitize_path("a/b") == sanitize_path("a-b") == "a-b"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "main repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "f.txt").write_text("x", encoding="utf-8")
    _git(root, "add", "f.txt")
    _git(root, "commit", "-q", "-m", "init")
    return root


def test_git_root_from_a_subdirectory(repo: Path) -> None:
    assert canonical_git_root(repo / "sub" / "deeper") == repo.resolve()


def test_worktrees_share_the_main_repository(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    _git(repo, "worktree", "add", "-q", str(worktree))
    assert canonical_git_root(worktree) == repo.resolve()
    home = tmp_path / "home"
    main = memory_dir(Settings(cwd=repo, environ={"HOME": str(home)}))
    assert memory_dir(Settings(cwd=worktree, environ={"HOME": str(home)})) == main


def test_forged_worktree_without_back_link_is_its_own_root(repo: Path, tmp_path: Path) -> None:
    fake = tmp_path / "fake"
    fake.mkdir()
    gitdir = repo / ".git" / "worktrees" / "fake"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n", encoding="utf-8")
    (gitdir / "gitdir").write_text(str(tmp_path / "elsewhere" / ".git") + "\n", encoding="utf-8")
    (fake / ".git").write_text(f"gitdir: {gitdir}\n", encoding="utf-8")
    assert canonical_git_root(fake) == fake.resolve()


def test_submodule_style_gitfile_is_its_own_root(tmp_path: Path) -> None:
    module = tmp_path / "mod"
    (tmp_path / "store").mkdir()
    module.mkdir()
    (module / ".git").write_text("gitdir: ../store\n", encoding="utf-8")
    assert canonical_git_root(module) == module.resolve()


def test_outside_git(tmp_path: Path) -> None:
    assert canonical_git_root(tmp_path) is None


def test_memory_dir_defaults_to_claude_code_layout(repo: Path, tmp_path: Path) -> None:
    settings = Settings(cwd=repo / "sub", environ={"HOME": str(tmp_path / "h")})
    expected = (
        tmp_path / "h" / ".claude" / "projects" / sanitize_path(str(repo.resolve())) / "memory"
    )
    assert memory_dir(settings) == expected
    assert team_dir(settings) == expected / "team"


def test_memory_dir_outside_git_uses_the_cwd(tmp_path: Path) -> None:
    settings = Settings(cwd=tmp_path, environ={"HOME": "/h"})
    assert (
        memory_dir(settings)
        == Path("/h/.claude/projects") / sanitize_path(str(tmp_path.resolve())) / "memory"
    )


def test_remote_memory_base(tmp_path: Path) -> None:
    settings = Settings(
        cwd=tmp_path, environ={"HOME": "/h", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/remote"}
    )
    assert memory_dir(settings).parts[:3] == ("/", "remote", "projects")


def test_dir_override_wins(tmp_path: Path) -> None:
    settings = Settings.build(
        dir="mem", environ={"TEAMSYNC_DIR": "/ignored", "HOME": "/h"}, cwd=tmp_path
    )
    assert memory_dir(settings) == tmp_path / "mem"
    from_env = Settings.build(
        environ={"TEAMSYNC_DIR": str(tmp_path / "env"), "HOME": "/h"}, cwd=tmp_path
    )
    assert team_dir(from_env) == tmp_path / "env" / "team"
