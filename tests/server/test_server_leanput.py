"""The lean PUT route answers exactly as the FastAPI route it stands in for.

Two apps on two fresh SQLite stores take the same requests in the same order:
one with ``lean_put`` on (as served), one with it off (FastAPI's routing,
dependencies, middlewares and thread pool). Every status, header and body must
agree, timestamps aside.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2

from teamsync.server.storage import open_storage
from testing.server import SyncASGITransport, app_for, token_for

URL = "/api/claude_code/team_memory"
FAKE_PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<time>" if k == "lastModified" else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _answer(resp: httpx2.Response) -> tuple[int, dict[str, str], Any]:
    headers = {k.lower(): v for k, v in resp.headers.items() if k.lower() not in ("date",)}
    if headers.get("content-encoding") == "gzip":  # its size depends on the timestamps
        headers["content-length"] = "<gzipped>"
    try:
        body: Any = _masked(resp.json())
    except ValueError:
        body = resp.content
    return resp.status_code, headers, body


def _requests(tokens: dict[str, str]) -> list[dict[str, Any]]:
    own, other, ro = tokens["own"], tokens["other"], tokens["ro"]
    auth = {"Authorization": f"Bearer {own}"}
    repo = {"repo": "acme/widgets"}
    bad_keys = {f"../escape-{i}.md": "x" for i in range(40)}  # an answer over 1 KiB
    return [
        {"params": repo, "json": {"entries": {"a.md": "one"}}},  # no token
        {"params": repo, "json": {}, "headers": {"Authorization": f"Basic {own}"}},
        {"params": repo, "json": {}, "headers": {"Authorization": "Bearer"}},
        {"params": repo, "json": {}, "headers": {"Authorization": "Bearer   "}},
        {"params": repo, "json": {}, "headers": {"Authorization": "Bearer tsm_nope"}},
        {"params": repo, "json": {}, "headers": {"Authorization": f"bearer {other}"}},
        {
            "params": repo,
            "json": {"entries": {"a.md": "x"}},
            "headers": {"Authorization": f"Bearer {ro}"},
        },  # fmt: skip
        {"params": {}, "json": {}, "headers": auth},
        {"params": {"repo": "a/" + "b" * 999}, "json": {}, "headers": auth},
        {"params": {"repo": "not a repo"}, "json": {}, "headers": auth},
        {
            "params": [("repo", "acme/gadgets"), ("repo", "acme/widgets")],
            "json": {"entries": {"a.md": "one"}},
            "headers": {**auth, "If-None-Match": "*"},
        },  # fmt: skip
        {"params": repo, "content": b"not json", "headers": auth},
        {"params": repo, "content": b'{"entries": {"a.md": 1e999}}', "headers": auth},
        {"params": repo, "json": {"entries": {"a.md": 5}}, "headers": auth},
        {
            "params": repo,
            "json": {"entries": {"b.md": "two"}},
            "headers": {**auth, "If-Match": '"sha256:' + "0" * 64 + '"'},
        },  # fmt: skip
        {
            "params": repo,
            "json": {"entries": {"a.md": "again"}},
            "headers": {**auth, "If-None-Match": "*"},
        },  # fmt: skip
        {
            "params": repo,
            "json": {"entries": {"a.md": "two"}, "baseChecksums": {"a.md": None}},
            "headers": auth,
        },  # fmt: skip
        {
            "params": repo,
            "json": {"entries": {"c.md": f"token: {FAKE_PAT}\n", "d.md": "ok"}},
            "headers": auth,
        },  # fmt: skip
        {
            "params": repo,
            "json": {"entries": bad_keys},
            "headers": {**auth, "Accept-Encoding": "identity"},
        },  # fmt: skip
        {
            "params": repo,
            "json": {"entries": bad_keys},
            "headers": {**auth, "Accept-Encoding": "gzip"},
        },  # fmt: skip
        {"params": repo, "content": b"{}", "headers": {**auth, "Content-Length": str(5 * 2**30)}},
        {
            "params": repo,
            "json": {"deletes": ["d.md"], "soft_delete_keys": ["a.md"]},
            "headers": auth,
        },  # fmt: skip
    ]


def test_the_lean_put_answers_as_the_fastapi_route(tmp_path: Path) -> None:
    answers: dict[bool, list[tuple[int, dict[str, str], Any]]] = {}
    for lean in (True, False):
        store = open_storage(f"sqlite:///{tmp_path / f'lean-{lean}.sqlite3'}")
        tokens = {
            "own": token_for(store, label="own"),
            "other": token_for(store, "acme/gadgets", label="other"),
            "ro": token_for(store, read_only=True, label="ro"),
        }
        app = app_for(store)
        if not lean:
            app.lean_put = None
        transport = SyncASGITransport(app)
        try:
            with httpx2.Client(transport=transport, base_url="http://t") as client:
                answers[lean] = [_answer(client.put(URL, **req)) for req in _requests(tokens)]
        finally:
            transport.close()
            store.close()
    statuses = [status for status, _, _ in answers[True]]
    # the matrix reaches every answer the route gives
    assert {200, 400, 401, 403, 409, 412, 413, 422} <= set(statuses), statuses
    gzipped = [h.get("content-encoding") for _, h, _ in answers[True]]
    assert "gzip" in gzipped, "the large answer was not gzipped"
    for i, (lean, full) in enumerate(zip(answers[True], answers[False], strict=True)):
        assert lean == full, f"request {i}: the lean route and FastAPI differ"
