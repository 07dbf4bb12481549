"""Secrets in many languages, on a set written blind: teamsync vs gitleaks vs detect-secrets.

The set (``bench/secrets_ml_blind/set.jsonl``, provenance in the README beside it)
was written by another session that never saw the scanner or issue 27: one JSON
object a line, ``{"id", "lang", "label": "secret"|"negative", "text", "value"}``.
It was run once, after the rules were frozen (the commit whose message starts
with ``freeze: scanner rules``), and the figures were reported as they came.

Each language becomes one memory file (``team/<lang>.md``, each record's text
followed by a blank line, as in ``bench/multilingual.py``); every tool scans the
same directory in the same run. A secret counts as found when the tool reports
a line of its text; a negative counts as a false positive the same way. Prints
recall per language and overall, and the false-positive rate.

    .venv/bin/python bench/multilingual_blind.py [--set PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
DEFAULT_SET = HERE / "secrets_ml_blind" / "set.jsonl"

Spot = tuple[str, int, int]  # file, first line, last line


def build(records: list[dict[str, str]], root: Path) -> dict[str, tuple[str, str, Spot]]:
    """Write one memory file per language; id -> (lang, label, where its text is)."""
    by_lang: dict[str, list[dict[str, str]]] = defaultdict(list)
    for record in records:
        by_lang[record["lang"]].append(record)
    where: dict[str, tuple[str, str, Spot]] = {}
    for lang, items in sorted(by_lang.items()):
        name = f"team/{lang}.md"
        lines = [f"# notes ({lang})", ""]
        for record in items:
            text_lines = record["text"].split("\n")
            first = len(lines) + 1
            lines += text_lines
            where[record["id"]] = (lang, record["label"], (name, first, len(lines)))
            lines.append("")
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return where


def find_gitleaks() -> str | None:
    for candidate in (BIN / "gitleaks", shutil.which("gitleaks")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return None


def run_tools(root: Path, work: Path) -> dict[str, set[tuple[str, int]]]:
    env = {**os.environ, "HOME": str(work)}

    def run(cmd: list[str]) -> str:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
        return proc.stdout

    results: dict[str, set[tuple[str, int]]] = {}
    out = json.loads(run([str(BIN / "teamsync"), "--json", "scan", "--memory", "team"]))
    results["teamsync"] = {(f["path"], f["line"]) for f in out["findings"]}
    gitleaks = find_gitleaks()
    if gitleaks:
        report = work / "gl.json"
        run([gitleaks, "dir", "team", "--no-banner", "--redact", "--exit-code", "0",
             "--report-format", "json", "--report-path", str(report)])  # fmt: skip
        leaks = json.loads(report.read_text() or "[]")
        version = subprocess.run([gitleaks, "version"], capture_output=True, text=True).stdout
        results[f"gitleaks {version.strip()}"] = {
            (Path(x["File"]).as_posix(), x["StartLine"]) for x in leaks
        }
    data = json.loads(run([str(BIN / "detect-secrets"), "scan", "--all-files", "team"]))["results"]
    results["detect-secrets"] = {
        (path, item["line_number"]) for path, items in data.items() for item in items
    }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--misses", action="store_true", help="list teamsync's misses and FPs")
    args = parser.parse_args()
    records = [json.loads(line) for line in args.set.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory(prefix="teamsync-blind-") as tmp:
        root, work = Path(tmp) / "corpus", Path(tmp) / "work"
        root.mkdir()
        work.mkdir()
        where = build(records, root)
        results = run_tools(root, work)
    tools = list(results)

    def hit(found: set[tuple[str, int]], spot: Spot) -> bool:
        return any((spot[0], line) in found for line in range(spot[1], spot[2] + 1))

    langs = sorted({lang for lang, _, _ in where.values()})
    print(f"set: {args.set} ({len(records)} records, {len(langs)} languages)\n")
    print("| language | secrets | " + " | ".join(f"{t} recall" for t in tools)
          + " | negatives | " + " | ".join(f"{t} FP" for t in tools) + " |")  # fmt: skip
    print("|" + "---|" * (3 + 2 * len(tools)))
    totals = {t: [0, 0] for t in tools}
    n_sec = n_neg = 0
    for lang in langs:
        secrets = [spot for lg, label, spot in where.values() if lg == lang and label == "secret"]
        negatives = [spot for lg, label, spot in where.values() if lg == lang and label != "secret"]
        n_sec += len(secrets)
        n_neg += len(negatives)
        recall_cells, fp_cells = [], []
        for tool in tools:
            got = sum(hit(results[tool], s) for s in secrets)
            fps = sum(hit(results[tool], s) for s in negatives)
            totals[tool][0] += got
            totals[tool][1] += fps
            share = 100 * got / len(secrets) if secrets else 0.0
            recall_cells.append(f"{got}/{len(secrets)} ({share:.0f}%)")
            fp_cells.append(str(fps))
        print(f"| {lang} | {len(secrets)} | " + " | ".join(recall_cells) + f" | {len(negatives)} | "
              + " | ".join(fp_cells) + " |")  # fmt: skip
    recall_cells = [f"{totals[t][0]}/{n_sec} ({100 * totals[t][0] / n_sec:.1f}%)" for t in tools]
    fp_cells = [f"{totals[t][1]} ({100 * totals[t][1] / max(n_neg, 1):.1f}%)" for t in tools]
    print(f"| **all** | {n_sec} | " + " | ".join(recall_cells) + f" | {n_neg} | "
          + " | ".join(fp_cells) + " |")  # fmt: skip
    if args.misses:
        mine = results["teamsync"]
        by_id = {r["id"]: r for r in records}
        for ident, (lang, label, spot) in where.items():
            if (label == "secret") != hit(mine, spot):
                kind = "MISS" if label == "secret" else "FP"
                print(f"{kind} {lang} {ident}: {by_id[ident]['text'][:160]!r}")
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
