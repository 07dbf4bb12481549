"""Every command that works on a memory directory says so when --dir is its team/ part."""

from __future__ import annotations

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
