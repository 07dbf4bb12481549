"""Project hygiene: the public surface, the version in one place, documented commands."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import teamsync
from teamsync._version import __version__
from teamsync.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]


def test_public_api_is_exactly_all() -> None:
    assert dir(teamsync) == sorted(teamsync.__all__)
    for name in teamsync.__all__:
        assert getattr(teamsync, name) is not None, name
    with pytest.raises(AttributeError):
        teamsync.no_such_name  # noqa: B018


def test_the_whole_exception_tree_is_public_and_drawn() -> None:
    import teamsync.errors as errors

    classes = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, errors.TeamsyncError)
    }
    assert classes <= set(teamsync.__all__)
    drawn = errors.__doc__ or ""
    assert not [name for name in classes if name not in drawn]


def test_no_exception_class_outside_errors_py() -> None:
    pattern = re.compile(r"^class \w+\((TeamsyncError|\w+Error)\)", re.MULTILINE)
    found = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "teamsync").rglob("*.py")
        if path.name != "errors.py" and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_import_teamsync_is_cheap() -> None:
    code = (
        "import sys, teamsync; "
        "print(sorted(m for m in ('anthropic', 'git', 'httpx2', 'detect_secrets', 'yaml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


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
