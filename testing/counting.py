"""A pure ASGI wrapper that counts what a server sends: requests, and bytes down (and up).

Bytes down are counted as the client receives them over HTTP/1.1: the status
line and headers (as uvicorn frames them, approximated by ``name: value\\r\\n``)
plus every body chunk; bytes up the same way for the request line, headers and
body. Each request is logged as ``(method, path?query, status, bytes)`` so tests
and ``bench/sync.py`` can see exactly what ran.
"""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

KEEP_BODY = 4 * 1024 * 1024
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]


@dataclass
class Counted:
    method: str
    target: str
    status: int = 0
    down: int = 0
    up: int = 0
    """Request line, headers and body, as sent."""
    body: bytes = b""
    """The response body, decoded when it came gzipped (the first :data:`KEEP_BODY` bytes);
    :attr:`down` counts the bytes as sent."""


@dataclass
class Counter:
    """Wrap an ASGI app; :attr:`log` holds one :class:`Counted` per HTTP request."""

    app: ASGIApp
    log: list[Counted] = field(default_factory=list)

    async def __call__(
        self,
        scope: Scope,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        row = Counted(scope["method"], scope["path"] + (f"?{query}" if query else ""))
        row.up = len(f"{row.method} {row.target} HTTP/1.1\r\n") + 2
        row.up += sum(len(k) + len(v) + 4 for k, v in scope.get("headers", []))
        self.log.append(row)

        async def reading() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                row.up += len(message.get("body", b""))
            return message

        unzip: list[Any] = []

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start":
                row.status = int(message["status"])
                row.down += len(f"HTTP/1.1 {row.status} X\r\n") + 2
                row.down += sum(len(k) + len(v) + 4 for k, v in message.get("headers", []))
                if (b"content-encoding", b"gzip") in message.get("headers", []):
                    unzip.append(zlib.decompressobj(16 + zlib.MAX_WBITS))
            elif message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                row.down += len(chunk)
                plain = unzip[0].decompress(chunk) if unzip else chunk
                if len(row.body) < KEEP_BODY:
                    row.body += plain[: KEEP_BODY - len(row.body)]
            await send(message)

        await self.app(scope, reading, counting)

    def reset(self) -> None:
        self.log.clear()

    @property
    def requests(self) -> int:
        return len(self.log)

    @property
    def down(self) -> int:
        return sum(r.down for r in self.log)

    @property
    def up(self) -> int:
        return sum(r.up for r in self.log)
