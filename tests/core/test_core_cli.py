"""The CLI skeleton: version, help, lazy loading and the exit-code mapping."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from teamsync._version import __version__
from teamsync.cli import COMMANDS, cli, main
from teamsync.cli._errors import run_with_exit_codes
from teamsync.errors import ConfigError, KeyRejected, TeamsyncError, UsageError


def _command(exc: BaseException) -> click.Command:
    @click.command()
    def boom() -> None:
        raise exc

    return boom


@pytest.mark.parametrize(
    ("exc", "code", "message"),
    [
        (TeamsyncError("it failed; do this"), 1, "error: it failed; do this"),
        (ConfigError("not set up: run init"), 1, "error: not set up: run init"),
        (KeyRejected("../x.md", "contains '..' segment"), 1, "contains '..' segment"),
        (UsageError("conflicting options"), 2, "conflicting options"),
        (RuntimeError("kaboom"), 3, "unexpected RuntimeError"),
        (KeyboardInterrupt(), 130, "Aborted."),
    ],
)
def test_exit_codes_are_mapped_in_one_place(
    exc: BaseException, code: int, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_with_exit_codes(_command(exc), []) == code
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_click_usage_error_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert __version__ in capsys.readouterr().out


def test_version_as_subprocess() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "teamsync", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"teamsync, version {__version__}"


def test_every_registered_command_loads_and_has_help() -> None:
    ctx = click.Context(cli)
    listed = cli.list_commands(ctx)  # type: ignore[attr-defined]
    assert set(listed) <= set(COMMANDS)
    for name in listed:
        command = cli.get_command(ctx, name)
        assert command is not None, name
        assert command.help or command.short_help, f"{name} has no help text"


def test_debug_env_shows_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAMSYNC_DEBUG", "1")
    assert run_with_exit_codes(_command(RuntimeError("kaboom")), []) == 3
    assert "Traceback" in capsys.readouterr().err


def _fresh(code: str) -> str:
    """The stdout of ``code`` run by a fresh interpreter (what a hook process imports)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout


def test_guard_fast_path_skips_click() -> None:
    out = _fresh(
        "import sys, io; sys.stdin = io.StringIO('{}'); "
        "from teamsync.cli import main; rc = main(['guard']); "
        "print(rc, 'click' in sys.modules)"
    )
    assert out.strip() == "0 False"


def test_version_loads_only_click_and_the_cli() -> None:
    # --version is answered by click before any command runs: no settings, output or
    # error classes (and so no dataclasses, difflib or traceback) are imported for it.
    out = _fresh(
        "import sys; from teamsync.cli import main; rc = main(['--version']); "
        "mods = ['teamsync.config', 'teamsync.output', 'teamsync.errors', 'dataclasses', "
        "'difflib', 'traceback']; print(rc, [m for m in mods if m in sys.modules])"
    )
    assert out.startswith("teamsync, version ")
    assert out.strip().splitlines()[-1] == "0 []"


def test_guard_with_other_options_goes_through_click(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["guard", "--event", "NoSuchEvent"]) == 2
    assert "unknown hook event" in capsys.readouterr().err
