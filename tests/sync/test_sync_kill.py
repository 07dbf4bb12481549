"""SIGKILL `teamsync pull` at random points while it applies 2,000 files, then re-run it
(git and REST, through the batched write path: temps, one barrier, renames, the base)."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from teamsync.limits import TEMP_PREFIX
from teamsync.server.storage import WriteRequest, open_storage
from teamsync.sync.apply import BATCH
from teamsync.sync.base import checksum
from testing.gitrepos import TEAMSYNC, Member, make_team, seed_remote, temp_files
from testing.server import app_for, make_rest_team, token_for, uvicorn_server

N = 2_000


def _count(team: Path) -> int:
    try:
        return sum(1 for name in os.listdir(team) if name.endswith(".md"))
    except FileNotFoundError:
        return 0


@pytest.mark.slow
def test_sigkill_during_pull_then_rerun_converges(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    files = {f"m{i:04d}.md": f"memory number {i}\n" + "detail line\n" * (i % 40) for i in range(N)}
    seed_remote(alice.remote, files)
    rng = random.Random(20261130)
    kills = 0
    for _ in range(4):
        target = rng.randint(1, N - 50)
        proc = subprocess.Popen(
            [TEAMSYNC, "pull"],
            env=bob.environ,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while proc.poll() is None and _count(bob.team) < target and time.monotonic() < deadline:
            time.sleep(0.002)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        # Every memory file present is complete: old (absent) or new, never partial.
        for key, text in bob.files().items():
            if not key.startswith(".teamsync-tmp-"):
                assert files[key] == text, key
    assert kills >= 2
    result = bob.cli("--json", "pull", timeout=300)
    assert result.returncode == 0, result.stderr
    assert bob.files() == files
    assert not temp_files(bob.team)
    again = bob.cli("--json", "sync", timeout=300)
    assert (
        again.returncode == 0 and '"written": []' in again.stdout and '"pushed": []' in again.stdout
    )


def _kill_when(proc: subprocess.Popen[bytes], team: Path, ready: Callable[[Path], bool]) -> bool:
    """SIGKILL ``proc`` as soon as ``ready(team)`` holds; False when it finished first."""
    deadline = time.monotonic() + 120
    while proc.poll() is None and not ready(team) and time.monotonic() < deadline:
        time.sleep(0.001)
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    return killed


def _temps_only(team: Path) -> bool:
    """Staged temps exist and no memory has its final name yet (between stage and rename)."""
    try:
        names = os.listdir(team)
    except FileNotFoundError:
        return False
    return any(n.startswith(TEMP_PREFIX) for n in names) and not any(
        n.endswith(".md") for n in names
    )


def _base_rows(mate: Member) -> dict[str, str]:
    """key -> checksum of the base store, read with SQLite directly."""
    [path] = (mate.settings.state_dir / "sync").glob("*.sqlite3")
    db = sqlite3.connect(path)
    try:
        return dict(db.execute("SELECT key, checksum FROM base"))
    finally:
        db.close()


@pytest.fixture(params=["git", "rest"])
def reader(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Member, dict[str, str]]]:
    """A teammate with an empty team/ and a remote holding N memories."""
    files = {f"k{i:04d}.md": f"memory {i}\n" + "a line of detail\n" * (i % 30) for i in range(N)}
    if request.param == "git":
        _, bob = make_team(tmp_path)
        seed_remote(bob.remote, files)
        yield bob, files
        return
    store = open_storage(f"sqlite:///{tmp_path / 'server.sqlite3'}")
    store.write("acme/widgets", WriteRequest(upserts=files), time.time())
    with uvicorn_server(app_for(store)) as url:
        [bob] = make_rest_team(tmp_path, url, [token_for(store)], ["bob"])
        yield bob, files
    store.close()


@pytest.mark.slow
def test_sigkill_in_the_batched_write_path_converges(
    reader: tuple[Member, dict[str, str]],
) -> None:
    """Kill a real `teamsync pull` while its batches are staged (temps, nothing renamed),
    right after the first renames, inside the second batch, and near the end; every
    time each visible memory is complete, and a re-run finishes the job exactly."""
    bob, files = reader
    # (when to kill, base rows there must be by then: a batch is recorded before the next)
    moments: list[tuple[Callable[[Path], bool], int]] = [
        (_temps_only, 0),
        (lambda team: _count(team) >= 1, 0),
        (lambda team: _count(team) >= BATCH + 1, BATCH),
        (lambda team: _count(team) >= N - 20, BATCH),
    ]
    kills = 0
    for ready, at_least in moments:
        proc = subprocess.Popen([TEAMSYNC, "pull"], env=bob.environ,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        killed = _kill_when(proc, bob.team, ready)
        kills += killed
        visible = {k: t for k, t in bob.files().items() if not k.startswith(TEMP_PREFIX)}
        assert all(files[k] == t for k, t in visible.items())  # never a half-written memory
        rows = _base_rows(bob)
        assert all(files[k] == visible.get(k) for k in rows)  # the base only names what landed
        assert {k: checksum(files[k]) for k in rows} == rows
        assert not killed or len(rows) >= at_least
    assert kills >= 3  # the moments were reached while the pull ran
    done = bob.cli("--json", "pull", timeout=300)
    assert done.returncode == 0, done.stderr
    assert bob.files() == files
    assert not temp_files(bob.team)
    assert _base_rows(bob) == {k: checksum(t) for k, t in files.items()}
    again = bob.cli("--json", "sync", timeout=300)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["written"] == [] and report["pushed"] == [] and report["deleted"] == []
