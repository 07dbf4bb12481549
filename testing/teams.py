"""A team of teammates over either backend, for tests that must run on both.

``team("git", root, names)`` gives :class:`~testing.gitrepos.Teammate` s over a
real bare repository; ``team("rest", root, names)`` gives
:class:`~testing.server.RestMate` s over a real ``teamsync serve`` app (SQLite
storage, a real uvicorn on loopback), each with its own token.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from teamsync.server.storage import Storage, open_storage
from testing.gitrepos import Member, make_team, remote_files
from testing.server import app_for, make_rest_team, token_for, uvicorn_server

BACKENDS = ("git", "rest", "memstore")


@dataclass
class Team:
    kind: str
    mates: list[Member]
    remote: Path | None = None
    storage: Storage | None = None
    url: str | None = None
    repo: str = "acme/widgets"
    extra: dict[str, Any] = field(default_factory=dict)

    def remote_files(self) -> dict[str, str]:
        """key -> text the remote holds now."""
        if self.kind == "git":
            assert self.remote is not None
            return remote_files(self.remote)
        if self.kind == "memstore":
            return dict(self.extra["store_team"].remote_files())
        assert self.storage is not None
        state = self.storage.state(self.repo, contents=True)
        return dict(state.entries or {}) if state is not None else {}


@contextmanager
def team(
    kind: str, root: Path, names: Sequence[str] = ("alice", "bob"), **limits: int
) -> Iterator[Team]:
    """A ready team (every teammate ran ``init``) over ``kind`` (``git`` or ``rest``)."""
    if kind == "git":
        mates = make_team(root, names)
        yield Team("git", list(mates), remote=mates[0].remote)
        return
    if kind == "memstore":
        from testing.memstore import store_team

        with store_team(root, names, **limits) as st:
            yield Team(
                "memstore", list(st.mates), storage=st.storage, url=st.url, extra={"store_team": st}
            )
        return
    storage = open_storage(f"sqlite:///{root / 'server.sqlite3'}")
    try:
        tokens = [token_for(storage, label=name) for name in names]
        with uvicorn_server(app_for(storage, **limits)) as url:
            mates = make_rest_team(root, url, tokens, names)
            yield Team("rest", list(mates), storage=storage, url=url)
    finally:
        storage.close()
