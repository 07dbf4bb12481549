"""Conventions: --quiet/--verbose/--color, colour per stream, hints for global options
after the verb, suggestions for mistyped commands, examples in every --help,
install-hooks targets and the opt-in (paid) Stop hook."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from teamsync.cli import COMMANDS, cli
from teamsync.config import Settings
from teamsync.output import Output
from testing.gitrepos import TEAMSYNC, make_remote, memory, seed_remote


def ts(
    *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TEAMSYNC, *args], cwd=cwd, capture_output=True, text=True, input=stdin,
                          env={**os.environ, **(env or {})}, timeout=120)  # fmt: skip


def test_colour_is_decided_per_stream_and_by_the_option() -> None:
    both = Settings.build(environ={}, isatty=False, err_isatty=True)
    assert (both.color, both.err_color) == (False, True)  # stdout piped, stderr a terminal
    assert (
        Settings.build(environ={"NO_COLOR": "1"}, isatty=True, err_isatty=True).err_color is False
    )
    forced = Settings.build(environ={"NO_COLOR": "1"}, isatty=False, color="always")
    assert forced.color and forced.err_color  # the explicit option beats NO_COLOR
    never = Settings.build(environ={}, isatty=True, err_isatty=True, color="never")
    assert not (never.color or never.err_color)
    out, err = io.StringIO(), io.StringIO()
    output = Output(color=False, err_color=True, out=out, err=err)
    output.success("done")
    output.warn("careful")
    assert out.getvalue() == "done\n"
    assert err.getvalue() == "\x1b[33mwarning: careful\x1b[0m\n"


def test_color_always_reaches_a_pipe_and_never_strips_it(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("clean\n", encoding="utf-8")
    always = ts("--color", "always", "scan", ".", cwd=tmp_path, env={"NO_COLOR": "1"})
    assert "\x1b[32m" in always.stdout
    never = ts("--color", "never", "scan", ".", cwd=tmp_path)
    assert "\x1b[" not in never.stdout + never.stderr


def test_quiet_keeps_warnings_and_verbose_shows_tracebacks(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    seed_remote(remote, {"a.md": memory("A", "a\n")})
    quiet = ts("--quiet", "--dir", "mem", "init", "--git", str(remote), cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stdout == ""
    assert (tmp_path / "mem" / "teamsync.yaml").is_file()
    loud = ts("-q", "-v", "status", cwd=tmp_path)
    assert loud.returncode == 2 and "choose one of --quiet and --verbose" in loud.stderr
    quiet_err = ts("--quiet", "--dir", "nothing", "status", cwd=tmp_path)
    assert quiet_err.returncode == 1 and "not set up for sync" in quiet_err.stderr


def test_global_option_after_the_verb_gets_a_hint(tmp_path: Path) -> None:
    done = ts("status", "--json", cwd=tmp_path)
    assert done.returncode == 2
    assert (
        "hint: --json is a global option; give it before the command: `teamsync --json status"
        in done.stderr
    )
    done = ts("check", "--dir", "x", cwd=tmp_path)
    assert done.returncode == 2 and "`teamsync --dir x check`" in done.stderr
    done = ts("--json", "watch", "--poll", "--dir", "my mem", "--debounce", "1", cwd=tmp_path)
    assert done.returncode == 2
    assert "`teamsync --json --dir 'my mem' watch --poll --debounce 1`" in done.stderr
    done = ts("--color", "never", "status", "--color=always", cwd=tmp_path)
    assert "`teamsync --color never --color=always status`" in done.stderr
    plain = ts("status", "--no-such", cwd=tmp_path)
    assert plain.returncode == 2 and "hint:" not in plain.stderr


@pytest.mark.parametrize(("typo", "meant"), [("stauts", "status"), ("pul", "pull"), ("scna", "scan"),
                                              ("instal-hooks", "install-hooks")])  # fmt: skip
def test_a_mistyped_command_gets_a_suggestion(tmp_path: Path, typo: str, meant: str) -> None:
    done = ts(typo, cwd=tmp_path)
    assert done.returncode == 2
    assert f"Did you mean '{meant}'" in done.stderr
    far = ts("xyzzy", cwd=tmp_path)
    assert far.returncode == 2 and "No such command 'xyzzy'" in far.stderr
    assert "Did you mean" not in far.stderr


def _all_commands() -> list[list[str]]:
    paths = [[name] for name in COMMANDS]
    paths += [["token", sub] for sub in ("create", "list", "revoke")]
    return paths


@pytest.mark.parametrize("path", _all_commands(), ids=" ".join)
def test_every_command_help_has_examples(path: list[str]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Examples:" in result.output
    after = result.output.split("Examples:", 1)[1].split("Options:", 1)[0]
    assert "teamsync " in after and any(p in after for p in path)


def test_docs_cover_completion_and_the_config_file() -> None:
    cli_md = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    assert "_TEAMSYNC_COMPLETE=bash_source teamsync" in cli_md
    assert "## teamsync.yaml" in cli_md
    for key in ("backend", "url", "branch", "repo", "token_file", "version"):
        assert f"`{key}`" in cli_md


def test_completion_script_is_real(tmp_path: Path) -> None:
    done = subprocess.run([TEAMSYNC], env={**os.environ, "_TEAMSYNC_COMPLETE": "bash_source"},
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert "complete -o nosort -F" in done.stdout and "_teamsync_completion" in done.stdout


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


@pytest.mark.parametrize(
    ("target", "where"),
    [("local", ".claude/settings.local.json"), ("user", "HOME/.claude/settings.json")],
)
def test_install_hooks_can_target_local_or_user_settings(
    tmp_path: Path, target: str, where: str
) -> None:
    project = _project(tmp_path)
    done = ts("install-hooks", "--no-git", "--claude-code", "--settings", target, cwd=project)
    assert done.returncode == 0, done.stderr
    path = Path(os.environ["HOME"]) / where[5:] if where.startswith("HOME/") else project / where
    hooks = json.loads(path.read_text())["hooks"]
    assert "PreToolUse" in hooks and "Stop" not in hooks
    assert not (project / ".claude" / "settings.json").exists()  # the committed file is untouched
    assert "usually committed" not in done.stdout
    removed = ts("install-hooks", "--no-git", "--claude-code", "--settings", target, "--uninstall",
                 cwd=project)  # fmt: skip
    assert removed.returncode == 0 and "hooks" not in json.loads(path.read_text())


def test_project_settings_note_and_the_opt_in_stop_hook_states_its_cost(tmp_path: Path) -> None:
    project = _project(tmp_path)
    done = ts("install-hooks", "--no-git", "--claude-code", "--with-extract", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "every teammate then runs these hooks" in done.stdout
    assert (
        "Claude API calls" in done.stderr
        and "billed to the account of ANTHROPIC_API_KEY" in done.stderr
    )
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    [stop] = [h["command"] for g in hooks["Stop"] for h in g["hooks"]]
    assert stop.endswith("_hook.py' guard --event Stop")  # the installing interpreter
    bad = ts("install-hooks", "--with-extract", cwd=project)
    assert bad.returncode == 2 and "give --claude-code too" in bad.stderr


def test_stop_hook_without_an_api_key_starts_nothing(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "hi"}}) + "\n")
    payload = json.dumps({"hook_event_name": "Stop", "cwd": str(tmp_path),
                          "transcript_path": str(transcript)})  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = subprocess.run([TEAMSYNC, "guard", "--event", "Stop"], input=payload, env=env,
                          capture_output=True, text=True, cwd=tmp_path, timeout=30)  # fmt: skip
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    hooks_state = Path(os.environ["HOME"]) / ".local" / "state" / "teamsync" / "hooks"
    assert not list(hooks_state.glob("extract*"))


@pytest.mark.parametrize(
    ("args", "name", "moved"),
    [
        (["watch", "--dir", "m", "--poll"], "--dir", ["--dir", "m", "watch", "--poll"]),
        (["--dir", "m", "sync", "-v"], "-v", ["--dir", "m", "-v", "sync"]),
        (["check", "--dir"], "--dir", ["--dir", "check"]),  # no value to carry
        (["scan", "--", "--json"], "--json", None),  # after --, a file name
        (["--dir", "m"], "--dir", None),  # no verb
    ],
)
def test_the_hint_moves_the_option_and_its_value_before_the_verb(
    args: list[str], name: str, moved: list[str] | None
) -> None:
    from teamsync.cli._errors import move_global_option

    assert move_global_option(args, name) == moved
