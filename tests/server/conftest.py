"""Server fixtures: storages over SQLite and a real PostgreSQL the harness starts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from teamsync.server.storage import Storage, open_storage
from testing.postgres import Cluster, start_cluster


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One PostgreSQL for the session. If it cannot start, tests FAIL (never skip)."""
    try:
        cluster = start_cluster()
    except RuntimeError as exc:
        pytest.fail(f"PostgreSQL is required for these tests: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    return pg_cluster.create_database()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'server.sqlite3'}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest) -> str:
    name = "sqlite_url" if request.param == "sqlite" else "pg_url"
    return str(request.getfixturevalue(name))


@pytest.fixture
def storage(db_url: str) -> Iterator[Storage]:
    store = open_storage(db_url)
    try:
        yield store
    finally:
        store.close()
