"""Tokens with an expiry (`teamsync token create --expires`): stored on SQLite and
PostgreSQL, refused by the real server once past, shown by `token list`."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from teamsync.errors import UsageError
from teamsync.server.storage import open_storage
from teamsync.server.tokens import create_token, parse_expiry, verify_token
from testing.gitrepos import TEAMSYNC
from testing.server import app_for, uvicorn_server


def test_parse_expiry() -> None:
    now = 1_800_000_000.0
    assert parse_expiry("12h", now) == now + 12 * 3600
    assert parse_expiry("90d", now) == now + 90 * 86400
    assert parse_expiry("2w", now) == now + 14 * 86400
    assert parse_expiry("2027-03-31", now) == 1_806_451_200.0  # midnight UTC
    for bad in ("soon", "10", "5y", "2027-13-01", "-1d"):
        with pytest.raises(UsageError, match="--expires"):
            parse_expiry(bad, now)


def test_expiry_is_stored_and_enforced(db_url: str) -> None:
    storage = open_storage(db_url)
    try:
        now = time.time()
        issued = create_token(storage, "acme/app", read_only=False, label=None, now=now,
                              expires_at=now + 60)  # fmt: skip
        forever = create_token(storage, "acme/app", read_only=False, label=None, now=now)
        assert storage.get_token(issued.record.id).expires_at == pytest.approx(now + 60)  # type: ignore[union-attr]
        assert verify_token(storage, issued.token, now=now + 59) is not None
        assert verify_token(storage, issued.token, now=now + 60) is None
        assert verify_token(storage, forever.token, now=now + 10**9) is not None
        listed = {r.id: r.expires_at for r in storage.list_tokens()}
        assert listed[forever.record.id] is None and listed[issued.record.id] is not None
        with pytest.raises(UsageError, match="in the past"):
            create_token(storage, "acme/app", read_only=False, label=None, now=now,
                         expires_at=now - 1)  # fmt: skip
    finally:
        storage.close()


def test_the_real_server_refuses_an_expired_token(sqlite_url: str) -> None:
    storage = open_storage(sqlite_url)
    try:
        now = time.time()
        short = create_token(storage, "acme/app", read_only=False, label=None, now=now,
                             expires_at=now + 1.5)  # fmt: skip
        with uvicorn_server(app_for(storage)) as url:

            def get() -> int:
                return httpx2.get(url + "/api/claude_code/team_memory", params={"repo": "acme/app"},
                                  headers={"Authorization": f"Bearer {short.token}"}).status_code  # fmt: skip

            assert get() == 404  # live: the empty repository
            time.sleep(max(0.0, now + 1.6 - time.time()))
            assert get() == 401
    finally:
        storage.close()


def test_a_database_from_before_expiries_opens_and_gains_the_table(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    open_storage(url).close()
    with sqlite3.connect(tmp_path / "old.sqlite3") as conn:
        conn.execute("DROP TABLE ts_token_expiry")  # as a database created before this change
    storage = open_storage(url)
    try:
        now = time.time()
        issued = create_token(storage, "acme/app", read_only=False, label=None, now=now,
                              expires_at=now + 5)  # fmt: skip
        assert verify_token(storage, issued.token, now=now) is not None
    finally:
        storage.close()


def test_token_cli_expires(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite3'}"

    def ts(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([TEAMSYNC, *args], capture_output=True, text=True,
                              env=dict(os.environ), timeout=60)  # fmt: skip

    made = ts("--json", "token", "create", "--repo", "acme/app", "--expires", "90d", "--db", db)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["expires"]
    human = ts("token", "create", "--repo", "acme/app", "--expires", "12h", "--db", db)
    assert "It expires " in human.stdout
    listed = ts("token", "list", "--db", db)
    assert listed.stdout.count("  expires ") == 2
    bad = ts("token", "create", "--repo", "acme/app", "--expires", "someday", "--db", db)
    assert bad.returncode == 2 and "give a duration" in bad.stderr
