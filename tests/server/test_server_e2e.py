"""End to end: the real CLI and a real uvicorn on loopback, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from teamsync.server.storage import open_storage
from testing.gitrepos import TEAMSYNC, fake_token, memory
from testing.server import (
    app_for,
    make_rest_team,
    served_process,
    token_for,
    uvicorn_server,
)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TEAMSYNC, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def served(sqlite_url: str) -> Iterator[str]:
    """`teamsync serve` as a real subprocess on a free loopback port."""
    with served_process(sqlite_url) as url:
        yield url


def test_token_cli_prints_once_and_stores_only_a_hash(sqlite_url: str) -> None:
    made = cli(
        "--json", "token", "create", "--repo", "Acme/Widgets", "--read-only", "--db", sqlite_url
    )
    assert made.returncode == 0, made.stderr
    data = json.loads(made.stdout)
    assert data["repo"] == "acme/widgets" and data["read_only"] is True
    assert data["token"].startswith("tsm_" + data["id"])
    raw = Path(sqlite_url.removeprefix("sqlite:///")).read_bytes()
    assert data["token"].encode() not in raw
    listing = cli("token", "list", "--db", sqlite_url)
    assert data["id"] in listing.stdout and data["token"] not in listing.stdout
    assert "read-only" in listing.stdout and "active" in listing.stdout
    assert cli("token", "revoke", data["id"], "--db", sqlite_url).returncode == 0
    again = cli("token", "revoke", data["id"], "--db", sqlite_url)
    assert again.returncode == 1 and "no active token" in again.stderr
    assert "revoked" in cli("token", "list", "--db", sqlite_url).stdout
    bad = cli("token", "create", "--repo", "../etc", "--db", sqlite_url)
    assert bad.returncode == 2 and "not a repository id" in bad.stderr


def test_walkthrough_two_teammates_through_teamsync_serve(
    tmp_path: Path, sqlite_url: str, served: str
) -> None:
    tokens = [
        json.loads(
            cli(
                "--json",
                "token",
                "create",
                "--repo",
                "acme/widgets",
                "--name",
                n,
                "--db",
                sqlite_url,
            ).stdout
        )["token"]
        for n in ("alice", "bob")
    ]
    alice, bob = make_rest_team(tmp_path, served, tokens, init=False)
    for mate in (alice, bob):
        done = mate.cli("init", "--rest", served, "--repo", "acme/widgets")
        assert done.returncode == 0, done.stderr
    alice.write("db.md", memory("DB", "line one\nline two\nline three\n"))
    pushed = alice.cli("--json", "push")
    assert pushed.returncode == 0, pushed.stderr
    assert json.loads(pushed.stdout)["pushed"] == ["db.md"]
    assert bob.cli("pull").returncode == 0
    assert bob.read("db.md") == alice.read("db.md")
    # non-overlapping edits merge
    alice.write("db.md", memory("DB", "line one (alice)\nline two\nline three\n"))
    bob.write("db.md", memory("DB", "line one\nline two\nline three (bob)\n"))
    assert alice.cli("sync").returncode == 0
    merged = bob.cli("sync")
    assert merged.returncode == 0, merged.stderr
    assert "line one (alice)" in bob.read("db.md") and "line three (bob)" in bob.read("db.md")
    assert alice.cli("sync").returncode == 0 and alice.read("db.md") == bob.read("db.md")
    # overlapping edits: the loser keeps a conflict copy, nothing is lost
    alice.write("db.md", memory("DB", "alice's version\n"))
    bob.write("db.md", memory("DB", "bob's version\n"))
    assert alice.cli("sync").returncode == 0
    clash = bob.cli("--json", "sync")
    assert clash.returncode == 1
    copies = [c["copy"] for c in json.loads(clash.stdout)["conflicts"]]
    assert (
        copies and "bob's version" in bob.read(copies[0]) and "alice's version" in bob.read("db.md")
    )
    # a secret is refused with a clear message that never echoes it
    secret = fake_token()
    alice.write("creds.md", memory("Creds", f"use {secret}\n"))
    refused = alice.cli("push")
    assert refused.returncode == 1 and "creds.md" in refused.stdout + refused.stderr
    assert secret not in refused.stdout + refused.stderr
    listing = httpx2.get(
        served + "/api/claude_code/team_memory?repo=acme/widgets&view=hashes",
        headers={"Authorization": f"Bearer {tokens[0]}"},
    ).json()
    assert "creds.md" not in listing["entryChecksums"]


def test_wrong_token_and_read_only_token_fail_clearly(tmp_path: Path, sqlite_url: str) -> None:
    store = open_storage(sqlite_url)
    reader = token_for(store, read_only=True)
    with uvicorn_server(app_for(store)) as url:
        (mate,) = make_rest_team(
            tmp_path, url, ["tsm_000000000000_" + "x" * 43], ["eve"], init=False
        )
        denied = mate.cli("init", "--rest", url, "--repo", "acme/widgets")
        assert denied.returncode == 1 and "refused the token (401)" in denied.stderr
        assert mate.token not in denied.stderr
        mate.token = reader
        assert mate.cli("init", "--rest", url, "--repo", "acme/widgets").returncode == 0
        mate.write("a.md", memory("A", "x\n"))
        ro = mate.cli("push")
        assert ro.returncode == 1 and "(403)" in ro.stderr


@pytest.mark.postgres
def test_two_teammates_on_postgres_with_two_replicas(tmp_path: Path, pg_url: str) -> None:
    """Two server processes' worth of apps (two storages, two uvicorns) on one database."""
    s1, s2 = open_storage(pg_url), open_storage(pg_url)
    made = [
        cli("--json", "token", "create", "--repo", "acme/widgets", "--name", n, "--db", pg_url)
        for n in ("alice", "bob")
    ]
    assert all(m.returncode == 0 for m in made), made[0].stderr
    tokens = [json.loads(m.stdout)["token"] for m in made]
    assert "alice" in cli("token", "list", "--db", pg_url).stdout
    with uvicorn_server(app_for(s1)) as url1, uvicorn_server(app_for(s2)) as url2:
        alice, bob = make_rest_team(tmp_path, url1, tokens)
        bob.url = url2
        bob.init()
        alice.write("a.md", memory("A", "from alice\n"))
        bob.write("b.md", memory("B", "from bob\n"))
        assert alice.sync().exit_code() == 0
        assert bob.sync().exit_code() == 0
        assert alice.sync().exit_code() == 0
        assert alice.files() == bob.files() and set(alice.files()) >= {"a.md", "b.md"}
        alice.team.joinpath("a.md").unlink()
        report = alice.sync()
        assert report.remote_deleted == ["a.md"]
        bob.sync()
        assert not (bob.team / "a.md").exists()
        history = s2.history("acme/widgets", after=0, limit=100)  # the other replica sees it
    assert ("a.md", "delete", "alice") in [(h.key, h.action, h.who) for h in history]


def _put_head(token: str, extra: str) -> bytes:
    return (
        "PUT /api/claude_code/team_memory?repo=acme/widgets HTTP/1.1\r\nHost: t\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n{extra}\r\n"
    ).encode()


def test_huge_uploads_are_refused_before_the_body_is_read(sqlite_url: str) -> None:
    import select
    import socket

    store = open_storage(sqlite_url)
    token = token_for(store)
    with uvicorn_server(app_for(store)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(_put_head(token, f"Content-Length: {5 * 2**30}\r\n"))
            assert sock.recv(4096).startswith(b"HTTP/1.1 413")
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(_put_head(token, "Transfer-Encoding: chunked\r\n"))
            chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
            sent, answer = 0, b""
            while sent < 256 * 2**20:
                readable, _, _ = select.select([sock], [], [], 0)
                if readable:
                    answer = sock.recv(4096)
                    break
                try:
                    sock.sendall(chunk)
                except OSError:
                    answer = sock.recv(4096)
                    break
                sent += len(chunk)
            assert answer.startswith(b"HTTP/1.1 413"), answer[:80]
            assert sent < 64 * 2**20  # loopback socket buffers hold a few MB
    store.close()
