"""Project hygiene: the public surface, the version in one place, documented commands."""

from __future__ import annotations

import re
from pathlib import Path

import teamsync
from teamsync._version import __version__
from teamsync.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]


def test_public_api_is_exactly_all() -> None:
    public = {name for name in dir(teamsync) if not name.startswith("_")}
    assert set(teamsync.__all__) - {"__version__"} <= public
    assert public - {"annotations"} <= set(teamsync.__all__) | _subpackages()


def _subpackages() -> set[str]:
    return {p.name for p in (ROOT / "teamsync").iterdir() if p.is_dir() or p.suffix == ".py"} | {
        p.stem for p in (ROOT / "teamsync").glob("*.py")
    }


def test_version_matches_changelog() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"^## (\d+\.\d+\.\d+)", text, flags=re.MULTILINE)
    assert released, "CHANGELOG.md has no release heading"
    assert released[0] == __version__
    assert "## Unreleased" in text


def test_every_command_is_documented() -> None:
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = [name for name in COMMANDS if f"`teamsync {name}" not in doc]
    assert not missing, f"docs/cli.md does not document: {missing}"
