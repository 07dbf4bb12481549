"""Memory Stores part of ``bench/sync.py``: requests and bytes per operation, the store
beside git and legacy REST.

All three backends are driven by the real ``teamsync`` CLI (separate processes).
REST and the store run against one real ``teamsync`` server app under uvicorn on
loopback, the same app serving the legacy dialect and the Memory Stores API; git
against a bare repository served over git's smart HTTP by git's own
``git http-backend`` (:mod:`testing.git_http`), under uvicorn on loopback too.
Every request and byte is counted by :class:`testing.counting.Counter` around
each app. The store is seeded straight into the server's database (one
transaction), the git branch by one commit, the legacy repository by one
teammate's push, so all start from the same N memories.

Operations, per size: a fresh teammate's initial pull, a no-op ``sync``, a
one-file pull (a teammate changed one memory) and a one-file push. ``init``
reads the remote first and is not counted; git's ``init`` fetches the whole
branch into its cache clone, which is removed before the initial pull so that
pull is a cold clone (as in the Sync section's ``teamsync pull``).
Usage: ``python bench/sync.py --memstore [--sizes 1000,10000]``.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from teamsync.server.memstore_storage import MemstoreDB, new_id
from teamsync.server.storage import Storage, open_storage
from teamsync.server.storage_sql import SqlStorage
from teamsync.sync.config import SyncConfig
from teamsync.wire import memory_sha256
from testing.counting import Counter
from testing.git_http import GitHttp
from testing.gitrepos import BRANCH, TEAMSYNC, Member, make_team, quiet_output, seed_remote
from testing.memstore import PREFIX, MemstoreMate, sdk
from testing.server import app_for, make_rest_team, token_for, uvicorn_server

OPS = ("initial pull", "no-op sync", "one-file pull", "one-file push")


def memory_text(i: int, extra: str = "") -> str:
    return (
        f"---\nname: memory {i}\ndescription: fact number {i} about the project\n"
        f"type: project\n---\nThe build for component {i} needs flag -O{i % 3}.{extra}\n"
        + "Detail line about the build and its flags.\n"
        * 20
    )


def cli(mate: Member, *args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [TEAMSYNC, *args], env=mate.environ, cwd=mate.home, capture_output=True, text=True,
        timeout=1800,
    )  # fmt: skip
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr[-2000:]}")
    return took


def seed_store(storage: Storage, store_id: str, n: int) -> None:
    """N memories under ``/team/`` in one transaction (each with its ``created`` version)."""
    assert isinstance(storage, SqlStorage)
    now = time.time()
    mems, vers = [], []
    actor = '{"type": "api_actor", "api_key_id": "apikey_seed"}'
    for i in range(n):
        text = memory_text(i)
        mid, vid, sha = new_id("mem_"), new_id("memver_"), memory_sha256(text)
        path, size = f"{PREFIX}m{i:05d}.md", len(text.encode("utf-8"))
        mems.append((mid, store_id, path, text, sha, size, vid, now, now))
        vers.append((vid, store_id, mid, "created", path, text, sha, size, now, actor))
    with storage._tx(write=True) as tx:  # noqa: SLF001 - a benchmark's seed
        tx.many(
            "INSERT INTO ms_memories (id, store_id, path, content, sha, size, version_id,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            mems,
        )
        tx.many(
            "INSERT INTO ms_versions (id, store_id, memory_id, operation, path, content, sha,"
            " size, created_at, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vers,
        )


BACKENDS = ("git", "rest", "memstore")


def bench_memstore(
    sizes: list[int], work: Path, backends: tuple[str, ...] = BACKENDS
) -> list[dict[str, Any]]:
    storage = open_storage(f"sqlite:///{work / 'server.sqlite3'}")
    served = Counter(app_for(storage, max_entries=20_000))
    repos = work / "git-remotes"
    repos.mkdir()
    git_counter = Counter(GitHttp(repos))
    MemstoreDB(storage)  # the tables, before seeding
    rows: list[dict[str, Any]] = []
    with uvicorn_server(served) as url, uvicorn_server(git_counter) as git_url:
        for n in sizes:
            for backend in backends:
                root = work / f"{backend}-{n}"
                root.mkdir()
                repo = f"bench/{backend}-{n}"
                tokens = [token_for(storage, repo), token_for(storage, repo)]
                counter = git_counter if backend == "git" else served
                if backend == "git":
                    alice, bob = _git_mates(root, repos, git_url, n)
                    cli(alice, "pull")
                elif backend == "rest":
                    alice, bob = make_rest_team(root, url, tokens, repo=repo)
                    for i in range(n):
                        alice.write(f"m{i:05d}.md", memory_text(i))
                    cli(alice, "sync")
                else:
                    with sdk(url, tokens[0]) as client:
                        store = client.beta.memory_stores.create(name=f"bench {n}").id
                    seed_store(storage, store, n)
                    alice, bob = (
                        _store_mate(root, name, url, token, store)
                        for name, token in zip(("alice", "bob"), tokens, strict=True)
                    )
                    cli(alice, "pull")

                def measure(
                    op: str,
                    mate: Member,
                    *args: str,
                    n: int = n,
                    b: str = backend,
                    counter: Counter = counter,
                ) -> None:
                    counter.reset()
                    took = cli(mate, *args)
                    rows.append(
                        {
                            "backend": b,
                            "memories": n,
                            "operation": op,
                            "requests": counter.requests,
                            "bytes_down": counter.down,
                            "bytes_up": counter.up,
                            "seconds": round(took, 3),
                        }
                    )

                measure("initial pull", bob, "pull")
                measure("no-op sync", bob, "sync")
                alice.write("m00001.md", memory_text(1, " Changed by alice."))
                cli(alice, "sync")
                measure("one-file pull", bob, "pull")
                bob.write("m00002.md", memory_text(2, " Changed by bob."))
                measure("one-file push", bob, "sync")
    storage.close()
    return rows


def _git_mates(root: Path, repos: Path, url: str, n: int) -> tuple[Member, Member]:
    """Two teammates of a bare repository seeded with N memories, served over HTTP; bob's
    cache clone (which ``init`` fetched) removed, so his first pull is a cold one."""
    import shutil

    from teamsync.commands.sync import init

    alice, bob = make_team(root, ("alice", "bob"), init=False)
    remote = repos / f"bench-{n}.git"
    alice.remote.rename(remote)
    seed_remote(remote, {f"m{i:05d}.md": memory_text(i) for i in range(n)})
    config = SyncConfig("git", f"{url}/{remote.name}", BRANCH)
    for mate in (alice, bob):
        assert init(mate.settings, quiet_output(), config) == 0
    shutil.rmtree(bob.home / ".cache/teamsync/git")
    return alice, bob


def _store_mate(root: Path, name: str, url: str, token: str, store: str) -> MemstoreMate:
    from teamsync.commands.sync import init

    home = root / f"home-{name}"
    home.mkdir()
    mate = MemstoreMate(name, home, root / f"mem-{name}", url, token, store)
    mate.team.mkdir(parents=True)
    config = SyncConfig("memstore", url, memory_store=store, path_prefix=PREFIX)
    assert init(mate.settings, quiet_output(), config) == 0
    return mate


def table(rows: list[dict[str, Any]]) -> str:
    out = [
        "| memories | operation | backend | requests | bytes down | bytes up | wall s |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['memories']:,} | {r['operation']} | {r['backend']} | {r['requests']} | "
            f"{r['bytes_down']:,} | {r['bytes_up']:,} | {r['seconds']:.2f} |"
        )
    return "\n".join(out)
