"""Guard latency: the real ``teamsync guard`` subprocess, as Claude Code runs it.

Measures wall time (spawn to exit) over N runs for a PreToolUse payload that
writes a memory into the team directory (key check, whole-content secret
scan), one that edits a team memory (current file read, edit applied, scan) and
one that writes outside memory (allowed at once), plus ``python -c pass`` and
``teamsync --version`` as floors. Prints a table and replaces the "Guard"
section of docs/benchmarks.md (other sections are left alone).

    .venv/bin/python bench/guard.py [--runs 100] [--no-docs]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
TEAMSYNC = str(Path(sys.executable).parent / "teamsync")

MEMORY = (
    "---\nname: db conventions\ndescription: migrations run through the deploy job\n"
    "type: project\n---\nMigrations run through the deploy job, never by hand.\n"
    "**Why:** a manual run skipped the migration lock in March.\n"
    "**How to apply:** never run alembic upgrade against staging from a laptop.\n"
) * 4


def payloads(memdir: Path, cwd: Path) -> dict[str, str]:
    team = memdir / "team"
    base = {"session_id": "bench", "cwd": str(cwd), "hook_event_name": "PreToolUse"}
    return {
        "Write into team memory": json.dumps(
            {**base, "tool_name": "Write",
             "tool_input": {"file_path": str(team / "db.md"), "content": MEMORY}}
        ),
        "Edit a team memory": json.dumps(
            {**base, "tool_name": "Edit",
             "tool_input": {"file_path": str(team / "notes.md"), "old_string": "laptop",
                            "new_string": "workstation", "replace_all": True}}
        ),
        "Write outside memory": json.dumps(
            {**base, "tool_name": "Write",
             "tool_input": {"file_path": str(cwd / "src" / "app.py"), "content": "x = 1\n"}}
        ),
    }  # fmt: skip


def time_runs(
    cmd: list[str], stdin: str, env: dict[str, str], runs: int, quiet: bool = True
) -> list[float]:
    """Wall times in ms; with ``quiet``, any stdout (a deny) is an error."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, input=stdin, env=env, capture_output=True, text=True)
        samples.append((time.perf_counter() - start) * 1000)
        if proc.returncode != 0 or (quiet and proc.stdout.strip()):
            raise SystemExit(f"unexpected answer from {cmd}: {proc.returncode} {proc.stdout!r}")
    return samples


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * len(ordered))) - 1)]
    return statistics.median(ordered), p95


def measure(runs: int) -> list[tuple[str, float, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        memdir, cwd = Path(tmp) / "memory", Path(tmp) / "project"
        (memdir / "team").mkdir(parents=True)
        (memdir / "team" / "notes.md").write_text(MEMORY, encoding="utf-8")
        cwd.mkdir()
        env = {**os.environ, "TEAMSYNC_DIR": str(memdir)}
        rows = [
            (
                "python -c pass (floor)",
                *summary(time_runs([sys.executable, "-c", "pass"], "", env, runs)),
            )
        ]
        rows.append(
            (
                "teamsync --version",
                *summary(time_runs([TEAMSYNC, "--version"], "", env, runs, quiet=False)),
            )
        )
        for label, payload in payloads(memdir, cwd).items():
            rows.append(
                (f"guard: {label}", *summary(time_runs([TEAMSYNC, "guard"], payload, env, runs)))
            )
    return rows


def table(rows: list[tuple[str, float, float]], runs: int) -> str:
    lines = [
        "| Case | median (ms) | p95 (ms) |",
        "|---|---:|---:|",
        *(f"| {label} | {med:.1f} | {p95:.1f} |" for label, med, p95 in rows),
    ]
    host = f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    return (
        f"## Guard\n\n`teamsync guard` latency, the real subprocess as Claude Code spawns it, "
        f"{runs} runs per case ({host}; `{' '.join(['python', 'bench/guard.py', '--runs', str(runs)])}`, "
        f"{time.strftime('%Y-%m-%d', time.gmtime())}). Budget: 100 ms median.\n\n"
        + "\n".join(lines)
        + "\n\nThe team-memory cases validate the key, read the current file through no-follow "
        "opens, and scan the whole resulting file; no heavy module (anthropic, GitPython, httpx2, "
        "detect-secrets) is imported unless a line is a candidate for a generic rule.\n"
    )


def write_section(section: str) -> None:
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n"
    start = text.find("\n## Guard\n")
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + 1)
        text = text[: start + 1] + section + (text[end:] if end != -1 else "")
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--no-docs", action="store_true", help="Do not update docs/benchmarks.md.")
    args = parser.parse_args()
    rows = measure(args.runs)
    section = table(rows, args.runs)
    print(section)
    if not args.no_docs:
        write_section(section)
        print(f"updated {DOC}")
    worst = max(med for label, med, _ in rows if label.startswith("guard:"))
    return 0 if worst < 100 else 1


if __name__ == "__main__":
    sys.exit(main())
