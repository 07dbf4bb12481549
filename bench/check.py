"""Benchmark ``teamsync check`` on 10,000 memory files (target: under 2 s).

Builds a deterministic memory directory in a temporary directory (8,000 private
memories, 2,000 in ``team/``, both indexes in place, a handful of problems),
then times the real CLI (``python -m teamsync --dir D check``, a subprocess, as
a user or a git hook runs it) and the library call
(:func:`teamsync.memdir.lint.check_memdir`). Prints the median of several runs.

Usage: ``python bench/check.py [--files N] [--runs R]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TYPES = ("user", "feedback", "project", "reference")
WORDS = "deploy cache flaky retry schema billing auth queue index latency owner rollout".split()


def build(root: Path, count: int) -> None:
    """``count`` memories, a fifth of them in team/, with both indexes (seeded, deterministic)."""
    rng = random.Random(20261130)
    team = root / "team"
    team.mkdir(parents=True)
    lines: dict[Path, list[str]] = {root: [], team: []}
    for n in range(count):
        where = team if n % 5 == 0 else root
        words = " ".join(rng.choice(WORDS) for _ in range(8))
        kind = TYPES[n % 4] if n % 997 else "bogus"
        name = f"mem-{n:05d}.md"
        body = f"{words}.\n\n**Why:** {words}\n**How to apply:** {words}\n" * 3
        text = f"---\nname: Memory {n}\ndescription: {words}\ntype: {kind}\n---\n{body}"
        (where / name).write_text(text, encoding="utf-8")
        if n % 1013:
            lines[where].append(f"- [Memory {n}]({name}) — {words}")
    for where, entries in lines.items():
        (where / "MEMORY.md").write_text("\n".join(entries) + "\n", encoding="utf-8")


def _time(func: object, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from teamsync.memdir.lint import check_memdir

    with tempfile.TemporaryDirectory(prefix="teamsync-bench-") as tmp:
        memdir = Path(tmp) / "memory"
        start = time.perf_counter()
        build(memdir, args.files)
        built = time.perf_counter() - start
        command = [sys.executable, "-m", "teamsync", "--dir", str(memdir), "check"]

        def cli() -> None:
            done = subprocess.run(command, capture_output=True, check=False)
            if done.returncode != 1:  # the seeded problems must be found
                raise SystemExit(f"unexpected exit {done.returncode}: {done.stderr!r}")

        problems = len(check_memdir(memdir).problems)
        rows = [
            ("teamsync check (CLI subprocess)", _time(cli, args.runs)),
            ("check_memdir() (library)", _time(lambda: check_memdir(memdir), args.runs)),
        ]
    print(f"{args.files:,} memory files (built in {built:.2f} s), {problems} problems found")
    print(f"{'what':34} {'median':>8} {'min':>8} {'max':>8}   (seconds, {args.runs} runs)")
    for label, samples in rows:
        print(
            f"{label:34} {statistics.median(samples):8.3f} {min(samples):8.3f} {max(samples):8.3f}"
        )
    verdict = "PASS" if statistics.median(rows[0][1]) < 2.0 else "SLOW"
    print(f"target: CLI median under 2 s: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
