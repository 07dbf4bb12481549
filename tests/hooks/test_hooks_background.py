"""Background jobs for hooks: the pid lock, the git environment scrub, detached spawns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from teamsync.hooks.background import PidLock, pid_alive, spawn
from teamsync.hooks.gitenv import no_git_env
from testing.watch import wait_for


def test_lock_is_exclusive_while_the_owner_lives(tmp_path: Path) -> None:
    lock = PidLock(tmp_path / "job.lock")
    assert lock.acquire(os.getpid())
    assert not lock.acquire(os.getpid())
    lock.release(os.getpid())
    assert not lock.path.exists()


def test_stale_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert not pid_alive(dead.pid)
    lock = PidLock(tmp_path / "job.lock")
    lock.path.write_text(str(dead.pid), encoding="ascii")
    assert lock.acquire(os.getpid()) and lock.owner() == os.getpid()


def test_release_by_a_non_owner_keeps_the_lock(tmp_path: Path) -> None:
    lock = PidLock(tmp_path / "job.lock")
    assert lock.acquire(os.getpid())
    lock.hand_over(12345678)
    lock.release(os.getpid())
    assert lock.owner() == 12345678


def test_no_git_env_drops_location_variables_and_keeps_identity() -> None:
    env = no_git_env(
        {
            "GIT_DIR": "/x/.git",
            "GIT_WORK_TREE": "/x",
            "GIT_INDEX_FILE": "/x/.git/index.lock",
            "GIT_AUTHOR_NAME": "A",
            "GIT_SSH_COMMAND": "ssh -i k",
            "GIT_CONFIG_KEY_0": "core.x",
            "PATH": "/bin",
        }
    )
    assert env == {
        "GIT_AUTHOR_NAME": "A",
        "GIT_SSH_COMMAND": "ssh -i k",
        "GIT_CONFIG_KEY_0": "core.x",
        "PATH": "/bin",
    }


def test_spawn_detaches_without_git_env(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    env = {**os.environ, "GIT_DIR": "/nonexistent/.git"}
    (tmp_path / "probe.py").write_text(
        "import os\nprint(os.getsid(0) == os.getpid(), 'GIT_DIR' in os.environ)\n",
        encoding="utf-8",
    )
    pid = spawn([], cwd=tmp_path, log=log, environ=env, module="probe")
    assert pid > 0
    assert wait_for(lambda: "True False" in log.read_text(encoding="utf-8"), 20)
