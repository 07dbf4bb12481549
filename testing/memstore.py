"""Teammates over the Memory Stores backend, against a real ``teamsync serve`` on loopback."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teamsync.server.storage import Storage, open_storage
from teamsync.sync.config import SyncConfig
from testing.gitrepos import Member, quiet_output
from testing.server import app_for, token_for, uvicorn_server

PREFIX = "/team/"


@dataclass
class MemstoreMate(Member):
    """A teammate syncing ``team/`` with folder ``/team/`` of a memory store."""

    url: str
    token: str
    store_id: str

    @property
    def environ(self) -> dict[str, str]:
        env = {
            **super().environ,
            "TEAMSYNC_TOKEN": self.token,
            "GIT_AUTHOR_NAME": self.name.title(),
        }
        env.pop("ANTHROPIC_API_KEY", None)
        return env

    def config(self) -> SyncConfig:
        return SyncConfig("memstore", self.url, memory_store=self.store_id, path_prefix=PREFIX)

    def init(self) -> None:
        from teamsync.commands.sync import init

        assert init(self.settings, quiet_output(), self.config()) == 0


def sdk(url: str, token: str) -> Any:
    import anthropic

    return anthropic.Anthropic(base_url=url, api_key=token, max_retries=0)


@dataclass
class StoreTeam:
    url: str
    storage: Storage
    store_id: str
    mates: list[MemstoreMate]
    admin: str
    """A token of the same repository (for the test's own SDK calls)."""

    def remote_files(self) -> dict[str, str]:
        """key -> text the store holds under the prefix now."""
        with sdk(self.url, self.admin) as client:
            mems = client.beta.memory_stores.memories
            out = {}
            for m in mems.list(self.store_id, path_prefix=PREFIX, view="full", limit=20):
                out[m.path[len(PREFIX) :]] = m.content
            return out


@contextmanager
def store_team(
    root: Path, names: Sequence[str] = ("alice", "bob", "carol"), **limits: int
) -> Iterator[StoreTeam]:
    """A store on a fresh ``teamsync serve`` (SQLite) and teammates that ran ``init``."""
    storage = open_storage(f"sqlite:///{root / 'server.sqlite3'}")
    try:
        admin = token_for(storage, label="admin")
        tokens = [token_for(storage, label=name) for name in names]
        with uvicorn_server(app_for(storage, **limits)) as url:
            with sdk(url, admin) as client:
                store_id = client.beta.memory_stores.create(name="Team memory").id
            mates = []
            for name, token in zip(names, tokens, strict=True):
                home = root / f"home-{name}"
                home.mkdir()
                mate = MemstoreMate(name, home, root / f"mem-{name}", url, token, store_id)
                mate.team.mkdir(parents=True)
                mate.init()
                mates.append(mate)
            yield StoreTeam(url, storage, store_id, mates, admin)
    finally:
        storage.close()
