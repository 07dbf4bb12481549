"""The lean route for the hot request: ``PUT …/team_memory`` answered below FastAPI.

A one-entry PUT spent most of its server CPU in the framework, not in its work:
eleven ASGI layers (middlewares, router, route, exception wrappers), dependency
solving for four parameters, a ``Request`` object, and two trips to anyio's
thread pool (its capacity limiter and cancel scopes). :class:`TeamsyncApp` is
the FastAPI app with one exception: it answers that route itself, parsing the
query and the headers as the route's parameters would, then running the very
same steps (:func:`teamsync.server.app.put_steps`: repository id, auth before a
byte of the body is read, the bounded body, the parse, the scan and the write)
with a plain thread pool, and answering with the response those steps built,
gzipped under the same rule as the app's GZip middleware. Every other route,
and the PUT route's OpenAPI document, stay FastAPI's. ``lean_put = None`` turns
the lean route off (the tests compare the two answers request by request).
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from fastapi import FastAPI
from fastapi.security import HTTPAuthorizationCredentials
from fastapi.security.utils import get_authorization_scheme_param
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from teamsync.wire import PATH

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MAX_REPO_QUERY = 1000
"""The ``repo`` query parameter's longest value (the route's ``Query(max_length=1000)``)."""
GZIP_MIN_BYTES = 1024
GZIP_LEVEL = 5
THREADS = 40
"""Threads of the lean route's pool (anyio's default for the other routes is 40 too)."""


@dataclass(frozen=True)
class PutHead:
    """What a PUT's request head says, parsed as the route's parameters are."""

    repo: str
    creds: HTTPAuthorizationCredentials | None
    if_match: str | None
    if_none_match: str | None
    content_length: str | None


LeanPut = Callable[[PutHead, AsyncIterator[bytes], "Offload"], Awaitable[Response]]
Offload = Callable[..., Awaitable[Any]]
"""Runs a blocking call off the event loop: ``await offload(fn, *args)``."""


class TeamsyncApp(FastAPI):
    """FastAPI, with ``PUT`` on the team-memory path answered by :attr:`lean_put`."""

    lean_put: LeanPut | None = None
    invalid_query: Callable[[str], Response] | None = None
    """The answer to a ``repo`` query parameter that fails validation (the app's 422)."""
    _pool: ThreadPoolExecutor | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = self.lean_put
        if (
            handler is None
            or scope["type"] != "http"
            or scope["method"] != "PUT"
            or scope["path"] != PATH
        ):
            await super().__call__(scope, receive, send)
            return
        head = put_head(scope)
        if isinstance(head, str):
            assert self.invalid_query is not None
            response = self.invalid_query(head)
        else:
            response = await handler(head, body_chunks(receive), self.offload)
        await send_response(scope, send, response)

    async def offload(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self._pool is None:  # made in the process that serves (after a fork)
            self._pool = ThreadPoolExecutor(THREADS, thread_name_prefix="teamsync-put")
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def close_pool(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None


def put_head(scope: Scope) -> PutHead | str:
    """The PUT's parameters from its ASGI scope, or where the query fails validation.

    As the route's parameters: the last ``repo`` of the query string (decoded as
    Starlette does), the first of each header, the bearer credentials as
    ``HTTPBearer(auto_error=False)`` reads them (None unless ``Bearer <token>``).
    """
    query = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
    repo = query.get("repo")
    if repo is None or len(repo) > MAX_REPO_QUERY:
        return "query.repo"
    wanted = {b"authorization": None, b"if-match": None, b"if-none-match": None}
    wanted[b"content-length"] = None
    found: dict[bytes, str] = {}
    for name, value in scope["headers"]:
        if name in wanted and name not in found:
            found[name] = value.decode("latin-1")
    return PutHead(
        repo=repo,
        creds=_bearer(found.get(b"authorization")),
        if_match=found.get(b"if-match"),
        if_none_match=found.get(b"if-none-match"),
        content_length=found.get(b"content-length"),
    )


def _bearer(authorization: str | None) -> HTTPAuthorizationCredentials | None:
    """The credentials as FastAPI's ``HTTPBearer`` reads them (``auto_error=False``)."""
    scheme, credentials = get_authorization_scheme_param(authorization)
    if not (scheme and credentials) or scheme.lower() != "bearer":
        return None
    return HTTPAuthorizationCredentials(scheme=scheme, credentials=credentials)


async def body_chunks(receive: Receive) -> AsyncIterator[bytes]:
    """The request body as Starlette's ``Request.stream()`` yields it."""
    while True:
        message = await receive()
        if message["type"] == "http.request":
            body = message.get("body", b"")
            if body:
                yield body
            if not message.get("more_body", False):
                return
        elif message["type"] == "http.disconnect":
            raise ClientDisconnect()


async def send_response(scope: Scope, send: Send, response: Response) -> None:
    """``response`` as the app's GZip middleware passes it on: a body of 1 KiB or more
    gets ``Vary: Accept-Encoding``, and is gzipped when the client's Accept-Encoding
    names gzip."""
    body = response.body
    headers = list(response.raw_headers)
    if len(body) >= GZIP_MIN_BYTES:
        accept = next((v for n, v in scope["headers"] if n == b"accept-encoding"), b"")
        headers.append((b"vary", b"Accept-Encoding"))
        if b"gzip" in accept:
            packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            body = packer.compress(body) + packer.flush()
            headers = [(n, v) for n, v in headers if n != b"content-length"]
            headers += [(b"content-encoding", b"gzip"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body})
