"""`teamsync install-hooks --claude-code`: merging into .claude/settings.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from teamsync.hooks.claude_settings import hook_entry, snippet
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


def rendered() -> dict[str, Any]:
    """What install-hooks writes: the shipped commands through this interpreter's path."""
    return snippet(sys.executable)


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
    for event, call in (("PreToolUse", "teamsync guard"),
                        ("PostToolUse", "teamsync guard --event PostToolUse"),
                        ("PostToolUseFailure", "teamsync guard --event PostToolUseFailure")):  # fmt: skip
        [command] = commands(shipped(), event)
        assert command.startswith(call + " || {") and command.endswith("exit 2; }")
        assert hooks[event][0]["matcher"] == "Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*"
    assert commands(shipped(), "SessionStart") == ["teamsync guard --event SessionStart"]
    assert commands(shipped(), "Stop") == ["teamsync guard --event Stop"]
    for groups in hooks.values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command" and 0 < hook["timeout"] <= 60


def test_fresh_project_gets_the_shipped_snippet_without_backup(project: Path) -> None:
    run(project)
    without_stop = {"hooks": {k: v for k, v in rendered()["hooks"].items() if k != "Stop"}}
    assert read(project) == without_stop  # the paid Stop (extraction) hook is opt-in
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
    assert commands(merged, "PreToolUse")[-1] == commands(rendered(), "PreToolUse")[0]
    for event in ("SessionStart", "PostToolUse"):
        assert commands(merged, event) == commands(rendered(), event)
    assert "Stop" not in merged["hooks"]
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


def test_an_earlier_install_gets_the_bash_matcher_without_a_second_group(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    old_group = {
        "matcher": "Write|Edit|MultiEdit",
        "hooks": [{"type": "command", "command": "teamsync guard", "timeout": 10}],
    }
    mixed = {"matcher": "Write|Edit|MultiEdit",
             "hooks": [{"type": "command", "command": "my-linter"}]}  # fmt: skip
    path.write_text(json.dumps({"hooks": {"PreToolUse": [mixed, old_group]}}), encoding="utf-8")
    run(project)
    groups = read(project)["hooks"]["PreToolUse"]
    assert groups[0] == mixed  # a group holding someone else's hook is left alone
    assert [g["matcher"] for g in groups] == ["Write|Edit|MultiEdit", shipped_matcher()]
    assert commands(read(project), "PreToolUse") == [
        "my-linter",
        commands(rendered(), "PreToolUse")[0],
    ]


def shipped_matcher() -> str:
    return str(shipped()["hooks"]["PreToolUse"][0]["matcher"])


# --- issue 24 §12: the hooks fail closed for a venv install -----------------------------


def _hook_command(project: Path, event: str) -> str:
    [command] = commands(read(project), event)
    return command


def _run_hook(command: str, payload: dict[str, Any], env: dict[str, str]) -> Any:
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_installed_hook_guards_from_a_venv_not_on_path(project: Path, tmp_path: Path) -> None:
    from testing.hooks import fake_github_token

    run(project)
    command = _hook_command(project, "PreToolUse")
    assert command.startswith(f"'{sys.executable}' -I -S '{hook_entry()}' guard")
    memdir = tmp_path / "mem"
    (memdir / "team").mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TEAMSYNC_DIR": str(memdir)}
    payload = {"tool_name": "Write", "cwd": str(project),
               "tool_input": {"file_path": str(memdir / "team" / "x.md"),
                              "content": f"token {fake_github_token()}\n"}}  # fmt: skip
    proc = _run_hook(command, payload, env)
    assert proc.returncode == 0, proc.stderr
    decision = json.loads(proc.stdout)["hookSpecificOutput"]
    assert (
        decision["permissionDecision"] == "deny"
        and "github-pat" in decision["permissionDecisionReason"]
    )


@pytest.mark.parametrize("python", ["/nonexistent/bin/python", "/usr/bin/false"])
def test_a_guard_that_cannot_start_blocks_with_exit_2(
    project: Path, tmp_path: Path, python: str
) -> None:
    run(project)
    for event in ("PreToolUse", "PostToolUse"):
        command = _hook_command(project, event).replace(f"'{sys.executable}'", f"'{python}'")
        payload = {"tool_name": "Bash", "cwd": str(project), "tool_input": {"command": "ls"}}
        proc = _run_hook(command, payload, {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        assert proc.returncode == 2  # Claude Code's blocking exit code
        assert "could not run, so this call is refused" in proc.stderr


def test_install_refuses_an_interpreter_without_teamsync(project: Path, tmp_path: Path) -> None:
    from teamsync.errors import SettingsFileError
    from teamsync.hooks.claude_settings import install_claude_code

    with pytest.raises(SettingsFileError, match="does not answer cleanly"):
        install_claude_code(project, home=tmp_path, interpreter="/usr/bin/false")
    assert not (project / ".claude" / "settings.json").exists()


def test_the_hook_command_ignores_a_teamsync_package_in_the_project(
    project: Path, tmp_path: Path
) -> None:
    """Claude Code starts hooks in the project: ``python -m teamsync`` there would import
    a ``teamsync/`` the model wrote into it. The installed command runs isolated (-I)."""
    from testing.hooks import fake_github_token

    run(project)
    command = _hook_command(project, "PreToolUse")
    fake = project / "teamsync"
    fake.mkdir()
    (fake / "__init__.py").write_text("import sys\nsys.exit(0)\n")
    (fake / "__main__.py").write_text("import sys\nsys.exit(0)\n")
    (project / "json.py").write_text("import sys\nsys.exit(0)\n")
    memdir = tmp_path / "mem"
    (memdir / "team").mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TEAMSYNC_DIR": str(memdir),
           "PYTHONPATH": str(project)}  # fmt: skip
    payload = {"tool_name": "Write", "cwd": str(project),
               "tool_input": {"file_path": str(memdir / "team" / "x.md"),
                              "content": f"token {fake_github_token()}\n"}}  # fmt: skip
    proc = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), cwd=project,
                          capture_output=True, text=True, env=env, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    decision = json.loads(proc.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"


def test_the_hook_entry_loads_site_only_for_a_library_it_needs(tmp_path: Path) -> None:
    """Under -S the entry finds a third-party library (here click, for a verb that is
    not on the fast path) by running ``site`` once; a plain guard call never does."""
    entry = hook_entry()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    probe = (
        f"import runpy, sys; sys.argv = [{entry!r}, 'guard']; "
        "sys.stdin = __import__('io').StringIO('{\"tool_name\": \"Read\"}');"
        "import atexit; atexit.register(lambda: sys.stderr.write("
        "'SITE=' + str('site' in sys.modules) + ' CLICK=' + str('click' in sys.modules)));"
        f"runpy.run_path({entry!r}, run_name='__main__')"
    )
    fast = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True,
                          text=True, env=env, cwd=tmp_path, check=False)  # fmt: skip
    assert fast.returncode == 0 and "SITE=False CLICK=False" in fast.stderr, fast.stderr
    slow = subprocess.run([sys.executable, "-I", "-S", entry, "guard", "--help"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, check=False)  # fmt: skip
    assert slow.returncode == 0 and "--event" in slow.stdout, slow.stderr
