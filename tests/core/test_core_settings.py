"""Settings: CLI beats environment beats defaults; color obeys NO_COLOR."""

from __future__ import annotations

from pathlib import Path

from teamsync.config import Settings


def test_cli_dir_beats_environment(tmp_path: Path) -> None:
    s = Settings.build(dir=str(tmp_path / "cli"), environ={"TEAMSYNC_DIR": str(tmp_path / "env")})
    assert s.dir == tmp_path / "cli"


def test_environment_dir_used_without_cli(tmp_path: Path) -> None:
    s = Settings.build(environ={"TEAMSYNC_DIR": str(tmp_path / "env")})
    assert s.dir == tmp_path / "env"


def test_no_dir_means_claude_code_layout() -> None:
    assert Settings.build(environ={}).dir is None


def test_color_respects_no_color_and_json() -> None:
    assert Settings.build(environ={}, isatty=True).color is True
    assert Settings.build(environ={"NO_COLOR": ""}, isatty=True).color is False
    assert Settings.build(environ={}, isatty=False).color is False
    assert Settings.build(environ={}, isatty=True, json=True).color is False


def test_xdg_directories(tmp_path: Path) -> None:
    s = Settings.build(environ={"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "st")})
    assert s.state_dir == tmp_path / "st" / "teamsync"
    assert s.cache_dir == tmp_path / ".cache" / "teamsync"
    assert s.data_dir == tmp_path / ".local/share" / "teamsync"


def test_relative_xdg_is_ignored(tmp_path: Path) -> None:
    s = Settings.build(environ={"HOME": str(tmp_path), "XDG_STATE_HOME": "relative"})
    assert s.state_dir == tmp_path / ".local/state" / "teamsync"
