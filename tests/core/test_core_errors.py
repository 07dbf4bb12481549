"""Errors that say what happened, through the real CLI in subprocesses: git failures
classified, `init` refusing a wrong server, a code branch or a damaged state file, and
`--json` errors as one object on stdout with the exit code unchanged."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.gitrepos import TEAMSYNC, git, make_remote, memory, seed_remote
from testing.minimal_server import create_minimal_app
from testing.server import uvicorn_server


def ts(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TEAMSYNC, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)  # fmt: skip


@pytest.fixture
def web_server(tmp_path: Path) -> Iterator[str]:
    """A plain static web server (Python's http.server) on loopback: HTML 404s."""
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_text("<html>hello</html>", encoding="utf-8")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a: object, **k: object) -> None:
            super().__init__(*a, directory=str(root), **k)  # type: ignore[arg-type]

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_init_against_a_missing_path_says_it_does_not_exist(tmp_path: Path) -> None:
    done = ts("--dir", "mem", "init", "--git", str(tmp_path / "nope.git"), cwd=tmp_path)
    assert done.returncode == 1
    assert "no repository at" in done.stderr and "does not exist" in done.stderr
    assert "git init --bare" in done.stderr
    assert "and the repository exists." not in done.stderr  # git's last line, misleading alone
    assert not (tmp_path / "mem" / "teamsync.yaml").exists()


def test_init_against_a_missing_file_url_and_a_plain_directory(tmp_path: Path) -> None:
    done = ts("--dir", "mem", "init", "--git", f"file://{tmp_path}/gone.git", cwd=tmp_path)
    assert done.returncode == 1 and "the path does not exist" in done.stderr
    (tmp_path / "plain").mkdir()
    done = ts("--dir", "mem", "init", "--git", str(tmp_path / "plain"), cwd=tmp_path)
    assert done.returncode == 1
    assert "exists but is not a git repository" in done.stderr


def test_unknown_remote_name_and_unresolvable_host(tmp_path: Path) -> None:
    git("init", "-q", str(tmp_path / "proj"))
    done = ts("--dir", "mem", "init", "--git", "upstream", cwd=tmp_path / "proj")
    assert done.returncode == 1
    assert "not a remote of the project" in done.stderr and "git remote -v" in done.stderr
    done = ts("--dir", "mem", "--json", "init", "--git", "ssh://git@no-such-host.invalid/x.git",
              cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    assert "could not reach" in done.stderr and "network" in done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == "git-network" and "could not reach" in error["message"]


def test_init_refuses_a_code_branch_unless_forced(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    seed_remote(remote, {"src/app.py": "print('hi')\n", "README.md": "# app\n",
                         "Makefile": "all:\n"}, branch="main")  # fmt: skip
    done = ts("--dir", "mem", "init", "--git", str(remote), "--branch", "main", cwd=tmp_path)
    assert done.returncode == 1
    assert "looks like a code branch" in done.stderr and "--force" in done.stderr
    assert "src/app.py" in done.stderr
    assert not (tmp_path / "mem" / "teamsync.yaml").exists()
    forced = ts("--dir", "mem", "init", "--git", str(remote), "--branch", "main", "--force",
                cwd=tmp_path)  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    # The default branch of its own is fine, and re-running init says what it replaces.
    again = ts("--dir", "mem", "init", "--git", str(remote), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"Replaced the previous configuration: git {remote} branch main" in again.stdout


def test_init_rest_refuses_a_plain_web_server(tmp_path: Path, web_server: str) -> None:
    env = {"TEAMSYNC_TOKEN": "t0ken"}
    done = ts("--dir", "mem", "init", "--rest", web_server, "--repo", "acme/app", cwd=tmp_path,
              env=env)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "is not a team-memory server, or the path is wrong" in done.stderr
    assert "text/html" in done.stderr
    assert not (tmp_path / "mem" / "teamsync.yaml").exists()
    wrong = web_server + "/api/claude_code/team_memory"
    done = ts("--dir", "mem", "init", "--rest", wrong, "--repo", "acme/app", cwd=tmp_path, env=env)
    assert done.returncode == 1 and "give only the server's base URL" in done.stderr


def test_init_rest_accepts_an_empty_claude_code_style_server(tmp_path: Path) -> None:
    with uvicorn_server(create_minimal_app()) as url:  # JSON 404 body, no capabilities
        done = ts("--dir", "mem", "init", "--rest", url, "--repo", "acme/app", cwd=tmp_path,
                  env={"TEAMSYNC_TOKEN": "t0ken"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "nothing there yet" in done.stdout


def _synced(tmp_path: Path) -> tuple[Path, Path]:
    remote = make_remote(tmp_path)
    seed_remote(remote, {"a.md": memory("A", "alpha\n")})
    mem = tmp_path / "mem"
    assert ts("--dir", str(mem), "init", "--git", str(remote), cwd=tmp_path).returncode == 0
    assert ts("--dir", str(mem), "sync", cwd=tmp_path).returncode == 0
    return remote, mem


def test_damaged_state_database_is_named_with_the_way_out(tmp_path: Path) -> None:
    _, mem = _synced(tmp_path)
    state = Path(os.environ["HOME"], ".local/state/teamsync")
    dbs = [
        p for p in state.rglob("*") if p.is_file() and p.suffix in (".sqlite3", ".db", ".sqlite")
    ]
    assert dbs, list(state.rglob("*"))
    for db in dbs:
        db.write_bytes(b"this is not a database" * 100)
    done = ts("--dir", str(mem), "--json", "sync", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "is damaged" in done.stderr and str(dbs[0].parent) in done.stderr
    assert "This is a bug" not in done.stderr
    assert json.loads(done.stdout)["error"]["kind"] == "config"
    for db in dbs:  # the way out the message gives
        db.rename(db.with_name(db.name + ".damaged"))
    assert ts("--dir", str(mem), "sync", cwd=tmp_path).returncode == 0
    assert "alpha" in (mem / "team" / "a.md").read_text()


def test_a_directory_where_the_config_should_be(tmp_path: Path) -> None:
    (tmp_path / "mem" / "teamsync.yaml").mkdir(parents=True)
    done = ts("--dir", "mem", "status", cwd=tmp_path)
    assert done.returncode == 1
    assert "teamsync.yaml is a directory" in done.stderr and "mv " in done.stderr
    remote = make_remote(tmp_path)
    done = ts("--dir", "mem", "init", "--git", str(remote), cwd=tmp_path)
    assert done.returncode == 1 and "is a directory" in done.stderr


def test_json_errors_are_one_object_with_the_exit_code_unchanged(tmp_path: Path) -> None:
    done = ts("--dir", "mem", "--json", "status", cwd=tmp_path)
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == "config" and "not set up for sync" in error["message"]
    usage = ts("--json", "init", cwd=tmp_path)
    assert usage.returncode == 2
    assert json.loads(usage.stdout)["error"]["kind"] == "usage"
