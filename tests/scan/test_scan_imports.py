"""The hook path stays light: no anthropic, GitPython or httpx2; detect-secrets only when needed."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from testing.scan import PLANTS

PROBE = """
import json, sys
from teamsync.cli import main
code = main(sys.argv[1:])
heavy = ["anthropic", "git", "httpx2", "detect_secrets", "fastapi", "uvicorn", "psycopg", "watchdog"]
print(json.dumps({"code": code, "loaded": [m for m in heavy if m in sys.modules]}), file=sys.stderr)
"""


def _probe(cwd: Path, *args: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    return dict(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_clean_scan_imports_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("# Notes\nWe use postgres; the token rotates weekly.\n")
    assert _probe(tmp_path, "scan", "n.md") == {"code": 0, "loaded": []}


def test_specific_rule_hit_does_not_need_detect_secrets(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text(PLANTS["github-pat"](random.Random(1)) + "\n")
    assert _probe(tmp_path, "scan", "n.md") == {"code": 1, "loaded": []}


def test_generic_candidate_loads_detect_secrets_only(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text(PLANTS["generic-secret"](random.Random(1)) + "\n")
    assert _probe(tmp_path, "scan", "n.md") == {"code": 1, "loaded": ["detect_secrets"]}
