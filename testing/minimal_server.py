"""A minimal Claude Code-style team-memory server: the base wire format only.

GET (full and ``view=hashes``) with ETag/If-None-Match/304/404, PUT upserts
with If-Match/412 and the structured 413; one in-memory store per repo; any
non-empty bearer token. Deletes only as Claude Code 2.1.197 sends them
(``soft_delete_keys``, listed back as ``deletedEntries``; ``soft_deletes=False``
plays an older server that ignores them). No ``deletes``, no ``baseChecksums``,
no capability probe, no history: what a plain server that speaks Claude Code's
protocol does.
It ignores ``If-None-Match`` on PUT, as a plain server may.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


def _sum(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


class MinimalStore:
    def __init__(self, max_entries: int = 1000, *, soft_deletes: bool = True) -> None:
        self.soft_deletes = soft_deletes
        self.deleted: dict[str, dict[str, int]] = {}
        """repo -> key -> deletion time (ms since the epoch)."""
        self.repos: dict[str, dict[str, str]] = {}
        self.versions: dict[str, int] = {}
        self.max_entries = max_entries
        self.puts: list[dict[str, Any]] = []
        """Every PUT body and its If-Match header, for assertions."""

    def checksum(self, repo: str) -> str:
        entries = self.repos.get(repo, {})
        listing = json.dumps({k: _sum(v) for k, v in sorted(entries.items())})
        return _sum(listing)


def create_minimal_app(store: MinimalStore | None = None) -> Starlette:
    db = store or MinimalStore()

    async def team_memory(request: Request) -> Response:
        if not request.headers.get("authorization", "").startswith("Bearer "):
            return JSONResponse({"error": {"message": "unauthorized"}}, status_code=401)
        repo = request.query_params.get("repo", "")
        if request.method == "GET":
            return _get(db, repo, request)
        return await _put(db, repo, request)

    app = Starlette(
        routes=[Route("/api/claude_code/team_memory", team_memory, methods=["GET", "PUT"])]
    )
    app.state.store = db
    return app


def _get(db: MinimalStore, repo: str, request: Request) -> Response:
    if repo not in db.repos:
        return JSONResponse({"error": {"message": "not found"}}, status_code=404)
    check = db.checksum(repo)
    if request.headers.get("if-none-match") == check:
        return Response(status_code=304)
    entries = db.repos[repo]
    sums = {k: _sum(v) for k, v in entries.items()}
    if request.query_params.get("view") == "hashes":
        body: dict[str, Any] = {
            "checksum": check,
            "version": db.versions[repo],
            "entryChecksums": sums,
            "deletedEntries": db.deleted.get(repo, {}),
        }
    else:
        body = {
            "organizationId": "org",
            "repo": repo,
            "version": db.versions[repo],
            "lastModified": "2026-01-01T00:00:00Z",
            "checksum": check,
            "content": {
                "entries": entries,
                "entryChecksums": sums,
                "deletedEntries": db.deleted.get(repo, {}),
            },
        }
    return JSONResponse(body, headers={"ETag": check})


async def _put(db: MinimalStore, repo: str, request: Request) -> Response:
    body = json.loads(await request.body())
    db.puts.append(
        {
            "body": body,
            "if_match": request.headers.get("if-match"),
            "if_none_match": request.headers.get("if-none-match"),
        }
    )
    if_match = request.headers.get("if-match")
    if if_match is not None and repo in db.repos and if_match != db.checksum(repo):
        return JSONResponse({"error": {"message": "precondition failed"}}, status_code=412)
    entries = dict(db.repos.get(repo, {}))
    entries.update(body.get("entries", {}))
    gone = db.deleted.setdefault(repo, {})
    for key in body.get("entries", {}):
        gone.pop(key, None)
    for key in body.get("soft_delete_keys", []) if db.soft_deletes else []:
        if entries.pop(key, None) is not None:
            gone[key] = int(time.time() * 1000)
    if len(entries) > db.max_entries:
        details = {
            "error_code": "team_memory_too_many_entries",
            "max_entries": db.max_entries,
            "received_entries": len(entries),
        }
        return JSONResponse({"error": {"message": "too many", "details": details}}, status_code=413)
    db.repos[repo] = entries
    db.versions[repo] = db.versions.get(repo, 0) + 1
    return JSONResponse({"checksum": db.checksum(repo), "lastModified": "2026-01-01T00:00:00Z"})
