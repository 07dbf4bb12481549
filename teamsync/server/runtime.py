"""How ``teamsync serve`` runs the app: uvicorn, bounded in time and connections.

uvicorn alone has no deadline for a request's head or body: a client that
opens a connection and sends nothing, or one header byte a minute, holds a
file descriptor for ever, and a thousand of them starve ``/healthz``. This
module adds what is missing around uvicorn's own settings:

- :class:`Limits`, every bound in one place (documented in docs/server.md);
- an h11 protocol subclass (:func:`protocol_class`) that sets ``TCP_NODELAY``
  on every accepted connection and sends a response's head and body in one write
  (:class:`Coalesced`), closes a connection
  whose request head is not complete within ``header_timeout`` seconds of the
  connection opening or of the previous response, and past ``max_connections``
  closes the oldest connection with no request in progress (or, when every
  one is busy, the new one);
- :class:`Guard`, ASGI middleware that bounds the time to receive a request
  body (:class:`~teamsync.server.limits.BodyTimeout`, which the PUT route
  answers with 408), and turns a client that went away into one log line;
- :class:`RedactQuery`, a filter on uvicorn's access log that replaces the
  values of token-bearing query parameters with ``***``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import resource
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote

from starlette.requests import ClientDisconnect

from teamsync.server.limits import BodyTimeout

log = logging.getLogger("teamsync.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_SENSITIVE_PARTS = (
    "token",
    "key",
    "auth",
    "secret",
    "password",
    "passwd",
    "pwd",
    "credential",
    "session",
    "sig",
    "bearer",
    "jwt",
    "cookie",
)
"""A query parameter whose name holds one of these (``access_token``, ``api_key``,
``X-Amz-Signature``, ``auth``) has its value redacted."""


def _fd_budget() -> int:
    """Connections the process can hold: the descriptor limit less room for files."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 65_536
    return max(16, min(1_000, soft - 100))


@dataclass(frozen=True)
class Limits:
    """Every per-connection bound of ``teamsync serve``."""

    header_timeout: float = 10.0
    """Seconds for a request head, from connect or from the previous response."""
    body_timeout: float = 60.0
    """Seconds for a whole request body (1 MiB needs about 18 KB/s)."""
    keep_alive: float = 5.0
    """Seconds an idle keep-alive connection stays open (uvicorn ``timeout_keep_alive``)."""
    max_connections: int = field(default_factory=_fd_budget)
    """Open connections at most. Past it, the oldest connection with no request in
    progress is closed to make room (the new one when all are busy). uvicorn's
    ``limit_concurrency`` (503) is set one above, as a backstop."""
    max_header_bytes: int = 64 * 1024
    """Request line plus headers: an incomplete head over this gets 400 from h11
    (``max_incomplete_event_size``), a complete one 431."""


def redact_target(target: str) -> str:
    """``path?query`` with token-bearing parameter values (and any ``tsm_`` value) masked."""
    path, sep, query = target.partition("?")
    if not sep:
        return target
    out = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        lowered = name.lower()
        if any(part in lowered for part in _SENSITIVE_PARTS) or "tsm_" in value:
            value = "***"
        out.append(f"{quote(name, safe='')}={quote(value, safe='/*')}")
    return f"{path}?{'&'.join(out)}"


class RedactQuery(logging.Filter):
    """On ``uvicorn.access``: the logged target never carries a token."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact_target(args[2]), *args[3:])
        return True


def install_log_filter() -> None:
    """Add :class:`RedactQuery` to uvicorn's access logger once (idempotent)."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactQuery) for f in access.filters):
        access.addFilter(RedactQuery())


class Guard:
    """ASGI middleware: a deadline on the request body and quiet client disconnects."""

    def __init__(self, app: ASGIApp, limits: Limits) -> None:
        self.app, self.limits = app, limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        head = sum(len(name) + len(value) + 4 for name, value in scope.get("headers", ()))
        if head > self.limits.max_header_bytes:
            await _send_error(
                send, 431, "team_memory_headers_too_large", "request headers too large"
            )
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.body_timeout
        body_done = False
        started = False

        async def timed_receive() -> Message:
            nonlocal body_done
            if body_done:
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise BodyTimeout(self.limits.body_timeout) from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, timed_receive, tracked_send)
        except BodyTimeout:
            log.warning(
                "%s %s: request body not received within %.0f s; connection closed",
                scope.get("method"),
                scope.get("path"),
                self.limits.body_timeout,
            )
            if not started:
                why = f"request body not received within {self.limits.body_timeout:.0f} s"
                await _send_error(send, 408, "team_memory_request_timeout", why)
        except ClientDisconnect:
            log.info("%s %s: client disconnected", scope.get("method"), scope.get("path"))


async def _send_error(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"message": message, "details": {"error_code": code}}}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _no_delay(transport: asyncio.BaseTransport) -> None:
    """``TCP_NODELAY`` on an accepted connection: uvicorn writes a response's head and
    body in two writes, and with Nagle's algorithm on the body waits for the
    client's delayed ACK (about 40 ms on every 200 of a kept-alive connection).
    asyncio sets it only when the listening socket was made with ``IPPROTO_TCP``."""
    import socket

    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # the peer is already gone
            pass


class Coalesced:
    """A connection's transport whose writes in one turn of the event loop leave as one.

    uvicorn writes a response's head and its body separately; with ``TCP_NODELAY``
    each write is a segment of its own, so the client is woken twice and both sides
    pay two trips through the kernel for every small response. Here a write is held
    until the loop's next turn (microseconds) and sent with whatever else was written
    in that turn. Closing, aborting and half-closing send what is held first (abort
    drops it, as the transport's own buffer is dropped); everything else is the
    transport's.
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._held:
            self._loop.call_soon(self.flush)
        self._held.append(bytes(data))

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def flush(self) -> None:
        if self._held:
            data = b"".join(self._held)
            self._held.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held.clear()
        self._transport.abort()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def get_write_buffer_size(self) -> int:
        return sum(map(len, self._held)) + self._transport.get_write_buffer_size()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def protocol_class(limits: Limits) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a request-head deadline and a hard connection cap."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class BoundedH11(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        _opened = 0.0

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            _no_delay(transport)
            self.transport = Coalesced(transport, self.loop)  # type: ignore[assignment,arg-type]
            self._opened = self.loop.time()
            if len(self.connections) > limits.max_connections and not self._evict():
                log.warning("over %d open connections: refused one", limits.max_connections)
                self.transport.close()
                return
            self._arm()

        def _waiting(self) -> bool:
            """No request in progress: idle, or still sending its head."""
            return self.cycle is None or self.cycle.response_complete

        def _evict(self) -> bool:
            """Close the oldest connection that has no request in progress (a slow
            or idle one), so a flood of half-open connections cannot lock out a
            new client; False when every other connection is busy."""
            idle = [
                c
                for c in self.connections
                if c is not self and isinstance(c, BoundedH11) and c._waiting()
            ]
            if not idle:
                return False
            oldest = min(idle, key=lambda c: c._opened)
            log.warning(
                "over %d open connections: closed the oldest idle one", limits.max_connections
            )
            oldest.transport.close()
            self.connections.discard(oldest)
            return True

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(limits.header_timeout, self._head_late)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing():
                log.info(
                    "no complete request within %.0f s: connection closed", limits.header_timeout
                )
                self.transport.close()

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None and not self.cycle.response_complete:
                self._disarm()  # a request head arrived; the body has its own deadline

        def on_response_complete(self) -> None:
            if not self.transport.is_closing():
                self._arm()
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return BoundedH11


def uvicorn_config(
    app: ASGIApp, limits: Limits, *, log_level: str = "info", access_log: bool = True, **extra: Any
) -> Any:
    """A ``uvicorn.Config`` serving ``app`` within ``limits`` (the access log redacted)."""
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    log_config = copy.deepcopy(LOGGING_CONFIG)
    log_config["formatters"]["teamsync"] = {
        "format": "%(asctime)s %(levelname)s %(name)s: %(message)s"
    }
    log_config["handlers"]["teamsync"] = {
        "formatter": "teamsync",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
    }
    # the per-PUT audit line and the one-line disconnects, named, beside uvicorn's own log
    log_config["loggers"]["teamsync"] = {
        "handlers": ["teamsync"],
        "level": "INFO",
        "propagate": False,
    }
    config = uvicorn.Config(
        Guard(app, limits),
        log_config=log_config,
        http=protocol_class(limits),
        timeout_keep_alive=int(max(1, limits.keep_alive)),
        limit_concurrency=limits.max_connections + 1,  # a backstop: the cap is ours
        h11_max_incomplete_event_size=limits.max_header_bytes,
        log_level=log_level,
        access_log=access_log,
        proxy_headers=False,
        server_header=False,
        **extra,
    )
    install_log_filter()
    return config
