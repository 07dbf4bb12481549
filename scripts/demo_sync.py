"""``make demo``, part two: two teammates share team memory through ``teamsync serve``.

Starts the real server on SQLite on a free loopback port, creates a token, and
drives two teammates' memory directories through the real CLI.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from demo import Demo, header, memory

REPO = "acme/widgets"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_until_up(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"demo: the server exited early (code {proc.returncode})")
        try:
            with urllib.request.urlopen(f"{url}/openapi.json", timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("demo: the server did not start within 30 s")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"demo: {old!r} not in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def start_server(demo: Demo) -> None:
    header("5. Start a team-memory server (SQLite, loopback) and create a token")
    db = f"sqlite:///{demo.root / 'server.db'}"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    print(f"$ teamsync serve --port {port} --db {db}   (in the background)\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "teamsync", "serve", "--port", str(port), "--db", db],
        env=demo.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    demo.extra["server"] = proc
    _wait_until_up(url, proc)
    print(f"    listening on {url}\n")
    out = demo.capture("token", "create", "--repo", REPO, "--name", "the-team", "--db", db)
    token = out.strip().splitlines()[-1]
    print("    (the token is printed once; the demo hands it to both teammates)\n")
    demo.env["TEAMSYNC_TOKEN"] = token
    demo.extra["url"] = url


def teammates_share(demo: Demo) -> None:
    header("6. Alice writes team memories and pushes; Bob pulls")
    url = str(demo.extra["url"])
    alice, bob = demo.root / "alice", demo.root / "bob"
    demo.extra.update(alice=alice, bob=bob)
    for name, who in (("alice", alice), ("bob", bob)):
        demo.run("--dir", str(who), "init", "--rest", url, "--repo", REPO, expect=0, user=name)
    _write(
        alice / "team" / "deploy.md",
        memory(
            "Deploys",
            "How and when we deploy the API",
            "project",
            "Deploy with `make release` from main.\n\n"
            "**Why:** the release script tags and signs builds.\n"
            "**How to apply:** never deploy from a branch.\n\n"
            "Freeze: no deploys after Friday 12:00 UTC.",
        ),
    )
    _write(
        alice / "team" / "oncall.md",
        memory("On-call", "Where the on-call rotation lives", "reference", "PagerDuty, team API."),
    )
    demo.run("--dir", str(alice), "check", "--fix", expect=0, user="alice")
    demo.run("--dir", str(alice), "push", expect=0, user="alice")
    demo.run("--dir", str(bob), "pull", expect=0, user="bob")


def both_edit(demo: Demo) -> None:
    header("7. Both edit deploy.md: separate lines merge, the same line conflicts")
    alice, bob = Path(demo.extra["alice"]), Path(demo.extra["bob"])
    a, b = alice / "team" / "deploy.md", bob / "team" / "deploy.md"
    print("Alice rewrites the first line, Bob the freeze line: different hunks.\n")
    _edit(
        a,
        "Deploy with `make release` from main.",
        "Deploy with `make release VERSION=x.y` from main.",
    )
    _edit(
        b,
        "Freeze: no deploys after Friday 12:00 UTC.",
        "Freeze: no deploys after Friday 10:00 UTC.",
    )
    demo.run("--dir", str(alice), "sync", expect=0, user="alice")
    demo.run("--dir", str(bob), "sync", expect=0, user="bob")
    demo.run("--dir", str(alice), "sync", expect=0, user="alice")
    print("Both edits survive in both copies:\n")
    print("    " + "\n    ".join(a.read_text(encoding="utf-8").splitlines()[5:]) + "\n")
    print("Now both change the *same* line differently.\n")
    _edit(
        alice / "team" / "oncall.md", "PagerDuty, team API.", "PagerDuty, schedule 'API primary'."
    )
    _edit(bob / "team" / "oncall.md", "PagerDuty, team API.", "Opsgenie since November.")
    demo.run("--dir", str(alice), "sync", expect=0, user="alice")
    demo.run("--dir", str(bob), "sync", expect=1, user="bob")
    copies = sorted(p.name for p in (bob / "team").glob("oncall.conflict-*.md"))
    print(f"Bob's version is kept beside Alice's as {copies}: nothing is lost.\n")


def secret_refused(demo: Demo) -> None:
    header("8. Alice tries to share a memory holding a (fake) key: refused")
    alice = Path(demo.extra["alice"])
    fake_key = "AKIA" + "Z7Q4M2XWKRTY6PLQ"  # a made-up AWS access key id, assembled at run time
    _write(
        alice / "team" / "aws.md",
        memory("AWS", "Credentials for the staging account", "reference", f"key id: {fake_key}"),
    )
    demo.run("--dir", str(alice), "push", expect=1, user="alice")
    print("The file stays local; the message names the rule and line, never the key.\n")
    (alice / "team" / "aws.md").unlink()


def bob_recalls(demo: Demo) -> None:
    header("9. Bob asks his memory a question, offline")
    bob = Path(demo.extra["bob"])
    demo.run(
        "--dir",
        str(bob),
        "recall",
        "--offline",
        "--explain",
        "when can we deploy?",
        expect=0,
        user="bob",
    )


def stop_server(demo: Demo) -> None:
    proc = demo.extra.pop("server", None)
    if isinstance(proc, subprocess.Popen):
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        print("Server stopped.")


SYNC_STEPS = [start_server, teammates_share, both_edit, secret_refused, bob_recalls]
