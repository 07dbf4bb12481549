"""Long run of the model-based sync fuzzer (:mod:`testing.fuzz`) over both backends.

For each backend and seed: ``--steps`` random operations by 3-4 teammates
(creates, edits, appends, rewrites, deletes, renames, index edits, empty
files, CRLF, deep folders, deleting ``MEMORY.md``, same-moment syncs), then
everyone converges and the oracle checks that nothing anyone wrote was lost
silently and that every replica equals the remote. A failing seed is shrunk
(delta debugging over the recorded operations) and its short reproduction is
printed and written to ``bench/out/sync_fuzz.json``.

Case-only and NFKC-only renames (issue 18 §1: ``Deploy.md`` ↔ ``deploy.md``,
``ﬁle.md`` ↔ ``file.md``), including ones that race a teammate's edit, are on
by default; ``--no-case-renames`` leaves them out. ``--renames`` (issue 31) weights
the run toward renames, hand-offs (a teammate renames and syncs, another syncs and
renames it back) and teammates offline for a few syncs; the identity oracle counts
memories gone under every name (``gone``).

Usage: ``python bench/sync_fuzz.py [--seeds 10] [--steps 300] [--mates 3]
[--backends git,rest] [--no-case-renames] [--renames] [--casefold N] [--no-shrink]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from testing.fuzz import Op, RestHost, Stats, random_op, replay, rest_host, shrink  # noqa: E402


def campaign(
    kind: str, seeds: list[int], steps: int, mates: int, case: bool, do_shrink: bool,
    host: RestHost | None, casefold: int = 0, renames: bool = False,
) -> tuple[Stats, list[dict[str, object]], float]:  # fmt: skip
    total = Stats()
    failures: list[dict[str, object]] = []
    start = time.perf_counter()
    for seed in seeds:
        rng = random.Random(f"{kind}-{seed}")
        ops: list[Op] = [
            random_op(rng, mates, case_renames=case, renames=renames) for _ in range(steps)
        ]
        world = replay(kind, ops, mates, host, casefold)
        total.add(world.stats)
        verdicts = world.stats.violations
        line = (
            f"  {kind:4} seed {seed:3}: {world.stats.syncs:4} syncs, "
            f"{world.stats.conflicts:3} conflicts, {world.stats.merges:3} merges, "
            f"{world.stats.renames_back:3} renames back, {world.stats.gone} gone, "
            f"{world.stats.stops} stops ({world.stats.confirmed} confirmed at the end), "
            f"{len(verdicts)} violations"
        )
        print(line, flush=True)
        if verdicts:
            for v in verdicts[:5]:
                print(f"    {v[:300]}", flush=True)
            short = shrink(kind, ops, mates, host, casefold=casefold) if do_shrink else ops
            failures.append(
                {"backend": kind, "seed": seed, "violations": verdicts[:10], "repro": short}
            )
            print(f"    shrunk to {len(short)} operations: {short}", flush=True)
    return total, failures, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--mates", type=int, default=3, choices=(3, 4))
    parser.add_argument("--backends", default="git,rest")
    parser.add_argument("--no-case-renames", dest="case_renames", action="store_false")
    parser.add_argument("--renames", action="store_true", help="rename-heavy (issue 31)")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument(
        "--casefold", type=int, default=0, help="teammates on a case-insensitive disk (simulated)"
    )
    args = parser.parse_args()
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    rows = []
    failures: list[dict[str, object]] = []
    print(f"load average before: {os.getloadavg()[0]:.2f} (machine shared with other jobs)")
    with tempfile.TemporaryDirectory(prefix="sync-fuzz-") as tmp:
        with rest_host(Path(tmp)) as host:
            for kind in args.backends.split(","):
                stats, failed, secs = campaign(
                    kind, seeds, args.steps, args.mates, args.case_renames,
                    not args.no_shrink, host if kind == "rest" else None, args.casefold,
                    args.renames,
                )  # fmt: skip
                failures += failed
                rows.append((kind, stats, secs))
    head = (
        f"{'backend':8}{'seeds':>6}{'steps':>8}{'syncs':>8}{'together':>9}{'conflicts':>10}"
        f"{'merges':>8}{'recovered':>10}{'back':>6}{'gone':>6}{'stops':>6}{'violations':>11}"
        f"{'failing':>8}"
        f"{'secs':>8}"
    )
    print("\n" + head)
    for kind, s, secs in rows:
        failing = sum(1 for f in failures if f["backend"] == kind)
        print(
            f"{kind:8}{len(seeds):>6}{s.steps:>8}{s.syncs:>8}{s.together:>9}{s.conflicts:>10}"
            f"{s.merges:>8}{s.recovered:>10}{s.renames_back:>6}{s.gone:>6}{s.stops:>6}"
            f"{len(s.violations):>11}"
            f"{failing:>8}{secs:>8.0f}"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    report = {
        "seeds": seeds,
        "steps_per_seed": args.steps,
        "mates": args.mates,
        "case_renames": args.case_renames,
        "renames": args.renames,
        "casefold": args.casefold,
        "backends": {
            k: {**{n: getattr(s, n) for n in Stats.COUNTS}, "violations": len(s.violations)}
            for k, s, _ in rows
        },
        "failures": failures,
    }
    name = "sync_fuzz.json" if args.case_renames else "sync_fuzz_no_case.json"
    if args.renames:
        name = f"sync_fuzz_renames_{'_'.join(args.backends.split(','))}.json"
    (out / name).write_text(json.dumps(report, indent=2, default=list) + "\n", encoding="utf-8")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
