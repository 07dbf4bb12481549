"""Recall benchmark: quality on a golden set, lexical latency at scale, LLM prompt size.

Run: ``.venv/bin/python bench/recall_eval.py [--update-docs]``

* Quality: ``bench/recall_golden.json`` (memories + queries, see its ``about``).
  recall@5 (share of a query's relevant memories in the top 5, averaged) and
  MRR@5 (1 / rank of the first relevant memory in the top 5, else 0), for the
  lexical path with and without the expansion table, per query kind; for the
  Claude path only when ``ANTHROPIC_API_KEY`` is set (it calls the real API then).
  Paraphrase and held-out queries are verified to share no indexed word with
  their relevant memory (an unexpanded lexical query must not match it).
* Latency: one recall as the CLI runs it (open the cached FTS index, stat-walk
  the directory, rank) over 200 and 10,000 memories; p50/p95 of 200 queries.
* Prompt size: the characters an LLM recall sends for a 200-memory manifest, and
  an estimate of its tokens at ~4 characters per token (count_tokens is a
  network call, so it is not used).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from teamsync.recall.lexical import LexicalIndex, lexical_search  # noqa: E402
from teamsync.recall.llm import SELECT_SYSTEM  # noqa: E402

GOLDEN = ROOT / "bench" / "recall_golden.json"
DOCS = ROOT / "docs" / "benchmarks.md"
K = 5
MRR_DEPTH = 5


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


def evaluate(
    index: LexicalIndex, queries: list[dict[str, Any]], *, expand: bool
) -> dict[str, dict[str, float]]:
    per_kind: dict[str, list[tuple[float, float]]] = {}
    for q in queries:
        ranked = [h.path for h in index.search(q["query"], K, expand=expand)]
        relevant = set(q["relevant"])
        found = len(relevant & set(ranked[:K])) / len(relevant)
        rr = next((1.0 / (i + 1) for i, p in enumerate(ranked[:MRR_DEPTH]) if p in relevant), 0.0)
        for kind in (q["kind"], "all"):
            per_kind.setdefault(kind, []).append((found, rr))
    return {
        kind: {
            "n": len(v),
            "recall@5": statistics.mean(a for a, _ in v),
            "mrr": statistics.mean(b for _, b in v),
        }
        for kind, v in per_kind.items()
    }


def overlap_violations(index: LexicalIndex, queries: list[dict[str, Any]]) -> list[str]:
    bad = []
    for q in queries:
        if q["kind"] == "keyword":
            continue
        matched = {h.path for h in index.search(q["query"], 10_000, expand=False)}
        if matched & set(q["relevant"]):
            bad.append(q["query"])
    return bad


def llm_quality(memdir: Path, queries: list[dict[str, Any]]) -> dict[str, dict[str, float]] | str:
    if not os.environ.get("ANTHROPIC_API_KEY"):
        return "not measured: ANTHROPIC_API_KEY is not set in this environment"
    from teamsync.config import Settings
    from teamsync.recall import llm
    from teamsync.recall.recall import build_manifest

    settings = Settings.build(dir=memdir)
    claude = llm.from_settings(settings)
    assert claude is not None
    manifest, _ = build_manifest(memdir, settings.state_dir)
    per_kind: dict[str, list[tuple[float, float]]] = {}
    for q in queries:
        try:
            ranked = claude.select_memories(q["query"], manifest, K)
        except Exception:  # noqa: BLE001 - a failed call counts as a miss
            ranked = []
        relevant = set(q["relevant"])
        found = len(relevant & set(ranked[:K])) / len(relevant)
        rr = next((1.0 / (i + 1) for i, p in enumerate(ranked[:K]) if p in relevant), 0.0)
        for kind in (q["kind"], "all"):
            per_kind.setdefault(kind, []).append((found, rr))
    return {
        k: {
            "n": len(v),
            "recall@5": statistics.mean(a for a, _ in v),
            "mrr": statistics.mean(b for _, b in v),
        }
        for k, v in per_kind.items()
    }


def synthetic(golden: list[dict[str, Any]], n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` memories: the golden ones plus filler built from their vocabulary (realistic sizes)."""
    rng = random.Random(seed)
    words = sorted(
        {
            w.strip(".,:;()`'\"*").lower()
            for m in golden
            for w in (m["body"] + " " + m["description"]).split()
        }
        - {""}
    )
    kinds = ["user", "feedback", "project", "reference"]
    out = list(golden)
    for i in range(n - len(golden)):
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


def latency(
    golden: list[dict[str, Any]],
    golden_queries: list[dict[str, Any]],
    n: int,
    work: Path,
    *,
    cli: bool = False,
) -> dict[str, float]:
    queries = [q["query"] for q in golden_queries]
    memdir = work / f"mem{n}"
    memories = synthetic(golden, n)
    write_memdir(memdir, memories, start=time.time() - n)
    size = sum(len(render(m).encode()) for m in memories)
    cache = work / f"cache{n}.sqlite"
    t0 = time.perf_counter()
    lexical_search(memdir, "warm up the cache", cache_path=cache)
    cold = time.perf_counter() - t0
    samples, cpu = [], []
    for i in range(200):
        q = queries[i % len(queries)]
        t, c = time.perf_counter(), time.process_time()
        lexical_search(memdir, q, cache_path=cache)
        samples.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    samples.sort()
    cpu.sort()
    index = LexicalIndex(memdir, cache)
    ranks = []
    for i in range(200):
        t = time.perf_counter()
        index.search(queries[i % len(queries)], K)
        ranks.append((time.perf_counter() - t) * 1000)
    at_scale = evaluate(index, golden_queries, expand=True)["all"]
    index.close()
    ranks.sort()
    return {
        "memories": n,
        "bytes": size,
        "cold_build_s": cold,
        "p50_ms": samples[99],
        "p95_ms": samples[189],
        "max_ms": samples[-1],
        "cpu_p50_ms": cpu[99],
        "rank_p50_ms": ranks[99],
        "cli_ms": cli_time(memdir, work, queries) if cli else 0.0,
        "recall_at_5": at_scale["recall@5"],
        "mrr": at_scale["mrr"],
    }


def cli_time(memdir: Path, work: Path, queries: list[str]) -> float:
    """Median wall time of the real ``teamsync recall --offline`` process (warm cache), 5 runs."""
    import subprocess

    exe = Path(sys.executable).parent / "teamsync"
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(work / "xdg-cache"),
        "XDG_STATE_HOME": str(work / "xdg-state"),
    }
    env.pop("ANTHROPIC_API_KEY", None)
    args = [str(exe), "--dir", str(memdir), "--json", "recall", "--offline"]
    subprocess.run([*args, "warm up"], env=env, capture_output=True, check=True, cwd=work)
    times = []
    for q in queries[:5]:
        t = time.perf_counter()
        subprocess.run([*args, q], env=env, capture_output=True, check=True, cwd=work)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def manifest_size(golden: list[dict[str, Any]], work: Path) -> dict[str, Any]:
    from teamsync.recall.recall import build_manifest

    memdir = work / "manifest200"
    write_memdir(memdir, synthetic(golden, 200), start=time.time() - 200)
    manifest, offered = build_manifest(memdir, work / "state")
    query = "how do we roll back a failed deploy"
    prompt = f"Query: {query}\n\nAvailable memories:\n{manifest}"
    system = SELECT_SYSTEM.format(limit=K)
    chars = len(prompt) + len(system)
    return {"entries": len(offered), "chars": chars, "est_tokens": round(chars / 4)}


def table(rows: dict[str, dict[str, float]]) -> list[str]:
    order = ["keyword", "paraphrase", "heldout", "all"]
    return [
        f"| {k} | {rows[k]['n']:.0f} | {rows[k]['recall@5']:.3f} | {rows[k]['mrr']:.3f} |"
        for k in order
        if k in rows
    ]


def report(
    quality: dict[str, Any],
    lat: list[dict[str, float]],
    manifest: dict[str, Any],
    llm_result: Any,
    golden: dict[str, Any],
    violations: list[str],
    load: tuple[float, ...],
) -> str:
    kinds = {
        k: sum(q["kind"] == k for q in golden["queries"])
        for k in ("keyword", "paraphrase", "heldout")
    }
    lines = [
        "## Recall",
        "",
        f"Measured by `bench/recall_eval.py` on {time.strftime('%Y-%m-%d')} ({os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}, SQLite {__import__('sqlite3').sqlite_version}).",
        "",
        f"Golden set `bench/recall_golden.json`: {len(golden['memories'])} team memories of a fictional payments "
        f"company, {len(golden['queries'])} queries: {kinds['keyword']} keyword, {kinds['paraphrase']} paraphrase "
        f"and {kinds['heldout']} held-out paraphrase. A paraphrase shares no indexed word with its memory "
        f"(verified: {len(violations)} violations). Held-out paraphrases were written after the expansion "
        "table (`teamsync/recall/synonyms.py`) was frozen and were never tuned against; the table and the "
        "other paraphrases were written by the same author, so the paraphrase row is optimistic.",
        "",
        "Lexical path (FTS5 + bm25 + expansion table), top 5:",
        "",
        "| queries | n | recall@5 | MRR@5 |",
        "|---|---|---|---|",
        *table(quality["expanded"]),
        "",
        "Without the expansion table:",
        "",
        "| queries | n | recall@5 | MRR@5 |",
        "|---|---|---|---|",
        *table(quality["plain"]),
        "",
    ]
    if isinstance(llm_result, str):
        lines += [f"Claude path: {llm_result}.", ""]
    else:
        lines += [
            "Claude path (real API):",
            "",
            "| queries | n | recall@5 | MRR@5 |",
            "|---|---|---|---|",
            *table(llm_result),
            "",
        ]
    lines += [
        "Lexical latency of one recall as the CLI runs it (open the on-disk FTS cache, stat-walk the "
        "directory, re-read changed files, rank), 200 queries each:",
        "",
        "| memories | corpus | cold index build | p50 | p95 | max | CPU p50 | ranking only, p50 |",
        "|---|---|---|---|---|---|---|---|",
        *[
            f"| {r['memories']:,} | {r['bytes'] / 1e6:.1f} MB | {r['cold_build_s']:.2f} s | {r['p50_ms']:.1f} ms "
            f"| {r['p95_ms']:.1f} ms | {r['max_ms']:.1f} ms | {r['cpu_p50_ms']:.1f} ms "
            f"| {r['rank_p50_ms']:.1f} ms |"
            for r in lat
        ],
        "",
        f"Load average while measuring: {' / '.join(f'{x:.1f}' for x in load)} (1/5/15 min; the machine is "
        "shared, so wall times are upper bounds; CPU p50 counts both threads). The whole `teamsync recall --offline` process at "
        f"{lat[-1]['memories']:,} memories (Python start-up, imports, reading and drift-checking the 5 hits) "
        f"took {lat[-1]['cli_ms']:.0f} ms (median of 5, warm cache).",
        "",
        _verdict(lat[-1], load),
        "",
        "The large corpora are the golden memories plus synthetic ones drawn from the golden "
        "vocabulary (about a thousand words), so posting lists are long and ranking is slower "
        "than on real, more varied text. The same golden queries against those corpora (the "
        "synthetic memories act as distractors that share the golden vocabulary): "
        + "; ".join(
            f"{r['memories']:,} memories: recall@5 {r['recall_at_5']:.3f}, MRR@5 {r['mrr']:.3f}"
            for r in lat
        )
        + ".",
        "",
        f"Claude recall input for a {manifest['entries']}-memory manifest: {manifest['chars']:,} characters "
        f"(system prompt + query + manifest), about {manifest['est_tokens']:,} tokens estimated at 4 "
        "characters per token (an estimate, not the API's count_tokens, which needs the network).",
        "",
    ]
    return "\n".join(lines)


def _verdict(row: dict[str, float], load: tuple[float, ...]) -> str:
    target = 100.0
    wall = "met" if row["p50_ms"] <= target else "missed"
    cpu = "within" if row["cpu_p50_ms"] <= target else "over"
    return (
        f"Target p50 <= {target:.0f} ms at {row['memories']:,} memories: wall-clock p50 {wall} "
        f"({row['p50_ms']:.0f} ms at load {load[0]:.1f} on {os.cpu_count()} CPUs); the CPU time "
        f"per recall ({row['cpu_p50_ms']:.0f} ms p50) is {cpu} it."
    )


def update_docs(section: str) -> None:
    text = DOCS.read_text(encoding="utf-8") if DOCS.exists() else "# Benchmarks\n\n"
    start = text.find("## Recall\n")
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + ("" if end == -1 else text[end + 1 :])
    DOCS.parent.mkdir(parents=True, exist_ok=True)
    DOCS.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--update-docs",
        action="store_true",
        help="replace the Recall section of docs/benchmarks.md",
    )
    parser.add_argument("--sizes", default="200,10000", help="latency corpus sizes")
    args = parser.parse_args()
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        memdir = work / "golden"
        write_memdir(memdir, golden["memories"], start=time.time() - 1000)
        index = LexicalIndex(memdir)
        index.refresh()
        violations = overlap_violations(index, golden["queries"])
        quality = {
            "expanded": evaluate(index, golden["queries"], expand=True),
            "plain": evaluate(index, golden["queries"], expand=False),
        }
        index.close()
        llm_result = llm_quality(memdir, golden["queries"])
        sizes = [int(n) for n in args.sizes.split(",")]
        lat = [
            latency(golden["memories"], golden["queries"], n, work, cli=n == sizes[-1])
            for n in sizes
        ]
        manifest = manifest_size(golden["memories"], work)
    section = report(quality, lat, manifest, llm_result, golden, violations, os.getloadavg())
    print(section)
    if args.update_docs:
        update_docs(section)
    if violations:
        print("paraphrase overlap violations:", *violations, sep="\n  ", file=sys.stderr)
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
