"""`teamsync guard` against recorded Claude Code PreToolUse payloads (tests/hooks/payloads)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from teamsync.cli import cli
from testing.hooks import REPO_ROOT, decision, fake_github_token, load_payload, run_teamsync

TOKEN = fake_github_token()
HEAD, TAIL = TOKEN[:22], TOKEN[22:]
NOTES = f"registry notes\nid {HEAD}PLACEHOLDER\n"


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    memdir = tmp_path / "memory"
    (memdir / "team").mkdir(parents=True)
    (memdir / "team" / "notes.md").write_text(NOTES, encoding="utf-8")
    return memdir


def fill(name: str, memdir: Path, cwd: Path, **extra: str) -> str:
    return load_payload(
        name,
        TEAM=str(memdir / "team"),
        MEMDIR=str(memdir),
        CWD=str(cwd),
        TRANSCRIPT=str(cwd / "transcript.jsonl"),
        SECRET=TOKEN,
        SECRET_TAIL=TAIL,
        **extra,
    )


def guard(memdir: Path, payload: str) -> tuple[dict[str, object] | None, str]:
    result = CliRunner().invoke(
        cli, ["--dir", str(memdir), "guard"], input=payload, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return decision(result.stdout), result.stderr


@pytest.mark.parametrize(
    "name",
    [
        "write-team-clean.json",
        "write-team-nested-clean.json",
        "edit-team-clean.json",
        "multiedit-team-clean.json",
        "write-outside-secret.json",  # not team memory: the other gates' business
        "write-private-memory.json",  # the private memory is not shared
        "read-team.json",
        "bash-team.json",
    ],
)
def test_allowed_payloads_produce_no_output(memdir: Path, tmp_path: Path, name: str) -> None:
    verdict, _ = guard(memdir, fill(name, memdir, tmp_path))
    assert verdict is None


@pytest.mark.parametrize(
    "name",
    [
        "write-team-secret.json",
        "edit-team-split-secret.json",
        "edit-team-replace-all.json",
        "multiedit-team-split-secret.json",
    ],
)
def test_secrets_are_denied_naming_rule_and_line_never_the_secret(
    memdir: Path, tmp_path: Path, name: str
) -> None:
    verdict, stderr = guard(memdir, fill(name, memdir, tmp_path))
    assert verdict is not None
    assert verdict["hookEventName"] == "PreToolUse"
    assert verdict["permissionDecision"] == "deny"
    reason = str(verdict["permissionDecisionReason"])
    assert "line" in reason and "github" in reason.lower()
    for fragment in (TOKEN, HEAD[4:], TAIL):
        assert fragment not in reason and fragment not in stderr


def test_split_secret_is_invisible_to_a_fragment_only_check(memdir: Path, tmp_path: Path) -> None:
    """Claude Code scans only new_string; the whole-file result is what matters."""
    from teamsync.security.secrets import scan_text

    assert scan_text(TAIL, "notes.md") == []
    assert scan_text(NOTES, "notes.md") == []
    verdict, _ = guard(memdir, fill("edit-team-split-secret.json", memdir, tmp_path))
    assert verdict is not None and "line 2" in str(verdict["permissionDecisionReason"])


@pytest.mark.parametrize(
    "name",
    [
        "write-team-dotdot.json",
        "write-team-dotdot-inside.json",
        "write-team-fullwidth.json",
        "write-team-percent.json",
        "write-team-control.json",
        "write-team-not-markdown.json",
    ],
)
def test_hostile_paths_are_denied(memdir: Path, tmp_path: Path, name: str) -> None:
    verdict, _ = guard(memdir, fill(name, memdir, tmp_path))
    assert verdict is not None and verdict["permissionDecision"] == "deny"
    assert "teamsync refused" in str(verdict["permissionDecisionReason"])


def test_symlink_inside_team_is_denied(memdir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("x\n", encoding="utf-8")
    (memdir / "team" / "link.md").symlink_to(outside)
    verdict, _ = guard(memdir, fill("write-team-symlink.json", memdir, tmp_path))
    assert verdict is not None and verdict["permissionDecision"] == "deny"
    assert outside.read_text(encoding="utf-8") == "x\n"


def test_symlinked_directory_into_team_is_denied(memdir: Path, tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "shortcut").symlink_to(memdir / "team")
    payload = fill("write-relative-team.json", memdir, tmp_path, RELATIVE="project/shortcut/x.md")
    verdict, _ = guard(memdir, payload)
    assert verdict is not None and "symlink" in str(verdict["permissionDecisionReason"])


def test_relative_path_resolved_against_payload_cwd(memdir: Path, tmp_path: Path) -> None:
    payload = fill("write-relative-team.json", memdir, memdir, RELATIVE="team/rel.md")
    verdict, _ = guard(memdir, payload)
    assert verdict is not None and verdict["permissionDecision"] == "deny"


def test_malformed_payload_targeting_team_fails_closed(memdir: Path, tmp_path: Path) -> None:
    verdict, stderr = guard(memdir, fill("malformed-team.txt", memdir, tmp_path))
    assert verdict is not None and verdict["permissionDecision"] == "deny"
    assert "not valid JSON" in stderr


def test_non_object_payload_targeting_team_fails_closed(memdir: Path, tmp_path: Path) -> None:
    verdict, stderr = guard(memdir, fill("not-an-object-team.txt", memdir, tmp_path))
    assert verdict is not None and "not a JSON object" in stderr


def test_malformed_payload_elsewhere_does_not_block(memdir: Path, tmp_path: Path) -> None:
    verdict, stderr = guard(memdir, fill("malformed-outside.txt", memdir, tmp_path))
    assert verdict is None
    assert "teamsync guard:" in stderr and "not valid JSON" in stderr


def test_claude_code_layout_from_payload_cwd(tmp_path: Path) -> None:
    """No --dir: the team dir is ~/.claude/projects/<sanitized git root>/memory/team."""
    from teamsync.config import Settings
    from teamsync.memdir.paths import team_dir

    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    team = team_dir(Settings.build(cwd=project))
    assert str(team).startswith(os.environ["HOME"])
    team.mkdir(parents=True)
    payload = fill("write-team-secret.json", team.parent, project)
    result = CliRunner().invoke(cli, ["guard"], input=payload, catch_exceptions=False)
    verdict = decision(result.stdout)
    assert verdict is not None and verdict["permissionDecision"] == "deny"


def test_real_subprocess_denies_and_allows(memdir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "TEAMSYNC_DIR": str(memdir)}
    denied = run_teamsync(
        ["guard"], cwd=tmp_path, env=env, input=fill("write-team-secret.json", memdir, tmp_path)
    )
    assert denied.returncode == 0
    verdict = decision(denied.stdout)
    assert verdict is not None and verdict["permissionDecision"] == "deny"
    allowed = run_teamsync(
        ["guard"], cwd=tmp_path, env=env, input=fill("write-team-clean.json", memdir, tmp_path)
    )
    assert (allowed.returncode, allowed.stdout) == (0, "")


HEAVY = ("anthropic", "git", "httpx2", "detect_secrets", "fastapi", "uvicorn", "watchdog", "yaml")


@pytest.mark.parametrize("name", ["write-team-clean.json", "write-outside-secret.json"])
def test_guard_imports_nothing_heavy(memdir: Path, tmp_path: Path, name: str) -> None:
    code = (
        "import io, json, sys\n"
        "from teamsync.cli import main\n"
        "sys.stdin = io.StringIO(sys.argv[1])\n"
        "code = main(['--dir', sys.argv[2], 'guard'])\n"
        "heavy = [m for m in " + repr(HEAVY) + " if m in sys.modules]\n"
        "print(json.dumps({'code': code, 'heavy': heavy}), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, fill(name, memdir, tmp_path), str(memdir)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report == {"code": 0, "heavy": []}


START_UP = ("click", "hashlib", "threading", "tempfile", "difflib", "math", "base64", "bisect")
"""A millisecond or more each of a hook's start-up (hashlib loads OpenSSL); a clean write needs none."""


def test_fast_path_clean_write_loads_no_start_up_weight(memdir: Path, tmp_path: Path) -> None:
    code = (
        "import io, json, sys\n"
        "from teamsync.cli import main\n"
        "sys.stdin = io.StringIO(sys.argv[1])\n"
        "code = main(['guard'])\n"
        "loaded = [m for m in " + repr(START_UP) + " if m in sys.modules]\n"
        "print(json.dumps({'code': code, 'loaded': loaded}), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, fill("write-team-clean.json", memdir, tmp_path)],
        cwd=REPO_ROOT,
        env={**os.environ, "TEAMSYNC_DIR": str(memdir), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout == ""  # allowed: no decision printed
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == {"code": 0, "loaded": []}


def test_size_limit_matches_the_memdir_format() -> None:
    from teamsync.hooks.guard import MAX_MEMORY_BYTES
    from teamsync.memdir.format import MAX_MEMORY_BYTES as FORMAT_LIMIT

    assert MAX_MEMORY_BYTES == FORMAT_LIMIT


def test_oversized_memory_is_denied(memdir: Path, tmp_path: Path) -> None:
    payload = json.dumps(
        {
            "cwd": str(tmp_path),
            "tool_name": "Write",
            "tool_input": {"file_path": str(memdir / "team" / "big.md"), "content": "a" * 250_001},
        }
    )
    verdict, _ = guard(memdir, payload)
    assert verdict is not None and "250,000-byte limit" in str(verdict["permissionDecisionReason"])
