"""The issue-28 blind sets, one table per language: lexical and hybrid, run with the frozen method.

Run: ``.venv/bin/python bench/recall_blind.py [--sets recall_blind2] [--json out.json]``

``--sets recall_blind2`` runs round 2's sealed sets (``bench/recall_blind2_<lang>.json``,
written by separate blind sessions, opened after commit "freeze: recall method, round 2").
``--sets recall_blind3`` runs round 3's (``bench/recall_blind3_<lang>.json``, opened after
commit "freeze: recall rules for blind set 3"); ``--sets recall_blind4`` round 4's (opened after
commit "freeze: recall rules for blind set 4").

The sets ``bench/recall_blind_<lang>.json`` (ko, ja, zh from ``recall-cjk``; tr, es, pt,
en from ``recall-latin``) were written by separate sessions that never saw the method,
and sealed until it was frozen (commit "freeze: recall method for issue 28"). Each
query's recall@5 is measured with :func:`recall_eval.evaluate`, the hybrid with the model
the library picks for that directory (:func:`teamsync.recall.models.choose`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import recall_eval as R  # noqa: E402

from teamsync.recall import embed, models  # noqa: E402
from teamsync.recall.lexical import LexicalIndex  # noqa: E402

LANGS = ("ko", "ja", "zh", "tr", "es", "pt", "en")
KINDS = ("keyword", "paraphrase", "task", "crosslingual", "answerable")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--sets", default="recall_blind", help="file prefix under bench/")
    args = parser.parse_args()
    out: dict[str, dict[str, object]] = {}
    print(
        "| language | ranker | model | " + " | ".join(KINDS) + " | no-answer: memories returned |"
    )
    print("|---|---|---|" + "---|" * (len(KINDS) + 1))
    for lang in LANGS:
        path = R.ROOT / "bench" / f"{args.sets}_{lang}.json"
        if not path.exists():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        with tempfile.TemporaryDirectory() as tmp:
            results, violations = R.quality(data, Path(tmp), True if embed.available() else None)
            memdir = Path(tmp) / "memories"
            index = LexicalIndex(memdir)
            index.refresh()
            model = models.choose(index.languages())
            index.close()
        out[lang] = {"results": results, "model": model, "overlap": violations}
        for ranker, rows in results.items():
            if ranker.startswith("plain"):
                continue
            cells = ["–" if k not in rows else f"{rows[k]['recall@5']:.2f}" for k in KINDS]
            shown = model if "hybrid" in ranker else "–"
            print(
                f"| {lang} | {ranker} | {shown} | "
                + " | ".join(cells)
                + f" | {rows['none']['returned']:.2f} |",
                flush=True,
            )
    print(f"\nload average {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
