"""The REST client's network settings, against real local HTTP servers: the standard
proxy variables (HTTP_PROXY/NO_PROXY) and the server's Retry-After."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from pathlib import Path

import pytest

from teamsync.sync.rest_http import MAX_RETRY_AFTER_S, Http, retry_after
from testing.gitrepos import TEAMSYNC

NOT_FOUND = json.dumps({"error": {"message": "no team memory yet"}}).encode()


class Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []
    busy: list[int] = []  # answer 503 with Retry-After this many times first

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        type(self).seen.append(self.path)
        if type(self).busy:
            type(self).busy.pop()
            self.send_response(503)
            self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(NOT_FOUND)))
        self.end_headers()
        self.wfile.write(NOT_FOUND)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, type[Recorder]]]:
    handler = type("Handler", (Recorder,), {"seen": [], "busy": []})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", handler
    finally:
        srv.shutdown()
        srv.server_close()


def test_http_proxy_is_honoured_and_no_proxy_bypasses_it(
    tmp_path: Path, server: tuple[str, type[Recorder]]
) -> None:
    proxy, handler = server
    env = {**os.environ, "TEAMSYNC_TOKEN": "t0ken", "HTTP_PROXY": proxy, "NO_PROXY": ""}
    args = [
        TEAMSYNC,
        "--dir",
        "mem",
        "init",
        "--rest",
        "http://memory.invalid",
        "--repo",
        "acme/app",
    ]
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr  # memory.invalid resolves nowhere: only via the proxy
    assert handler.seen and handler.seen[0].startswith("http://memory.invalid/api/claude_code/")
    handler.seen.clear()
    bypass = {**env, "NO_PROXY": "memory.invalid"}
    args[2] = "mem2"
    done = subprocess.run(
        args, cwd=tmp_path, env=bypass, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1 and handler.seen == []
    assert "did not answer" in done.stderr


def test_retry_after_is_honoured(server: tuple[str, type[Recorder]]) -> None:
    url, handler = server
    handler.busy.extend([1, 1])
    slept: list[float] = []
    client = Http(url, "t0ken", sleep=slept.append)
    try:
        status, _, _ = client.send("GET", "/api/claude_code/team_memory", params={"repo": "a/b"})
    finally:
        client.close()
    assert status == 404
    assert slept == [1.0, 1.0]  # the server's Retry-After, not the 0.5 s backoff


def test_retry_after_parsing() -> None:
    assert retry_after("3") == 3.0
    assert retry_after("100000") == MAX_RETRY_AFTER_S
    now = time.time()
    assert retry_after(formatdate(now + 10, usegmt=True), now=lambda: now) == pytest.approx(
        10, abs=1
    )
    assert retry_after(formatdate(now - 10, usegmt=True), now=lambda: now) == 0.0
    assert retry_after("soon") is None and retry_after(None) is None and retry_after("") is None
