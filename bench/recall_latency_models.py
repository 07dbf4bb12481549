"""First vector build and warm recall per embedding model, at 1,000 and 10,000 memories.

Run: ``.venv/bin/python bench/recall_latency_models.py [--sizes 1000,10000] [--runs 30]``

Each model on the directory it is meant for: USE multilingual v3 on the Korean blind
set's memories plus synthetic filler from their vocabulary, all-MiniLM-L6-v2 on
development 2's (English) plus filler (``recall_eval.latency``: the library's one-call
entry point, so a warm recall includes the stat-walk and the cache check). MiniLM's
10,000 build is estimated from its measured 1,000 rate unless ``--minilm-build-limit``
is raised; USE's is measured. The load average is printed with every row.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import recall_eval as R  # noqa: E402

from teamsync.recall import embed, models, use_encoder  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--minilm-build-limit", type=int, default=1000)
    parser.add_argument(
        "--use-build-limit",
        type=int,
        default=10**9,
        help="above this many memories, USE's build is estimated from the smaller run's rate",
    )
    parser.add_argument(
        "--rate-s",
        type=float,
        help="a per-memory build rate measured earlier (wall seconds): skips the smaller "
        "build, the larger one is estimated from it",
    )
    parser.add_argument("--models", default=f"{use_encoder.NAME},{embed.MODEL_NAME}")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    plans = [
        (use_encoder.NAME, R.ROOT / "bench" / "recall_blind_ko.json", args.use_build_limit),
        (embed.MODEL_NAME, R.SETS[R.LATENCY_SET], args.minilm_build_limit),
    ]
    plans = [plan for plan in plans if plan[0] in args.models.split(",")]
    rows = []
    for model, path, limit in plans:
        data = json.loads(path.read_text(encoding="utf-8"))
        encoder = models.encoder(model)
        rate = args.rate_s
        with tempfile.TemporaryDirectory() as tmp:
            for n in sizes:
                row = R.latency(
                    data,
                    n,
                    Path(tmp),
                    "hybrid",
                    encoder,
                    args.runs,
                    build_limit=limit,
                    per_memory=rate,
                )
                if not row["estimated"]:
                    rate = row["build_s"] / n
                row["model"] = model
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    print("| model | " + R.latency_table(rows)[0][2:])
    print("|---|" + R.latency_table(rows)[1][1:])
    for row, line in zip(rows, R.latency_table(rows)[2:], strict=False):
        print(f"| {row['model']} {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
