"""Test helpers for the server: a sync ASGI transport, a real uvicorn on loopback,
and token/app factories."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx2

from teamsync.server.app import create_app
from teamsync.server.limits import ServerConfig
from teamsync.server.runtime import Limits, uvicorn_config
from teamsync.server.storage import Storage
from teamsync.server.tokens import create_token
from teamsync.sync.config import SyncConfig
from testing.gitrepos import Member, quiet_output


class SyncASGITransport(httpx2.BaseTransport):
    """Drive an ASGI app from a synchronous ``httpx2.Client`` (through an anyio portal)."""

    def __init__(self, app: Any) -> None:
        self._inner = httpx2.ASGITransport(app=app)
        self._cm = anyio.from_thread.start_blocking_portal()
        self._portal = self._cm.__enter__()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        async def call() -> tuple[int, list[tuple[bytes, bytes]], bytes]:
            resp = await self._inner.handle_async_request(request)
            body = b"".join([chunk async for chunk in resp.stream])  # type: ignore[union-attr]
            return resp.status_code, resp.headers.raw, body

        request.read()
        status, headers, body = self._portal.call(call)
        return httpx2.Response(status, headers=headers, content=body, request=request)

    def close(self) -> None:
        self._cm.__exit__(None, None, None)


def token_for(
    storage: Storage,
    repo: str = "acme/widgets",
    *,
    read_only: bool = False,
    label: str | None = None,
) -> str:
    return create_token(storage, repo, read_only=read_only, label=label, now=time.time()).token


def refused(resp: httpx2.Response) -> dict[str, str]:
    """key -> error code of each entry a 200 legacy PUT answer says it did not store."""
    assert resp.status_code == 200, resp.text
    return {item["key"]: item["error_code"] for item in resp.json()["rejectedEntries"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def uvicorn_server(app: Any, limits: Limits | None = None) -> Iterator[str]:
    """Serve ``app`` with a real uvicorn on a free loopback port; yield its base URL.

    With ``limits``, the server is configured exactly as ``teamsync serve`` does
    (:func:`teamsync.server.runtime.uvicorn_config`), access log on.
    """
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    if limits is None:
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=1
        )
    else:
        config = uvicorn_config(
            app, limits, log_level="info", lifespan="on", timeout_graceful_shutdown=1
        )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start within 15 s")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        if thread.is_alive():  # a response still streaming: stop without waiting for it
            server.force_exit = True
            thread.join(5)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop; a test left a request running"


def app_for(storage: Storage, **limits: int) -> Any:
    return create_app(ServerConfig(db_url=storage.url, **limits), storage=storage)


@dataclass
class RestMate(Member):
    """A teammate syncing through the REST backend: own HOME, memory dir and token."""

    url: str
    token: str
    repo: str = "acme/widgets"

    @property
    def environ(self) -> dict[str, str]:
        return {
            **super().environ,
            "TEAMSYNC_TOKEN": self.token,
            "GIT_AUTHOR_NAME": self.name.title(),
        }

    def init(self) -> None:
        from teamsync.commands.sync import init

        config = SyncConfig("rest", self.url, repo=self.repo)
        assert init(self.settings, quiet_output(), config) == 0


def make_rest_team(
    root: Path,
    url: str,
    tokens: Sequence[str],
    names: Sequence[str] = ("alice", "bob"),
    *,
    repo: str = "acme/widgets",
    init: bool = True,
) -> list[RestMate]:
    mates = []
    for name, token in zip(names, tokens, strict=True):
        home = root / f"home-{name}"
        home.mkdir()
        (home / ".gitconfig").write_text(
            f"[user]\n\tname = {name.title()}\n\temail = {name}@example.invalid\n", encoding="utf-8"
        )
        mate = RestMate(name, home, root / f"mem-{name}", url, token, repo)
        mate.team.mkdir(parents=True)
        if init:
            mate.init()
        mates.append(mate)
    return mates
