"""Conformance: the official ``anthropic`` Python SDK calls every documented Memory Stores
method against a real ``teamsync serve`` (uvicorn on loopback), on SQLite and PostgreSQL.

Each answer is parsed by the SDK into its own documented type; a wrong shape
fails in the SDK's parser, not in an assertion written here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from anthropic.types.beta import BetaManagedAgentsDeletedMemoryStore, BetaManagedAgentsMemoryStore
from anthropic.types.beta.memory_stores import (
    BetaManagedAgentsDeletedMemory,
    BetaManagedAgentsMemory,
    BetaManagedAgentsMemoryPrefix,
    BetaManagedAgentsMemoryVersion,
)

from teamsync.server.storage import Storage, open_storage
from testing.server import app_for, token_for, uvicorn_server

FAKE_PAT = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def error_type(exc: anthropic.APIStatusError) -> str:
    """The documented error body: ``{"type": "error", "error": {"type", "message"}}``."""
    body: Any = exc.body
    assert body["type"] == "error" and isinstance(body["error"]["message"], str)
    return str(body["error"]["type"])


@pytest.fixture
def sdk(db_url: str) -> Iterator[tuple[anthropic.Anthropic, Storage, str]]:
    store = open_storage(db_url)
    token = token_for(store, "acme/widgets", label="alice")
    try:
        with uvicorn_server(app_for(store)) as url:
            client = anthropic.Anthropic(base_url=url, api_key=token, max_retries=0)
            yield client, store, url
            client.close()
    finally:
        store.close()


def test_every_documented_call(sdk: tuple[anthropic.Anthropic, Storage, str]) -> None:
    client, store, _ = sdk
    stores = client.beta.memory_stores
    made = stores.create(name="Team memory", description="what we learned", metadata={"k": "v"})
    assert isinstance(made, BetaManagedAgentsMemoryStore) and made.id.startswith("memstore_")
    assert stores.retrieve(made.id).name == "Team memory"
    renamed = stores.update(made.id, name="Team", metadata={"k": None, "team": "core"})
    assert renamed.name == "Team" and renamed.metadata == {"team": "core"}
    other = stores.create(name="Scratch")
    assert {s.id for s in stores.list()} == {made.id, other.id}

    mems = stores.memories
    first = mems.create(made.id, path="/notes/deploy.md", content="# Deploy\nmake ship\n")
    assert isinstance(first, BetaManagedAgentsMemory) and first.content is None  # basic
    assert first.content_sha256 == sha("# Deploy\nmake ship\n") and first.id.startswith("mem_")
    full = mems.retrieve(first.id, memory_store_id=made.id)
    assert full.content == "# Deploy\nmake ship\n" and full.memory_version_id.startswith("memver_")
    mems.create(made.id, path="/notes/deep/a.md", content="a")
    mems.create(made.id, path="/notes/deep/b.md", content="b")
    mems.create(made.id, path="/top.md", content="top")

    # update with a precondition; a stale one is the documented 409, nothing changed
    updated = mems.update(
        first.id,
        memory_store_id=made.id,
        content="# Deploy\nmake ship-it\n",
        precondition={"type": "content_sha256", "content_sha256": first.content_sha256},
    )
    assert updated.content_sha256 == sha("# Deploy\nmake ship-it\n")
    with pytest.raises(anthropic.ConflictError) as stale:
        mems.update(
            first.id,
            memory_store_id=made.id,
            content="lost update",
            precondition={"type": "content_sha256", "content_sha256": first.content_sha256},
        )
    assert stale.value.status_code == 409
    assert error_type(stale.value) == "memory_precondition_failed_error"
    # the same request again when the store already holds it succeeds (a retry)
    again = mems.update(
        first.id,
        memory_store_id=made.id,
        content="# Deploy\nmake ship-it\n",
        precondition={"type": "content_sha256", "content_sha256": first.content_sha256},
    )
    assert again.memory_version_id == updated.memory_version_id
    # a rename keeps the id; a rename onto a taken path is a path conflict
    moved = mems.update(first.id, memory_store_id=made.id, path="/notes/ship.md")
    assert moved.id == first.id and moved.path == "/notes/ship.md"
    with pytest.raises(anthropic.ConflictError) as taken:
        mems.update(first.id, memory_store_id=made.id, path="/top.md")
    assert error_type(taken.value) == "memory_path_conflict_error"
    # a path that overlaps another memory's is the same documented conflict, naming it:
    # a memory where a folder is needed, or a folder of memories where a file would go
    top_id = next(m.id for m in mems.list(made.id) if m.path == "/top.md")
    for path, blocking, blocking_id in (
        ("/top.md/inner.md", "/top.md", top_id),
        ("/notes/deep", "/notes/deep/a.md", None),
        ("/notes/ship.md", "/notes/ship.md", first.id),
    ):
        with pytest.raises(anthropic.ConflictError) as overlap:
            mems.create(made.id, path=path, content="x")
        assert error_type(overlap.value) == "memory_path_conflict_error", path
        error: Any = overlap.value.body
        assert error["error"]["conflicting_path"] == blocking, path
        assert blocking_id is None or error["error"]["conflicting_memory_id"] == blocking_id
    with pytest.raises(anthropic.ConflictError) as overlap:  # a rename, too
        mems.update(first.id, memory_store_id=made.id, path="/top.md/ship.md")
    assert error_type(overlap.value) == "memory_path_conflict_error"
    assert [m.path for m in mems.list(made.id, path_prefix="/top.md/")] == []

    # list: depth=1 rolls folders into prefixes; paging runs to the end
    top = list(mems.list(made.id, depth=1))
    assert [(type(i).__name__, i.path) for i in top] == [
        ("BetaManagedAgentsMemoryPrefix", "/notes/"),
        ("BetaManagedAgentsMemory", "/top.md"),
    ]
    inside = list(mems.list(made.id, path_prefix="/notes/", depth=1))
    assert [i.path for i in inside] == ["/notes/deep/", "/notes/ship.md"]
    assert isinstance(inside[0], BetaManagedAgentsMemoryPrefix)
    for n in range(25):
        mems.create(made.id, path=f"/bulk/{n:02}.md", content=f"bulk {n}")
    page = mems.list(made.id, path_prefix="/bulk/", limit=7)
    assert len(page.data) == 7 and page.next_page
    every = [m.path for m in mems.list(made.id, path_prefix="/bulk/", limit=7)]
    assert every == [f"/bulk/{n:02}.md" for n in range(25)]
    fulls = list(mems.list(made.id, path_prefix="/bulk/", view="full", limit=100))
    assert len(fulls) == 25 and all(isinstance(m, BetaManagedAgentsMemory) for m in fulls)
    assert fulls[3].content == "bulk 3"
    assert mems.list(made.id, path_prefix="/bulk/", view="full", limit=100).data.__len__() == 20
    assert [m.path for m in mems.list(made.id, path_prefix="/notes/")] == [
        "/notes/deep/a.md",
        "/notes/deep/b.md",
        "/notes/ship.md",
    ]

    # delete with expected_content_sha256: a mismatch is 409 and nothing goes
    with pytest.raises(anthropic.ConflictError):
        mems.delete(first.id, memory_store_id=made.id, expected_content_sha256=sha("other"))
    assert mems.retrieve(first.id, memory_store_id=made.id).path == "/notes/ship.md"
    gone = mems.delete(
        first.id, memory_store_id=made.id, expected_content_sha256=moved.content_sha256
    )
    assert isinstance(gone, BetaManagedAgentsDeletedMemory) and gone.id == first.id
    with pytest.raises(anthropic.NotFoundError):
        mems.retrieve(first.id, memory_store_id=made.id)

    # versions: one per change, newest first, filters, outliving the memory; redaction
    vers = stores.memory_versions
    lineage = list(vers.list(made.id, memory_id=first.id))
    assert [v.operation for v in lineage] == ["deleted", "modified", "modified", "created"]
    assert all(isinstance(v, BetaManagedAgentsMemoryVersion) for v in lineage)
    actor = lineage[0].created_by
    assert actor is not None and actor.type == "api_actor"
    # the token's label rides along as an extension the SDK keeps as an extra field
    assert actor.model_extra == {"label": "alice"}
    assert lineage[0].content is None and lineage[0].content_sha256 is None  # deleted
    created = vers.retrieve(lineage[-1].id, memory_store_id=made.id)
    assert created.content == "# Deploy\nmake ship\n" and created.path == "/notes/deploy.md"
    assert [v.id for v in vers.list(made.id, memory_id=first.id, operation="created")] == [
        created.id
    ]
    mine = list(vers.list(made.id, api_key_id=actor.api_key_id, limit=100))  # type: ignore[union-attr]
    assert len(mine) == 4 + 2 + 1 + 25 and not list(vers.list(made.id, session_id="sesn_x"))
    redacted = vers.redact(created.id, memory_store_id=made.id)
    assert redacted.redacted_at is not None and redacted.redacted_by is not None
    assert redacted.content is None and redacted.path is None and redacted.content_sha256 is None
    again_v = vers.retrieve(created.id, memory_store_id=made.id)
    assert again_v.redacted_at is not None and again_v.content is None
    assert again_v.created_by == actor  # redaction keeps the author

    # archive: memories become read-only; delete removes the store
    archived = stores.archive(other.id)
    assert archived.archived_at is not None
    assert {s.id for s in stores.list()} == {made.id}
    assert {s.id for s in stores.list(include_archived=True)} == {made.id, other.id}
    with pytest.raises(anthropic.BadRequestError):
        mems.create(other.id, path="/x.md", content="x")
    deleted = stores.delete(other.id)
    assert isinstance(deleted, BetaManagedAgentsDeletedMemoryStore)
    with pytest.raises(anthropic.NotFoundError):
        stores.retrieve(other.id)


def test_gates_limits_and_auth(sdk: tuple[anthropic.Anthropic, Storage, str]) -> None:
    client, store, url = sdk
    made = client.beta.memory_stores.create(name="Team")
    mems = client.beta.memory_stores.memories
    with pytest.raises(anthropic.BadRequestError) as secret:
        mems.create(made.id, path="/creds.md", content=f"token: {FAKE_PAT}\n")
    assert FAKE_PAT not in str(secret.value.body) and "secret" in str(secret.value.body)
    for path in ("no-slash.md", "/a//b.md", "/a/../b.md", "/e\u0301.md", "/a\u200bb.md"):
        with pytest.raises(anthropic.BadRequestError):
            mems.create(made.id, path=path, content="x")
    with pytest.raises(anthropic.BadRequestError):
        mems.create(made.id, path="/" + "/".join(["s"] * 21), content="x")
    with pytest.raises(anthropic.BadRequestError):
        mems.create(made.id, path="/big.md", content="x" * 102_401)
    assert (
        mems.create(made.id, path="/fits.md", content="x" * 102_400).content_size_bytes == 102_400
    )
    assert not [m for m in mems.list(made.id) if m.path != "/fits.md"]
    body: Any = None
    with pytest.raises(anthropic.AuthenticationError) as denied:
        anthropic.Anthropic(
            base_url=url, api_key="tsm_000000000000_" + "x" * 43
        ).beta.memory_stores.list()
    body = denied.value.body
    assert body["type"] == "error" and error_type(denied.value) == "authentication_error"
    # a token of another repository sees none of these stores
    theirs = token_for(store, "acme/other", label="eve")
    with anthropic.Anthropic(base_url=url, api_key=theirs) as eve:
        assert list(eve.beta.memory_stores.list()) == []
        with pytest.raises(anthropic.NotFoundError):
            eve.beta.memory_stores.memories.list(made.id)
    reader = token_for(store, "acme/widgets", read_only=True, label="ro")
    with anthropic.Anthropic(base_url=url, auth_token=reader, api_key=None) as ro:
        assert [m.path for m in ro.beta.memory_stores.memories.list(made.id)] == ["/fits.md"]
        with pytest.raises(anthropic.PermissionDeniedError):
            ro.beta.memory_stores.memories.create(made.id, path="/y.md", content="y")


def test_a_listing_first_page_is_conditional(sdk: tuple[anthropic.Anthropic, Storage, str]) -> None:
    client, _, _ = sdk
    made = client.beta.memory_stores.create(name="Team")
    mems = client.beta.memory_stores.memories
    mems.create(made.id, path="/a.md", content="a")
    raw = mems.with_raw_response.list(made.id, limit=100)
    etag = raw.headers["etag"]
    with pytest.raises(anthropic.APIStatusError) as unchanged:  # the SDK raises on a 304
        mems.list(made.id, limit=100, extra_headers={"If-None-Match": etag})
    assert unchanged.value.status_code == 304
    mems.create(made.id, path="/b.md", content="b")
    moved = mems.with_raw_response.list(made.id, limit=100, extra_headers={"If-None-Match": etag})
    assert moved.status_code == 200 and [m.path for m in moved.parse().data] == ["/a.md", "/b.md"]
    tags = {etag, moved.headers["etag"]}
    b = moved.parse().data[1]
    for change in (
        lambda: mems.update(b.id, memory_store_id=made.id, content="b2"),
        lambda: mems.update(b.id, memory_store_id=made.id, path="/c.md"),
        lambda: mems.delete(b.id, memory_store_id=made.id),
    ):
        change()
        tag = mems.with_raw_response.list(made.id, limit=100).headers["etag"]
        assert tag not in tags  # every write names a new state
        tags.add(tag)
    other = mems.with_raw_response.list(made.id, limit=100, path_prefix="/x/")
    assert other.headers["etag"] not in tags  # the query is part of it
