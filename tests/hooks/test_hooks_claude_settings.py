"""`teamsync install-hooks --claude-code`: merging into .claude/settings.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testing.hooks import REPO_ROOT, make_repo, run_teamsync

FOREIGN: dict[str, Any] = {
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "./scripts/check-bash.sh"}],
            },
            {
                "matcher": "Write|Edit|MultiEdit",
                "hooks": [{"type": "command", "command": "prettier --check"}],
            },
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}],
    },
}


def shipped() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (REPO_ROOT / "hooks" / "claude-code" / "settings.json").read_text(encoding="utf-8")
    )
    return data


def commands(settings: dict[str, Any], event: str) -> list[str]:
    return [h["command"] for g in settings["hooks"].get(event, []) for h in g["hooks"]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work, _ = make_repo(tmp_path)
    (work / "sub").mkdir()
    return work


def run(project: Path, *args: str) -> Any:
    proc = run_teamsync(["install-hooks", "--claude-code", "--no-git", *args], cwd=project / "sub")
    assert proc.returncode == 0, proc.stderr
    return proc


def read(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (project / ".claude" / "settings.json").read_text(encoding="utf-8")
    )
    return data


def test_shipped_snippet_covers_the_four_events() -> None:
    hooks = shipped()["hooks"]
    assert commands(shipped(), "PreToolUse") == ["teamsync guard"]
    assert hooks["PreToolUse"][0]["matcher"] == "Write|Edit|MultiEdit|NotebookEdit|Bash"
    assert hooks["PostToolUse"][0]["matcher"] == "Write|Edit|MultiEdit"
    assert commands(shipped(), "SessionStart") == ["teamsync guard --event SessionStart"]
    assert commands(shipped(), "Stop") == ["teamsync guard --event Stop"]
    for groups in hooks.values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command" and 0 < hook["timeout"] <= 60


def test_fresh_project_gets_the_shipped_snippet_without_backup(project: Path) -> None:
    run(project)
    assert read(project) == shipped()
    assert not list((project / ".claude").glob("settings.json.bak-*"))


def test_merge_keeps_foreign_entries_and_is_idempotent(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(FOREIGN, indent=4)
    path.write_text(original, encoding="utf-8")
    run(project)
    merged = read(project)
    assert merged["permissions"] == FOREIGN["permissions"] and merged["env"] == FOREIGN["env"]
    assert merged["hooks"]["Notification"] == FOREIGN["hooks"]["Notification"]
    assert merged["hooks"]["PreToolUse"][:2] == FOREIGN["hooks"]["PreToolUse"]
    assert commands(merged, "PreToolUse")[-1] == "teamsync guard"
    for event in ("SessionStart", "PostToolUse", "Stop"):
        assert commands(merged, event) == commands(shipped(), event)
    backups = list(path.parent.glob("settings.json.bak-*"))
    assert len(backups) == 1 and backups[0].read_text(encoding="utf-8") == original
    before = path.read_bytes()
    again = run(project)
    assert "nothing to change" in again.stdout
    assert path.read_bytes() == before
    assert len(list(path.parent.glob("settings.json.bak-*"))) == 1


def test_uninstall_removes_only_teamsync_entries(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(FOREIGN), encoding="utf-8")
    run(project)
    run(project, "--uninstall")
    assert read(project) == FOREIGN


def test_invalid_settings_are_never_overwritten(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {,}}', encoding="utf-8")
    proc = run_teamsync(["install-hooks", "--claude-code", "--no-git"], cwd=project)
    assert proc.returncode == 1 and "not valid JSON" in proc.stderr
    assert path.read_text(encoding="utf-8") == '{"hooks": {,}}'


def test_claude_code_with_git_hooks_in_one_go(project: Path) -> None:
    proc = run_teamsync(["--json", "install-hooks", "--claude-code"], cwd=project)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["claude_settings"] == str(project / ".claude" / "settings.json")
    assert len(report["git"]) == 4 and (project / ".git" / "hooks" / "pre-push").is_file()


def test_no_git_without_claude_code_is_a_usage_error(project: Path) -> None:
    proc = run_teamsync(["install-hooks", "--no-git"], cwd=project)
    assert proc.returncode == 2 and "nothing to do" in proc.stderr
