"""The wire format and its gates, through httpx2 + ASGITransport (fast, in process)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx2
import pytest

from teamsync.server.storage import EMPTY_CHECKSUM, Storage
from teamsync.sync.base import checksum
from testing.server import SyncASGITransport, app_for, refused, token_for

URL = "/api/claude_code/team_memory?repo=acme/widgets"
FAKE_PAT = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def client(sqlite_url: str) -> Iterator[httpx2.Client]:
    from teamsync.server.storage import open_storage

    store = open_storage(sqlite_url)
    transport = SyncASGITransport(app_for(store, max_entries=5))
    token = token_for(store)
    with httpx2.Client(
        transport=transport, base_url="http://test", headers={"Authorization": f"Bearer {token}"}
    ) as c:
        c.store = store  # type: ignore[attr-defined]
        c.token = token  # type: ignore[attr-defined]
        yield c
    transport.close()
    store.close()


def details(resp: httpx2.Response) -> dict[str, object]:
    return resp.json()["error"]["details"]  # type: ignore[no-any-return]


def test_get_put_etag_304_and_hashes_view(client: httpx2.Client) -> None:
    assert client.get(URL).status_code == 404
    put = client.put(URL, json={"entries": {"a.md": "one"}}, headers={"If-None-Match": "*"})
    assert put.status_code == 200
    body = put.json()
    assert body["checksum"].startswith("sha256:") and put.headers["etag"] == f'"{body["checksum"]}"'
    full = client.get(URL).json()
    assert full["repo"] == "acme/widgets" and full["version"] == 1
    assert full["content"] == {
        "entries": {"a.md": "one"},
        "entryChecksums": {"a.md": checksum("one")},
        "deletedEntries": {},
        "deletedChecksums": {},
    }
    assert full["checksum"] == body["checksum"] and "lastModified" in full
    for tag in (body["checksum"], f'"{body["checksum"]}"', f'W/"{body["checksum"]}"'):
        assert client.get(URL, headers={"If-None-Match": tag}).status_code == 304
    hashes = client.get(URL + "&view=hashes").json()
    assert hashes["entryChecksums"] == {"a.md": checksum("one")} and "content" not in hashes
    assert set(hashes) >= {"checksum", "version", "entryChecksums"}


def test_put_upserts_and_if_match_412(client: httpx2.Client) -> None:
    first = client.put(URL, json={"entries": {"a.md": "one"}}, headers={"If-Match": EMPTY_CHECKSUM})
    assert first.status_code == 200
    stale = client.put(URL, json={"entries": {"b.md": "x"}}, headers={"If-Match": EMPTY_CHECKSUM})
    assert stale.status_code == 412
    assert details(stale)["error_code"] == "team_memory_precondition_failed"
    again = client.put(URL, json={"entries": {"b.md": "x"}}, headers={"If-None-Match": "*"})
    assert again.status_code == 412
    ok = client.put(
        URL, json={"entries": {"b.md": "x"}}, headers={"If-Match": first.json()["checksum"]}
    )
    assert ok.status_code == 200 and ok.json()["version"] == 2
    assert set(client.get(URL).json()["content"]["entries"]) == {"a.md", "b.md"}


def test_base_checksums_409_names_keys(client: httpx2.Client) -> None:
    client.put(URL, json={"entries": {"a.md": "one"}})
    resp = client.put(URL, json={"entries": {"a.md": "two"}, "baseChecksums": {"a.md": None}})
    assert resp.status_code == 409 and details(resp)["keys"] == ["a.md"]


def test_deletes_history_and_capabilities(client: httpx2.Client) -> None:
    client.put(URL, json={"entries": {"a.md": "one", "b.md": "two"}})
    resp = client.put(URL, json={"deletes": ["a.md"]})
    assert resp.status_code == 200 and resp.json()["changedKeys"] == ["a.md"]
    assert set(client.get(URL).json()["content"]["entries"]) == {"b.md"}
    page = client.get("/api/claude_code/team_memory/history?repo=acme/widgets&limit=2").json()
    assert [(i["key"], i["action"]) for i in page["items"]] == [
        ("a.md", "upsert"),
        ("b.md", "upsert"),
    ]
    assert (
        page["items"][0]["who"].startswith("token-")
        and page["next_after"] == page["items"][1]["id"]
    )
    rest = client.get(
        f"/api/claude_code/team_memory/history?repo=acme/widgets&after={page['next_after']}"
    ).json()
    assert [(i["key"], i["action"], i["checksum"]) for i in rest["items"]] == [
        ("a.md", "delete", None)
    ]
    assert rest["next_after"] is None
    caps = client.get("/api/claude_code/team_memory/capabilities").json()
    assert {"baseChecksums", "deletes", "history"} <= set(caps["extensions"])
    assert caps["limits"]["max_entries"] == 5
    assert "deletes" in client.get(URL).headers["x-teamsync-extensions"]


def test_entries_cap_is_the_structured_413(client: httpx2.Client) -> None:
    client.put(URL, json={"entries": {f"k{i}.md": "x" for i in range(4)}})
    resp = client.put(URL, json={"entries": {"k8.md": "x", "k9.md": "y"}})
    assert resp.status_code == 413
    assert resp.json()["error"]["details"] == {
        "error_code": "team_memory_too_many_entries",
        "max_entries": 5,
        "received_entries": 6,
    }


def test_entry_and_body_size_limits(client: httpx2.Client) -> None:
    big = client.put(URL, json={"entries": {"big.md": "x" * 250_001, "ok.md": "ok"}})
    assert refused(big) == {"big.md": "team_memory_entry_too_large"}  # the rest is stored
    assert client.get(URL).json()["content"]["entries"] == {"ok.md": "ok"}
    assert client.put(URL, json={"entries": {"fits.md": "é" * 125_000}}).status_code == 200
    huge = client.put(URL, content=b"{" + b" " * 1_100_000 + b"}")
    assert huge.status_code == 413 and details(huge)["error_code"] == "team_memory_body_too_large"
    declared = client.put(URL, content=b"{}", headers={"Content-Length": str(5 * 2**30)})
    assert declared.status_code == 413


@pytest.mark.parametrize(
    "key",
    [
        "../x.md",
        "a/../../x.md",
        "%2e%2e/x.md",
        "%252e%252e%252fx.md",
        "\uff0e\uff0e\uff0fx.md",
        "/etc/x.md",
        "C:/x.md",
        "C:\\x.md",
        "\\\\server\\share\\x.md",
        "a\x00.md",
        "a\nb.md",
        "notes.json",
        ".txt",
        "",
    ],
)
def test_hostile_keys_are_refused_without_echoing_content(client: httpx2.Client, key: str) -> None:
    resp = client.put(URL, json={"entries": {key: "SENTINEL-CONTENT"}})
    assert list(refused(resp).values()) == ["team_memory_invalid_key"]  # 200: nothing stored
    assert "SENTINEL-CONTENT" not in resp.text
    assert client.get(URL).status_code == 404


def test_collisions_secrets_and_bad_bodies(client: httpx2.Client) -> None:
    pair = client.put(URL, json={"entries": {"A.md": "1", "a.md": "2"}})
    assert refused(pair) == {
        "A.md": "team_memory_key_collision",
        "a.md": "team_memory_key_collision",
    }
    client.put(URL, json={"entries": {"Notes.md": "1"}})
    later = client.put(URL, json={"entries": {"NOTES.md": "2", "b.md": "3"}})
    assert refused(later) == {"NOTES.md": "team_memory_key_collision"}  # b.md stored
    assert later.json()["rejectedEntries"][0]["keys"] == ["NOTES.md", "Notes.md"]
    assert later.json()["changedKeys"] == ["b.md"]
    secret = client.put(URL, json={"entries": {"creds.md": f"token: {FAKE_PAT}\n"}})
    assert refused(secret) == {"creds.md": "team_memory_secret_detected"}
    assert FAKE_PAT not in secret.text
    [item] = secret.json()["rejectedEntries"]
    finding = item["findings"][0]
    assert finding["rule"] and finding["fingerprint"] and "secret" in item["reason"]
    assert client.put(URL, content=b"not json").status_code == 400
    assert client.put(URL, json={"entries": {"a.md": 5}}).status_code == 422
    assert client.put(URL, json=["entries"]).status_code == 422
    surrogate = client.put(URL, content=b'{"entries": {"a.md": "\\ud800"}}')
    assert refused(surrogate) == {"a.md": "team_memory_invalid_content"}
    nul = client.put(URL, json={"entries": {"a.md": "a\x00b"}})
    assert refused(nul) == {"a.md": "team_memory_invalid_content"}
    both = client.put(URL, json={"entries": {"x.md": "1"}, "deletes": ["x.md"]})
    assert both.status_code == 422
    bad_sum = client.put(URL, json={"entries": {"x.md": "1"}, "baseChecksums": {"x.md": "md5:1"}})
    assert bad_sum.status_code == 422
    assert client.get("/api/claude_code/team_memory?repo=../etc").status_code == 422


def test_auth_scope_and_read_only(client: httpx2.Client) -> None:
    store: Storage = client.store  # type: ignore[attr-defined]
    for headers in (
        {"Authorization": ""},
        {"Authorization": "Bearer tsm_nope"},
        {"Authorization": "Basic abc"},
    ):
        resp = client.get(URL, headers=headers)
        assert resp.status_code == 401 and resp.headers["www-authenticate"] == "Bearer"
    other = token_for(store, "acme/other")
    assert client.get(URL, headers={"Authorization": f"Bearer {other}"}).status_code == 403
    reader = token_for(store, read_only=True)
    hdr = {"Authorization": f"Bearer {reader}"}
    assert client.get(URL, headers=hdr).status_code == 404
    assert client.put(URL, json={"entries": {"a.md": "x"}}, headers=hdr).status_code == 403
    # repository ids are case-insensitive (GitHub's are)
    upper = "/api/claude_code/team_memory?repo=ACME/Widgets"
    assert client.put(upper, json={"entries": {"a.md": "x"}}).status_code == 200
    rec = store.list_tokens()[0]
    store.revoke_token(rec.id, 1.0)
    assert client.get(URL).status_code == 401


def test_logs_hold_no_token_and_no_content(
    client: httpx2.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client.put(URL, json={"entries": {"a.md": "PRIVATE-MEMORY-TEXT"}})
    client.put(URL, json={"entries": {"b.md": f"{FAKE_PAT}"}})
    client.get(URL)
    token: str = client.token  # type: ignore[attr-defined]
    assert "PUT repo=acme/widgets" in caplog.text
    for needle in (token, token.rsplit("_", 1)[1], "PRIVATE-MEMORY-TEXT", FAKE_PAT):
        assert needle not in caplog.text


def test_openapi_document_is_served(client: httpx2.Client) -> None:
    doc = client.get("/openapi.json").json()
    ops = doc["paths"]["/api/claude_code/team_memory"]
    assert {"get", "put"} <= set(ops)
    assert "requestBody" in ops["put"] and "413" in ops["put"]["responses"]


def test_deeply_nested_json_is_a_400_not_a_crash(client: httpx2.Client) -> None:
    resp = client.put(URL, content=b"[" * 200_000 + b"]" * 200_000)
    assert resp.status_code == 400
    assert client.get("/api/claude_code/team_memory/capabilities").status_code == 200


@pytest.mark.parametrize("field", ["entries", "deletes", "baseChecksums"])
def test_lone_surrogate_key_is_a_422_not_a_500(client: httpx2.Client, field: str) -> None:
    # JSON may carry "\ud800" escapes; the refusal echoes the key, so it must stay encodable.
    bodies = {
        "entries": '{"entries": {"\\ud800.md": "x"}}',
        "deletes": '{"entries": {}, "deletes": ["\\ud800.md"]}',
        "baseChecksums": '{"entries": {"a.md": "x"}, "baseChecksums": {"\\ud800.md": null}}',
    }
    resp = client.put(
        URL, content=bodies[field].encode(), headers={"Content-Type": "application/json"}
    )
    assert refused(resp)["\\ud800.md"] == "team_memory_invalid_key"
    if field != "baseChecksums":
        assert client.get(URL).status_code == 404
    else:  # the refused precondition's key is dropped; a.md was fine and is stored
        assert client.get(URL).json()["content"]["entries"] == {"a.md": "x"}
