"""The server's gate: inline allow comments never count, the operator's allowlist does, keys are content."""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from teamsync.commands.serve import load_server_allowlist
from teamsync.config import Settings
from teamsync.security.allowlist import Entry, save_entries
from teamsync.security.secrets import scan_text
from teamsync.server.app import create_app
from teamsync.server.limits import ServerConfig
from teamsync.server.storage import Storage, open_storage
from testing.server import SyncASGITransport, refused, token_for

URL = "/api/claude_code/team_memory?repo={repo}"


def _token(seed: int) -> str:
    rng = random.Random(seed)
    return (
        "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    )


TOKEN = _token(41)
LINE = f"deploy token {TOKEN} <!-- teamsync: allow -->\n"
FP = scan_text(LINE, "x.md")[0].fingerprint


@pytest.fixture
def store(sqlite_url: str) -> Iterator[Storage]:
    store = open_storage(sqlite_url)
    yield store
    store.close()


def client_for(
    store: Storage, repo: str, allowlist: tuple[tuple[str, str], ...] = ()
) -> httpx2.Client:
    app = create_app(ServerConfig(db_url=store.url, allowlist=allowlist), storage=store)
    token = token_for(store, repo=repo)
    return httpx2.Client(
        transport=SyncASGITransport(app),
        base_url="http://test",
        headers={"Authorization": f"Bearer {token}"},
    )


def test_inline_allow_comment_does_not_get_a_secret_stored(store: Storage) -> None:
    with client_for(store, "acme/widgets") as c:
        resp = c.put(URL.format(repo="acme/widgets"), json={"entries": {"x.md": LINE}})
        assert refused(resp) == {"x.md": "team_memory_secret_detected"}
        assert TOKEN not in resp.text and "allow" not in resp.json()["rejectedEntries"][0]["reason"]
        assert c.get(URL.format(repo="acme/widgets")).status_code == 404


def test_operator_allowlist_is_honoured_for_its_repo_only(store: Storage) -> None:
    allowed = (("acme/widgets", FP),)
    with client_for(store, "acme/widgets", allowed) as c:
        assert (
            c.put(URL.format(repo="acme/widgets"), json={"entries": {"x.md": LINE}}).status_code
            == 200
        )
    with client_for(store, "acme/other", allowed) as c:
        resp = c.put(URL.format(repo="acme/other"), json={"entries": {"x.md": LINE}})
        assert refused(resp) == {"x.md": "team_memory_secret_detected"}


def test_a_key_holding_a_secret_is_refused_and_never_echoed(store: Storage) -> None:
    with client_for(store, "acme/widgets") as c:
        resp = c.put(URL.format(repo="acme/widgets"), json={"entries": {f"{TOKEN}.md": "clean\n"}})
        assert list(refused(resp).values()) == ["team_memory_invalid_key"]
        assert TOKEN not in resp.text
        [bad] = resp.json()["rejectedEntries"]
        assert bad["key"] == "<github-pat>.md" and "github-pat" in bad["reason"]


def test_server_allowlist_file_by_repo(tmp_path: Path) -> None:
    path = tmp_path / "server-allowlist.json"
    save_entries(path, [Entry(FP, "revoked fixture", repo="Acme/Widgets"), Entry("ab" * 16, "all")])
    pairs = load_server_allowlist(Settings.build(cwd=tmp_path, environ={}), str(path))
    assert pairs == (("*", "ab" * 16), ("acme/widgets", FP))
