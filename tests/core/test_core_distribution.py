"""Distribution: light core dependencies, extras that say how to install them, the
scan's --exit-code, and a pre-commit check hook that passes without a memory folder."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from testing.gitrepos import fake_token
from testing.recall import write_transcript

ROOT = Path(__file__).resolve().parents[2]


def _teamsync(*args: str, cwd: Path, block: tuple[str, ...] = (), env: dict[str, str] | None = None,
              stdin: str = "") -> subprocess.CompletedProcess[str]:  # fmt: skip
    """Run the real CLI in a subprocess; ``block`` makes those modules unimportable there."""
    code = (
        "import sys\n"
        f"for name in {list(block)!r}: sys.modules[name] = None\n"
        "from teamsync.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    import os

    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def test_core_dependencies_are_light_and_extras_are_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"]).lower()
    for heavy in ("anthropic", "fastapi", "uvicorn", "psycopg", "watchdog"):
        assert heavy not in core
    extras = project["optional-dependencies"]
    assert any(d.startswith("anthropic") for d in extras["llm"])
    assert set(extras) >= {"llm", "server", "postgres", "watch", "all"}


@pytest.mark.parametrize(
    ("args", "blocked", "extra"),
    [
        (["serve", "--port", "0"], ("uvicorn",), "server"),
        (["serve", "--port", "0"], ("fastapi",), "server"),
    ],
)
def test_missing_extra_names_the_extra_not_a_bug(
    tmp_path: Path, args: list[str], blocked: tuple[str, ...], extra: str
) -> None:
    done = _teamsync(*args, cwd=tmp_path, block=blocked)
    assert done.returncode == 1, done.stderr
    assert f"teamsync[{extra}]" in done.stderr
    assert "This is a bug" not in done.stderr
    assert "Traceback" not in done.stderr


def test_a_stray_import_of_an_optional_module_is_mapped_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import click

    from teamsync.cli._errors import run_with_exit_codes

    @click.command()
    def needs_psycopg() -> None:
        raise ModuleNotFoundError("No module named 'psycopg'", name="psycopg")

    assert run_with_exit_codes(needs_psycopg, []) == 1
    err = capsys.readouterr().err
    assert "teamsync[postgres]" in err and "bug" not in err


def test_extract_without_the_llm_extra_says_install_llm(tmp_path: Path) -> None:
    transcript = write_transcript(
        tmp_path / "t.jsonl",
        [("u1", "user", "we deploy on fridays"), ("a1", "assistant", "noted: deploys on fridays")],
    )
    memdir = tmp_path / "mem"
    (memdir / "team").mkdir(parents=True)
    done = _teamsync("--dir", str(memdir), "extract", str(transcript), cwd=tmp_path,
                     block=("anthropic",), env={"ANTHROPIC_API_KEY": "test-key"})  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "teamsync[llm]" in done.stderr
    assert "This is a bug" not in done.stderr


def test_scan_exit_code_and_one_scan_writes_report_and_prints_findings(tmp_path: Path) -> None:
    (tmp_path / "leak.md").write_text(f"token {fake_token()}\n", encoding="utf-8")
    done = _teamsync("scan", ".", "--format", "sarif", "--output", "r.sarif", "--exit-code", "7",
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 7
    assert "leak.md:1: github-pat" in done.stdout  # printed in the log, beside the report
    assert fake_token() not in done.stdout + done.stderr
    assert json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["results"]
    zero = _teamsync("scan", ".", "--exit-code", "0", cwd=tmp_path)
    assert zero.returncode == 0 and "leak.md:1" in zero.stdout
    bad = _teamsync("scan", ".", "--exit-code", "300", cwd=tmp_path)
    assert bad.returncode == 2
    (tmp_path / "leak.md").write_text("clean\n", encoding="utf-8")
    assert _teamsync("scan", ".", "--exit-code", "7", cwd=tmp_path).returncode == 0


def test_check_hook_passes_with_a_note_without_a_memory_folder(tmp_path: Path) -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    args = hooks["teamsync-check"]["args"]
    done = _teamsync(*args, cwd=tmp_path)  # HOME is a fresh one: no ~/.claude at all
    assert done.returncode == 0, done.stderr
    assert "no memory directory at" in done.stdout and "nothing to check" in done.stdout
    plain = _teamsync("--dir", str(tmp_path / "none"), "check", cwd=tmp_path)
    assert plain.returncode != 0  # without --missing-ok a missing directory is still an error
