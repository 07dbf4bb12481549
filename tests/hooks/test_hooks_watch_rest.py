"""`teamsync watch` as a real process against a real `teamsync serve` on loopback.

Edits arrive on the server within the debounce (plus the push), a push that
fails while the server is down is retried on the backoff timer once the server
is back, a teammate's upload is pulled periodically, and SIGTERM exits 0 after
a final push.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from testing.hooks import run_teamsync, teamsync_bin
from testing.watch import WatchProcess, memory_text, wait_for

pytestmark = pytest.mark.slow
REPO = "acme/app"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, tmp_path: Path) -> None:
        self.db = f"sqlite:///{tmp_path / 'server.db'}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp_path / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        created = run_teamsync(
            ["--json", "token", "create", "--repo", REPO, "--db", self.db], cwd=tmp_path
        )
        assert created.returncode == 0, created.stderr
        self.token = json.loads(created.stdout)["token"]

    def start(self) -> None:
        with open(self.log, "ab") as sink:
            self.proc = subprocess.Popen(
                [teamsync_bin(), "serve", "--port", str(self.port), "--db", self.db],
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        assert wait_for(self.healthy, 30), self.log.read_text(encoding="utf-8")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as resp:
                return bool(resp.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def request(self, method: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        url = f"{self.url}/api/claude_code/team_memory?repo={REPO}"
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                result: dict[str, Any] = json.loads(resp.read() or b"{}")
                return result
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return {}
            raise

    def keys(self) -> set[str]:
        try:
            return set(self.request("GET").get("content", {}).get("entries", {}))
        except (urllib.error.URLError, OSError):
            return set()


@pytest.fixture
def server(tmp_path: Path) -> Any:
    srv = Server(tmp_path)
    srv.start()
    yield srv
    srv.stop()


def test_watch_against_a_loopback_server(server: Server, tmp_path: Path) -> None:
    env = {**os.environ, "TEAMSYNC_TOKEN": server.token}
    memdir = tmp_path / "mem"
    init = run_teamsync(
        ["--dir", str(memdir), "init", "--rest", server.url, "--repo", REPO], cwd=tmp_path, env=env
    )
    assert init.returncode == 0, init.stderr
    team = memdir / "team"
    debounce = 1.0
    args = [teamsync_bin(), "--dir", str(memdir), "watch", "--debounce", str(debounce)]
    args += ["--pull-interval", "2", "--retry-base", "0.5"]
    proc = WatchProcess.start(args, cwd=tmp_path, log=tmp_path / "watch.log", env=env)
    try:
        proc.wait_output("watching", 20)
        start = time.monotonic()
        (team / "first.md").write_text(memory_text("first"), encoding="utf-8")
        assert wait_for(lambda: "first.md" in server.keys(), debounce + 10)
        latency = time.monotonic() - start
        print(f"write-to-remote latency {latency:.2f} s (debounce {debounce} s)")
        assert debounce * 0.9 <= latency <= debounce + 5

        server.stop()
        (team / "second.md").write_text(memory_text("second"), encoding="utf-8")
        proc.wait_output("push failed", 20)
        server.start()
        assert wait_for(lambda: "second.md" in server.keys(), 30), proc.output()
        proc.wait_output("push succeeded after", 10)

        server.request("PUT", {"entries": {"third.md": memory_text("third")}})
        assert wait_for(lambda: (team / "third.md").is_file(), 20), proc.output()

        (team / "fourth.md").write_text(memory_text("fourth"), encoding="utf-8")
        time.sleep(0.3)
        proc.popen.send_signal(signal.SIGTERM)
        assert proc.popen.wait(30) == 0
    finally:
        proc.kill()
    assert "fourth.md" in server.keys()  # the final flush
    assert "stopped" in proc.output()


def test_an_idle_watcher_costs_one_304_per_period(server: Server, tmp_path: Path) -> None:
    """Issue 15 §5: the periodic pull is conditional; the ETag outlives each pull."""
    env = {**os.environ, "TEAMSYNC_TOKEN": server.token}
    memdir = tmp_path / "mem"
    init = run_teamsync(
        ["--dir", str(memdir), "init", "--rest", server.url, "--repo", REPO], cwd=tmp_path, env=env
    )
    assert init.returncode == 0, init.stderr
    server.request("PUT", {"entries": {f"m{i}.md": memory_text(f"m{i}") for i in range(30)}})
    args = [teamsync_bin(), "--dir", str(memdir), "watch", "--debounce", "0.5"]
    args += ["--pull-interval", "1"]
    proc = WatchProcess.start(args, cwd=tmp_path, log=tmp_path / "watch.log", env=env)
    try:
        proc.wait_output("watching", 20)
        assert wait_for(lambda: (memdir / "team" / "m29.md").is_file(), 20), proc.output()
        time.sleep(2)
        seen = len(server.log.read_text(encoding="utf-8").splitlines())
        time.sleep(6)
        lines = server.log.read_text(encoding="utf-8").splitlines()[seen:]
    finally:
        proc.kill()
    calls = [line for line in lines if "/api/claude_code/team_memory" in line]
    assert len(calls) >= 3, lines  # about one per second
    not_304 = [c for c in calls if '"GET /api/claude_code/team_memory?' not in c or " 304" not in c]
    assert not not_304, not_304
