"""Every command that works on a memory directory says so when --dir is its team/ part."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testing.hooks import run_teamsync


@pytest.mark.parametrize(
    "args",
    [["sync"], ["pull"], ["status"], ["restore", "--list"], ["recall", "--offline", "deploys"]],
)
def test_a_team_directory_given_as_dir_is_explained_in_one_line(
    tmp_path: Path, args: list[str]
) -> None:
    memdir = tmp_path / "memory"
    (memdir / "team").mkdir(parents=True)
    (memdir / "MEMORY.md").write_text("# Memory\n")
    (memdir / "team" / "deploys.md").write_text(
        "---\nname: d\ndescription: d\ntype: project\n---\nx\n"
    )
    proc = run_teamsync(["--dir", str(memdir / "team"), *args], cwd=tmp_path)
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "is a team/ directory" in lines[0] and f"--dir {memdir}" in lines[0]


def _new_user_layout(tmp_path: Path) -> Path:
    """A first hour's layout: memories in mem/team/, and nothing beside team/ yet."""
    memdir = tmp_path / "proj" / "mem"
    (memdir / "team").mkdir(parents=True)
    (memdir / "team" / "deploys.md").write_text(
        "---\nname: d\ndescription: d\ntype: project\n---\nx\n"
    )
    return memdir


@pytest.mark.parametrize(
    "args",
    [
        ["check"],
        ["init", "--git", "REMOTE"],
        ["sync"],
        ["status"],
        ["scan"],
        ["allow", "0123456789abcdef", "--reason", "reviewed"],
        ["install-hooks"],
        ["watch", "--poll"],
    ],
)
def test_a_team_folder_with_nothing_beside_it_is_refused_by_every_command(
    tmp_path: Path, args: list[str]
) -> None:
    memdir = _new_user_layout(tmp_path)
    remote = tmp_path / "remote.git"
    remote.mkdir()
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "s")}
    args = [str(remote) if a == "REMOTE" else a for a in args]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    proc = run_teamsync(["--dir", str(memdir / "team"), *args], cwd=tmp_path, env=env)
    assert proc.returncode == 1, proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "is a team/ directory" in line and line.endswith(f"pass --dir {memdir}")
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written


def test_a_folder_inside_a_team_folder_is_refused_with_the_memory_dir(tmp_path: Path) -> None:
    memdir = _new_user_layout(tmp_path)
    inside = memdir / "team" / "notes"
    inside.mkdir()
    proc = run_teamsync(["--dir", str(inside), "check"], cwd=tmp_path)
    assert proc.returncode == 1
    assert f"is inside the team/ directory {memdir / 'team'}" in proc.stderr
    assert proc.stderr.strip().endswith(f"pass --dir {memdir}")
    (memdir / "MEMORY.md").write_text("# Memory\n")  # a plain memory dir: any depth is named
    deeper = run_teamsync(["--dir", str(inside / "x" / "y"), "init", "--git", "u"], cwd=tmp_path)
    assert deeper.returncode == 1 and deeper.stderr.strip().endswith(f"pass --dir {memdir}")
    assert not (inside / "x").exists()


def test_the_outermost_team_folder_names_the_memory_dir(tmp_path: Path) -> None:
    """After a sync that made team/team/, the advice is still the real memory dir."""
    from teamsync.memdir.paths import dir_mistake

    memdir = tmp_path / "memory"
    (memdir / "team" / "team").mkdir(parents=True)
    (memdir / "teamsync.yaml").write_text("backend: git\n")
    (memdir / "team" / "MEMORY.md").write_text("# Team\n")
    for wrong in (memdir / "team", memdir / "team" / "team"):
        mistake = dir_mistake(wrong)
        assert mistake is not None and mistake.endswith(f"pass --dir {memdir}")
    assert dir_mistake(memdir) is None


@pytest.mark.parametrize(
    ("layout", "given"),
    [
        ("work/team/memory/MEMORY.md", "work/team/memory"),  # under a folder named "team"
        ("srv/team/mem/team/x.md", "srv/team/mem"),
        ("home/team/team/x.md", "home/team"),  # a memory dir named team, with its own team/
    ],
)
def test_memory_dirs_that_merely_live_under_a_team_folder_are_accepted(
    tmp_path: Path, layout: str, given: str
) -> None:
    from teamsync.memdir.paths import dir_mistake

    leaf = tmp_path / layout
    leaf.parent.mkdir(parents=True)
    leaf.write_text("# x\n")
    (tmp_path / layout.split("/")[0] / "README.md").write_text("readme\n")
    assert dir_mistake(tmp_path / given) is None


def test_serve_and_token_ignore_a_stray_teamsync_dir(tmp_path: Path) -> None:
    memdir = _new_user_layout(tmp_path)
    env = {**os.environ, "TEAMSYNC_DIR": str(memdir / "team"), "HOME": str(tmp_path)}
    proc = run_teamsync(
        ["token", "list", "--db", str(tmp_path / "db.sqlite")], cwd=tmp_path, env=env
    )
    assert "team/ directory" not in proc.stderr
