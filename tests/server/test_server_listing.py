"""Full listings are streamed a page at a time from one read transaction, and gzipped
when the client asks; what a client reads is what the whole-body response gave."""

from __future__ import annotations

import gzip
import json
import time

import httpx2

from teamsync.server.listing import body
from teamsync.server.storage import Storage, WriteRequest
from teamsync.server.storage_sql import PAGE_ROWS
from teamsync.sync.base import checksum
from testing.server import app_for, token_for, uvicorn_server

REPO = "acme/widgets"
URL = "/api/claude_code/team_memory"
ENTRIES = {f"notes/m{i:03}.md": f'memory {i} \u00e9\u2028"quoted"\n' * 20 for i in range(150)}
"""More rows than one content page holds, with text JSON must escape."""


def _whole(storage: Storage, *, hashes: bool) -> dict[str, object]:
    """The body as it was built before streaming: from one whole read."""
    from teamsync.server.limits import iso

    state = storage.state(REPO, contents=not hashes)
    assert state is not None
    h = state.head
    common = {"checksum": h.checksum, "version": h.version, "lastModified": iso(h.last_modified)}
    stamps = {k: iso(v) for k, v in state.updated_at.items()}
    tombs = storage.tombstones(REPO)
    gone = {k: round(t.at * 1000) for k, t in tombs.items()}
    sums = {k: t.checksum for k, t in tombs.items()}
    if hashes:
        return {
            **common,
            "entryChecksums": dict(state.checksums),
            "entryLastModified": stamps,
            "deletedEntries": gone,
            "deletedChecksums": sums,
        }
    content = {
        "entries": dict(state.entries or {}),
        "entryChecksums": dict(state.checksums),
        "deletedEntries": gone,
        "deletedChecksums": sums,
    }
    return {"repo": REPO, **common, "content": content, "entryLastModified": stamps}


def test_streamed_listings_are_the_whole_listings_and_gzip_on_request(storage: Storage) -> None:
    assert len(ENTRIES) > 4 * PAGE_ROWS["content"]
    storage.write(REPO, WriteRequest(upserts=ENTRIES), time.time())
    storage.write(REPO, WriteRequest(upserts={}, deletes=["notes/m007.md"]), time.time())
    token = token_for(storage)
    with uvicorn_server(app_for(storage)) as url:
        auth = {"Authorization": f"Bearer {token}"}
        with httpx2.Client(base_url=url, headers=auth, timeout=30) as client:
            for hashes in (False, True):
                params = {"repo": REPO, **({"view": "hashes"} if hashes else {})}
                plain = client.get(URL, params=params, headers={"Accept-Encoding": "identity"})
                assert plain.status_code == 200 and "content-encoding" not in plain.headers
                assert json.loads(plain.content) == _whole(storage, hashes=hashes)
                assert plain.headers["etag"] == f'"{plain.json()["checksum"]}"'
                raw = client.send(
                    client.build_request(
                        "GET", URL, params=params, headers={"Accept-Encoding": "gzip"}
                    ),
                    stream=True,
                )
                packed = b"".join(raw.iter_raw())
                raw.close()
                assert raw.headers["content-encoding"] == "gzip"
                assert gzip.decompress(packed) == plain.content
                assert len(packed) * 2 < len(plain.content)
            listed = plain.json()["entryChecksums"]
            assert "notes/m007.md" not in listed and listed["notes/m008.md"] == checksum(
                ENTRIES["notes/m008.md"]
            )
            # a 304 stays a bare 304, compressed or not
            tag = plain.headers["etag"]
            again = client.get(
                URL,
                params={"repo": REPO},
                headers={"If-None-Match": tag, "Accept-Encoding": "gzip"},
            )
            assert again.status_code == 304 and again.content == b""


def test_a_listing_is_one_version_while_writes_go_on(storage: Storage) -> None:
    storage.write(REPO, WriteRequest(upserts=ENTRIES), time.time())
    listing = storage.listing(REPO)
    assert listing is not None
    try:
        chunks = body(listing, REPO, hashes=True)
        first = next(chunks)  # the head is read; the rows are not yet
        done = storage.write(REPO, WriteRequest(upserts={"late.md": "after\n"}), time.time())
        assert done.head.version == listing.head.version + 1  # type: ignore[union-attr]
        data = json.loads(first + b"".join(chunks))
    finally:
        listing.close()
    assert data["version"] == listing.head.version and "late.md" not in data["entryChecksums"]
    assert len(data["entryChecksums"]) == len(ENTRIES)
    assert storage.listing("nobody/here") is None


def test_a_small_listing_is_read_at_once_and_still_one_version(storage: Storage) -> None:
    storage.write(REPO, WriteRequest(upserts={"a.md": "one\n", "b.md": "two\n"}), time.time())
    listing = storage.listing(REPO, contents=True)
    assert listing is not None
    storage.write(REPO, WriteRequest(upserts={"c.md": "three\n"}), time.time())
    data = json.loads(b"".join(body(listing, REPO, hashes=False)))
    listing.close()
    assert data["content"]["entries"] == {"a.md": "one\n", "b.md": "two\n"}
    assert data["version"] == 1


def test_a_delta_tells_its_deletes_as_a_full_listing_does(storage: Storage) -> None:
    """``view=hashes&since=N`` names each key deleted after N with the time and checksum
    a full listing gives it (``deletedEntries``, ``deletedChecksums``); deletes before N
    are not repeated, and a key written again after its delete is live, not deleted."""
    now = time.time()
    storage.write(REPO, WriteRequest(upserts={"old.md": "o\n", "a.md": "a\n", "b.md": "b\n"}), now)
    storage.write(REPO, WriteRequest(upserts={}, deletes=["old.md"]), now)
    mark = storage.head(REPO)
    assert mark is not None
    storage.write(REPO, WriteRequest(upserts={"c.md": "c\n"}, deletes=["a.md", "b.md"]), now)
    storage.write(REPO, WriteRequest(upserts={"b.md": "b again\n"}), now)
    token = token_for(storage)
    with uvicorn_server(app_for(storage)) as url:
        auth = {"Authorization": f"Bearer {token}"}
        with httpx2.Client(base_url=url, headers=auth, timeout=30) as client:
            params = {"repo": REPO, "view": "hashes"}
            full = client.get(URL, params=params).json()
            delta = client.get(URL, params={**params, "since": str(mark.version)}).json()
    assert delta["since"] == mark.version and delta["deleted"] == ["a.md"]
    assert set(delta["entryChecksums"]) == {"b.md", "c.md"}
    assert delta["deletedEntries"] == {"a.md": full["deletedEntries"]["a.md"]}
    assert delta["deletedChecksums"] == {"a.md": checksum("a\n")}
    assert full["deletedChecksums"] == {"old.md": checksum("o\n"), "a.md": checksum("a\n")}
