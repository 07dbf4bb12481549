"""Issue 11 §3/§5: malformed numbers, key clashes, the server's own tokens, logs, deadlines.

Deadlines and disconnects run against a real uvicorn on loopback configured
exactly as ``teamsync serve`` configures it (:func:`teamsync.server.runtime.uvicorn_config`),
with short limits; the access log is read from a real ``teamsync serve`` process.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from teamsync.errors import SecretFound
from teamsync.security.guard import guard_write
from teamsync.security.secrets import scan_text
from teamsync.server.runtime import Limits, redact_target
from teamsync.server.storage import Storage, WriteOk, WriteRequest, open_storage
from teamsync.server.tokens import PREFIX
from testing.gitrepos import TEAMSYNC, memory
from testing.hooks import decision, load_payload, run_teamsync
from testing.server import (
    SyncASGITransport,
    app_for,
    free_port,
    refused,
    token_for,
    uvicorn_server,
)

PATH = "/api/claude_code/team_memory"
REPO = "acme/widgets"
URL = PATH + "?repo=" + REPO
HUGE = "9" * 4_301


def server_token() -> str:
    """A real-shaped ``tsm_`` token, built at run time."""
    return f"{PREFIX}{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}"


@pytest.fixture
def client(sqlite_url: str) -> Iterator[httpx2.Client]:
    store = open_storage(sqlite_url)
    transport = SyncASGITransport(app_for(store))
    headers = {"Authorization": f"Bearer {token_for(store)}"}
    with httpx2.Client(transport=transport, base_url="http://test", headers=headers) as c:
        yield c
    transport.close()
    store.close()


def _code(resp: httpx2.Response) -> str:
    return str(resp.json()["error"]["details"]["error_code"])


# -- the PUT body parser ----------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        '{"entries": {"a.md": @}}'.replace("@", HUGE),
        '{"entries": {"a.md": "x"}, "extra": @}'.replace("@", HUGE),
        '{"entries": {}, "extra": [1, {"n": -@}]}'.replace("@", HUGE),
        '{"entries": {}, "deletes": [@]}'.replace("@", HUGE),
        '{"entries": {}, "baseChecksums": {"a.md": @}}'.replace("@", HUGE),
        '{"entries": {}, "extra": @}'.replace("@", "1" * 101),
        '{"entries": {}, "extra": NaN}',
        '{"entries": {}, "extra": Infinity}',
        '{"entries": {}, "extra": -Infinity}',
        '{"entries": {}, "extra": 1e999999}',
        '{"entries": {}, "extra": -1e400}',
        '{"entries": {}, "extra": 01}',
        '{"entries": {}, "extra": 1.}',
        '{"entries": {}, "extra": .5}',
        '{"entries": {}, "extra": +1}',
        '{"entries": {}, "extra": 0x10}',
        '{"entries": {}, "extra": 1e}',
        '{"entries": {}, "extra": --1}',
    ],
)
def test_every_malformed_number_is_a_400(client: httpx2.Client, body: str) -> None:
    resp = client.put(URL, content=body.encode())
    assert resp.status_code == 400, resp.text
    assert _code(resp) == "team_memory_invalid_body"
    assert HUGE[:50] not in resp.text


def test_ordinary_numbers_in_ignored_fields_still_parse(client: httpx2.Client) -> None:
    body = '{"entries": {"a.md": "x"}, "extra": [1, -2, 3.5, 1e10, @]}'.replace("@", "7" * 100)
    assert client.put(URL, content=body.encode()).status_code == 200


# -- keys: clashes in one request and against stored keys ----------------------------------


def test_file_and_folder_of_one_name_refused_in_one_request(client: httpx2.Client) -> None:
    for entries in (
        {"MEMORY.md": "# i\n", "MEMORY.md/x.md": "x"},
        {"MEMORY.md": "# i\n", "memory.md/x.md": "x"},
        {"notes.md": "n", "Notes.md/deep/x.md": "x"},
    ):
        resp = client.put(URL, json={"entries": {**entries, "other.md": "o"}})
        assert resp.status_code == 200  # the clashing group refused entry by entry
        assert refused(resp) == dict.fromkeys(entries, "team_memory_key_collision")
        assert all(set(r["keys"]) == set(entries) for r in resp.json()["rejectedEntries"])
    assert set(client.get(URL).json()["content"]["entries"]) == {"other.md"}


def test_file_and_folder_of_one_name_refused_against_stored_keys(client: httpx2.Client) -> None:
    assert client.put(URL, json={"entries": {"MEMORY.md": "# i\n"}}).status_code == 200
    for n, key in enumerate(("MEMORY.md/x.md", "memory.md/x.md", "ＭＥＭＯＲＹ.md/x.md")):
        resp = client.put(URL, json={"entries": {key: "x", f"ok{n}.md": "fine"}})
        assert resp.status_code == 200, key  # that entry refused, the rest stored
        assert refused(resp) == {key: "team_memory_key_collision"}
        (item,) = resp.json()["rejectedEntries"]
        assert item["keys"] == [key, "MEMORY.md"] and "already stored" in item["reason"]
        assert resp.json()["changedKeys"] == [f"ok{n}.md"]
    assert client.put(URL, json={"deletes": ["ok0.md", "ok1.md", "ok2.md"]}).status_code == 200
    assert client.put(URL, json={"entries": {"plan/a.md": "a"}}).status_code == 200
    resp = client.put(URL, json={"entries": {"PLAN": "x"}})  # not *.md: refused anyway
    assert refused(resp) == {"PLAN": "team_memory_invalid_key"}
    resp = client.put(URL, json={"entries": {"Plan.md": "x", "plan.md/b.md": "y"}})
    assert refused(resp) == dict.fromkeys(["Plan.md", "plan.md/b.md"], "team_memory_key_collision")
    # a file may become a folder when the same request deletes the file
    moved = client.put(URL, json={"entries": {"MEMORY.md/x.md": "x"}, "deletes": ["MEMORY.md"]})
    assert moved.status_code == 200, moved.text
    listing = client.get(URL).json()["content"]["entries"]
    assert set(listing) == {"MEMORY.md/x.md", "plan/a.md"}


def test_two_writers_racing_for_one_folded_name_each_store_the_rest(storage: Storage) -> None:
    """Issue 26 §4: the stored-key clash is decided under the write lock. Two writers
    each PUT their own spelling of a new name (plus a memory of their own) at once,
    through a real server: every round exactly one spelling is stored, the other
    writer's PUT is a 200 naming it in ``rejectedEntries``, and both other memories are
    stored (no 422, no lost entry, never both spellings)."""
    from concurrent.futures import ThreadPoolExecutor

    token = token_for(storage)
    with uvicorn_server(app_for(storage)) as url:
        with httpx2.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as http:

            def put(entries: dict[str, str]) -> httpx2.Response:
                return http.put(URL, json={"entries": entries})

            with ThreadPoolExecutor(2) as pool:
                for n in range(12):
                    spelled = (f"Deploy{n}.md", f"dep\uff4coy{n}.md" if n % 2 else f"deploy{n}.md")
                    if n % 3 == 2:  # a file against a folder of one name
                        spelled = (f"Plan{n}.md", f"plan{n}.md/step.md")
                    answers = list(
                        pool.map(put, [{spelled[0]: "a\n", f"a{n}.md": "a\n"},
                                       {spelled[1]: "b\n", f"b{n}.md": "b\n"}])
                    )  # fmt: skip
                    lost = [refused(r) for r in answers]
                    assert sorted(len(x) for x in lost) == [0, 1], (n, lost)
                    (loser,) = [k for x in lost for k in x]
                    assert loser in spelled and lost[spelled.index(loser)] == {
                        loser: "team_memory_key_collision"
                    }
                    live = set(storage.state(REPO, contents=False).checksums)  # type: ignore[union-attr]
                    assert {f"a{n}.md", f"b{n}.md"} <= live and loser not in live
                    assert (set(spelled) - {loser}) <= live


def test_case_only_rename_is_one_put(client: httpx2.Client) -> None:
    """Issue 18 §1: the request check no longer refuses what storage allows."""
    assert client.put(URL, json={"entries": {"Deploy.md": "d"}}).status_code == 200
    same = client.put(URL, json={"entries": {"deploy.md": "d"}, "deletes": ["Deploy.md"]})
    assert same.status_code == 200, same.text
    nfkc = client.put(URL, json={"entries": {"ｄeploy.md": "d"}, "deletes": ["deploy.md"]})
    assert nfkc.status_code == 200, nfkc.text
    assert set(client.get(URL).json()["content"]["entries"]) == {"ｄeploy.md"}
    both = client.put(URL, json={"entries": {"A.md": "1", "a.md": "2"}, "deletes": ["x.md"]})
    # two upserts of one folded name are still refused (both, entry by entry)
    assert refused(both) == dict.fromkeys(["A.md", "a.md"], "team_memory_key_collision")


def test_stored_clash_check_on_both_databases(storage: Storage) -> None:
    now = time.time()
    assert isinstance(storage.write("acme/w", WriteRequest({"RTK-I.md": "i"}), now), WriteOk)
    clash = storage.write("acme/w", WriteRequest({"RTK-\u0131.md": "x"}), now)
    assert isinstance(clash, WriteOk) and clash.clashed == (("RTK-\u0131.md", "RTK-I.md"),)
    clash = storage.write("acme/w", WriteRequest({"rtk-i.md/x.md": "x"}), now)
    assert isinstance(clash, WriteOk) and clash.clashed == (("rtk-i.md/x.md", "RTK-I.md"),)
    assert clash.changed == ()
    renamed = storage.write("acme/w", WriteRequest({"rtk-ı.md": "i"}, ["RTK-I.md"]), now)
    assert isinstance(renamed, WriteOk)
    state = storage.state("acme/w", contents=False)
    assert state is not None and set(state.checksums) == {"rtk-ı.md"}


@pytest.mark.parametrize(
    "key",
    ["a\u200db.md", "a\u00adb.md", ".g\u200cit/x.md", "GIT~1/x.md", ".git::$INDEX_ALLOCATION/x.md"],
)
def test_invisible_and_git_alias_keys_refused_by_the_server(
    client: httpx2.Client, key: str
) -> None:
    resp = client.put(URL, json={"entries": {key: "x"}})
    assert list(refused(resp).values()) == ["team_memory_invalid_key"]


# -- tsm_ tokens at every gate ------------------------------------------------------------


def test_server_tokens_are_refused_at_every_gate(client: httpx2.Client, tmp_path: Path) -> None:
    token = server_token()
    text = memory("CI", f"The CI job reads memory with {token} (rotate it).\n")
    assert [f.rule for f in scan_text(text, "ci.md")] == ["teamsync-server-token"]
    with pytest.raises(SecretFound):  # the library write API and push/pull gates
        guard_write("ci.md", text)
    resp = client.put(URL, json={"entries": {"ci.md": text}})  # the server
    assert refused(resp) == {"ci.md": "team_memory_secret_detected"}
    assert token not in resp.text
    (tmp_path / "ci.md").write_text(text, encoding="utf-8")  # scan, pre-commit, CI
    scanned = run_teamsync(["--json", "scan", str(tmp_path / "ci.md")], cwd=tmp_path)
    assert scanned.returncode == 1 and token not in scanned.stdout + scanned.stderr
    assert json.loads(scanned.stdout)["findings"][0]["rule"] == "teamsync-server-token"
    memdir = tmp_path / "memory"
    (memdir / "team").mkdir(parents=True)
    payload = load_payload(  # the Claude Code hook
        "write-team-secret.json",
        TEAM=str(memdir / "team"),
        CWD=str(tmp_path),
        TRANSCRIPT=str(tmp_path / "t.jsonl"),
        SECRET=token,
    )
    env = {**os.environ, "TEAMSYNC_DIR": str(memdir)}
    hooked = run_teamsync(["guard"], cwd=tmp_path, input=payload, env=env)
    verdict = decision(hooked.stdout)
    assert verdict is not None and verdict["permissionDecision"] == "deny"
    assert token not in hooked.stdout + hooked.stderr


# -- logs -------------------------------------------------------------------------------

NAMES = [
    "token",
    "access_token",
    "api_key",
    "apikey",
    "key",
    "auth",
    "authorization",
    "bearer",
    "secret",
    "client_secret",
    "password",
    "X-Amz-Signature",
    "sig",
    "session_id",
    "jwt",
]


def test_redact_target_masks_every_token_bearing_name() -> None:
    for name in NAMES:
        value = server_token()
        out = redact_target(f"{PATH}?repo=acme/widgets&{name}={value}")
        assert value not in out and f"{name}=***" in out and "repo=acme/widgets" in out
    assert redact_target(f"{PATH}?repo=acme/widgets&x={server_token()}").endswith("&x=***")
    assert redact_target(PATH) == PATH


def test_access_log_of_teamsync_serve_never_holds_a_query_token(sqlite_url: str) -> None:
    store = open_storage(sqlite_url)
    real = token_for(store)
    store.close()
    port = free_port()
    proc = subprocess.Popen(
        [TEAMSYNC, "serve", "--port", str(port), "--db", sqlite_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base, proc)
        sent = []
        for name in NAMES:
            value = real if name == "token" else server_token()
            sent.append(value)
            query = f"repo=acme/widgets&{name}={value}"
            httpx2.get(f"{base}{PATH}?{query}", headers={"Authorization": f"Bearer {real}"})
        _abort_upload(port, real)
        httpx2.get(base + "/healthz")
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    err = out + err  # uvicorn's access log goes to stdout, the rest to stderr
    access = [line for line in err.splitlines() if "GET " + PATH in line]
    assert len(access) == len(NAMES), err[-3000:]
    assert all("repo=acme/widgets" in line and "=***" in line for line in access)
    assert not [value for value in sent if value in err]
    # an aborted upload is one line, not a traceback
    assert "Traceback" not in err and "Exception in ASGI application" not in err
    assert len([line for line in err.splitlines() if "client disconnected" in line]) == 1


def _wait_healthy(base: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx2.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx2.TransportError:
            time.sleep(0.1)
    pytest.fail("teamsync serve did not start")


def _abort_upload(port: int, token: str) -> None:
    """Send a PUT's head and part of its body, then hang up."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(
            f"PUT {URL} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
            '{"entries": {"a.md": "'.encode()
        )
        time.sleep(0.5)
    time.sleep(0.5)


# -- deadlines and the connection cap -----------------------------------------------------

FAST = Limits(header_timeout=1.0, body_timeout=1.5, keep_alive=1.0, max_connections=40)


@pytest.fixture
def served(sqlite_url: str) -> Iterator[tuple[str, int, str]]:
    store = open_storage(sqlite_url)
    token = token_for(store)
    with uvicorn_server(app_for(store), FAST) as url:
        yield url, int(url.rsplit(":", 1)[1]), token
    store.close()


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def test_half_open_connections_are_closed_and_health_answers(
    served: tuple[str, int, str],
) -> None:
    url, port, _ = served
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(60)]
    try:
        time.sleep(0.3)
        # over the cap of 40: the oldest idle ones made room, so a new client is served now
        started = time.monotonic()
        assert httpx2.get(url + "/healthz", timeout=5).status_code == 200
        assert time.monotonic() - started < FAST.header_timeout
        assert sum(_closed_within(s, 0.05) for s in idle[:25]) >= 20
        assert all(_closed_within(s, FAST.header_timeout + 3) for s in idle)
        assert time.monotonic() - started < FAST.header_timeout + 3
    finally:
        for s in idle:
            s.close()


def test_a_slow_request_head_is_cut_off(served: tuple[str, int, str]) -> None:
    _, port, _ = served
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < FAST.header_timeout + 3:
            try:
                sock.sendall(b"X")  # one header byte at a time, never finishing
            except OSError:
                closed = True
                break
            sock.settimeout(0.2)
            try:
                if sock.recv(4096) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
        assert closed and time.monotonic() - started < FAST.header_timeout + 3


def test_a_slow_body_gets_408(served: tuple[str, int, str]) -> None:
    _, port, token = served
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(
            f"PUT {URL} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            "Content-Length: 1000\r\n\r\n{".encode()
        )
        sock.settimeout(FAST.body_timeout + 3)
        started = time.monotonic()
        reply = sock.recv(65536).decode()
        assert reply.startswith("HTTP/1.1 408"), reply
        assert "team_memory_request_timeout" in reply or _more(sock)
        assert time.monotonic() - started < FAST.body_timeout + 3
        assert _closed_within(sock, 3)


def _more(sock: socket.socket) -> bool:
    return "team_memory_request_timeout" in sock.recv(65536).decode()


def test_header_size_and_keep_alive_limits(served: tuple[str, int, str]) -> None:
    url, port, _ = served
    big = httpx2.get(url + "/healthz", headers={"X-Big": "a" * (FAST.max_header_bytes + 10)})
    assert big.status_code in (400, 431)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(3)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        assert _closed_within(sock, FAST.keep_alive + 3)  # idle keep-alive is closed


def test_disconnect_mid_upload_is_one_log_line(served: tuple[str, int, str]) -> None:
    _, port, token = served
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    names = ("teamsync.server", "uvicorn.error", "uvicorn.access", "uvicorn")
    for name in names:
        logging.getLogger(name).addHandler(handler)
    try:
        _abort_upload(port, token)
    finally:
        for name in names:
            logging.getLogger(name).removeHandler(handler)
    lines = [r.getMessage() for r in records]
    assert [m for m in lines if "client disconnected" in m] == [
        "PUT repo=acme/widgets token="
        + lines[0].split("token=")[1].split(":")[0]
        + ": client disconnected during the body"
    ], lines
    assert not [r for r in records if r.exc_info], lines
