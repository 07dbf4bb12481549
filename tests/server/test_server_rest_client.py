"""The REST backend: against the minimal Claude Code-style server (base wire format
only), and its HTTP behaviour through httpx2.MockTransport."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from teamsync.errors import AuthError, BackendError, ConfigError
from teamsync.limits import BATCH_BYTES
from teamsync.server.storage import Storage, open_storage
from teamsync.sync.base import ChangeSet, PreconditionFailed, checksum
from teamsync.sync.config import SyncConfig
from teamsync.sync.rest import RestBackend
from teamsync.sync.rest_http import backoff, load_token, normalize_remote
from testing.gitrepos import memory
from testing.minimal_server import MinimalStore, create_minimal_app
from testing.server import app_for, make_rest_team, token_for, uvicorn_server

TOKEN = "tsm_0123456789ab_" + "s" * 43


@pytest.fixture
def minimal() -> Iterator[tuple[str, MinimalStore]]:
    store = MinimalStore(max_entries=50)
    with uvicorn_server(create_minimal_app(store)) as url:
        yield url, store


def backend(url: str, **kw: object) -> RestBackend:
    return RestBackend(SyncConfig("rest", url), TOKEN, repo="acme/widgets", **kw)  # type: ignore[arg-type]


def test_sync_through_a_plain_server_first_put_is_conditional(
    tmp_path: Path, minimal: tuple[str, MinimalStore]
) -> None:
    url, store = minimal
    alice, bob = make_rest_team(tmp_path, url, [TOKEN, TOKEN])
    alice.write("a.md", memory("A", "one\n"))
    assert alice.sync().pushed == ["a.md"]
    assert store.puts[0]["if_match"] is None and store.puts[0]["if_none_match"] == "*"
    assert set(store.puts[0]["body"]) == {"entries"}  # no extension fields for a plain server
    bob.write("b.md", memory("B", "two\n"))
    bob.sync()
    assert store.puts[1]["if_match"] == store.checksum("acme/widgets") or store.puts[1]["if_match"]
    alice.sync()
    assert alice.files() == bob.files() and set(alice.files()) >= {"a.md", "b.md"}


def test_a_412_never_overwrites_a_teammates_newer_version(
    minimal: tuple[str, MinimalStore],
) -> None:
    url, store = minimal
    mine, theirs = backend(url), backend(url)
    first = mine.snapshot()
    assert first.version is None
    assert not isinstance(
        theirs.apply(ChangeSet({"a.md": "theirs"}, [], None, {})), PreconditionFailed
    )
    base = mine.snapshot()
    theirs.apply(ChangeSet({"a.md": "theirs, newer"}, [], theirs.snapshot().version, {}))
    stale = mine.apply(ChangeSet({"a.md": "mine"}, [], base.version, {"a.md": checksum("theirs")}))
    assert isinstance(stale, PreconditionFailed)
    assert store.repos["acme/widgets"]["a.md"] == "theirs, newer"


def _alice_deletes_what_bob_holds_a_copy_of(tmp_path: Path, url: str) -> Any:
    """Alice shares a.md and b.md, Bob writes his own copy of a.md (never synced), Alice
    deletes a.md and syncs; returns Bob."""
    alice, bob = make_rest_team(tmp_path, url, [TOKEN, TOKEN], ["alice", "bob"])
    alice.write("a.md", memory("A", "one\n"))
    alice.write("b.md", memory("B", "two\n"))
    alice.sync()
    (bob.team / "a.md").write_text(memory("A", "one\n"), encoding="utf-8")  # a copy, unsynced
    (alice.team / "a.md").unlink()
    alice.sync()
    return bob


def test_deletes_travel_as_soft_delete_keys_to_a_plain_server(
    tmp_path: Path, minimal: tuple[str, MinimalStore]
) -> None:
    url, store = minimal
    _alice_deletes_what_bob_holds_a_copy_of(tmp_path, url)
    assert store.puts[-1]["body"].get("soft_delete_keys") == ["a.md"]
    assert "a.md" not in store.repos["acme/widgets"]
    assert "a.md" in store.deleted["acme/widgets"]


def test_a_plain_server_lists_no_checksum_of_a_deletion_so_the_copy_is_kept(
    tmp_path: Path, minimal: tuple[str, MinimalStore]
) -> None:
    """``deletedEntries`` names only a time: Bob's copy might be a memory, so it is shared
    again (a delete undone, never a memory lost)."""
    url, store = minimal
    bob = _alice_deletes_what_bob_holds_a_copy_of(tmp_path, url)
    bob.sync()
    assert (bob.team / "a.md").exists() and "a.md" in store.repos["acme/widgets"]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, Storage]]:
    """A real ``teamsync serve`` app (SQLite) on loopback: url, token, storage."""
    storage = open_storage(f"sqlite:///{tmp_path / 'serve.sqlite3'}")
    try:
        token = token_for(storage)
        with uvicorn_server(app_for(storage)) as url:
            yield url, token, storage
    finally:
        storage.close()


def _live(storage: Storage) -> set[str]:
    state = storage.state("acme/widgets", contents=False)
    return set(state.checksums) if state is not None else set()


def test_an_older_copy_of_a_memory_a_teammate_deleted_is_not_shared_again(
    tmp_path: Path, served: tuple[str, str, Storage]
) -> None:
    url, token, storage = served
    alice, bob = make_rest_team(tmp_path, url, [token, token], ["alice", "bob"])
    alice.write("a.md", memory("A", "one\n"))
    alice.write("b.md", memory("B", "two\n"))
    alice.sync()
    (bob.team / "a.md").write_text(memory("A", "one\n"), encoding="utf-8")  # a copy, unsynced
    (bob.team / "c.md").write_text(memory("C", "three\n"), encoding="utf-8")
    (alice.team / "a.md").unlink()
    (alice.team / "c.md").write_text(memory("C", "three\n"), encoding="utf-8")
    alice.sync()
    (alice.team / "c.md").unlink()
    alice.sync()
    (bob.team / "c.md").write_text(memory("C", "three, and more\n"), encoding="utf-8")
    snap = RestBackend(SyncConfig("rest", url), token, repo="acme/widgets").snapshot()
    assert snap.deleted_sums == {
        "a.md": checksum(memory("A", "one\n")),
        "c.md": checksum(memory("C", "three\n")),
    }
    bob.sync()
    # the exact bytes the team deleted: not shared again; other bytes: a memory, pushed
    assert not (bob.team / "a.md").exists() and (bob.team / "b.md").exists()
    assert _live(storage) == {"b.md", "c.md"}
    assert (bob.team / "c.md").read_text(encoding="utf-8") == memory("C", "three, and more\n")


def _record_requests(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, int]]:
    """Every request the REST client sends from now on: (method, path + ``since``, status).
    The real client sends them; this only writes them down."""
    from teamsync.sync.rest_http import Http

    sent: list[tuple[str, str, int]] = []
    send = Http.send

    def recording(self: Http, method: str, path: str, **kw: Any) -> Any:
        answer = send(self, method, path, **kw)
        since = kw.get("params", {}).get("since")
        sent.append((method, path + (f"?since={since}" if since else ""), answer[0]))
        return answer

    monkeypatch.setattr(Http, "send", recording)
    return sent


@pytest.mark.parametrize("path", ["304", "delta"])
def test_a_stale_copy_of_a_deleted_memory_is_told_by_its_bytes_on_every_listing_path(
    tmp_path: Path, served: tuple[str, str, Storage], monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """Issue 26: a delete is told by its bytes whichever way the listing came. ``304``:
    the delete was in bob's last full listing and nothing changed since, so the server
    answers 304 and bob's client rebuilds from its kept listing, ``deletedChecksums``
    included. ``delta``: the memory was made and deleted after bob's last listing, so
    it reaches bob only through ``view=hashes&since=N``, which carries the same
    ``deletedEntries`` / ``deletedChecksums`` as a full listing. Either way the
    never-synced copy with the deleted bytes goes, proved by the listing alone: the
    history view (which would prove it too, on this server) is not asked. (A copy with
    other bytes is shared: test_an_older_copy_of_a_memory_a_teammate_deleted_….)"""
    url, token, storage = served
    alice, bob = make_rest_team(tmp_path, url, [token, token], ["alice", "bob"])
    stale = memory("A", "one\n")
    alice.write("z.md", memory("Z", "zed\n"))
    alice.sync()
    if path == "304":  # deleted before bob ever listed
        alice.write("a.md", stale)
        alice.sync()
        alice.delete("a.md")
        alice.sync()
    bob.sync()
    bob.sync()  # a listing kept, with a serial: the next GET is conditional / a delta
    if path == "delta":  # made and deleted after bob's last listing (and y.md made, so
        alice.write("a.md", stale)  # the store is not back where bob saw it: no 304)
        alice.sync()
        alice.delete("a.md")
        alice.write("y.md", memory("Y", "why\n"))
        alice.sync()
    (bob.team / "a.md").write_text(stale, encoding="utf-8")  # a copy, never synced here
    sent = _record_requests(monkeypatch)
    report = bob.sync()
    gets = [(p, status) for m, p, status in sent if m == "GET"]
    assert "?since=" in gets[0][0] and gets[0][1] == (304 if path == "304" else 200), sent
    assert not any("/history" in p for _, p, _ in sent), sent  # the listing proved it
    assert not (bob.team / "a.md").exists() and "a.md" in report.deleted
    assert report.pushed == [] and _live(storage) == {"z.md"} | (
        {"y.md"} if path == "delta" else set()
    )


def test_a_memory_renamed_back_onto_a_deleted_name_is_kept(
    tmp_path: Path, served: tuple[str, str, Storage]
) -> None:
    """The rename fuzzer's case: a.md renamed to b.md (a.md's tombstone holds its bytes),
    then renamed back here. Same bytes, old mtime, yet the memory that left b.md is this
    one: it is kept and pushed back."""
    url, token, storage = served
    alice, bob = make_rest_team(tmp_path, url, [token, token], ["alice", "bob"])
    alice.write("a.md", memory("A", "one\n"))
    alice.write("z.md", memory("Z", "zed\n"))
    alice.sync()
    (alice.team / "a.md").rename(alice.team / "b.md")
    alice.sync()
    bob.sync()
    assert (bob.team / "b.md").exists() and not (bob.team / "a.md").exists()
    os.utime(bob.team / "b.md", (1_000_000_000, 1_000_000_000))  # older than the deletion
    (bob.team / "b.md").rename(bob.team / "a.md")
    bob.sync()
    alice.sync()
    assert (bob.team / "a.md").read_text(encoding="utf-8") == memory("A", "one\n")
    assert _live(storage) == {"a.md", "z.md"}
    assert (alice.team / "a.md").exists() and not (alice.team / "b.md").exists()


def test_a_name_a_teammate_took_meanwhile_is_held_here_and_the_rest_shared(
    tmp_path: Path, served: tuple[str, str, Storage], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26 §4: between bob's listing and his push, alice stores ``Deploy.md``; bob's
    new ``deploy.md`` clashes with it. The server leaves that entry out (refused in
    ``rejectedEntries``, decided under its write lock) and stores the rest; bob's client
    reports it held back with the server's reason and keeps the file. The next run
    sees alice's spelling: bob's text is kept (and shared) as a conflict copy."""
    url, token, storage = served
    alice, bob = make_rest_team(tmp_path, url, [token, token], ["alice", "bob"])
    alice.write("z.md", memory("Z", "zed\n"))
    alice.sync()
    bob.sync()
    bob.write("deploy.md", memory("Deploy", "bob's steps\n"))
    bob.write("other.md", memory("Other", "bob's other\n"))
    listed = RestBackend.snapshot
    raced: list[bool] = []

    def snapshot_then_alice_writes(self: RestBackend) -> Any:
        snap = listed(self)
        if not raced:  # alice's push lands after bob listed, before bob pushes
            raced.append(True)
            alice.write("Deploy.md", memory("Deploy", "alice's steps\n"))
            monkeypatch.setattr(RestBackend, "snapshot", listed)
            assert alice.sync().pushed == ["Deploy.md"]
            monkeypatch.setattr(RestBackend, "snapshot", snapshot_then_alice_writes)
        return snap

    monkeypatch.setattr(RestBackend, "snapshot", snapshot_then_alice_writes)
    report = bob.sync()
    monkeypatch.setattr(RestBackend, "snapshot", listed)
    assert raced and report.pushed == ["other.md"]
    (held,) = report.held_back
    assert held.key == "deploy.md" and held.code == "remote-held"
    assert "Deploy.md" in held.reason and "already stored" in held.reason
    assert _live(storage) == {"z.md", "Deploy.md", "other.md"}
    assert storage.entries("acme/widgets", ["Deploy.md"]).entries == {  # type: ignore[union-attr]
        "Deploy.md": memory("Deploy", "alice's steps\n")
    }
    assert bob.read("deploy.md") == memory("Deploy", "bob's steps\n")
    # the next run sees alice's spelling: one memory under two spellings, bob's text
    # kept as a conflict copy (and shared), alice's in Deploy.md; nothing lost
    again = bob.cli("sync")
    assert again.returncode == 1, again.stderr  # a conflict copy was made: exit 1
    assert "spells team/deploy.md as team/Deploy.md" in again.stdout
    assert "both sides changed team/Deploy.md" in again.stderr
    copies = [p for p in bob.team.glob("Deploy.conflict-*.md")]
    assert len(copies) == 1 and copies[0].read_text(encoding="utf-8") == memory(
        "Deploy", "bob's steps\n"
    )
    assert bob.read("Deploy.md") == memory("Deploy", "alice's steps\n")
    assert _live(storage) == {"z.md", "Deploy.md", "other.md", copies[0].name}


def test_a_server_that_ignores_deletes_fails_the_run_loudly(tmp_path: Path) -> None:
    store = MinimalStore(soft_deletes=False)
    with uvicorn_server(create_minimal_app(store)) as url:
        (alice,) = make_rest_team(tmp_path, url, [TOKEN], ["alice"])
        alice.write("a.md", memory("A", "one\n"))
        alice.sync()
        (alice.team / "a.md").unlink()
        result = alice.cli("sync")
    assert result.returncode == 1
    assert "does not hold it" in result.stderr and "a.md" in result.stderr
    assert "a.md" in store.repos["acme/widgets"]


def test_batches_stay_under_200000_bytes(minimal: tuple[str, MinimalStore]) -> None:
    url, store = minimal
    b = backend(url)
    b.snapshot()
    upserts = {f"k{i:02}.md": ("é" * 10_000) + str(i) for i in range(30)}
    upserts["big.md"] = "x" * 240_000
    applied = b.apply(ChangeSet(upserts, [], None, {}))
    assert not isinstance(applied, PreconditionFailed)
    sizes = [len(json.dumps(p["body"], ensure_ascii=False).encode()) for p in store.puts]
    assert len(store.puts) >= 3
    assert all(
        s <= BATCH_BYTES
        for s in sizes
        if "big.md" not in store.puts[sizes.index(s)]["body"]["entries"]
    )
    assert any(set(p["body"]["entries"]) == {"big.md"} for p in store.puts)
    assert store.repos["acme/widgets"] == upserts
    # every PUT after the first carries If-Match with the previous response's checksum
    assert all(p["if_match"] for p in store.puts[1:])


def test_413_cap_is_learned_and_reported(minimal: tuple[str, MinimalStore]) -> None:
    url, store = minimal
    store.max_entries = 3
    b = backend(url)
    b.snapshot()
    with pytest.raises(BackendError, match="at most 3 memories"):
        b.apply(ChangeSet({f"k{i}.md": "x" for i in range(5)}, [], None, {}))
    assert b.server_max_entries == 3


def mock(handler: object) -> RestBackend:
    return backend(
        "https://memory.example", transport=httpx2.MockTransport(handler), sleep=lambda s: None
    )  # type: ignore[arg-type]


def test_redirects_are_errors_and_not_followed() -> None:
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(302, headers={"Location": "https://evil.example/steal"})

    with pytest.raises(BackendError, match="redirect"):
        mock(handler).snapshot()
    assert len(seen) == 1 and "evil" not in seen[0]


def test_5xx_is_retried_with_backoff_then_given_up() -> None:
    calls: list[int] = []

    def flaky(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        return httpx2.Response(503) if len(calls) < 3 else httpx2.Response(404)

    assert mock(flaky).snapshot().version is None and len(calls) == 3
    calls.clear()
    with pytest.raises(BackendError, match="500"):
        mock(lambda r: (calls.append(1), httpx2.Response(500))[1]).snapshot()
    assert len(calls) == 4
    assert 0.5 <= backoff(0) <= 0.625 and 2.0 <= backoff(2) <= 2.5


def test_auth_errors_are_clear_and_never_show_the_token() -> None:
    for status in (401, 403):
        with pytest.raises(AuthError) as info:
            mock(lambda r, s=status: httpx2.Response(s)).snapshot()
        assert str(status) in str(info.value) and TOKEN not in str(info.value)


def test_defaults_timeout_and_headers() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(404)

    b = mock(handler)
    b.snapshot()
    assert b.http.client.timeout.read == 30.0 and b.http.client.follow_redirects is False
    assert seen[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert seen[0].url.params["repo"] == "acme/widgets"


def test_token_sources_and_file_permissions(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    os.chmod(path, 0o644)
    config = SyncConfig("rest", "http://x", token_file=str(path))
    with pytest.raises(ConfigError, match="chmod 600"):
        load_token(config, {})
    os.chmod(path, 0o600)
    assert load_token(config, {}) == TOKEN
    assert load_token(config, {"TEAMSYNC_TOKEN": "tsm_other"}) == "tsm_other"
    with pytest.raises(ConfigError, match="TEAMSYNC_TOKEN"):
        load_token(SyncConfig("rest", "http://x"), {})
    with pytest.raises(ConfigError, match="control"):
        load_token(SyncConfig("rest", "http://x"), {"TEAMSYNC_TOKEN": "a\r\nX-Evil: 1"})


@pytest.mark.parametrize(
    ("url", "repo"),
    [
        ("git@github.com:Acme/Widgets.git", "acme/widgets"),
        ("https://github.com/Acme/Widgets", "acme/widgets"),
        ("https://user:secret@github.com/Acme/Widgets.git/", "acme/widgets"),
        ("ssh://git@github.com/acme/widgets.git", "acme/widgets"),
        ("https://GitLab.Example.com:8443/Group/Sub/Proj.git", "gitlab.example.com/group/sub/proj"),
        ("git@bitbucket.org:team/repo.git", "bitbucket.org/team/repo"),
    ],
)
def test_repo_id_from_origin(url: str, repo: str) -> None:
    assert normalize_remote(url) == repo


def test_repo_id_refuses_local_paths() -> None:
    with pytest.raises(ConfigError, match="--repo"):
        normalize_remote("/srv/git/project.git")


def test_server_words_cannot_drive_the_terminal() -> None:
    # A hostile server's error message and redirect target are shown to the user: no escapes.
    evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\u202eboom"
    body = {"error": {"message": f"nope {evil}", "details": {"error_code": "x"}}}
    with pytest.raises(BackendError) as info:
        mock(lambda r: httpx2.Response(400, json=body)).snapshot()
    with pytest.raises(BackendError) as moved:
        mock(
            lambda r: httpx2.Response(302, headers={"Location": "https://x.example/\x1b[2J"})
        ).snapshot()
    for message in (str(info.value), str(moved.value)):
        assert not any(c in message for c in "\x1b\x07\u202e"), message
    assert "nope" in str(info.value)
