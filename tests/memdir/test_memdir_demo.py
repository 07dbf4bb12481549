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
        "team/MEMORY.md: dead-link: line 8: runbook.md does not exist",
        "team/MEMORY.md: duplicate: line 9",
        "team/orphan_oncall.md: orphan",
        "team/opinion.md: type: unknown type 'opinion'",
        "team/multiline.md: description: description spans several lines",
        "updated team/MEMORY.md: 1 entries added, 1 dead entries removed",
        "Ask in #ops before touching the deploy rules.",
        "no problems",
    ):
        assert expected in out, expected
    assert out.index("(exit 1)") < out.index("updated team/MEMORY.md") < out.index("(exit 0)")
    fixed = out[out.index("team/MEMORY.md now reads:") :]
    assert "Ask in #ops before touching the deploy rules." in fixed  # prose kept by --fix
