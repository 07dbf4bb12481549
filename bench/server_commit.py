"""Durable commits alone: concurrent one-entry writes through the server's storage, no HTTP.

``bench/server_load.py`` measures the whole server; on a loaded machine its latency is
mostly waiting for a CPU. This one isolates what a commit costs: N threads, each
writing one key of its own repository through ``Storage.write`` on SQLite
(``synchronous=FULL``) or PostgreSQL (``fsync`` on), for a few seconds. It prints
writes/s, p50/p99 per write, CPU per write (this process) and, with ``--strace``,
fdatasync/fsync calls per write (SQLite: strace -f -c on this process's threads).

Each build runs in a process of its own: this tree's (``new``) and, with ``--old DIR``,
an older checkout's storage (imported from DIR with this interpreter), taking turns
for ``--rounds`` rounds.

    nice .venv/bin/python bench/server_commit.py [--threads 1,8,32] [--seconds 3]
        [--db sqlite,postgres] [--old DIR] [--rounds 3] [--strace]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKER = r"""
import json, os, statistics, subprocess, sys, tempfile, threading, time
root, url, threads, seconds, trace = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5] == "1"
sys.path.insert(0, root)
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
import teamsync
assert teamsync.__file__.startswith(root), teamsync.__file__
from teamsync.server.storage import WriteRequest, open_storage
store = open_storage(url)
lat, stop, ready = [], [0.0], threading.Barrier(threads + 1)
lock = threading.Lock()
def run(cid):
    mine = []
    ready.wait()
    i = 0
    while time.perf_counter() < stop[0]:
        t0 = time.perf_counter()
        store.write(f"acme/c{cid}", WriteRequest(upserts={"note.md": f"put {i}\n"}, who="b"), time.time())
        mine.append(time.perf_counter() - t0)
        i += 1
    with lock:
        lat.extend(mine)
for cid in range(threads):  # every repository exists before the clock starts
    store.write(f"acme/c{cid}", WriteRequest(upserts={"note.md": "first\n"}, who="b"), time.time())
ts = [threading.Thread(target=run, args=(c,)) for c in range(threads)]
for t in ts:
    t.start()
tracer = None
if trace:
    out = tempfile.mktemp()
    tracer = subprocess.Popen(["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", out, "-p", str(os.getpid())], stderr=subprocess.DEVNULL)
    time.sleep(1.0)
stop[0] = time.perf_counter() + 3600
ready.wait()
c0, w0 = time.process_time(), time.perf_counter()
stop[0] = w0 + seconds
for t in ts:
    t.join()
wall, cpu = time.perf_counter() - w0, time.process_time() - c0
syncs = None
if tracer is not None:
    tracer.terminate(); tracer.wait()
    syncs = sum(int(line.split()[3]) for line in open(out) if line.split()[-1:] in (["fsync"], ["fdatasync"]))
lat.sort()
print(json.dumps({"n": len(lat), "rps": len(lat) / wall, "p50": statistics.median(lat) * 1000,
                  "p99": lat[int(len(lat) * 0.99)] * 1000, "cpu": cpu * 1000 / len(lat), "syncs": syncs}))
store.close()
"""


def one(root: str, url: str, threads: int, seconds: float, trace: bool) -> dict[str, float]:
    argv = [sys.executable, "-c", WORKER, root, url, str(threads), str(seconds), str(int(trace))]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=600)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,8,32")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--db", default="sqlite")
    parser.add_argument("--old", metavar="DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--strace", action="store_true", help="count fsyncs (SQLite)")
    args = parser.parse_args()
    builds = {"new": str(ROOT)} | ({"old": str(Path(args.old).resolve())} if args.old else {})
    trace = args.strace and shutil.which("strace") is not None
    print(f"load average before: {Path('/proc/loadavg').read_text().strip()}", flush=True)
    sys.path.insert(0, str(ROOT))
    from testing.postgres import start_cluster

    with tempfile.TemporaryDirectory() as tmp:
        cluster = start_cluster(durable=True) if "postgres" in args.db else None
        try:
            for db in args.db.split(","):
                rows: dict[tuple[str, int], list[dict[str, float]]] = {}
                for r in range(args.rounds):
                    for name, root in builds.items():
                        for n in (int(t) for t in args.threads.split(",")):
                            if db == "sqlite":
                                url = f"sqlite:///{tmp}/{name}-{r}-{n}.sqlite3"
                            else:
                                assert cluster is not None
                                url = cluster.create_database()
                            got = one(root, url, n, args.seconds, trace and db == "sqlite")
                            rows.setdefault((name, n), []).append(got)
                print(f"\n{db}: Storage.write of one entry, N threads (median of {args.rounds})")
                print(f"{'build':6} {'threads':>7} {'writes/s':>9} {'p50 ms':>8} {'p99 ms':>8}"
                      f" {'CPU ms/write':>12} {'fsyncs/write':>12}")  # fmt: skip
                for (name, n), got in rows.items():
                    syncs = [g["syncs"] / g["n"] for g in got if g.get("syncs") is not None]
                    print(f"{name:6} {n:>7} {statistics.median(g['rps'] for g in got):>9.0f}"
                          f" {statistics.median(g['p50'] for g in got):>8.2f}"
                          f" {statistics.median(g['p99'] for g in got):>8.1f}"
                          f" {statistics.median(g['cpu'] for g in got):>12.3f}"
                          f" {(f'{statistics.median(syncs):.2f}' if syncs else '-'):>12}", flush=True)  # fmt: skip
        finally:
            if cluster is not None:
                cluster.stop()
    print(f"\nload average after: {Path('/proc/loadavg').read_text().strip()}", flush=True)


if __name__ == "__main__":
    main()
