"""One-file pulls that cost O(1) over REST: the ``delta`` extension (issue 15).

``GET …?view=hashes&since=N`` answers only the keys written or deleted after
version N; the client applies that to the listing it kept and must arrive at
the store checksum the server names, or it reads the whole listing. Real
uvicorn on loopback, the real app and SQLite storage, bytes counted both ways
by :mod:`testing.counting`; a tampering wrapper plays the hostile server.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from teamsync.server.storage import Storage
from teamsync.wire import checksum, store_checksum
from testing.counting import ASGIApp, Counter, Message, Scope
from testing.gitrepos import memory
from testing.server import RestMate, app_for, make_rest_team, token_for, uvicorn_server

PATH = "/api/claude_code/team_memory"


class Tamper:
    """Rewrite the JSON of every delta answer (``since`` in the query) with ``edit``."""

    def __init__(self, app: ASGIApp, edit: Callable[[dict[str, Any]], dict[str, Any]]):
        self.app, self.edit, self.on = app, edit, False

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        query = scope.get("query_string", b"")
        if not (self.on and scope["type"] == "http" and b"since=" in query):
            await self.app(scope, receive, send)
            return
        start: Message = {}
        chunks: list[bytes] = []

        async def hold(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    raw = b"".join(chunks)
                    zipped = (b"content-encoding", b"gzip") in start["headers"]
                    data = json.loads(gzip.decompress(raw) if zipped else raw)
                    body = json.dumps(self.edit(data) if "since" in data else data).encode()
                    drop = (b"content-length", b"content-encoding")
                    headers = [(k, v) for k, v in start["headers"] if k not in drop]
                    headers.append((b"content-length", str(len(body)).encode()))
                    await send({**start, "headers": headers})
                    await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, hold)


def seed(mate: RestMate, n: int) -> None:
    for i in range(n):
        mate.write(f"notes/m{i:04d}.md", memory(f"M{i}", f"body {i} " + "x" * 900 + "\n"))
    assert len(mate.sync().pushed) == n


def pair(tmp_path: Path, url: str, store: Storage, n: int) -> tuple[RestMate, RestMate]:
    alice, bob = make_rest_team(tmp_path, url, [token_for(store), token_for(store)])
    seed(alice, n)
    bob.sync()
    return alice, bob


@pytest.mark.parametrize("n", [60, 1000])
def test_a_one_file_change_moves_constant_bytes_each_way(
    tmp_path: Path, store: Storage, n: int
) -> None:
    counter = Counter(app_for(store))
    with uvicorn_server(counter) as url:
        alice, bob = pair(tmp_path, url, store, n)
        alice.write("notes/m0007.md", memory("M7", "changed by alice\n"))
        counter.reset()
        assert alice.sync().pushed == ["notes/m0007.md"]
        assert counter.down < 3000 and counter.up < 6000, [
            (r.method, r.target, r.down, r.up) for r in counter.log
        ]
        counter.reset()
        assert [k for k in bob.sync(mode="pull").written if k != "MEMORY.md"] == ["notes/m0007.md"]
        assert "changed by alice" in bob.read("notes/m0007.md")
        calls = [(r.method, r.target.split("?")[0], r.status) for r in counter.log]
        assert calls == [("GET", PATH, 200), ("POST", PATH + "/entries", 200)]
        delta = json.loads(counter.log[0].body)
        assert list(delta["entryChecksums"]) == ["notes/m0007.md"] and delta["deleted"] == []
        assert "since=" in counter.log[0].target
        assert counter.down < 3000 and counter.up < 2000, (counter.down, counter.up)
        # a delete travels the same way
        alice.delete("notes/m0003.md")
        alice.sync()
        counter.reset()
        assert bob.sync(mode="pull").deleted == ["notes/m0003.md"]
        assert json.loads(counter.log[0].body)["deleted"] == ["notes/m0003.md"]
        assert counter.requests == 1 and counter.down < 1500


def test_an_unknown_serial_gets_the_full_listing(tmp_path: Path, store: Storage) -> None:
    counter = Counter(app_for(store))
    with uvicorn_server(counter) as url:
        alice, bob = pair(tmp_path, url, store, 20)
        alice.write("notes/m0001.md", memory("M1", "edited\n"))
        alice.sync()
        # the server forgot which history its versions cover (a database from before deltas)
        with sqlite3.connect(tmp_path / "server.sqlite3") as db:
            db.execute("DELETE FROM ts_serials")
        counter.reset()
        assert "notes/m0001.md" in bob.sync(mode="pull").written
        hashes = json.loads(counter.log[0].body)
        assert "since" not in hashes and len(hashes["entryChecksums"]) == 20
        assert [r.method for r in counter.log] == ["GET", "POST"]


def test_a_delta_that_does_not_verify_is_dropped_for_the_full_listing(
    tmp_path: Path, store: Storage
) -> None:
    def lose_a_change(data: dict[str, Any]) -> dict[str, Any]:
        return {**data, "entryChecksums": {}}  # the store checksum no longer adds up

    tamper = Tamper(app_for(store), lose_a_change)
    counter = Counter(tamper)
    with uvicorn_server(counter) as url:
        alice, bob = pair(tmp_path, url, store, 20)
        alice.write("notes/m0004.md", memory("M4", "edited\n"))
        alice.sync()
        tamper.on = True
        counter.reset()
        assert "notes/m0004.md" in bob.sync(mode="pull").written
        gets = [r for r in counter.log if r.method == "GET"]
        assert len(gets) == 2 and "since=" in gets[0].target and "since=" not in gets[1].target
        assert "edited" in bob.read("notes/m0004.md")


def test_a_hostile_delta_is_refused_key_by_key(tmp_path: Path, store: Storage) -> None:
    evil = memory("Evil", "planted\n")
    planted = {"../escape.md": checksum(evil), "bad.md": "md5:0123", "ok.txt": checksum(evil)}
    real: dict[str, str] = {}

    def plant(data: dict[str, Any]) -> dict[str, Any]:
        sums = {**real, **data["entryChecksums"], **planted}
        return {**data, "entryChecksums": {**data["entryChecksums"], **planted},
                "checksum": store_checksum(sums)}  # fmt: skip

    tamper = Tamper(app_for(store), plant)
    with uvicorn_server(Counter(tamper)) as url:
        alice, bob = pair(tmp_path, url, store, 5)
        alice.write("notes/m0002.md", memory("M2", "edited\n"))
        alice.sync()
        state = store.state("acme/widgets", contents=False)
        assert state is not None
        real.update(state.checksums)
        tamper.on = True
        report = bob.sync(mode="pull")
    refused = {r.key: r.reason for r in report.rejected}
    assert set(planted) <= set(refused), refused
    assert "no usable checksum" in refused["bad.md"]
    assert not (tmp_path / "escape.md").exists()
    assert not any(p.name == "escape.md" for p in tmp_path.rglob("escape.md"))
    assert "edited" in bob.read("notes/m0002.md")
    assert set(bob.files()) - {"MEMORY.md"} == {f"notes/m{i:04d}.md" for i in range(5)}
