"""`teamsync.sync` and `teamsync.recall` are functions on the package and subpackages
in `sys.modules`; docs/architecture.md says which import gives which (issue 25 §4)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("name", ["sync", "recall"])
def test_each_import_form_gives_what_the_docs_say(name: str) -> None:
    sub = {"sync": "engine", "recall": "lexical"}[name]
    alias = _run(f"import teamsync.{name} as s, types; print(isinstance(s, types.FunctionType))")
    assert alias.stdout.strip() == "True", alias.stderr
    from_sub = _run(f"from teamsync.{name}.{sub} import __name__ as n; print(n)")
    assert from_sub.stdout.strip() == f"teamsync.{name}.{sub}", from_sub.stderr
    from_pkg = _run(f"from teamsync.{name} import {sub}; print({sub}.__name__)")
    assert from_pkg.stdout.strip() == f"teamsync.{name}.{sub}", from_pkg.stderr
    dotted = _run(f"import teamsync.{name}.{sub} as e")
    assert dotted.returncode != 0 and "ImportError" in dotted.stderr
    doc = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
    text = " ".join(doc.read_text(encoding="utf-8").split())
    assert "`import teamsync.sync as s` gives the *function*" in text
    assert "`import teamsync.sync.engine as e` fails" in text
