"""``make demo`` (scripts/demo.py) runs end to end and shows the lint and the fix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_shows_problems_then_the_fix() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "demo.py")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    for expected in (
        "team/MEMORY.md: dead-link: line 4: runbook.md does not exist",
        "team/MEMORY.md: duplicate: line 5",
        "team/orphan_oncall.md: orphan",
        "team/opinion.md: type: unknown type 'opinion'",
        "team/multiline.md: description: description spans several lines",
        "rewrote team/MEMORY.md",
        "<!-- teamsync-index v1",
        "no problems",
    ):
        assert expected in out, expected
    assert out.index("(exit 1)") < out.index("rewrote team/MEMORY.md") < out.index("(exit 0)")
