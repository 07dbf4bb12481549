"""`teamsync serve` as a real subprocess: `--port 0` prints the port it got, the
per-PUT audit line reaches stderr under uvicorn, and a push that hits the entries
cap after earlier batches were stored says both numbers right."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from testing.gitrepos import TEAMSYNC, memory
from testing.server import wait_healthy


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, list[str]]]:
    """(base URL, db URL, the server's stderr lines so far) for `serve --port 0`."""
    db = f"sqlite:///{tmp_path / 'server.sqlite3'}"
    proc = subprocess.Popen([TEAMSYNC, "serve", "--port", "0", "--db", db, "--max-entries", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+) ", line)
    assert match, line
    port = int(match.group(1))
    assert port != 0
    err: list[str] = []
    threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True).start()  # type: ignore[arg-type]
    url = f"http://127.0.0.1:{port}"
    assert wait_healthy(url, proc), "".join(err)
    try:
        yield url, db, err
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_serve_port_0_audit_line_and_cap_after_partial_push(
    tmp_path: Path, served: tuple[str, str, list[str]]
) -> None:
    url, db, err = served
    created = subprocess.run([TEAMSYNC, "--json", "token", "create", "--repo", "acme/app",
                              "--db", db], capture_output=True, text=True, check=True)  # fmt: skip
    token = json.loads(created.stdout)["token"]
    env = {**os.environ, "TEAMSYNC_TOKEN": token}

    def ts(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([TEAMSYNC, "--dir", str(tmp_path / "mem"), *args],
                              capture_output=True, text=True, env=env, timeout=120)  # fmt: skip

    assert ts("init", "--rest", url, "--repo", "acme/app").returncode == 0
    team = tmp_path / "mem" / "team"
    filler = "x" * 30_000 + "\n"  # about 6 entries per 200 kB batch
    for i in range(50):
        (team / f"m{i:02}.md").write_text(memory(f"M{i}", filler), encoding="utf-8")
    done = ts("push")
    assert done.returncode == 1
    message = done.stderr
    assert "holds at most 30 memories per repository and this push would make 50" in message
    stored = int(re.search(r"; (\d+) of its memories were already stored", message).group(1))  # type: ignore[union-attr]
    assert 0 < stored <= 30
    listed = httpx2.get(url + "/api/claude_code/team_memory", params={"repo": "acme/app"},
                        headers={"Authorization": f"Bearer {token}"}).json()  # fmt: skip
    assert len(listed["content"]["entries"]) == stored  # the message tells the truth
    deadline = time.monotonic() + 5
    while not any("PUT repo=acme/app" in line for line in err) and time.monotonic() < deadline:
        time.sleep(0.1)
    audit = [line for line in err if "PUT repo=acme/app" in line]
    assert audit, "".join(err)
    assert "teamsync.server" in audit[0] and "-> 200" in audit[0]
    assert token not in "".join(err)
