"""Sync that costs what it changes (issue 15 §1): conditional reads kept across runs,
hash-first planning with named-key fetches, and the fallback for a plain server.

Real uvicorn on loopback; every request and every byte down is counted by an
ASGI wrapper (:mod:`testing.counting`) around the real app.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from teamsync.server.storage import Storage
from teamsync.sync.report import SyncReport
from testing.counting import Counter
from testing.gitrepos import memory
from testing.minimal_server import MinimalStore, create_minimal_app
from testing.server import RestMate, app_for, make_rest_team, token_for, uvicorn_server

TOKEN = "tsm_0123456789ab_" + "c" * 43


@pytest.fixture
def served(store: Storage) -> Iterator[tuple[str, Counter]]:
    counter = Counter(app_for(store))
    with uvicorn_server(counter) as url:
        yield url, counter


def team(tmp_path: Path, url: str, store: Storage) -> list[RestMate]:
    return make_rest_team(tmp_path, url, [token_for(store), token_for(store)])


def written(report: SyncReport) -> list[str]:
    return [k for k in report.written if k != "MEMORY.md"]


def seed(mate: RestMate, n: int) -> None:
    for i in range(n):
        mate.write(f"notes/m{i:04d}.md", memory(f"M{i}", f"body {i} " + "x" * 900 + "\n"))
    report = mate.sync()
    assert len(report.pushed) == n


def test_a_noop_is_one_304_across_two_separate_cli_runs(
    tmp_path: Path, store: Storage, served: tuple[str, Counter]
) -> None:
    url, counter = served
    alice, bob = team(tmp_path, url, store)
    seed(alice, 40)
    assert bob.cli("pull").returncode == 0
    assert len(bob.files()) == 40 + ("MEMORY.md" in bob.files())
    for command in (["sync"], ["pull"], ["status"], ["--json", "sync"]):
        counter.reset()
        done = bob.cli(*command)
        assert done.returncode == 0, done.stderr
        assert [(r.method, r.status) for r in counter.log] == [("GET", 304)], command
        assert counter.down < 1024, (command, counter.down)
    # alice's own no-op after her push: the listing she pushed is kept too
    counter.reset()
    assert alice.cli("sync").returncode == 0
    assert [(r.method, r.status) for r in counter.log] == [("GET", 304)]


def test_a_one_file_change_moves_one_entry_each_way(
    tmp_path: Path, store: Storage, served: tuple[str, Counter]
) -> None:
    url, counter = served
    alice, bob = team(tmp_path, url, store)
    seed(alice, 60)
    bob.sync()
    whole = sum(len(t) for t in bob.files().values())
    alice.write("notes/m0007.md", memory("M7", "changed by alice\n"))
    counter.reset()
    assert alice.sync().pushed == ["notes/m0007.md"]
    puts = [r for r in counter.log if r.method == "PUT"]
    assert len(puts) == 1
    assert all(r.down < 2048 for r in counter.log), [(r.target, r.down) for r in counter.log]
    counter.reset()
    report = bob.sync(mode="pull")
    assert written(report) == ["notes/m0007.md"]
    assert "changed by alice" in bob.read("notes/m0007.md")
    fetched = [
        r for r in counter.log if r.target.startswith("/api/claude_code/team_memory/entries")
    ]
    assert len(fetched) == 1 and fetched[0].method == "POST"
    assert list(json.loads(fetched[0].body)["entries"]) == ["notes/m0007.md"]
    listing = [r for r in counter.log if "view=hashes" in r.target]
    assert len(listing) == 1 and listing[0].status == 200
    assert counter.down < whole / 3, (counter.down, whole)
    # and the next no-op is one 304 again
    counter.reset()
    bob.sync()
    assert [(r.method, r.status) for r in counter.log] == [("GET", 304)]


def test_a_plain_server_without_the_extension_falls_back_to_the_full_get(
    tmp_path: Path,
) -> None:
    plain = MinimalStore()
    counter = Counter(create_minimal_app(plain))
    with uvicorn_server(counter) as url:
        alice, bob = make_rest_team(tmp_path, url, [TOKEN, TOKEN])
        for i in range(5):
            alice.write(f"k{i}.md", memory(f"K{i}", f"body {i}\n"))
        alice.sync()
        bob.sync()
        assert set(bob.files()) >= {f"k{i}.md" for i in range(5)}
        counter.reset()
        bob.sync()
        assert [(r.method, r.status) for r in counter.log] == [("GET", 304)]
        alice.write("k2.md", memory("K2", "changed\n"))
        alice.sync()
        counter.reset()
        assert written(bob.sync(mode="pull")) == ["k2.md"]
        assert "changed" in bob.read("k2.md")
        assert not any("/entries" in r.target for r in counter.log)
        assert [(r.method, r.target.split("?")[0], r.status) for r in counter.log] == [
            ("GET", "/api/claude_code/team_memory", 200)
        ]  # one full conditional GET, as Claude Code's own client does


def _sum(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


class Lying:
    """Honest at first (a full view of ``first``); then lists ``listed`` by hash and
    serves ``served`` for them through the ``entries`` extension."""

    def __init__(self, first: dict[str, str], listed: dict[str, str], served: dict[str, str]):
        self.first, self.listed, self.served = first, listed, served
        self.lying = False

    def app(self) -> Starlette:
        caps = {"X-Teamsync-Extensions": "entries,history"}

        def now() -> tuple[str, dict[str, str]]:
            entries = self.listed if self.lying else self.first
            return ("sha256:" + ("2" if self.lying else "1") * 64), {
                k: _sum(v) for k, v in entries.items()
            }

        async def get(request: Request) -> Response:
            store_sum, sums = now()
            if request.headers.get("if-none-match") == store_sum:
                return Response(status_code=304, headers=caps)
            body: dict[str, object] = {"checksum": store_sum, "version": 3}
            if request.query_params.get("view") == "hashes":
                body["entryChecksums"] = sums
            else:
                body["content"] = {"entries": dict(self.first), "entryChecksums": sums}
            return JSONResponse(body, headers={"ETag": f'"{store_sum}"', **caps})

        async def entries(request: Request) -> Response:
            store_sum, sums = now()
            keys = json.loads(await request.body())["keys"]
            found = {k: self.served[k] for k in keys if k in self.served}
            body = {"checksum": store_sum, "version": 3, "entries": found, "entryChecksums": sums}
            return JSONResponse(body, headers=caps)

        async def history(request: Request) -> Response:
            return JSONResponse({"items": [], "next_after": None})

        return Starlette(
            routes=[
                Route("/api/claude_code/team_memory", get, methods=["GET"]),
                Route("/api/claude_code/team_memory/entries", entries, methods=["POST"]),
                Route("/api/claude_code/team_memory/history", history, methods=["GET"]),
            ]
        )


def test_fetched_entries_are_validated_as_the_full_get_is(tmp_path: Path) -> None:
    good = memory("Good", "fine\n")
    listed = {"good.md": good, "swapped.md": memory("S", "listed\n"), "nul.md": "a\x00b"}
    served = {
        "good.md": good,
        "swapped.md": memory("S", "something else entirely\n"),
        "nul.md": "a\x00b",
    }
    lying = Lying(
        {"good.md": good},
        {**listed, "../escape.md": good},
        {**served, "../escape.md": good},
    )
    with uvicorn_server(lying.app()) as url:
        (bob,) = make_rest_team(tmp_path, url, [TOKEN], names=("bob",))
        bob.sync(mode="pull")
        assert set(bob.files()) - {"MEMORY.md"} == {"good.md"}
        lying.lying = True
        report = bob.sync(mode="pull")
        refused = {r.key: r.reason for r in report.rejected}
        assert set(bob.files()) - {"MEMORY.md"} == {"good.md"}
        assert "does not match the checksum" in refused["swapped.md"]
        assert "NUL" in refused["nul.md"]
        assert "../escape.md" in refused
        assert not (tmp_path / "escape.md").exists()
        # the refusals are kept with the listing: the next run (a 304) still names them
        again = {r.key for r in bob.sync(mode="pull").rejected}
        assert {"swapped.md", "nul.md", "../escape.md"} <= again
        assert set(bob.files()) - {"MEMORY.md"} == {"good.md"}
