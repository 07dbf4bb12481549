"""More than one server process on one PostgreSQL database: ``teamsync serve --workers 2``
and a second ``teamsync serve`` beside it, all answering writes to one repository
at once. Every acknowledged write is in the final store and in its history."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx2
import pytest

from teamsync.server.storage import open_storage
from teamsync.server.workers import pool_per_worker
from teamsync.sync.base import checksum
from teamsync.wire import PATH
from testing.server import served_process, token_for

WRITERS = 6
PUTS = 8


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_pools_are_shared_out_between_workers() -> None:
    assert pool_per_worker(1) == 16 and pool_per_worker(2) == 16
    assert pool_per_worker(4) == 8 and pool_per_worker(64) == 4


@pytest.mark.postgres
def test_workers_and_a_second_process_on_one_database_lose_no_write(pg_url: str) -> None:
    store = open_storage(pg_url)
    token = token_for(store)
    store.close()
    acked: list[tuple[str, str]] = []
    errors: list[str] = []
    lock = threading.Lock()
    with (
        served_process(pg_url, "--workers", "2") as first,
        served_process(pg_url) as second,
    ):

        def writer(n: int) -> None:
            base = first if n % 2 else second
            auth = {"Authorization": f"Bearer {token}"}
            with httpx2.Client(base_url=base, headers=auth, timeout=30) as client:
                for i in range(PUTS):
                    key, text = f"w{n}/k{i}.md", f"writer {n} put {i}\n"
                    body = {"entries": {key: text}, "baseChecksums": {key: None}}
                    resp = client.put(PATH, params={"repo": "acme/widgets"}, json=body)
                    with lock:
                        if resp.status_code == 200:
                            acked.append((key, checksum(text)))
                        else:
                            errors.append(f"{resp.status_code} {resp.text[:200]}")

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        auth = {"Authorization": f"Bearer {token}"}
        listings = [
            httpx2.get(base + PATH, params={"repo": "acme/widgets", "view": "hashes"},
                       headers=auth, timeout=30).json()
            for base in (first, second)
        ]  # fmt: skip
    assert errors == [] and len(acked) == WRITERS * PUTS
    assert listings[0] == listings[1]
    assert listings[0]["entryChecksums"] == dict(acked)
    assert listings[0]["version"] == WRITERS * PUTS
    store = open_storage(pg_url)
    try:
        history = store.history("acme/widgets", after=0, limit=1000)
    finally:
        store.close()
    assert sorted((h.key, h.checksum) for h in history) == sorted(acked)


@pytest.mark.postgres
def test_serve_workers_runs_that_many_processes(pg_url: str) -> None:
    import subprocess

    with served_process(pg_url, "--workers", "3"):
        out = subprocess.run(["pgrep", "-f", f"serve --port .* --db {pg_url} --workers 3"],
                             capture_output=True, text=True)  # fmt: skip
        parents = [int(p) for p in out.stdout.split()]
        kids = [k for p in parents for k in _children(p)]
        assert len(kids) == 3, (parents, kids)
