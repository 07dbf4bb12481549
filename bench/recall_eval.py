"""Recall benchmark: quality on two sets beside a plain bm25 baseline, latency at scale.

Run: ``.venv/bin/python bench/recall_eval.py [--update-docs] [--sizes 1000,10000]``

* Quality, on ``bench/recall_golden.json``, ``bench/recall_heldout.json`` and
  ``bench/recall_heldout3.json`` ("development 1-3"), all three development
  data: the lexical floor was first chosen on set 1; set 2 was held out for
  the first hybrid run and set 3 (written by a separate session that never saw
  the method) for the second, and once their results were seen they became
  development data. In round 3 the relevance rule was chosen by
  leave-one-set-out cross-validation over all three (``docs/recall.md``). The
  held-out figures come from ``bench/recall_heldout4.json`` ("held-out 4"),
  written blind by a separate session, committed only after the method was
  frozen, and run once (it is skipped while the file is absent); and from
  ``bench/recall_heldout5.json`` ("held-out 5"), a second blind set for the same
  frozen method (8af890f), written by yet another session and run once; and
  from ``bench/recall_heldout6.json`` ("held-out 6"), a third blind set for the
  same method, written in round 4 by a fresh session and run once; and from
  ``bench/recall_heldout7.json`` ("held-out 7", a mobile-banking team), written
  blind after the lexical floor was re-chosen on sets 1-6 (ef0459a) and run once.
  For every query kind:
  recall@5 (share of a query's relevant memories in the top 5, averaged), MRR@5
  (1 / rank of the first relevant memory in the top 5, else 0) and, for the
  no-answer kind, the memories returned (the right answer is none). Three
  rankers in the same run: plain SQLite FTS5 bm25 (one column, the file text,
  an OR of the query's words), teamsync lexical (weighted FTS5 bm25 plus the
  relevance floor) and teamsync hybrid (plus the local embedding model; only
  with the ``teamsync[embed]`` extra). Paraphrase queries are verified to share
  no indexed word with their memory (an unfloored lexical query must not match it).
* Latency at each size (the set's memories plus synthetic filler of realistic
  size), per mode: the first index build (the first recall, cold caches), a
  warm recall's p50/p95 (the one-call entry point: stat-walk, refresh, rank;
  the embedding model loaded once per process, as in a long-lived caller) and
  the recall right after one memory was edited. The load average is printed
  beside each row: other jobs share this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from teamsync.recall import embed  # noqa: E402
from teamsync.recall.lexical import LexicalIndex, lexical_search  # noqa: E402

ALL_SETS = {
    "development 1": ROOT / "bench" / "recall_golden.json",
    "development 2": ROOT / "bench" / "recall_heldout.json",
    "development 3": ROOT / "bench" / "recall_heldout3.json",
    "held-out 4": ROOT / "bench" / "recall_heldout4.json",
    "held-out 5": ROOT / "bench" / "recall_heldout5.json",
    "held-out 6": ROOT / "bench" / "recall_heldout6.json",
    "held-out 7": ROOT / "bench" / "recall_heldout7.json",
    **{
        f"train {lang}": ROOT / "bench" / f"recall_train_{lang}.json"
        for lang in ("ko", "ja", "zh", "tr", "es", "pt", "mixed")
    },
    **{
        f"blind {lang}": ROOT / "bench" / f"recall_blind_{lang}.json"
        for lang in ("ko", "ja", "zh", "tr", "es", "pt", "en")
    },
    **{
        f"blind2 {lang}": ROOT / "bench" / f"recall_blind2_{lang}.json"
        for lang in ("ko", "ja", "zh", "tr", "es", "pt", "en")
    },
}
SETS = {name: path for name, path in ALL_SETS.items() if path.exists()}
LATENCY_SET = "development 2"
"""The memories the latency corpora start from (the rest is synthetic filler)."""
DOCS = ROOT / "docs" / "benchmarks.md"
K = 5
KINDS = ("keyword", "paraphrase", "heldout", "task", "crosslingual", "none")
Ranker = Callable[[str], list[str]]


def render(m: dict[str, Any]) -> str:
    """A memory file; JSON strings are valid YAML scalars, so descriptions may hold colons."""
    head = f"name: {json.dumps(m['name'])}\ndescription: {json.dumps(m['description'])}\n"
    return f"---\n{head}type: {m['type']}\n---\n\n{m['body']}\n"


def write_memdir(root: Path, memories: list[dict[str, Any]], *, start: float) -> None:
    for i, m in enumerate(memories):
        path = root / m["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(m), encoding="utf-8")
        os.utime(path, (start + i, start + i))


class PlainBM25:
    """The baseline: SQLite FTS5's own bm25 over one column of file text, OR of the query words."""

    def __init__(self, memdir: Path) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE VIRTUAL TABLE t USING fts5(path UNINDEXED, body, tokenize='porter unicode61')"
        )
        for path in sorted(memdir.rglob("*.md")):
            rel = path.relative_to(memdir).as_posix()
            self.db.execute("INSERT INTO t VALUES (?, ?)", (rel, path.read_text(encoding="utf-8")))

    def __call__(self, query: str) -> list[str]:
        words = [w for w in re.findall(r"\w+", query.lower()) if len(w) > 1]
        if not words:
            return []
        expr = " OR ".join(f'"{w}"' for w in words)
        rows = self.db.execute(
            "SELECT path FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (expr, K)
        )
        return [r[0] for r in rows]


def evaluate(rank: Ranker, queries: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    per: dict[str, list[tuple[float, float, int]]] = {}
    for q in queries:
        ranked = rank(q["query"])[:K]
        relevant = set(q["relevant"])
        if relevant:
            found = len(relevant & set(ranked)) / len(relevant)
            rr = next((1.0 / (i + 1) for i, p in enumerate(ranked) if p in relevant), 0.0)
        else:
            found = rr = float("nan")
        for kind in {q["kind"], "answerable" if relevant else "none"}:
            per.setdefault(kind, []).append((found, rr, len(ranked)))
    return {
        kind: {
            "n": len(v),
            "recall@5": statistics.mean(a for a, _, _ in v) if kind != "none" else float("nan"),
            "mrr": statistics.mean(b for _, b, _ in v) if kind != "none" else float("nan"),
            "returned": statistics.mean(c for _, _, c in v),
        }
        for kind, v in per.items()
    }


def overlap_violations(index: LexicalIndex, queries: list[dict[str, Any]]) -> list[str]:
    bad = []
    for q in queries:
        if q["kind"] not in ("paraphrase", "heldout"):
            continue
        matched = {h.path for h in index.search(q["query"], 10_000, floor=None)}
        if matched & set(q["relevant"]):
            bad.append(q["query"])
    return bad


def quality(data: dict[str, Any], work: Path, encoder: Any) -> tuple[dict[str, Any], list[str]]:
    memdir = work / "memories"
    write_memdir(memdir, data["memories"], start=time.time() - 1000)
    index = LexicalIndex(memdir)
    index.refresh()
    results: dict[str, Any] = {
        "plain SQLite FTS5 bm25": evaluate(PlainBM25(memdir), data["queries"]),
        "teamsync lexical (floor)": evaluate(
            lambda q: [h.path for h in index.search(q, K)], data["queries"]
        ),
    }
    violations = overlap_violations(index, data["queries"])
    languages = index.languages()
    index.close()
    if encoder is not None:
        from teamsync.recall import models
        from teamsync.recall.hybrid import HybridIndex

        chosen = models.encoder(models.choose(languages))  # the model recall would use here
        hybrid = HybridIndex(memdir, None, work / "vectors.sqlite", encoder=chosen)
        hybrid.refresh()
        results["teamsync hybrid (floor)"] = evaluate(
            lambda q: [h.path for h in hybrid.search(q, K)], data["queries"]
        )
        hybrid.close()
    return results, violations


def synthetic(seed_memories: list[dict[str, Any]], n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` memories: the given ones plus filler built from their vocabulary (realistic sizes)."""
    rng = random.Random(seed)
    words = sorted(
        {
            w.strip(".,:;()`'\"*").lower()
            for m in seed_memories
            for w in (m["body"] + " " + m["description"]).split()
        }
        - {""}
    )
    kinds = ["user", "feedback", "project", "reference"]
    out = list(seed_memories)
    for i in range(n - len(seed_memories)):
        desc = " ".join(rng.choice(words) for _ in range(rng.randint(8, 16)))
        body = "\n\n".join(
            " ".join(rng.choice(words) for _ in range(rng.randint(25, 60)))
            for _ in range(rng.randint(2, 5))
        )
        kind = rng.choice(kinds)
        prefix = "team/" if kind in ("project", "reference") and rng.random() < 0.7 else ""
        out.append(
            {
                "path": f"{prefix}{kind}_synthetic_{i:05d}.md",
                "type": kind,
                "name": f"synthetic {i}",
                "description": desc,
                "body": body,
            }
        )
    return out


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _prefill(memdir: Path, cache: Path, vectors: Path, encoder: Any = None) -> None:
    import numpy as np

    from teamsync.recall.vectors import VectorStore

    index = LexicalIndex(memdir, cache)
    if encoder is None:
        store, dim = VectorStore(vectors), 384
    else:  # the encoder's own cache tag and width, so the real index keeps these vectors
        from teamsync.recall.hybrid import RULES, store_variant

        rule = RULES[encoder.name]
        store = VectorStore(vectors, encoder.name, encoder.files, store_variant(encoder, rule))
        dim = int(encoder.encode(["x"]).shape[1]) * (2 if rule.head else 1)
    rng = np.random.default_rng(7)

    def encode(texts: list[str]) -> Any:
        v = rng.standard_normal((len(texts), dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    store.update(((p, sha) for _, p, sha in index.files()), lambda _: "x", encode)
    store.close()
    index.close()


def latency(
    data: dict[str, Any],
    n: int,
    work: Path,
    mode: str,
    encoder: Any,
    runs: int,
    *,
    build_limit: int = 10_000,
    per_memory: float | None = None,
) -> dict[str, Any]:
    queries = [q["query"] for q in data["queries"]]
    memdir = work / f"mem-{mode}-{n}"
    write_memdir(memdir, synthetic(data["memories"], n), start=time.time() - n - 100)
    cache, vectors = work / f"fts-{mode}-{n}.sqlite", work / f"vec-{mode}-{n}.sqlite"

    def one(query: str) -> None:
        if mode == "lexical":
            lexical_search(memdir, query, K, cache_path=cache)
        else:
            from teamsync.recall.hybrid import hybrid_search

            hybrid_search(memdir, query, K, cache_path=cache, vectors_path=vectors, encoder=encoder)

    load_before = os.getloadavg()[0]
    estimated = False
    build_cpu = float("nan")
    if mode == "hybrid" and n > build_limit and per_memory is not None:
        # too slow to embed here on a loaded machine: time the lexical build, then fill the
        # vector cache with random unit vectors under the real checksums. The warm-query and
        # after-edit timings are real (same matrix sizes); the build is an estimate from the
        # smaller run's measured rate and is labelled so in the table.
        t0 = time.perf_counter()
        lexical_search(memdir, "warm up", K, cache_path=cache)
        build = time.perf_counter() - t0 + per_memory * n
        _prefill(memdir, cache, vectors, encoder)
        estimated = True
    else:
        t0, c0 = time.perf_counter(), time.process_time()
        one("warm up the cache")
        build = time.perf_counter() - t0
        build_cpu = time.process_time() - c0
    samples, cpu = [], []
    for i in range(runs):
        t, c = time.perf_counter(), time.process_time()
        one(queries[i % len(queries)])
        samples.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    edited = memdir / data["memories"][0]["path"]
    edited.write_text(
        edited.read_text(encoding="utf-8") + "\nEdited for the benchmark.\n", encoding="utf-8"
    )
    stamp = time.time() - 5
    os.utime(edited, (stamp, stamp))
    t = time.perf_counter()
    one(queries[0])
    update = (time.perf_counter() - t) * 1000
    return {
        "memories": n,
        "mode": mode,
        "build_s": build,
        "build_cpu_s": build_cpu,
        "p50_ms": _pct(samples, 0.5),
        "cpu_p50_ms": _pct(cpu, 0.5),
        "p95_ms": _pct(samples, 0.95),
        "update_ms": update,
        "runs": runs,
        "load": (load_before + os.getloadavg()[0]) / 2,
        "estimated": estimated,
    }


def _fmt(value: float) -> str:
    return "–" if value != value else f"{value:.2f}"  # NaN for "not applicable"


def quality_table(name: str, data: dict[str, Any], results: dict[str, Any]) -> list[str]:
    kinds = [k for k in KINDS if any(q["kind"] == k for q in data["queries"])]
    counts = {k: sum(q["kind"] == k for q in data["queries"]) for k in kinds}
    head = " | ".join(f"{k} ({counts[k]}) r@5 / MRR" for k in kinds if k != "none")
    lines = [
        f"**{name}** (`{SETS[name].name}`: {len(data['memories'])} memories, {len(data['queries'])} queries)",
        "",
        f"| ranker | {head} | answerable r@5 | no-answer ({counts.get('none', 0)}): memories returned |",
        "|---|" + "---|" * (len(kinds) + 1),
    ]
    for ranker, rows in results.items():
        cells = [
            f"{_fmt(rows[k]['recall@5'])} / {_fmt(rows[k]['mrr'])}" for k in kinds if k != "none"
        ]
        none = rows.get("none", {}).get("returned", float("nan"))
        lines.append(
            f"| {ranker} | "
            + " | ".join(cells)
            + f" | {_fmt(rows['answerable']['recall@5'])} | {_fmt(none)} of {K} |"
        )
    return [*lines, ""]


def _cpu(value: float | None, unit: str, digits: int) -> str:
    return "" if value is None or value != value else f" ({value:.{digits}f} {unit})"


def latency_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| memories | mode | first build (CPU) | warm recall p50 (CPU p50) | p95 | recall after one edit "
        "| load avg |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['memories']:,} | {r['mode']} | {'≈' if r.get('estimated') else ''}{r['build_s']:.1f} s"
            f"{' (estimated)' if r.get('estimated') else _cpu(r.get('build_cpu_s'), 's', 1)} | "
            f"{r['p50_ms']:.0f} ms{_cpu(r.get('cpu_p50_ms'), 'ms', 0)} | "
            f"{r['p95_ms']:.0f} ms | {r['update_ms']:.0f} ms | {r['load']:.1f} |"
        )
    return [*lines, ""]


def report(
    qualities: dict[str, Any], data: dict[str, Any], lat: list[dict[str, Any]], hybrid: bool
) -> str:
    lines = [
        "## Recall",
        "",
        f"Measured by `bench/recall_eval.py` on {time.strftime('%Y-%m-%d')} ({os.cpu_count()} CPUs shared "
        f"with other jobs, Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}"
        + (f", {embed.MODEL_NAME} on NumPy" if hybrid else ", embedding extra not installed")
        + ").",
        "",
        "Quality, one run, all rankers on the same files. Development 1-3 are development data: the "
        "fusion was chosen on set 1, and the hybrid's floors by leave-one-set-out cross-validation over "
        "sets 1-3. Held-out 4-7 were each written by a separate session that never saw the method, "
        "and committed after it was frozen. The hybrid has not changed since 8af890f, so its rows on "
        "sets 4-7 are blind. The lexical floor was re-chosen on sets 1-6 in round 4 (ef0459a), so its "
        "rows are blind on held-out 7 only (docs/recall.md).",
        "",
    ]
    for name in SETS:
        lines += quality_table(name, data[name], qualities[name])
    if not lat:
        return "\n".join(lines)
    lines += [
        "Latency (the development 2 memories plus synthetic filler; each recall is the library's one-call "
        "entry point, so it includes the stat-walk and the cache check). A build marked estimated was "
        "not run: it is the smaller run's measured seconds per memory times the size, and that row's "
        "query timings ran over random vectors of the real count and size:",
        "",
        *latency_table(lat),
    ]
    return "\n".join(lines)


def update_docs(section: str) -> None:
    text = DOCS.read_text(encoding="utf-8") if DOCS.exists() else "# Benchmarks\n\n"
    start = text.find("## Recall\n")
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + ("" if end == -1 else "\n" + text[end + 1 :])
    DOCS.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--update-docs",
        action="store_true",
        help="replace the Recall section of docs/benchmarks.md",
    )
    parser.add_argument("--sizes", default="1000,10000", help="latency corpus sizes ('' to skip)")
    parser.add_argument(
        "--no-latency", action="store_true", help="quality only (the same as --sizes '')"
    )
    parser.add_argument("--runs", type=int, default=50, help="warm recalls per latency row")
    parser.add_argument(
        "--build-limit",
        type=int,
        default=10_000,
        help="above this size the hybrid first build is estimated from the smaller run's rate",
    )
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    parser.add_argument("--only", choices=list(SETS), help="quality on one set only (no report)")
    args = parser.parse_args()
    if args.update_docs and (args.no_latency or not args.sizes):
        parser.error("--update-docs rewrites the latency table too: it needs the latency run")
    encoder = embed.Encoder() if embed.minilm_available() else None
    data = {name: json.loads(path.read_text(encoding="utf-8")) for name, path in SETS.items()}
    qualities: dict[str, Any] = {}
    violations: list[str] = []
    lat: list[dict[str, Any]] = []
    if args.only:
        with tempfile.TemporaryDirectory() as tmp:
            result, bad = quality(data[args.only], Path(tmp), encoder)
        print("\n".join(quality_table(args.only, data[args.only], result)))
        return 1 if bad else 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in SETS:
            qualities[name], bad = quality(data[name], Path(tmp) / name, encoder)
            violations += bad
            print(
                "\n".join(quality_table(name, data[name], qualities[name])),
                file=sys.stderr,
                flush=True,
            )
        modes = ["lexical", *(["hybrid"] if encoder is not None else [])]
        rate: float | None = None
        sizes = [] if args.no_latency else [int(s) for s in args.sizes.split(",") if s]
        for n in sizes:
            for mode in modes:
                row = latency(
                    data[LATENCY_SET],
                    n,
                    Path(tmp),
                    mode,
                    encoder,
                    args.runs,
                    build_limit=args.build_limit,
                    per_memory=rate,
                )
                if mode == "hybrid" and not row["estimated"]:
                    rate = row["build_s"] / n
                lat.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    section = report(qualities, data, lat, encoder is not None)
    print(section)
    if args.json:
        args.json.write_text(
            json.dumps({"quality": qualities, "latency": lat}, indent=1), encoding="utf-8"
        )
    if args.update_docs:
        update_docs(section)
    if violations:
        print("paraphrase overlap violations:", *violations, sep="\n  ", file=sys.stderr)
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
