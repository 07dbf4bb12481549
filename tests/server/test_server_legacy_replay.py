"""Replay of Claude Code 2.1.197's legacy team-memory requests against a real ``teamsync serve``.

The requests are shaped as that client sends them (research:
memory-protocols-today.md §1): the repository as written (``Acme/Widgets``),
quoted entity tags on both ``If-None-Match`` and ``If-Match``, ``*.txt`` files
beside ``*.md``, deletes as ``soft_delete_keys``. Any 4xx other than 409/429
stops that client's pushes until it restarts, so one bad file must not refuse
the batch: the rest is stored and the refused entries are named in the 200.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from teamsync.server.storage import Storage, open_storage
from teamsync.sync.base import Applied, ChangeSet
from teamsync.sync.config import SyncConfig
from teamsync.sync.rest import RestBackend
from teamsync.wire import checksum
from testing.server import app_for, refused, token_for, uvicorn_server

FAKE_PAT = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
CLAUDE_CODE = {
    "User-Agent": "claude-cli/2.1.197 (external, cli)",
    "Content-Type": "application/json",
}


@pytest.fixture
def served(db_url: str) -> Iterator[tuple[str, str, Storage]]:
    store = open_storage(db_url)
    token = token_for(store, "acme/widgets")  # tokens are scoped to the folded id
    try:
        with uvicorn_server(app_for(store)) as url:
            yield url, token, store
    finally:
        store.close()


def test_a_2_1_197_session_replayed(served: tuple[str, str, Storage]) -> None:
    url, token, store = served
    path = "/api/claude_code/team_memory"
    repo = {"repo": "Acme/Widgets"}  # as written, as Claude Code sends it
    auth = {"Authorization": f"Bearer {token}", **CLAUDE_CODE}
    with httpx2.Client(base_url=url, headers=auth) as cc:
        assert cc.get(path, params=repo).status_code == 404
        first = cc.put(
            path,
            params=repo,
            json={
                "entries": {
                    "deploy.md": "# Deploy\nmake ship\n",
                    "notes.txt": "plain text notes\n",
                    "creds.md": f"token: {FAKE_PAT}\n",
                }
            },
        )
        # the secret is refused on its own; the other two are stored
        assert refused(first) == {"creds.md": "team_memory_secret_detected"}
        assert FAKE_PAT not in first.text
        etag = first.headers["etag"]
        assert etag.startswith('"sha256:') and etag.endswith('"')
        stored = store.state("acme/widgets", contents=True)
        assert stored is not None and set(stored.entries or {}) == {"deploy.md", "notes.txt"}

        # a quoted If-None-Match is a 304; the hashes view lists both files
        assert cc.get(path, params=repo, headers={"If-None-Match": etag}).status_code == 304
        hashes = cc.get(path, params={**repo, "view": "hashes"}).json()
        assert hashes["entryChecksums"]["notes.txt"] == checksum("plain text notes\n")

        # a delete with a quoted If-Match: the file goes, and the pull says so
        gone = cc.put(
            path,
            params=repo,
            headers={"If-Match": etag},
            json={"entries": {}, "soft_delete_keys": ["notes.txt"]},
        )
        assert gone.status_code == 200 and gone.json()["changedKeys"] == ["notes.txt"]
        full = cc.get(path, params=repo).json()
        assert set(full["content"]["entries"]) == {"deploy.md"}
        assert set(full["content"]["deletedEntries"]) == {"notes.txt"}
        assert isinstance(full["content"]["deletedEntries"]["notes.txt"], int)
        hashes = cc.get(path, params={**repo, "view": "hashes"}).json()
        assert set(hashes["deletedEntries"]) == {"notes.txt"}

        # a stale quoted If-Match is the 412 the client re-fetches on, never a silent write
        stale = cc.put(
            path, params=repo, headers={"If-Match": etag}, json={"entries": {"x.md": "x"}}
        )
        assert stale.status_code == 412
        # writing a deleted key again brings it back and takes it off deletedEntries
        again = cc.put(path, params=repo, json={"entries": {"notes.txt": "back\n"}})
        assert again.status_code == 200 and refused(again) == {}
        full = cc.get(path, params=repo).json()
        assert full["content"]["deletedEntries"] == {}
    history = store.history("acme/widgets", after=0, limit=100)
    assert [(h.key, h.action) for h in history if h.key == "notes.txt"] == [
        ("notes.txt", "upsert"),
        ("notes.txt", "delete"),
        ("notes.txt", "upsert"),
    ]


def test_the_repository_as_written_finds_a_store_kept_folded(
    served: tuple[str, str, Storage],
) -> None:
    url, token, store = served
    auth = {"Authorization": f"Bearer {token}"}
    with httpx2.Client(base_url=url, headers=auth) as c:
        path = "/api/claude_code/team_memory"
        assert c.put(path, params={"repo": "acme/widgets"}, json={"entries": {"a.md": "a"}})
        listed = c.get(path, params={"repo": "ACME/Widgets"})
        assert listed.status_code == 200 and listed.json()["content"]["entries"] == {"a.md": "a"}


def test_teamsync_client_sends_the_repo_as_written_and_holds_back_refused_entries(
    served: tuple[str, str, Storage], tmp_path: Path
) -> None:
    url, token, store = served
    seen: list[httpx2.Request] = []

    class Recording(httpx2.HTTPTransport):
        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            seen.append(request)
            return super().handle_request(request)

    backend = RestBackend(
        SyncConfig("rest", url, repo="Acme/Widgets"),
        token,
        repo="Acme/Widgets",
        transport=Recording(),
    )
    try:
        backend.snapshot()
        # the engine's own gates would never send a secret; the server's answer is what counts
        result = backend.apply(
            ChangeSet({"ok.md": "fine\n", "bad.md": f"token: {FAKE_PAT}\n"}, [], None, {})
        )
    finally:
        backend.close()
    assert isinstance(result, Applied)
    assert set(result.held) == {"bad.md"} and "secret" in result.held["bad.md"]
    assert set(result.checksums) == {"ok.md"} and FAKE_PAT not in str(result.held)
    sent = [r.url.params.get("repo") for r in seen if r.url.params.get("repo")]
    assert sent and set(sent) == {"Acme/Widgets"}
    state = store.state("acme/widgets", contents=True)
    assert state is not None and dict(state.entries or {}) == {"ok.md": "fine\n"}
