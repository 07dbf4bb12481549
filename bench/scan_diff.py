"""Differential check of the scanner: another commit's findings vs this tree's, on the same inputs.

A change to the scanning driver (decoding, line splitting, offsets, prefilters,
the order of checks) must not change what is found. This script writes the
inputs once, then scans them in two subprocesses: one importing ``teamsync``
from a ``git archive`` of ``--base`` (default ``main``), one from this tree.
Each scans every set with :func:`teamsync.api.scan_paths` (what ``teamsync scan
DIR`` runs, in one process) and prints per set the findings as (path, line,
rule, fingerprint). The fingerprint is a hash of the rule and the secret's exact
text, so two findings agree only when they name the same value. Every
difference is listed; the CPU time of each side per set is printed too (one run
each, on a shared machine: an A/B hint, not a benchmark).

The sets:

- ``hard-negatives``: every kind in ``testing.scan.NEGATIVES`` (seeds 0-4) and
  every line of ``RULE_NEGATIVES``, as the tests in ``tests/scan`` write them,
  plus every plant of ``PLANTS`` (seeds 0-4), so a lost finding shows too;
- ``multilingual``: ``bench/multilingual.py``'s tuned (seed 12, 3 renderings)
  and held-out (seed 99, 5 renderings) sets;
- ``blind1``, ``blind2``, ``blind3``: ``bench/secrets_ml_blind*/set.jsonl`` as
  ``bench/multilingual_blind.py`` lays them out;
- ``generated``: ``bench/scan.py``'s corpus (seed 1), ``--generated-mb`` MB;
- ``real``: ``bench/scan_real.py``'s tree (this venv's stdlib and site-packages),
  ``--real-mb`` MB of it (0: none; default all).

    .venv/bin/python bench/scan_diff.py [--base REF] [--sets a,b] [--generated-mb 15]
        [--real-mb N] [--keep DIR]

Exit status 1 when any set differs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

SETS = ("hard-negatives", "multilingual", "blind1", "blind2", "blind3", "generated", "real")
WORKER = r"""
import json, sys, time
import teamsync
from teamsync.api import scan_paths
out = {"module": teamsync.__file__, "sets": {}}
for name, path in json.loads(sys.argv[1]):
    t = time.process_time()
    found = scan_paths(["."], cwd=path)
    cpu = time.process_time() - t
    out["sets"][name] = {
        "cpu": cpu,
        "findings": [[f.path, f.line, f.rule, f.fingerprint] for f in found],
    }
print(json.dumps(out))
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def build_hard_negatives(root: Path) -> None:
    from testing.scan import NEGATIVES, PLANTS, RULE_NEGATIVES

    for kind, make in sorted(NEGATIVES.items()):
        for seed in range(5):
            _write(root / "neg" / f"{kind}-{seed}.md", make(random.Random(seed)))
    for rule, lines in sorted(RULE_NEGATIVES.items()):
        _write(root / "rule-neg" / f"{rule}.md", "\n\n".join(lines) + "\n")
        _write(root / "rule-neg" / f"{rule}.py", "\n\n".join(lines) + "\n")
    for kind, make in sorted(PLANTS.items()):
        for seed in range(5):
            _write(root / "plant" / f"{kind}-{seed}.md", make(random.Random(seed)))


def build_multilingual(root: Path) -> None:
    import multilingual

    multilingual.build(root / "tuned", 3, 12)
    multilingual.build(root / "heldout", 5, 99, heldout=True)


def build_blind(root: Path, name: str) -> None:
    import multilingual_blind

    path = ROOT / "bench" / name / "set.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    multilingual_blind.build(records, root)


def build_sets(top: Path, names: list[str], generated_mb: float, real_mb: float | None) -> None:
    for name in names:
        root = top / name
        if root.exists():
            continue  # a kept tree from an earlier run
        root.mkdir(parents=True)
        if name == "hard-negatives":
            build_hard_negatives(root)
        elif name == "multilingual":
            build_multilingual(root)
        elif name == "blind1":
            build_blind(root, "secrets_ml_blind")
        elif name == "blind2":
            build_blind(root, "secrets_ml_blind2")
        elif name == "blind3":
            build_blind(root, "secrets_ml_blind3")
        elif name == "generated":
            import scan

            scan.generate(root, int(generated_mb * 1e6), seed=1)
        elif name == "real":
            import scan_real

            scan_real.build(root, int(real_mb * 1e6) if real_mb else None)


def run_side(source: Path, sets: list[tuple[str, str]]) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    env.pop("TEAMSYNC_SCAN_ENGINE", None)
    proc = subprocess.run(
        [sys.executable, "-c", WORKER, json.dumps(sets)],
        env=env,
        cwd=source,  # ``python -c`` puts the working directory first on sys.path
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"scan under {source} failed:\n{proc.stderr[-4000:]}")
    result: dict[str, object] = json.loads(proc.stdout)
    module = Path(str(result["module"])).resolve()
    if not module.is_relative_to(source.resolve()):
        sys.exit(f"the scan under {source} imported teamsync from {module}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="the commit to compare with")
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated: " + ",".join(SETS))
    parser.add_argument("--generated-mb", type=float, default=15.0)
    parser.add_argument("--real-mb", type=float, default=None, help="0: skip; default: whole tree")
    parser.add_argument("--keep", type=Path, default=None, help="write (or reuse) the sets here")
    parser.add_argument("--repeat", type=int, default=1, help="runs per side, taking turns "
                        "(CPU: the median per set)")  # fmt: skip
    args = parser.parse_args()
    names = [n for n in args.sets.split(",") if n]
    unknown = set(names) - set(SETS)
    if unknown:
        parser.error(f"unknown sets: {', '.join(sorted(unknown))}")
    if args.real_mb == 0 and "real" in names:
        names.remove("real")
    tmp = Path(tempfile.mkdtemp(prefix="teamsync-scan-diff-"))
    try:
        top = args.keep or tmp / "sets"
        build_sets(top, names, args.generated_mb, args.real_mb)
        base = tmp / "base"
        base.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.base, "teamsync"], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        rev = subprocess.run(
            ["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        head = subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        sets = [(n, str(top / n)) for n in names]
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        runs: dict[str, list[dict[str, dict[str, object]]]] = {"old": [], "new": []}
        for _ in range(args.repeat):
            runs["old"].append(run_side(base, sets)["sets"])  # type: ignore[arg-type]
            runs["new"].append(run_side(ROOT, sets)["sets"])  # type: ignore[arg-type]
        old, new = runs["old"][0], runs["new"][0]
        for side_runs in runs.values():  # every run of a side finds the same; CPU: the median
            for name in names:
                cpus = sorted(float(r[name]["cpu"]) for r in side_runs)  # type: ignore[arg-type]
                assert all(r[name]["findings"] == side_runs[0][name]["findings"] for r in side_runs)
                side_runs[0][name]["cpu"] = cpus[len(cpus) // 2]
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
        print(f"| set | files | findings {args.base} ({rev}) | findings this ({head}) | only base "
              f"| only this | CPU s base | CPU s this | (median of {args.repeat}) |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|")
        differs = False
        details: list[str] = []
        for name in names:
            a = {tuple(f) for f in old[name]["findings"]}
            b = {tuple(f) for f in new[name]["findings"]}
            files = sum(1 for p in (top / name).rglob("*") if p.is_file())
            print(f"| {name} | {files} | {len(a)} | {len(b)} | {len(a - b)} | {len(b - a)} "
                  f"| {old[name]['cpu']:.2f} | {new[name]['cpu']:.2f} | |")  # fmt: skip
            for side, items in (("only base", a - b), ("only this", b - a)):
                for path, line, rule, fp in sorted(items):
                    details.append(f"  {name}: {side}: {path}:{line}: {rule} {fp}")
            differs |= a != b
        print(
            "\nidentical on every set" if not differs else "\ndifferences:\n" + "\n".join(details)
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if differs else 0


if __name__ == "__main__":
    raise SystemExit(main())
