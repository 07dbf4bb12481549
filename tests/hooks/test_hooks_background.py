"""Background jobs for hooks: the pid lock, the git environment scrub, detached spawns."""

from __future__ import annotations

import os
from pathlib import Path

from teamsync.hooks.background import spawn
from teamsync.hooks.gitenv import no_git_env
from testing.watch import wait_for


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
