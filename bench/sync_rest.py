"""REST part of ``bench/sync.py``: requests and bytes down and up per operation, old client vs new.

Both clients are the real ``teamsync`` CLI, run as separate processes against
one real ``teamsync`` server app under uvicorn on loopback: the *new* client
is this tree, the *old* one is another tree given with ``--old-tree`` (the
code before issue 15, e.g. the lead's main checkout), selected by
``PYTHONPATH``. Each request and each byte the server sends (status line,
headers, body), and each the client sends, is counted by
:class:`testing.counting.Counter`.

Operations, per size: the initial pull of a fresh teammate, a no-op ``sync``,
a one-file pull (a teammate changed one memory), a one-file push.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from teamsync.server.storage import open_storage
from testing.counting import Counter
from testing.server import RestMate, app_for, make_rest_team, token_for, uvicorn_server

OPS = ("initial pull", "no-op sync", "one-file pull", "one-file push")


def memory_text(i: int, extra: str = "") -> str:
    return (
        f"---\nname: memory {i}\ndescription: fact number {i} about the project\n"
        f"type: project\n---\nThe build for component {i} needs flag -O{i % 3}.{extra}\n"
        + "Detail line about the build and its flags.\n"
        * 20
    )


def cli(mate: RestMate, tree: str, *args: str) -> float:
    env = {**mate.environ, "PYTHONPATH": tree}
    from testing.gitrepos import TEAMSYNC

    start = time.perf_counter()
    done = subprocess.run(
        [TEAMSYNC, *args], env=env, cwd=mate.home, capture_output=True, text=True, timeout=600
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr[-2000:]}")
    return took


def bench_rest(sizes: list[int], trees: dict[str, str], work: Path) -> list[dict[str, Any]]:
    storage = open_storage(f"sqlite:///{work / 'server.sqlite3'}")
    counter = Counter(app_for(storage, max_entries=20_000))
    rows: list[dict[str, Any]] = []
    with uvicorn_server(counter) as url:
        for n in sizes:
            for label, tree in trees.items():
                repo = f"bench/{label}-{n}"
                root = work / f"{label}-{n}"
                root.mkdir()
                alice, bob = make_rest_team(
                    root, url, [token_for(storage, repo), token_for(storage, repo)], repo=repo
                )
                for i in range(n):
                    alice.write(f"m{i:05d}.md", memory_text(i))
                cli(alice, tree, "sync")

                def measure(
                    op: str,
                    mate: RestMate,
                    *args: str,
                    n: int = n,
                    label: str = label,
                    tree: str = tree,
                ) -> None:
                    counter.reset()
                    took = cli(mate, tree, *args)
                    rows.append(
                        {
                            "client": label,
                            "memories": n,
                            "operation": op,
                            "requests": counter.requests,
                            "bytes_down": counter.down,
                            "bytes_up": counter.up,
                            "seconds": round(took, 3),
                            "calls": [
                                f"{r.method} {r.target.split('?')[0]} {r.status}"
                                for r in counter.log
                            ],
                        }
                    )

                measure("initial pull", bob, "pull")
                measure("no-op sync", bob, "sync")
                alice.write("m00001.md", memory_text(1, " Changed by alice."))
                cli(alice, tree, "sync")
                measure("one-file pull", bob, "pull")
                bob.write("m00002.md", memory_text(2, " Changed by bob."))
                measure("one-file push", bob, "sync")
    storage.close()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    out = [
        "| memories | operation | client | requests | bytes down | bytes up | wall s |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['memories']:,} | {r['operation']} | {r['client']} | {r['requests']} | "
            f"{r['bytes_down']:,} | {r.get('bytes_up', 0):,} | {r['seconds']:.2f} |"
        )
    return "\n".join(out)


def default_trees(old: str | None) -> dict[str, str]:
    here = str(Path(__file__).resolve().parent.parent)
    trees = {"new": here}
    if old:
        trees["old"] = old
    return trees


if __name__ == "__main__":  # pragma: no cover - run through bench/sync.py --rest
    import argparse
    import json
    import tempfile

    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="100,1000")
    p.add_argument("--old-tree", default=os.environ.get("TEAMSYNC_OLD_TREE"))
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="teamsync-rest-bench-") as tmp:
        result = bench_rest(
            [int(s) for s in a.sizes.split(",")], default_trees(a.old_tree), Path(tmp)
        )
    print(table(result))
    print(json.dumps(result))
