"""Fixtures shared by the sync suites."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from teamsync.server.storage import Storage, open_storage


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Storage]:
    """A real SQLite server storage in ``tmp_path/server.sqlite3``."""
    s = open_storage(f"sqlite:///{tmp_path / 'server.sqlite3'}")
    try:
        yield s
    finally:
        s.close()
