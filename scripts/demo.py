"""``make demo``: a walkthrough of teamsync on embedded defaults, in a temporary directory.

Each step is a function taking the shared :class:`Demo`; later features (sync
between two teammates, recall) append their own steps to :data:`STEPS`. Every
command runs through the real CLI (``python -m teamsync``) as a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Demo:
    """Scratch space ``root`` (deleted afterwards), the sample ``memdir``, the child ``env``."""

    root: Path
    memdir: Path
    env: dict[str, str]
    extra: dict[str, object] = field(default_factory=dict)

    def run(self, *args: str, expect: int | None = None, user: str | None = None) -> int:
        """Run ``teamsync ARGS`` for real (as ``user``), echoing the command line and its output."""
        prompt = f"{user}$" if user else "$"
        print(f"{prompt} teamsync {' '.join(args)}", flush=True)
        env = {**self.env, "USER": user, "GIT_AUTHOR_NAME": user} if user else self.env
        done = subprocess.run(
            [sys.executable, "-m", "teamsync", *args],
            env=env,
            cwd=self.root,
            capture_output=True,
            text=True,
            check=False,
        )
        for line in (done.stdout + done.stderr).rstrip().splitlines():
            print(f"    {line}")
        print(f"    (exit {done.returncode})\n", flush=True)
        if expect is not None and done.returncode != expect:
            raise SystemExit(f"demo: expected exit {expect}, got {done.returncode}")
        return done.returncode

    def capture(self, *args: str) -> str:
        """Run ``teamsync ARGS`` and return its stdout without echoing it (it may hold a token)."""
        print(f"$ teamsync {' '.join(args)}", flush=True)
        done = subprocess.run(
            [sys.executable, "-m", "teamsync", *args],
            env=self.env,
            cwd=self.root,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"demo: teamsync {args[0]} failed: {done.stderr.strip()}")
        return done.stdout


def header(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(3, 66 - len(title)) + "\n", flush=True)


def memory(name: str, description: str, type: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type}\n---\n{body}\n"


SAMPLE = {
    "user_role.md": memory(
        "Role", "Backend developer, new to the frontend", "user", "Explain React by analogy."
    ),
    "team/deploy_freeze.md": memory(
        "Deploy freeze",
        "No production deploys after Friday 12:00 UTC",
        "project",
        "Ops is thin at weekends.\n\n**Why:** two weekend incidents in 2026.\n"
        "**How to apply:** schedule risky merges for Monday.",
    ),
    "team/grafana.md": memory(
        "Latency board", "Grafana board for API latency", "reference", "grafana.internal/d/api"
    ),
    "team/testing.md": memory(
        "Real DB in tests", "Integration tests hit a real database", "feedback", "No mocks."
    ),
    "team/orphan_oncall.md": memory(
        "On-call", "Rotation lives in PagerDuty", "reference", "Not indexed yet."
    ),
    "team/opinion.md": memory("Tabs", "Tabs vs spaces", "opinion", "An unknown type."),
    "team/multiline.md": "---\nname: Release\ndescription: |\n  Releases are cut\n  every other Tuesday\n"
    "type: project\n---\nThe description spans two lines.\n",
}
INDEXES = {
    "MEMORY.md": "- [Role](user_role.md) — backend dev learning the frontend\n",
    "team/MEMORY.md": (
        "# Team memory\n\nAsk in #ops before touching the deploy rules.\n\n"
        "- [Deploy freeze](deploy_freeze.md) — no Friday afternoon deploys\n"
        "- [Latency board](grafana.md) — where to look first\n"
        "- [Real DB in tests](testing.md) — no mocks\n"
        "- [Old runbook](runbook.md) — deleted last month\n"
        "- [Deploy freeze again](deploy_freeze.md) — added twice by two sessions\n"
        "- [Tabs](opinion.md) — style\n"
        "- [Release](multiline.md) — release train\n"
    ),
}


def build_sample(demo: Demo) -> None:
    header("1. A memory directory with problems")
    for name, text in {**SAMPLE, **INDEXES}.items():
        path = demo.memdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"Built {demo.memdir} (Claude Code's layout: MEMORY.md + team/).")
    print("Planted: orphan, dead link, duplicate, bad type, 2-line description.\nteam/MEMORY.md:\n")
    print(textwrap.indent(INDEXES["team/MEMORY.md"], "    "))


def check_finds_problems(demo: Demo) -> None:
    header("2. teamsync check finds them (exit 1)")
    demo.run("--dir", str(demo.memdir), "check", expect=1)


def fix_indexes(demo: Demo) -> None:
    header("3. teamsync check --fix adds missing entries and drops dead ones")
    print("It changes only the entry lines it owns in MEMORY.md (a backup goes to the state")
    print("dir first), never a memory file; every other line stays as written. What --fix")
    print("cannot decide for you (a duplicate, a type, a description) stays reported.\n")
    demo.run("--dir", str(demo.memdir), "check", "--fix", expect=1)
    print("team/MEMORY.md now reads:\n")
    print(textwrap.indent((demo.memdir / "team" / "MEMORY.md").read_text(encoding="utf-8"), "    "))


def fix_frontmatter_and_recheck(demo: Demo) -> None:
    header("4. Fix the duplicate and two frontmatter problems by hand, check again (exit 0)")
    index = demo.memdir / "team" / "MEMORY.md"
    lines = index.read_text(encoding="utf-8").splitlines(keepends=True)
    index.write_text("".join(line for line in lines if "again" not in line), encoding="utf-8")
    opinion = demo.memdir / "team" / "opinion.md"
    opinion.write_text(
        opinion.read_text(encoding="utf-8").replace("opinion", "feedback"), encoding="utf-8"
    )
    release = demo.memdir / "team" / "multiline.md"
    release.write_text(
        memory("Release", "Releases are cut every other Tuesday", "project", "Fixed.")
    )
    demo.run("--dir", str(demo.memdir), "check", expect=0)
    demo.run("--dir", str(demo.memdir), "--json", "check", expect=0)


STEPS: list[Callable[[Demo], None]] = [build_sample, check_finds_problems, fix_indexes]
STEPS += [fix_frontmatter_and_recheck]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="teamsync-demo-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "HOME": str(root / "home"), "NO_COLOR": "1"}
        env.pop("TEAMSYNC_DIR", None)
        demo = Demo(root=root, memdir=root / "memory", env=env)
        from demo_sync import SYNC_STEPS, stop_server

        try:
            for step in [*STEPS, *SYNC_STEPS]:
                step(demo)
        finally:
            stop_server(demo)
    header("Done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
