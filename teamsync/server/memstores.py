"""The Memory Stores API, as the official SDKs call it (``client.beta.memory_stores``).

Routes (all JSON; see docs/server.md, "Memory Stores")::

    POST   /v1/memory_stores                          create a store
    GET    /v1/memory_stores                          list (limit, page, include_archived, created_at_*)
    GET    /v1/memory_stores/{id}                     retrieve
    POST   /v1/memory_stores/{id}                     update (name, description, metadata)
    POST   /v1/memory_stores/{id}/archive             archive
    DELETE /v1/memory_stores/{id}                     delete (its memories and versions too)
    POST   /v1/memory_stores/{id}/memories            create a memory {path, content}
    GET    /v1/memory_stores/{id}/memories            list (path_prefix, depth, limit, page, view)
    GET    /v1/memory_stores/{id}/memories/{mid}      retrieve (view, default full)
    POST   /v1/memory_stores/{id}/memories/{mid}      update {content?, path?, precondition?}
    DELETE /v1/memory_stores/{id}/memories/{mid}      delete (expected_content_sha256)
    GET    /v1/memory_stores/{id}/memory_versions     list (memory_id, operation, created_at_*, ...)
    GET    /v1/memory_stores/{id}/memory_versions/{v} retrieve
    POST   /v1/memory_stores/{id}/memory_versions/{v}/redact

A teamsync token is accepted where the SDK sends its key (``X-Api-Key``) or as
``Authorization: Bearer``; a store belongs to the repository the token is
scoped to, and a read-only token cannot write. Every write passes the same
gates as a legacy PUT: the path rules (the API's, then teamsync's key rules),
the content limit (the API's 102,400 bytes, or the server's lower one), the
entries cap per store, and the secret scanner with the operator's allowlist.
Errors have the API's shape (``{"type": "error", "error": {"type", "message"}}``).

An extension clients may ignore: the first page of a memory listing carries an
``ETag`` (a digest of the query and the store's newest version, which every write
of a memory adds: one index probe, whatever the store's size), and
``If-None-Match`` with it answers 304, so a no-op sync of a large store is one
small request. A write anywhere in the store changes it (a folder's listing is
then read again, unchanged).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from teamsync.errors import ServerError
from teamsync.security.keys import key_problem
from teamsync.security.names import name_findings
from teamsync.server.limits import BodyTimeout, BodyTooLarge, ServerConfig, iso, read_limited
from teamsync.server.memstore_storage import (
    Failed,
    MemoryRow,
    MemstoreDB,
    StoreRow,
    VersionRow,
)
from teamsync.server.storage import Storage, TokenRecord
from teamsync.server.storage_sql import SqlStorage
from teamsync.server.tokens import verify_token
from teamsync.wire import (
    MEMORY_MAX_BYTES,
    MEMORY_PAGE_DEFAULT,
    MEMORY_PAGE_MAX,
    MEMORY_PAGE_MAX_FULL,
    MEMSTORES_PATH,
    memory_path_problem,
    memstore_error,
)

log = logging.getLogger("teamsync.server")
FAILED_STATUS = {
    "not_found": (404, "not_found_error"),
    "precondition": (409, "memory_precondition_failed_error"),
    "path_conflict": (409, "memory_path_conflict_error"),
    "current": (409, "conflict_error"),
    "archived": (400, "invalid_request_error"),
    "too_many": (400, "invalid_request_error"),
}
_HEX64 = frozenset("0123456789abcdef")


class ApiError(Exception):
    """An answer in the API's error shape."""

    def __init__(
        self, status: int, kind: str, message: str, details: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message
        self.details = details or {}


def _bad(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


def _fail(failed: Failed) -> ApiError:
    status, kind = FAILED_STATUS[failed.kind]
    return ApiError(status, kind, failed.message, failed.details)


def _answer(exc: ApiError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    body = memstore_error(exc.kind, exc.message)
    body["error"].update(exc.details)
    return JSONResponse(body, exc.status, headers=headers)


# -- rendering ------------------------------------------------------------------------
def render_store(row: StoreRow) -> dict[str, Any]:
    return {
        "type": "memory_store",
        "id": row.id,
        "name": row.name,
        "description": row.description,
        "metadata": row.metadata,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "archived_at": None if row.archived_at is None else iso(row.archived_at),
    }


def render_memory(row: MemoryRow, *, full: bool) -> dict[str, Any]:
    return {
        "type": "memory",
        "id": row.id,
        "memory_store_id": row.store_id,
        "path": row.path,
        "content": row.content if full else None,
        "content_sha256": row.sha,
        "content_size_bytes": row.size,
        "memory_version_id": row.version_id,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
    }


def render_version(
    row: VersionRow, *, full: bool, labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``labels`` (``apikey_…`` -> the token's label) names each ``api_actor`` further: an
    extension (``label``, beside the documented ``api_key_id``) that clients may ignore."""
    return {
        "type": "memory_version",
        "id": row.id,
        "memory_id": row.memory_id,
        "memory_store_id": row.store_id,
        "operation": row.operation,
        "path": row.path,
        "content": row.content if full else None,
        "content_sha256": row.sha,
        "content_size_bytes": row.size,
        "created_at": iso(row.created_at),
        "created_by": _labelled(row.actor, labels),
        "redacted_at": None if row.redacted_at is None else iso(row.redacted_at),
        "redacted_by": _labelled(row.redacted_by, labels),
    }


def _labelled(
    actor: dict[str, str] | None, labels: Mapping[str, str] | None
) -> dict[str, str] | None:
    label = (labels or {}).get(actor.get("api_key_id", "")) if actor else None
    return {**actor, "label": label} if actor and label else actor


def actor_of(record: TokenRecord) -> dict[str, str]:
    """Who a token writes as: an ``api_actor`` named by the token's public id."""
    return {"type": "api_actor", "api_key_id": f"apikey_{record.id}"}


# -- parameters -----------------------------------------------------------------------
def _token(page: str | None) -> dict[str, Any] | None:
    if page is None:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(page.encode("ascii") + b"=="))
    except (ValueError, UnicodeEncodeError):
        raise _bad("page: not a next_page value this server gave") from None
    if not isinstance(data, dict):
        raise _bad("page: not a next_page value this server gave")
    return data


def _page(data: dict[str, Any]) -> str:
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _limit(raw: str | None, view_full: bool) -> int:
    if raw is None:
        return MEMORY_PAGE_DEFAULT
    try:
        limit = int(raw)
    except ValueError:
        raise _bad("limit: a whole number from 1 to 100") from None
    if not 1 <= limit <= MEMORY_PAGE_MAX:
        raise _bad("limit: a whole number from 1 to 100")
    return min(limit, MEMORY_PAGE_MAX_FULL) if view_full else limit


def _view(raw: str | None, default: str) -> bool:
    """True for ``full``."""
    view = raw or default
    if view not in ("basic", "full"):
        raise _bad("view: basic or full")
    return view == "full"


def _time(raw: str | None, name: str) -> float | None:
    if raw is None:
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise _bad(f"{name}: an RFC 3339 time") from None


def _sha(raw: object, name: str) -> str:
    if not isinstance(raw, str) or len(raw) != 64 or not set(raw) <= _HEX64:
        raise _bad(f"{name}: 64 lowercase hexadecimal characters")
    return raw


def _prefix(raw: str | None) -> str:
    if raw is None or raw == "/":
        return "/"
    if not raw.endswith("/") or memory_path_problem(raw[:-1]) is not None:
        raise _bad("path_prefix: a path that starts and ends with /")
    return raw


# -- the gates a write passes ---------------------------------------------------------
def check_path(path: object) -> str:
    if not isinstance(path, str):
        raise _bad("path: a string")
    problem = memory_path_problem(path)
    if problem is None:
        secret = name_findings(path[1:])
        if secret:
            rules = ", ".join(sorted({f.rule for f in secret}))
            problem = f"the path holds a likely secret ({rules}); name the memory for its topic"
        else:
            problem = key_problem(path[1:])
    if problem is not None:
        raise _bad(f"path: {problem}")
    return path


def check_content(content: object, config: ServerConfig, scope: str, path: str) -> str:
    if not isinstance(content, str):
        raise _bad("content: a string")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:
        raise _bad("content: not valid UTF-8 text (a lone surrogate)") from None
    most = min(MEMORY_MAX_BYTES, config.max_entry_bytes)
    if size > most:
        raise _bad(f"content: {size:,} bytes, over the {most:,}-byte limit of one memory")
    if "\x00" in content:
        raise _bad("content: holds NUL; memories are text")
    from teamsync.security.secrets import scan_text

    found = scan_text(content, path[1:], baseline=config.allowed(scope))
    if found:
        named = ", ".join(sorted({f"{f.rule}, line {f.line}" for f in found}))
        raise _bad(f"content refused: likely secret ({named}); remove it and write again")
    return content


# -- the routes -----------------------------------------------------------------------
def install(app: FastAPI, storage: Storage, config: ServerConfig) -> None:
    """Add the Memory Stores routes to ``app`` (over the same database as the legacy ones)."""
    if not isinstance(storage, SqlStorage):
        return
    db = MemstoreDB(storage)
    api = _Api(db, storage, config)
    base = MEMSTORES_PATH
    routes: list[tuple[str, str, Callable[..., Any]]] = [
        ("POST", base, api.create_store),
        ("GET", base, api.list_stores),
        ("GET", base + "/{store_id}", api.get_store),
        ("POST", base + "/{store_id}", api.update_store),
        ("POST", base + "/{store_id}/archive", api.archive_store),
        ("DELETE", base + "/{store_id}", api.delete_store),
        ("POST", base + "/{store_id}/memories", api.create_memory),
        ("GET", base + "/{store_id}/memories", api.list_memories),
        ("GET", base + "/{store_id}/memories/{memory_id}", api.get_memory),
        ("POST", base + "/{store_id}/memories/{memory_id}", api.update_memory),
        ("DELETE", base + "/{store_id}/memories/{memory_id}", api.delete_memory),
        ("GET", base + "/{store_id}/memory_versions", api.list_versions),
        ("GET", base + "/{store_id}/memory_versions/{version_id}", api.get_version),
        ("POST", base + "/{store_id}/memory_versions/{version_id}/redact", api.redact),
    ]
    for method, path, handler in routes:
        app.add_api_route(path, _endpoint(api, handler), methods=[method], include_in_schema=False)


def _endpoint(api: _Api, handler: Callable[..., Any]) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        try:
            body = await api.body(request) if request.method == "POST" else None
            return await run_in_threadpool(api.run, handler, request, body)
        except ApiError as exc:
            return _answer(exc)

    return endpoint


class _Api:
    def __init__(self, db: MemstoreDB, storage: Storage, config: ServerConfig) -> None:
        self.db, self.storage, self.config = db, storage, config

    async def body(self, request: Request) -> dict[str, Any]:
        try:
            raw = await read_limited(
                request.headers.get("content-length"), request.stream(), self.config.max_body_bytes
            )
        except BodyTooLarge as exc:
            raise ApiError(
                413, "request_too_large", f"request body over {exc.limit} bytes"
            ) from None
        except BodyTimeout as exc:
            raise ApiError(408, "timeout_error", str(exc)) from None
        if not raw.strip():
            return {}
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            raise _bad("the body is not UTF-8 JSON") from None
        if not isinstance(data, dict):
            raise _bad("the body must be a JSON object")
        return data

    def run(self, handler: Callable[..., Response], request: Request, body: Any) -> Response:
        try:
            record = self.auth(request)
            if request.method != "GET" and record.read_only:
                raise ApiError(403, "permission_error", "this token is read-only")
            return handler(record, request, body)
        except ServerError as exc:
            log.error("storage failure: %s", exc)
            resp = _answer(ApiError(503, "overloaded_error", "storage unavailable; retry later"))
            resp.headers["Retry-After"] = "1"
            return resp

    def auth(self, request: Request) -> TokenRecord:
        key = request.headers.get("x-api-key")
        if not key:
            scheme, _, value = request.headers.get("authorization", "").partition(" ")
            key = value.strip() if scheme.lower() == "bearer" else ""
        if not key:
            raise ApiError(401, "authentication_error", "missing key (X-Api-Key or Bearer)")
        record = verify_token(self.storage, key)
        if record is None:
            raise ApiError(401, "authentication_error", "unknown, revoked or expired key")
        return record

    def _store(self, record: TokenRecord, request: Request) -> StoreRow:
        store_id = request.path_params["store_id"]
        store = self.db.store(record.repo, store_id)
        if store is None:
            raise ApiError(404, "not_found_error", f"no memory store {store_id}")
        return store

    # -- stores -----------------------------------------------------------------------
    def create_store(self, record: TokenRecord, _: Request, body: dict[str, Any]) -> Response:
        name, desc, meta = _store_fields(body, create=True)
        kept = {k: v for k, v in (meta or {}).items() if v is not None}
        row = self.db.create_store(record.repo, name or "", desc or "", kept, time.time())
        return JSONResponse(render_store(row))

    def list_stores(self, record: TokenRecord, request: Request, _: None) -> Response:
        q = request.query_params
        limit = _limit(q.get("limit"), False)
        cursor = _token(q.get("page"))
        after = None
        if cursor is not None:
            at, ident = cursor.get("at"), cursor.get("id")
            if not isinstance(at, int | float) or not isinstance(ident, str):
                raise _bad("page: not a next_page value this server gave")
            after = (float(at), ident)
        rows = self.db.stores(
            record.repo,
            include_archived=q.get("include_archived") in ("true", "True", "1"),
            after=after,
            limit=limit + 1,
            created_gte=_time(q.get("created_at_gte"), "created_at_gte"),
            created_lte=_time(q.get("created_at_lte"), "created_at_lte"),
        )
        nxt = None
        if len(rows) > limit:
            rows = rows[:limit]
            nxt = _page({"at": rows[-1].created_at, "id": rows[-1].id})
        return JSONResponse({"data": [render_store(r) for r in rows], "next_page": nxt})

    def get_store(self, record: TokenRecord, request: Request, _: None) -> Response:
        return JSONResponse(render_store(self._store(record, request)))

    def update_store(self, record: TokenRecord, request: Request, body: dict[str, Any]) -> Response:
        name, desc, meta = _store_fields(body, create=False)
        changes = {"name": name, "description": desc, "metadata": meta}
        row = self.db.update_store(
            record.repo, request.path_params["store_id"], changes, time.time()
        )
        if isinstance(row, Failed):
            raise _fail(row)
        return JSONResponse(render_store(row))

    def archive_store(self, record: TokenRecord, request: Request, _: Any) -> Response:
        row = self.db.update_store(
            record.repo, request.path_params["store_id"], {}, time.time(), archive=True
        )
        if isinstance(row, Failed):
            raise _fail(row)
        return JSONResponse(render_store(row))

    def delete_store(self, record: TokenRecord, request: Request, _: None) -> Response:
        store_id = request.path_params["store_id"]
        if not self.db.delete_store(record.repo, store_id):
            raise ApiError(404, "not_found_error", f"no memory store {store_id}")
        return JSONResponse({"type": "memory_store_deleted", "id": store_id})

    # -- memories ---------------------------------------------------------------------
    def create_memory(
        self, record: TokenRecord, request: Request, body: dict[str, Any]
    ) -> Response:
        store = self._store(record, request)
        full = _view(request.query_params.get("view"), "basic")
        path = check_path(body.get("path"))
        content = body.get("content")
        content = check_content("" if content is None else content, self.config, record.repo, path)
        row = self.db.create_memory(
            record.repo,
            store.id,
            path,
            content,
            actor_of(record),
            time.time(),
            self.config.max_entries,
        )
        if isinstance(row, Failed):
            raise _fail(row)
        return JSONResponse(render_memory(row, full=full))

    def get_memory(self, record: TokenRecord, request: Request, _: None) -> Response:
        store = self._store(record, request)
        full = _view(request.query_params.get("view"), "full")
        memory_id = request.path_params["memory_id"]
        row = self.db.memory(store.id, memory_id)
        if row is None:
            raise ApiError(404, "not_found_error", f"no memory {memory_id} in this store")
        return JSONResponse(render_memory(row, full=full))

    def update_memory(
        self, record: TokenRecord, request: Request, body: dict[str, Any]
    ) -> Response:
        store = self._store(record, request)
        full = _view(request.query_params.get("view"), "basic")
        path = None if body.get("path") is None else check_path(body.get("path"))
        content = body.get("content")
        expect = None
        pre = body.get("precondition")
        if pre is not None:
            if not isinstance(pre, dict) or pre.get("type") != "content_sha256":
                raise _bad("precondition: {type: content_sha256, content_sha256}")
            expect = _sha(pre.get("content_sha256"), "precondition.content_sha256")
        memory_id = request.path_params["memory_id"]
        if content is not None:
            where = path
            if where is None:
                current = self.db.memory(store.id, memory_id)
                where = current.path if current is not None else "/memory"
            content = check_content(content, self.config, record.repo, where)
        row = self.db.update_memory(
            record.repo,
            store.id,
            memory_id,
            content=content,
            path=path,
            expect_sha=expect,
            actor=actor_of(record),
            now=time.time(),
        )
        if isinstance(row, Failed):
            raise _fail(row)
        return JSONResponse(render_memory(row, full=full))

    def delete_memory(self, record: TokenRecord, request: Request, _: None) -> Response:
        store = self._store(record, request)
        raw = request.query_params.get("expected_content_sha256")
        expect = None if raw is None else _sha(raw, "expected_content_sha256")
        memory_id = request.path_params["memory_id"]
        row = self.db.delete_memory(
            record.repo, store.id, memory_id, expect, actor_of(record), time.time()
        )
        if isinstance(row, Failed):
            raise _fail(row)
        return JSONResponse({"type": "memory_deleted", "id": memory_id})

    def list_memories(self, record: TokenRecord, request: Request, _: None) -> Response:
        store = self._store(record, request)
        q = request.query_params
        full = _view(q.get("view"), "basic")
        limit = _limit(q.get("limit"), full)
        prefix = _prefix(q.get("path_prefix"))
        depth = q.get("depth", "0")
        if depth not in ("0", "1"):
            raise _bad("depth: 0 (everything below) or 1 (direct children)")
        cursor = _token(q.get("page"))
        etag = None
        if cursor is None:
            query = f"{prefix}\0{depth}\0{limit}\0{int(full)}\0{self.db.last_version(store.id)}"
            etag = f'"{hashlib.sha256(query.encode()).hexdigest()[:32]}"'
            if etag in [t.strip() for t in request.headers.get("if-none-match", "").split(",")]:
                return Response(status_code=304, headers={"ETag": etag})
        items, nxt = self._items(store.id, prefix, depth == "1", limit, cursor, full)
        headers = {"ETag": etag} if etag else None
        return JSONResponse({"data": items, "next_page": nxt}, headers=headers)

    def _items(
        self,
        store_id: str,
        prefix: str,
        shallow: bool,
        limit: int,
        cursor: dict[str, Any] | None,
        full: bool,
    ) -> tuple[list[dict[str, Any]], str | None]:
        after = cursor.get("after") if cursor is not None else None
        if after is not None and not isinstance(after, str):
            raise _bad("page: not a next_page value this server gave")
        items: list[dict[str, Any]] = []
        while True:
            rows = self.db.listing(store_id, prefix, after, limit + 1, contents=full)
            for row in rows:
                if len(items) == limit:  # one more item exists: the next page starts after
                    return items, _page({"after": after})
                rest = row.path[len(prefix) :]
                if shallow and "/" in rest:
                    marker = prefix + rest.split("/", 1)[0] + "/"
                    items.append({"type": "memory_prefix", "path": marker})
                    after = self.db.last_below(store_id, marker)
                    break  # list on from the end of that folder
                items.append(render_memory(row, full=full))
                after = row.path
            else:
                if len(rows) <= limit:
                    return items, None

    # -- versions ---------------------------------------------------------------------
    def list_versions(self, record: TokenRecord, request: Request, _: None) -> Response:
        store = self._store(record, request)
        q = request.query_params
        full = _view(q.get("view"), "basic")
        limit = _limit(q.get("limit"), full)
        cursor = _token(q.get("page"))
        before = cursor.get("before") if cursor is not None else None
        if before is not None and (not isinstance(before, int) or isinstance(before, bool)):
            raise _bad("page: not a next_page value this server gave")
        operation = q.get("operation")
        if operation is not None and operation not in ("created", "modified", "deleted"):
            raise _bad("operation: created, modified or deleted")
        filters: dict[str, Any] = {
            "memory_id": q.get("memory_id"),
            "operation": operation,
            "created_at_gte": _time(q.get("created_at_gte"), "created_at_gte"),
            "created_at_lte": _time(q.get("created_at_lte"), "created_at_lte"),
        }
        if q.get("api_key_id") is not None:
            filters["actor"] = json.dumps({"type": "api_actor", "api_key_id": q["api_key_id"]})
        if q.get("session_id") is not None or q.get("service_account_id") is not None:
            return JSONResponse({"data": [], "next_page": None})  # no sessions write here
        rows = self.db.versions(store.id, before=before, limit=limit + 1, filters=filters)
        nxt = None
        if len(rows) > limit:
            rows = rows[:limit]
            nxt = _page({"before": rows[-1].seq})
        labels = self._labels(rows)
        data = [render_version(r, full=full, labels=labels) for r in rows]
        return JSONResponse({"data": data, "next_page": nxt})

    def _labels(self, rows: Sequence[VersionRow]) -> dict[str, str]:
        """``apikey_<token id>`` -> the token's label (``teamsync token create --label``),
        for the tokens that wrote or redacted ``rows``: one lookup per distinct token."""
        ids = {
            a["api_key_id"]
            for r in rows
            for a in (r.actor, r.redacted_by)
            if a and a.get("type") == "api_actor" and a.get("api_key_id", "").startswith("apikey_")
        }
        out = {}
        for key_id in sorted(ids):
            token = self.storage.get_token(key_id.removeprefix("apikey_"))
            if token is not None and token.label:
                out[key_id] = token.label
        return out

    def get_version(self, record: TokenRecord, request: Request, _: None) -> Response:
        store = self._store(record, request)
        full = _view(request.query_params.get("view"), "full")
        version_id = request.path_params["version_id"]
        row = self.db.version(store.id, version_id)
        if row is None:
            raise ApiError(404, "not_found_error", f"no memory version {version_id} in this store")
        return JSONResponse(render_version(row, full=full, labels=self._labels([row])))

    def redact(self, record: TokenRecord, request: Request, _: Any) -> Response:
        store = self._store(record, request)
        row = self.db.redact(
            record.repo,
            store.id,
            request.path_params["version_id"],
            actor_of(record),
            time.time(),
        )
        if isinstance(row, Failed):
            raise _fail(row)
        log.info("memory store %s: version %s redacted", store.id, row.id)
        return JSONResponse(render_version(row, full=True, labels=self._labels([row])))


def _store_fields(
    body: dict[str, Any], *, create: bool
) -> tuple[str | None, str | None, dict[str, str | None] | None]:
    name, desc, meta = body.get("name"), body.get("description"), body.get("metadata")
    if create or name is not None:
        if (
            not isinstance(name, str)
            or not 1 <= len(name) <= 255
            or any(ord(c) < 32 or ord(c) == 127 for c in name)
        ):
            raise _bad("name: 1 to 255 characters, no control characters")
    if desc is not None and (not isinstance(desc, str) or len(desc) > 1024):
        raise _bad("description: at most 1,024 characters")
    if meta is not None:
        if not isinstance(meta, dict) or len(meta) > 16:
            raise _bad("metadata: at most 16 key-value pairs")
        for key, value in meta.items():
            if not 1 <= len(key) <= 64:
                raise _bad("metadata: keys are 1 to 64 characters")
            if value is None and create:
                raise _bad("metadata: values are strings")
            if value is not None and (not isinstance(value, str) or len(value) > 512):
                raise _bad("metadata: values are strings of at most 512 characters")
    return name, desc, meta
