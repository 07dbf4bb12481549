"""The ASGI app: Claude Code's team-memory wire format plus teamsync's extensions.

FastAPI (over Starlette) because the OpenAPI document comes for free from the
same pydantic models that parse the PUT body, and schemathesis tests the
server against that document. The PUT body is read by hand
(:func:`~teamsync.server.limits.read_limited`) so size limits bite before the
body is buffered. Storage calls are blocking and run in the thread pool.

Routes (see docs/server.md)::

    GET  /api/claude_code/team_memory?repo=R[&view=hashes[&since=N]]   200 | 304 | 404
    PUT  /api/claude_code/team_memory?repo=R                 200 | 409 | 412 | 413 | 422
    GET  /api/claude_code/team_memory/history?repo=R&after=N&limit=M      (extension)
    GET  /api/claude_code/team_memory/capabilities                         (extension)
    POST /api/claude_code/team_memory/entries?repo=R  {"keys": [...]}      (extension)
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated, Any, Literal, cast

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import ValidationError
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import ClientDisconnect

from teamsync._version import __version__
from teamsync.errors import ServerError, UsageError
from teamsync.limits import BATCH_BYTES
from teamsync.server import listing as streamed
from teamsync.server import memstores, models
from teamsync.server.checks import Refusal, Screened, screen_put, write_reply
from teamsync.server.leanput import GZIP_LEVEL, GZIP_MIN_BYTES, Offload, PutHead, TeamsyncApp
from teamsync.server.limits import (
    HISTORY_PAGE,
    MAX_HISTORY_PAGE,
    BodyTimeout,
    BodyTooLarge,
    ServerConfig,
    error_body,
    iso,
    normalize_repo,
    parse_etags,
    read_limited,
)
from teamsync.server.storage import Storage, TokenRecord, WriteRequest, open_storage
from teamsync.server.tokens import verify_token
from teamsync.wire import (
    CAPABILITIES_PATH,
    CAPS_HEADER,
    EMPTY_CHECKSUM,
    ENTRIES_PATH,
    HISTORY_PATH,
    PATH,
)

log = logging.getLogger("teamsync.server")
EXTENSIONS = (
    "baseChecksums",
    "deletes",
    "history",
    "entryLastModified",
    "entryModified",
    "entries",
    "delta",
)
MAX_FETCH_KEYS = 5000
"""Keys one ``POST …/entries`` may name."""
MAX_NUMBER_DIGITS = 100
"""Longest JSON integer a PUT body may hold (no field is a number; Python's own cap is 4,300)."""
_bearer = HTTPBearer(auto_error=False, description="`teamsync token create` prints one")
_NO_TELEMETRY: Any = {
    "tracing": False,
    "metrics": False,
    "logs": False,
    "operation_spans": False,
    "auto_configure": False,
}
"""FastAPI's OpenTelemetry hooks stay off: no spans or logs that could carry request data."""
Creds = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def _err(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(error_body(code, message, **extra), status_code=status, headers=headers)


async def _read_body(
    request: Request, config: ServerConfig, smaller: str, *, where: str | None = None
) -> bytes | Response:
    """The request body within ``config.max_body_bytes``, or the refusal to send instead.

    ``smaller`` says how to stay under the limit; ``where`` (for the write route)
    names the request in the one log line a timeout or a disconnect gets.
    """
    length = request.headers.get("content-length")
    return await _read_chunks(length, request.stream(), config, smaller, where=where)


async def _read_chunks(
    content_length: str | None,
    chunks: AsyncIterator[bytes],
    config: ServerConfig,
    smaller: str,
    *,
    where: str | None = None,
) -> bytes | Response:
    try:
        return await read_limited(content_length, chunks, config.max_body_bytes)
    except BodyTooLarge as exc:
        msg = f"request body over {exc.limit} bytes; {smaller}"
        return _err(413, "team_memory_body_too_large", msg, max_bytes=exc.limit)
    except BodyTimeout as exc:
        if where is not None:
            log.warning("%s: %s; connection closed", where, exc)
        resp = _err(408, "team_memory_request_timeout", f"{exc}; send the body faster")
        resp.headers["Connection"] = "close"
        return resp
    except ClientDisconnect:
        if where is not None:
            log.info("%s: client disconnected during the body", where)
        return Response(status_code=400)


def _authorize(
    storage: Storage, creds: HTTPAuthorizationCredentials | None, repo: str, *, write: bool
) -> TokenRecord | JSONResponse:
    if creds is None or creds.scheme.lower() != "bearer":
        return _err(401, "unauthorized", "missing bearer token (Authorization: Bearer …)")
    record = verify_token(storage, creds.credentials)
    if record is None:
        return _err(401, "unauthorized", "unknown or revoked token")
    if record.repo != repo:
        return _err(403, "forbidden", "this token is scoped to another repository")
    if write and record.read_only:
        return _err(403, "forbidden", "this token is read-only")
    return record


def _repo(raw: str) -> str | JSONResponse:
    try:
        return normalize_repo(raw)
    except UsageError as exc:
        return _err(422, "team_memory_invalid_repo", str(exc))


def create_app(config: ServerConfig, *, storage: Storage | None = None) -> TeamsyncApp:
    """The app over ``config.db_url`` (or an already open ``storage``, closed at shutdown)."""
    store = (
        storage if storage is not None else open_storage(config.db_url, pool_size=config.pool_size)
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        app.close_pool()
        store.close()

    app = TeamsyncApp(
        title="teamsync server",
        version=__version__,
        description="Claude Code team-memory wire format plus teamsync extensions.",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        telemetry=_NO_TELEMETRY,
    )
    app.state.storage = store
    app.state.config = config
    # gzip when the client asks (Accept-Encoding), for bodies of 1 KiB and more; streamed
    # listings are compressed as they stream. Level 5: most of level 9's ratio on JSON
    # for a fraction of the CPU.
    app.add_middleware(GZipMiddleware, minimum_size=GZIP_MIN_BYTES, compresslevel=GZIP_LEVEL)
    _install_handlers(app)
    _read_routes(app, store, config)
    _write_route(app, store, config)
    memstores.install(app, store, config)

    async def lean_put(head: PutHead, chunks: AsyncIterator[bytes], offload: Offload) -> Response:
        try:
            return await put_steps(store, config, head, chunks, offload)
        except ServerError as exc:  # as the app's handler answers it on every other route
            return _unavailable(exc)

    app.lean_put = lean_put
    app.invalid_query = lambda where: _err(
        422, "team_memory_invalid_request", f"invalid request: {where}"
    )
    return app


def _unavailable(exc: ServerError) -> JSONResponse:
    log.error("storage failure: %s", exc)
    resp = _err(503, "team_memory_storage_unavailable", "storage unavailable; retry later")
    resp.headers["Retry-After"] = "1"
    return resp


def _install_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        where = [".".join(str(p) for p in e.get("loc", ())) for e in exc.errors()]
        return _err(422, "team_memory_invalid_request", f"invalid request: {', '.join(where)}")

    @app.exception_handler(ServerError)
    async def unavailable(_: Request, exc: ServerError) -> JSONResponse:
        return _unavailable(exc)


def _read_routes(app: FastAPI, store: Storage, config: ServerConfig) -> None:
    caps = {CAPS_HEADER: ",".join(EXTENSIONS)}

    @app.get(
        PATH,
        response_model=models.FullView | models.HashesView | models.DeltaView,
        responses={304: {"description": "Not modified"}, **models.errors(401, 403, 404, 422, 503)},
    )
    async def get_memory(
        creds: Creds,
        repo: str = Query(max_length=1000),
        view: Literal["hashes"] | None = None,
        since: int | None = Query(default=None, ge=0, le=2**62),
        if_none_match: str | None = Header(default=None),
    ) -> Response:
        args = (store, repo, view, if_none_match, creds, caps, since)
        return await run_in_threadpool(_get, *args)

    @app.get(
        HISTORY_PATH,
        response_model=models.HistoryPage,
        responses=models.errors(401, 403, 422, 503),
    )
    async def get_history(
        creds: Creds,
        repo: str = Query(max_length=1000),
        after: int = Query(default=0, ge=0, le=2**62),
        limit: int = Query(default=HISTORY_PAGE, ge=1, le=MAX_HISTORY_PAGE),
    ) -> Response:
        return await run_in_threadpool(_history, store, repo, after, limit, creds)

    @app.post(
        ENTRIES_PATH,
        response_model=models.EntriesView,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": models.EntriesRequest.model_json_schema()}
                },
            }
        },
        responses=models.errors(400, 401, 403, 404, 408, 413, 422, 503),
    )
    async def post_entries(
        request: Request, creds: Creds, repo: str = Query(max_length=1000)
    ) -> Response:
        norm = await run_in_threadpool(_readable_repo, store, repo, creds)
        if isinstance(norm, JSONResponse):
            return norm
        raw = await _read_body(request, config, "ask for fewer keys")
        if isinstance(raw, Response):
            return raw
        try:
            wanted = models.EntriesRequest.model_validate_json(raw).keys
        except ValidationError:
            msg = f'body must be {{"keys": [...]}} with at most {MAX_FETCH_KEYS} keys'
            return _err(422, "team_memory_invalid_body", msg)
        return await run_in_threadpool(_entries, store, norm, wanted, caps)

    @app.get(CAPABILITIES_PATH, response_model=models.Capabilities)
    async def capabilities(creds: Creds) -> dict[str, Any]:
        scope = None
        if creds is not None and creds.scheme.lower() == "bearer":
            record = await run_in_threadpool(verify_token, store, creds.credentials)
            if record is not None:  # the caller's own scope; an unknown token learns nothing
                scope = {"repo": record.repo, "read_only": record.read_only}
        limits = {
            "max_entries": config.max_entries,
            "max_entry_bytes": config.max_entry_bytes,
            "max_body_bytes": config.max_body_bytes,
            "batch_bytes": BATCH_BYTES,
        }
        return {
            "server": "teamsync",
            "version": __version__,
            "extensions": list(EXTENSIONS),
            "limits": limits,
            **({"token": scope} if scope is not None else {}),
        }

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, bool]:
        return {"ok": True}


def _readable_repo(
    store: Storage, raw: str, creds: HTTPAuthorizationCredentials | None
) -> str | JSONResponse:
    """The normalized repo id when ``creds`` may read it, else the error response."""
    repo = _repo(raw)
    if isinstance(repo, JSONResponse):
        return repo
    auth = _authorize(store, creds, repo, write=False)
    return auth if isinstance(auth, JSONResponse) else repo


def _get(
    store: Storage,
    raw_repo: str,
    view: str | None,
    if_none_match: str | None,
    creds: HTTPAuthorizationCredentials | None,
    caps: dict[str, str],
    since: int | None = None,
) -> Response:
    """One read; ``since`` (with ``view=hashes``) asks for the delta, else the full listing."""
    repo = _readable_repo(store, raw_repo, creds)
    if isinstance(repo, JSONResponse):
        return repo
    head = store.head(repo)
    if head is None:
        return _err(404, "team_memory_not_found", "no team memory stored for this repository yet")
    etag = {"ETag": f'"{head.checksum}"', **caps}
    tags = parse_etags(if_none_match)
    if head.checksum in tags or "*" in tags:
        return Response(status_code=304, headers=etag)
    delta = store.changes_since(repo, since) if view == "hashes" and since is not None else None
    if delta is not None:
        body = {
            "checksum": delta.head.checksum,
            "version": delta.head.version,
            "lastModified": iso(delta.head.last_modified),
            "since": delta.since,
            "entryChecksums": dict(delta.checksums),
            "entryLastModified": {k: iso(v) for k, v in delta.updated_at.items()},
            "deleted": list(delta.deleted),
            # what a full listing says of these deletes: when, and the bytes deleted
            "deletedEntries": {k: round(t.at * 1000) for k, t in delta.tombstones.items()},
            "deletedChecksums": {k: t.checksum for k, t in delta.tombstones.items()},
            **({"sinceChecksum": delta.since_checksum} if delta.since_checksum else {}),
        }
        return JSONResponse(body, headers={**etag, "ETag": f'"{delta.head.checksum}"'})
    listing = store.listing(repo, contents=view != "hashes")
    if listing is None:
        return _err(404, "team_memory_not_found", "no team memory stored for this repository yet")
    etag["ETag"] = f'"{listing.head.checksum}"'
    tombs = store.tombstones(repo)
    gone = {k: round(t.at * 1000) for k, t in tombs.items()}
    sums = {k: t.checksum for k, t in tombs.items()}
    chunks = streamed.body(listing, repo, hashes=view == "hashes", deleted=gone, deleted_sums=sums)
    return StreamingResponse(
        streamed.stream(listing, chunks),
        media_type="application/json",
        headers=etag,
        background=BackgroundTask(listing.close),  # also when the stream never started
    )


def _entries(store: Storage, repo: str, keys: list[str], caps: dict[str, str]) -> Response:
    """The live entries among ``keys`` (unknown or deleted keys are left out); only those
    rows are read."""
    state = store.entries(repo, keys)
    if state is None:
        return _err(404, "team_memory_not_found", "no team memory stored for this repository yet")
    held = state.entries or {}
    found = {k: held[k] for k in dict.fromkeys(keys) if k in held}
    body = {
        "checksum": state.head.checksum,
        "version": state.head.version,
        "entries": found,
        "entryChecksums": {k: state.checksums[k] for k in found},
    }
    return JSONResponse(body, headers={"ETag": f'"{state.head.checksum}"', **caps})


def _history(
    store: Storage,
    raw_repo: str,
    after: int,
    limit: int,
    creds: HTTPAuthorizationCredentials | None,
) -> Response:
    repo = _readable_repo(store, raw_repo, creds)
    if isinstance(repo, JSONResponse):
        return repo
    items = store.history(repo, after=after, limit=limit)
    rows = [
        {
            "id": i.id,
            "at": iso(i.at),
            "who": i.who,
            "key": i.key,
            "checksum": i.checksum,
            "action": i.action,
        }
        for i in items
    ]
    nxt = items[-1].id if len(items) == limit else None
    return JSONResponse({"repo": repo, "items": rows, "next_after": nxt})


def _write_route(app: FastAPI, store: Storage, config: ServerConfig) -> None:
    schema = models.PutBody.model_json_schema()
    extra = {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}

    @app.put(
        PATH,
        response_model=models.PutResult,
        openapi_extra=extra,
        responses=models.errors(400, 401, 403, 408, 409, 412, 413, 422, 503),
    )
    async def put_memory(
        request: Request,
        creds: Creds,
        repo: str = Query(max_length=1000),
        if_match: str | None = Header(default=None),
        if_none_match: str | None = Header(default=None),
    ) -> Response:
        # TeamsyncApp answers this route itself (its lean path); this one serves the
        # OpenAPI document and an app with ``lean_put`` off, through the same steps
        head = PutHead(repo, creds, if_match, if_none_match, request.headers.get("content-length"))
        return await put_steps(store, config, head, request.stream(), run_in_threadpool)


async def put_steps(
    store: Storage,
    config: ServerConfig,
    head: PutHead,
    chunks: AsyncIterator[bytes],
    offload: Offload,
) -> Response:
    """One PUT: the repository id, auth (before a byte of the body is read), the bounded
    body, its parse, then the scan and the write in one trip off the loop."""
    norm = _repo(head.repo)
    if isinstance(norm, JSONResponse):
        return norm
    auth = await offload(_authorize_write, store, head.creds, norm)
    if isinstance(auth, JSONResponse):
        return auth
    raw = await _read_chunks(
        head.content_length,
        chunks,
        config,
        "send smaller batches",
        where=f"PUT repo={norm} token={auth.id}",
    )
    if isinstance(raw, Response):
        return raw
    body = _parse_body(raw)
    if isinstance(body, Refusal):
        return JSONResponse(body.body, status_code=body.status)
    tags = parse_etags(head.if_match), parse_etags(head.if_none_match)
    # one trip off the loop for the scan and the write (each trip costs a
    # thread hand-off both ways, a measurable share of a one-entry PUT)
    return cast(Response, await offload(_screen_and_write, store, config, norm, auth, body, *tags))


def _authorize_write(
    storage: Storage, creds: HTTPAuthorizationCredentials | None, repo: str
) -> TokenRecord | JSONResponse:
    return _authorize(storage, creds, repo, write=True)


def _with_soft_deletes(body: models.PutBody) -> models.PutBody:
    """Claude Code's ``soft_delete_keys`` are deletes (a tombstone each, kept in history)."""
    if not body.soft_delete_keys:
        return body
    merged = list(dict.fromkeys([*body.deletes, *body.soft_delete_keys]))
    return body.model_copy(update={"deletes": merged, "soft_delete_keys": []})


def _screen_and_write(
    store: Storage,
    config: ServerConfig,
    repo: str,
    auth: TokenRecord,
    body: models.PutBody,
    if_match: list[str],
    if_none_match: list[str],
) -> Response:
    screened = screen_put(_with_soft_deletes(body), config, repo)
    if isinstance(screened, Refusal):
        log.info("PUT repo=%s token=%s refused %s", repo, auth.id, screened.status)
        return JSONResponse(screened.body, status_code=screened.status)
    return _write(store, config, repo, auth, screened, if_match, if_none_match)


def _write(
    store: Storage,
    config: ServerConfig,
    repo: str,
    auth: TokenRecord,
    screened: Screened,
    if_match: list[str],
    if_none_match: list[str],
) -> Response:
    body, refused = screened.body, screened.refused
    if refused and not body.entries and not body.deletes:
        return _refused_all(store, repo, auth, refused)
    req = WriteRequest(
        upserts=body.entries,
        deletes=body.deletes,
        if_match=if_match[0] if if_match and if_match[0] != "*" else None,
        create_only="*" in if_none_match,
        base_checksums=body.baseChecksums,
        who=auth.label,
        max_entries=config.max_entries,
        modified=_claimed_times(body.entryModified, body.entries),
    )
    result = store.write(repo, req, time.time())
    reply = write_reply(result)
    if reply.status == 200:
        clashed = reply.body.get("rejectedEntries", [])
        reply.body["rejectedEntries"] = sorted([*refused, *clashed], key=lambda r: str(r["key"]))
    log.info(
        "PUT repo=%s token=%s upserts=%d deletes=%d refused=%d -> %d",
        repo,
        auth.id,
        len(req.upserts),
        len(req.deletes),
        len(refused),
        reply.status,
    )
    headers = {"ETag": f'"{reply.body["checksum"]}"'} if reply.status == 200 else None
    return JSONResponse(reply.body, status_code=reply.status, headers=headers)


def _refused_all(
    store: Storage, repo: str, auth: TokenRecord, refused: list[dict[str, Any]]
) -> Response:
    """Every entry refused: nothing is written (no empty store created); 200 names them all."""
    head = store.head(repo)
    check = head.checksum if head is not None else EMPTY_CHECKSUM
    body = {
        "checksum": check,
        "lastModified": iso(head.last_modified if head is not None else 0.0),
        "version": head.version if head is not None else 0,
        "changedKeys": [],
        "rejectedEntries": refused,
    }
    log.info("PUT repo=%s token=%s refused=%d -> 200", repo, auth.id, len(refused))
    return JSONResponse(body, headers={"ETag": f'"{check}"'})


def _claimed_times(raw: dict[str, str] | None, entries: dict[str, str]) -> dict[str, float]:
    """``entryModified`` (extension) for keys in this PUT; unreadable stamps are ignored."""
    out: dict[str, float] = {}
    for key, stamp in (raw or {}).items():
        if key in entries:
            try:
                out[key] = datetime.fromisoformat(stamp).timestamp()
            except ValueError:
                continue
    return out


def _parse_body(raw: bytes) -> models.PutBody | Refusal:
    """The PUT body as a model; every malformed byte, number or nesting is a 400, never a 500."""
    bad_number: list[str] = []

    def number(text: str) -> int:
        # No PUT field is a number, so only short integers are even converted.
        if len(text) > MAX_NUMBER_DIGITS:
            bad_number.append(text[:0])
            raise ValueError("integer too long")
        return int(text)

    def real(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):  # 1e999 overflows to inf
            bad_number.append(text[:0])
            raise ValueError("float overflows")
        return value

    def constant(text: str) -> float:
        bad_number.append(text[:0])
        raise ValueError("NaN and Infinity are not JSON")

    try:
        data = json.loads(raw, parse_int=number, parse_float=real, parse_constant=constant)
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, int limits
        msg = (
            f"body holds a number that is not finite or over {MAX_NUMBER_DIGITS} digits"
            if bad_number
            else "body is not UTF-8 JSON"
        )
        return Refusal(400, error_body("team_memory_invalid_body", msg))
    try:
        return models.PutBody.model_validate(data)
    except ValidationError as exc:
        where = sorted({".".join(str(p) for p in e["loc"][:1]) for e in exc.errors()})
        msg = f"body does not match the schema at: {', '.join(where) or 'top level'}"
        return Refusal(422, error_body("team_memory_invalid_body", msg))
