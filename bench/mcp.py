"""`teamsync mcp`: time to answer `initialize`, and a search at 1,000 memories, over stdio.

    python bench/mcp.py [--runs 11] [--memories 1000] [--queries 10]

Start-up: the server is spawned as an assistant spawns it (``python -m teamsync
--dir D mcp``) and sent a JSON-RPC ``initialize``; the time is from spawn to the
answer's line on stdout. Beside it, in the same run and alternating: a bare
``python -c pass`` and ``python -c "import mcp.server.lowlevel"`` (the official
SDK's own import, the floor any server built on it pays).

Search: one server over a directory of ``--memories`` generated memories;
``tools/call memory_search`` round trips after one warm-up call, against the
same query through the library (``teamsync.recall.recall``) in this process.
Medians; the load average is printed beside them (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

WORDS = (
    "deploy release cache billing invoice staging database migration schema token rotate "
    "latency dashboard alert pager oncall review feature flag rollout canary rollback queue "
    "worker retry timeout webhook partner export import backup restore audit compliance "
    "search index shard replica region failover budget quota tenant customer support"
).split()
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


def make_memdir(root: Path, n: int, seed: int = 7) -> Path:
    rng = random.Random(seed)
    team = root / "team"
    team.mkdir(parents=True)
    for i in range(n):
        words = rng.sample(WORDS, 6)
        body = " ".join(rng.choice(WORDS) for _ in range(60))
        (team / f"project_{i:05d}.md").write_text(
            f"---\nname: {' '.join(words[:3])} {i}\ndescription: {' '.join(words)}\n"
            f"type: project\n---\n\n{body}\n",
            encoding="utf-8",
        )
    return root


def send(stdin: IO[str], message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message) + "\n")
    stdin.flush()


def read_reply(stdout: IO[str], wanted: int) -> dict[str, Any]:
    while True:
        line = stdout.readline()
        if not line:
            raise RuntimeError("the server closed stdout")
        reply: dict[str, Any] = json.loads(line)
        if reply.get("id") == wanted:
            return reply


def spawn(memdir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "teamsync", "--dir", str(memdir), "mcp", "--offline"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "ANTHROPIC_API_KEY": ""},
    )


def time_initialize(memdir: Path) -> float:
    start = time.perf_counter()
    proc = spawn(memdir)
    assert proc.stdin is not None and proc.stdout is not None
    send(proc.stdin, INIT)
    read_reply(proc.stdout, 1)
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(10)
    return elapsed


def time_command(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def search_times(memdir: Path, queries: list[str]) -> list[float]:
    proc = spawn(memdir)
    assert proc.stdin is not None and proc.stdout is not None
    send(proc.stdin, INIT)
    read_reply(proc.stdout, 1)
    send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = []
    for i, query in enumerate([queries[0], *queries], start=2):
        start = time.perf_counter()
        call = {"name": "memory_search", "arguments": {"query": query}}
        send(proc.stdin, {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call})
        reply = read_reply(proc.stdout, i)
        assert "result" in reply, reply
        times.append(time.perf_counter() - start)
    proc.stdin.close()
    proc.wait(10)
    return times[1:]  # the first call builds the index


def library_times(memdir: Path, queries: list[str]) -> list[float]:
    from teamsync.config import Settings
    from teamsync.recall.recall import recall

    settings = Settings.build(dir=memdir, environ={"HOME": os.environ.get("HOME", "/tmp")})
    recall(settings, queries[0], offline=True)
    times = []
    for query in queries:
        start = time.perf_counter()
        recall(settings, query, offline=True)
        times.append(time.perf_counter() - start)
    return times


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(3)
    queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(args.queries)]
    with tempfile.TemporaryDirectory() as tmp:
        small = make_memdir(Path(tmp) / "small", 10)
        big = make_memdir(Path(tmp) / "big", args.memories)
        rows: dict[str, list[float]] = {
            "python -c pass": [],
            "import mcp.server.lowlevel": [],
            "teamsync mcp: initialize answered": [],
        }
        time_initialize(small)  # warm the bytecode caches
        for _ in range(args.runs):
            rows["python -c pass"].append(time_command("pass"))
            rows["import mcp.server.lowlevel"].append(time_command("import mcp.server.lowlevel"))
            rows["teamsync mcp: initialize answered"].append(time_initialize(small))
        load = os.getloadavg()
        print(
            f"## Start-up, median of {args.runs} (load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})\n"
        )
        print("| what | median | min | max |\n|---|---|---|---|")
        for name, values in rows.items():
            print(
                f"| {name} | {ms(values)} | {min(values) * 1000:.0f} ms | {max(values) * 1000:.0f} ms |"
            )
        over_mcp = search_times(big, queries)
        direct = library_times(big, queries)
        load = os.getloadavg()
        print(
            f"\n## memory_search at {args.memories} memories, median of {len(queries)} "
            f"(load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})\n"
        )
        print("| path | median | max |\n|---|---|---|")
        print(
            f"| tools/call memory_search over stdio | {ms(over_mcp)} | {max(over_mcp) * 1000:.0f} ms |"
        )
        print(f"| teamsync.recall.recall in process | {ms(direct)} | {max(direct) * 1000:.0f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
