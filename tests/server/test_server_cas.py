"""Writers on one repository: teamsync's client pushes under per-key compare-and-swap,
so teammates who change different keys never refuse each other, and one who
changed the same key still gets 409 (never an overwrite)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from teamsync.server.storage import Storage
from teamsync.sync.base import Applied, ChangeSet, PreconditionFailed, checksum
from teamsync.sync.config import SyncConfig
from teamsync.sync.rest import RestBackend
from testing.gitrepos import memory
from testing.server import app_for, make_rest_team, token_for, uvicorn_server

Message = MutableMapping[str, Any]


class PutHeaders:
    """ASGI wrapper: the precondition headers of every PUT the app receives, and the
    status of each answer."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.puts: list[dict[str, str]] = []
        self.statuses: list[int] = []

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] == "http" and scope["method"] == "PUT":
            wanted = (b"if-match", b"if-none-match")
            self.puts.append(
                {k.decode(): v.decode() for k, v in scope["headers"] if k.lower() in wanted}
            )

            async def noting(message: Message) -> None:
                if message["type"] == "http.response.start":
                    self.statuses.append(int(message["status"]))
                await send(message)

            await self.app(scope, receive, noting)
            return
        await self.app(scope, receive, send)


def test_writers_of_different_keys_never_refuse_each_other(storage: Storage) -> None:
    token = token_for(storage)
    wrapped = PutHeaders(app_for(storage))
    with uvicorn_server(wrapped) as url:
        mine = RestBackend(SyncConfig("rest", url), token, repo="acme/widgets")
        theirs = RestBackend(SyncConfig("rest", url), token, repo="acme/widgets")
        first = mine.apply(ChangeSet({"a.md": "one\n"}, [], None, {"a.md": None}))
        assert isinstance(first, Applied)
        base = mine.snapshot()
        theirs.snapshot()
        # a teammate writes another key after our snapshot: the store checksum moved
        other = theirs.apply(ChangeSet({"b.md": "two\n"}, [], theirs.snapshot().version,
                                       {"b.md": None}))  # fmt: skip
        assert isinstance(other, Applied)
        ours = mine.apply(
            ChangeSet({"a.md": "one, edited\n"}, [], base.version, {"a.md": checksum("one\n")})
        )
        assert isinstance(ours, Applied), "a write of another key refused ours"
        # the same key changed under us: 409 for that key, nothing overwritten
        stale = theirs.apply(
            ChangeSet({"a.md": "theirs\n"}, [], other.version, {"a.md": checksum("one\n")})
        )
        assert isinstance(stale, PreconditionFailed) and stale.keys == ["a.md"]
        mine.close()
        theirs.close()
        state = storage.state("acme/widgets", contents=True)  # the app closes it at shutdown
    assert state is not None
    assert state.entries == {"a.md": "one, edited\n", "b.md": "two\n"}
    assert wrapped.puts and all("if-match" not in h for h in wrapped.puts), wrapped.puts
    assert all("if-none-match" not in h for h in wrapped.puts)


def test_two_teammates_syncing_different_files_push_without_a_retry(
    tmp_path: Path, storage: Storage
) -> None:
    wrapped = PutHeaders(app_for(storage))
    with uvicorn_server(wrapped) as url:
        alice, bob = make_rest_team(tmp_path, url, [token_for(storage), token_for(storage)])
        alice.write("a.md", memory("A", "one\n"))
        alice.sync()
        bob.sync()
        alice.write("a.md", memory("A", "one, edited\n"))
        bob.write("b.md", memory("B", "two\n"))
        bob.sync()  # the store moved after alice's last read
        before = len(wrapped.statuses)
        report = alice.sync()
        assert "a.md" in report.pushed
        assert wrapped.statuses[before:] and set(wrapped.statuses[before:]) == {200}
        bob.sync()
        assert alice.files() == bob.files()
        state = storage.state("acme/widgets", contents=True)  # the app closes it at shutdown
    assert all("if-match" not in h for h in wrapped.puts), wrapped.puts
    assert state is not None and "b.md" in (state.entries or {})
    assert "one, edited" in (state.entries or {})["a.md"]
