"""Benchmark the teamsync server: req/s and p50/p99 latency.

Scenarios: no-change pulls (conditional GET -> 304), full pulls (200 entries of
~1 KB), one-entry pushes (each client upserts its own key with a per-key
baseChecksums precondition), with 1, 8 and 32 concurrent clients, on SQLite
(``synchronous=FULL``) and PostgreSQL (the test harness's throwaway cluster,
``fsync=off``). The server is a real ``teamsync serve`` (uvicorn, one process)
on loopback; clients are threads with one httpx2 connection each.

    .venv/bin/python bench/server.py [--requests N] [--no-docs]

Writes the "Server" section of docs/benchmarks.md.
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
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from testing.postgres import start_cluster  # noqa: E402
from testing.server import free_port  # noqa: E402

TEAMSYNC = str(Path(sys.executable).with_name("teamsync"))
PATH = "/api/claude_code/team_memory?repo=acme/widgets"
CONCURRENCY = (1, 8, 32)
ENTRIES = 200


def serve(db_url: str) -> tuple[subprocess.Popen[bytes], str, str]:
    made = subprocess.run(
        [TEAMSYNC, "--json", "token", "create", "--repo", "acme/widgets", "--db", db_url],
        capture_output=True,
        text=True,
        check=True,
    )
    token = json.loads(made.stdout)["token"]
    port = free_port()
    proc = subprocess.Popen(
        [TEAMSYNC, "serve", "--port", str(port), "--db", db_url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if httpx2.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url, token
        except httpx2.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("teamsync serve did not start")


def run(
    clients: int, total: int, one: Callable[[httpx2.Client, int, int], None], url: str, token: str
) -> dict[str, float]:
    per = max(1, total // clients)
    lat: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients + 1)

    def worker(cid: int) -> None:
        mine = []
        with httpx2.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as c:
            one(c, cid, -1)  # warm the connection
            barrier.wait()
            for i in range(per):
                t0 = time.perf_counter()
                one(c, cid, i)
                mine.append(time.perf_counter() - t0)
        with lock:
            lat.extend(mine)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    lat.sort()
    return {
        "rps": len(lat) / wall,
        "p50": statistics.median(lat) * 1000,
        "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000,
        "n": len(lat),
    }


def scenarios(url: str, token: str) -> dict[str, Callable[[httpx2.Client, int, int], None]]:
    with httpx2.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as c:
        seed = {f"m{i:03}.md": f"---\nname: m{i}\n---\n" + "x" * 1000 for i in range(ENTRIES)}
        assert c.put(PATH, json={"entries": seed}).status_code == 200
        etag = c.get(PATH).headers["etag"]
    sums: dict[int, str | None] = {}

    def not_modified(c: httpx2.Client, cid: int, i: int) -> None:
        assert c.get(PATH, headers={"If-None-Match": etag}).status_code in (200, 304)

    def full(c: httpx2.Client, cid: int, i: int) -> None:
        assert c.get(PATH).status_code == 200

    def push(c: httpx2.Client, cid: int, i: int) -> None:
        key = f"client-{cid}.md"
        text = f"---\nname: c{cid}\n---\nround {i}\n"
        body = {"entries": {key: text}, "baseChecksums": {key: sums.get(cid)}}
        resp = c.put(PATH, json=body)
        assert resp.status_code == 200, resp.text
        import hashlib

        sums[cid] = "sha256:" + hashlib.sha256(text.encode()).hexdigest()

    return {
        "no-change pull (304)": not_modified,
        "full pull (200 x 1 KB)": full,
        "one-entry push": push,
    }


def bench(label: str, db_url: str, total: int) -> list[tuple[str, str, int, dict[str, float]]]:
    proc, url, token = serve(db_url)
    rows = []
    try:
        for name, one in scenarios(url, token).items():
            for clients in CONCURRENCY:
                n = total // 2 if name.startswith("full") else total
                r = run(clients, n, one, url, token)
                rows.append((label, name, clients, r))
                print(
                    f"{label:10} {name:24} {clients:3} clients  {r['rps']:8.0f} req/s  "
                    f"p50 {r['p50']:6.1f} ms  p99 {r['p99']:6.1f} ms  (n={r['n']:.0f})",
                    flush=True,
                )
    finally:
        proc.terminate()
        proc.wait(20)
    return rows


def table(rows: list[tuple[str, str, int, dict[str, float]]], total: int) -> str:
    cpu = os.cpu_count()
    lines = [
        "## Server",
        "",
        f"`bench/server.py` (`--requests {total}` per cell; full pulls use half), measured "
        f"{time.strftime('%Y-%m-%d')} on {cpu} cores, Python {platform.python_version()}: a real "
        "`teamsync serve` (one uvicorn process) on loopback, clients are threads with one "
        "connection each. SQLite runs with `synchronous=FULL` (every push is fsynced); "
        "PostgreSQL is the test harness's throwaway cluster (`fsync=off`). The store holds "
        f"{ENTRIES} memories of ~1 KB; a push upserts one entry with a per-key precondition. "
        f"1-minute load average at the end: {os.getloadavg()[0]:.1f} (other jobs shared the "
        "machine; tail latencies are sensitive to that).",
        "",
        "| storage | scenario | clients | req/s | p50 ms | p99 ms |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for label, name, clients, r in rows:
        lines.append(
            f"| {label} | {name} | {clients} | {r['rps']:.0f} | {r['p50']:.1f} | {r['p99']:.1f} |"
        )
    target = next(
        r for lab, n, c, r in rows if lab == "SQLite" and n == "one-entry push" and c == 8
    )
    verdict = "met" if target["p99"] <= 50 else "NOT met"
    lines += [
        "",
        f"Target p99 one-entry push <= 50 ms at 8 clients on SQLite: {verdict} "
        f"({target['p99']:.1f} ms).",
        "",
    ]
    return "\n".join(lines)


def write_section(text: str) -> None:
    path = ROOT / "docs" / "benchmarks.md"
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start = old.find("## Server\n")
    if start == -1:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + 1)
        new = old[:start] + text + ("" if end == -1 else old[end:])
    path.parent.mkdir(exist_ok=True)
    path.write_text(new, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=800)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rows += bench("SQLite", f"sqlite:///{tmp}/bench.sqlite3", args.requests)
    cluster = start_cluster()
    try:
        rows += bench("PostgreSQL", cluster.create_database(), args.requests)
    finally:
        cluster.stop()
    text = table(rows, args.requests)
    print(text)
    if not args.no_docs:
        write_section(text)


if __name__ == "__main__":
    main()
