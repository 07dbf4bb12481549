"""SIGKILL `teamsync pull` at random points while it applies 2,000 files, then re-run it."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from testing.gitrepos import TEAMSYNC, make_team, seed_remote, temp_files

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
