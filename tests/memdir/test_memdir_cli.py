"""``teamsync check`` end to end: click's runner, the real console script, and import hygiene."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from teamsync.cli import cli
from testing.memdir import clean_memdir, write_memory

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "teamsync"
HEAVY = ("anthropic", "git", "httpx2")


def _broken(root: Path) -> Path:
    clean_memdir(root)
    write_memory(
        root / "team", "orphan.md", name="Orphan", description="not listed", type="project"
    )
    (root / "MEMORY.md").write_text("- [Gone](gone.md) — dead\n", encoding="utf-8")
    return root


def test_clean_directory_exits_zero(tmp_path: Path) -> None:
    root = clean_memdir(tmp_path / "mem")
    result = CliRunner().invoke(cli, ["--dir", str(root), "check"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"ok: 4 memory files in {root}, no problems"


def test_problems_one_line_each_then_a_summary(tmp_path: Path) -> None:
    root = _broken(tmp_path / "mem")
    result = CliRunner().invoke(cli, ["--dir", str(root), "check"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[:2] == [
        "MEMORY.md: dead-link: line 1: gone.md does not exist; fix or remove the line",
        "prefs.md: orphan: not listed in MEMORY.md; run `teamsync check --fix`",
    ]
    assert lines[-1] == f"4 problems (1 dead-link, 3 orphan) in 5 memory files under {root}"


def test_json_shape(tmp_path: Path) -> None:
    root = _broken(tmp_path / "mem")
    result = CliRunner().invoke(cli, ["--dir", str(root), "--json", "check"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert set(payload) == {"problems", "notes"}
    assert payload["problems"][0] == {
        "path": "MEMORY.md",
        "kind": "dead-link",
        "message": "line 1: gone.md does not exist; fix or remove the line",
    }
    assert {p["kind"] for p in payload["problems"]} == {"dead-link", "orphan"}


def test_fix_then_clean(tmp_path: Path) -> None:
    root = _broken(tmp_path / "mem")
    runner = CliRunner()
    fixed = runner.invoke(cli, ["--dir", str(root), "--json", "check", "--fix"])
    assert fixed.exit_code == 0, fixed.output
    assert json.loads(fixed.stdout) == {
        "problems": [],
        "notes": [],
        "fixed": ["MEMORY.md", "team/MEMORY.md"],
    }
    again = runner.invoke(cli, ["--dir", str(root), "check"])
    assert again.exit_code == 0
    assert "no problems" in again.output


def test_fix_leaves_frontmatter_problems_and_exits_one(tmp_path: Path) -> None:
    root = clean_memdir(tmp_path / "mem")
    write_memory(root, "odd.md", type="bogus")
    result = CliRunner().invoke(cli, ["--dir", str(root), "check", "--fix"])
    assert result.exit_code == 1
    assert "updated MEMORY.md: 1 entries added" in result.output
    assert "odd.md: type: unknown type 'bogus'" in result.output


def test_env_var_selects_the_directory(tmp_path: Path) -> None:
    root = clean_memdir(tmp_path / "mem")
    result = CliRunner().invoke(cli, ["check"], env={"TEAMSYNC_DIR": str(root)})
    assert result.exit_code == 0
    assert str(root) in result.output


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=60, check=False, cwd=cwd
    )


def test_real_console_script(tmp_path: Path) -> None:
    root = _broken(tmp_path / "mem")
    before = _run("--dir", str(root), "check")
    assert before.returncode == 1
    assert "dead-link" in before.stdout and before.stderr == ""
    fix = _run("--dir", str(root), "check", "--fix")
    assert fix.returncode == 0, fix.stderr
    after = _run("--dir", str(root), "--json", "check")
    assert (after.returncode, json.loads(after.stdout)) == (0, {"problems": [], "notes": []})


def test_real_console_script_missing_directory(tmp_path: Path) -> None:
    done = _run("--dir", str(tmp_path / "absent"), "check")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("error: memory directory ")
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_default_directory_is_claude_codes_layout(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    home = Path.home()  # the suite's isolated HOME
    from teamsync.config import Settings
    from teamsync.memdir.paths import memory_dir

    expected = memory_dir(Settings(cwd=project, environ={"HOME": str(home)}))
    clean_memdir(expected)
    done = _run("check", cwd=project)
    assert done.returncode == 0, done.stderr
    assert str(expected) in done.stdout


PROBE = """
import sys
from teamsync.cli import main
code = main(sys.argv[1:])
print("MODULES", ",".join(sorted(sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["--version"], ["check"], ["check", "--fix"]])
def test_never_imports_heavy_libraries(tmp_path: Path, args: list[str]) -> None:
    root = _broken(tmp_path / "mem")
    argv = args if args == ["--version"] else ["--dir", str(root), *args]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    line = [x for x in done.stderr.splitlines() if x.startswith("MODULES ")][-1]
    modules = set(line.removeprefix("MODULES ").split(","))
    assert "teamsync.cli" in modules
    if args != ["--version"]:
        assert "teamsync.memdir.lint" in modules
    loaded = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert loaded == []


def test_control_characters_in_names_cannot_reach_the_terminal(tmp_path: Path) -> None:
    root = clean_memdir(tmp_path / "mem")
    write_memory(root, "evil\x1b[2Jname.md")
    (root / "MEMORY.md").write_text("- [x](gone\x1b]0;pwned\x07.md) — y\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--dir", str(root), "check"])
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "evil\\x1b[2Jname.md: orphan" in result.output
    as_json = CliRunner().invoke(cli, ["--dir", str(root), "--json", "check"])
    paths = {p["path"] for p in json.loads(as_json.stdout)["problems"]}
    assert "evil\x1b[2Jname.md" in paths
