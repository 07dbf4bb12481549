"""A hostile team-memory server in the wire format, for the hostile-server suite.

It speaks just enough of the protocol to be believed, and serves whatever
``entries`` (key -> text) the test gives it, with correct checksums unless told
otherwise (``wrong_checksums``), or a response body that never ends
(``endless=True``). It records PUTs and accepts them.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


def _sum(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Hostility:
    entries: Mapping[str, Any] = field(default_factory=dict)
    wrong_checksums: frozenset[str] = frozenset()
    endless: bool = False
    puts: list[Any] = field(default_factory=list)

    def body(self) -> bytes:
        sums = {
            k: ("sha256:" + "0" * 64 if k in self.wrong_checksums else _sum(v))
            for k, v in self.entries.items()
            if isinstance(v, str)
        }
        data = {
            "repo": "acme/widgets",
            "version": 7,
            "lastModified": "2026-01-01T00:00:00Z",
            "checksum": "sha256:" + "1" * 64,
            "content": {"entries": dict(self.entries), "entryChecksums": sums},
        }
        return json.dumps(data).encode("utf-8")


ENDLESS_FOR = 120.0
"""Seconds the "endless" body streams at most once its client is gone unnoticed (a bound
for the test process: a leaked streaming loop would slow every later test)."""


async def _forever(request: Request) -> AsyncIterator[bytes]:
    """A body that never ends for the client, stopping once the client disconnects."""
    yield b'{"checksum": "sha256:x", "content": {"entries": {"a.md": "'
    chunk = b"A" * 65536
    deadline = time.monotonic() + ENDLESS_FOR
    while time.monotonic() < deadline and not await request.is_disconnected():
        yield chunk


def create_hostile_app(h: Hostility) -> Starlette:
    async def team_memory(request: Request) -> Response:
        if request.method == "PUT":
            h.puts.append(json.loads(await request.body()))
            return JSONResponse({"checksum": "sha256:" + "2" * 64, "lastModified": "x"})
        if h.endless:
            return StreamingResponse(_forever(request), media_type="application/json")
        return Response(h.body(), media_type="application/json")

    return Starlette(
        routes=[Route("/api/claude_code/team_memory", team_memory, methods=["GET", "PUT"])]
    )


class Relay:
    """An ASGI app in front of a real server app that a test can swap or make lie.

    ``inner`` is the teamsync server currently answering (swap it to simulate a
    server restarted on a lost or restored database: the URL stays the same).
    With ``lying`` set, a PUT is answered 200 with a plausible body and *not*
    forwarded: the server acknowledges writes it never stores. Lifespan events
    are answered here; the test owns (and closes) each inner app's storage.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.lying = False
        self.lies = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] == "http" and scope["method"] == "PUT" and self.lying:
            more = True
            while more:  # drain the body, store nothing
                message = await receive()
                more = message.get("more_body", False)
            self.lies += 1
            body = {"checksum": "sha256:" + "2" * 64, "lastModified": "2026-01-01T00:00:00Z"}
            await JSONResponse(body)(scope, receive, send)
            return
        await self.inner(scope, receive, send)
