"""The shared names live in one place and are used from there (issue 25 §4).

``limits.py`` held constants nothing used while copies lived elsewhere, and
client and server built ``/history``, ``/capabilities`` and ``/entries`` by
hand beside the unused ``wire.HISTORY_PATH`` and ``CAPABILITIES_PATH``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import teamsync.limits as limits
import teamsync.wire as wire

PACKAGE = Path(__file__).resolve().parents[2] / "teamsync"


def _sources(*skip: str) -> dict[str, str]:
    return {
        str(path.relative_to(PACKAGE)): path.read_text(encoding="utf-8")
        for path in PACKAGE.rglob("*.py")
        if path.name not in skip
    }


def _code(text: str) -> str:
    """``text`` without docstrings and comments (they may name a path in prose)."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            node.value.value = ""  # a docstring, module-, class- or attribute-level
    return ast.unparse(tree)


def test_every_limit_is_used_outside_limits_py() -> None:
    names = [n for n in vars(limits) if n.isupper()]
    code = {name: _code(text) for name, text in _sources("limits.py").items()}
    unused = [n for n in names if not any(re.search(rf"\b{n}\b", t) for t in code.values())]
    assert unused == []


def test_wire_paths_are_built_only_in_wire_py() -> None:
    assert wire.HISTORY_PATH == wire.PATH + "/history"
    assert wire.CAPABILITIES_PATH == wire.PATH + "/capabilities"
    assert wire.ENTRIES_PATH == wire.PATH + "/entries"
    by_hand = re.compile(r"PATH\s*\+|team_memory/|['\"]/(history|capabilities|entries)['\"]")
    found = [
        name
        for name, text in _sources("wire.py", "limits.py").items()
        if by_hand.search(_code(text))
    ]
    assert found == []
    server = (PACKAGE / "server" / "app.py").read_text(encoding="utf-8")
    client = "".join(p.read_text(encoding="utf-8") for p in (PACKAGE / "sync").glob("rest*.py"))
    for text in (server, client):  # the REST client is in parts (issue 25 §3)
        assert "HISTORY_PATH" in text and "CAPABILITIES_PATH" in text and "ENTRIES_PATH" in text
