"""`teamsync watch` as a real process against a git-backend remote (a bare repository).

Edits reach the remote within the debounce (plus the push itself), a push that
fails while the remote is gone is retried on the backoff timer once it is back,
a teammate's push is pulled periodically, and SIGTERM exits 0 after a final push.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from testing.hooks import git, run_teamsync, teamsync_bin
from testing.watch import WatchProcess, memory_text, wait_for

pytestmark = pytest.mark.slow


def remote_has(remote: Path, key: str) -> bool:
    proc = subprocess.run(
        ["git", "--git-dir", str(remote), "cat-file", "-e", f"teamsync/memory:{key}"],
        capture_output=True,
    )
    return proc.returncode == 0


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    remote = tmp_path / "memory-remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    memdir = tmp_path / "mem"
    init = run_teamsync(["--dir", str(memdir), "init", "--git", str(remote)], cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    return memdir, remote


def test_watch_pushes_retries_pulls_and_exits_cleanly(
    setup: tuple[Path, Path], tmp_path: Path
) -> None:
    memdir, remote = setup
    team = memdir / "team"
    debounce = 1.0
    proc = WatchProcess.start(
        [
            teamsync_bin(),
            "--dir",
            str(memdir),
            "watch",
            "--debounce",
            str(debounce),
            "--pull-interval",
            "2",
            "--retry-base",
            "0.5",
        ],
        cwd=tmp_path,
        log=tmp_path / "watch.log",
    )
    try:
        proc.wait_output("watching", 20)
        start = time.monotonic()
        (team / "first.md").write_text(memory_text("first"), encoding="utf-8")
        assert wait_for(lambda: remote_has(remote, "first.md"), debounce + 10)
        latency = time.monotonic() - start
        print(f"write-to-remote latency {latency:.2f} s (debounce {debounce} s)")
        assert debounce * 0.9 <= latency <= debounce + 5  # debounced, not immediate

        away = remote.with_name("gone.git")
        os.rename(remote, away)
        (team / "second.md").write_text(memory_text("second"), encoding="utf-8")
        proc.wait_output("push failed", 20)
        os.rename(away, remote)
        assert wait_for(lambda: remote_has(remote, "second.md"), 20)
        proc.wait_output("push succeeded after", 10)

        mate = tmp_path / "mate"
        assert (
            run_teamsync(
                ["--dir", str(mate), "init", "--git", str(remote)], cwd=tmp_path
            ).returncode
            == 0
        )
        (mate / "team" / "third.md").write_text(memory_text("third"), encoding="utf-8")
        pushed = run_teamsync(["--dir", str(mate), "push"], cwd=tmp_path)
        assert pushed.returncode == 0, pushed.stderr
        assert wait_for(lambda: (team / "third.md").is_file(), 20)

        (team / "fourth.md").write_text(memory_text("fourth"), encoding="utf-8")
        time.sleep(0.3)
        proc.popen.send_signal(signal.SIGTERM)
        assert proc.popen.wait(30) == 0
    finally:
        proc.kill()
    assert remote_has(remote, "fourth.md")  # the final flush
    assert "stopped" in proc.output()


def test_watch_without_configuration_is_a_clear_error(tmp_path: Path) -> None:
    proc = run_teamsync(["--dir", str(tmp_path / "mem"), "watch"], cwd=tmp_path)
    assert proc.returncode == 1 and "teamsync init" in proc.stderr


def test_auth_error_suspends_sync_until_the_config_changes(
    setup: tuple[Path, Path], tmp_path: Path
) -> None:
    memdir, remote = setup
    config = memdir / "teamsync.yaml"
    good = config.read_text(encoding="utf-8")
    assert str(remote) in good
    fake_ssh = tmp_path / "fake-ssh"
    fake_ssh.write_text(
        "#!/bin/sh\necho 'git@example.invalid: Permission denied (publickey).' >&2\nexit 255\n",
        encoding="utf-8",
    )
    fake_ssh.chmod(0o755)
    config.write_text(
        good.replace(str(remote), "ssh://git@example.invalid/team.git"), encoding="utf-8"
    )
    env = {**os.environ, "GIT_SSH_COMMAND": str(fake_ssh)}
    args = [teamsync_bin(), "--dir", str(memdir), "watch", "--debounce", "0.5"]
    args += ["--pull-interval", "1", "--retry-base", "0.2"]
    proc = WatchProcess.start(args, cwd=tmp_path, log=tmp_path / "watch.log", env=env)
    try:
        proc.wait_output("resumes when the configuration file changes", 30)
        (memdir / "team" / "held.md").write_text(memory_text("held"), encoding="utf-8")
        time.sleep(3)  # several debounce and pull periods: nothing may be attempted
        assert proc.output().count("stopped:") == 1
        assert not remote_has(remote, "held.md")
        config.write_text(good, encoding="utf-8")
        proc.wait_output("configuration changed: resuming sync", 10)
        assert wait_for(lambda: remote_has(remote, "held.md"), 20), proc.output()
        proc.popen.send_signal(signal.SIGINT)
        assert proc.popen.wait(30) == 0
    finally:
        proc.kill()
    assert "check your git credentials" in proc.output()


def test_polling_mode_and_json_summary(setup: tuple[Path, Path], tmp_path: Path) -> None:
    """--poll works without watchdog events; --json keeps stdout to one object."""
    memdir, remote = setup
    args = [teamsync_bin(), "--json", "--dir", str(memdir), "watch", "--poll", "--debounce", "0.3"]
    with open(tmp_path / "err.log", "wb") as err:
        popen = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=err)
        try:
            assert wait_for(lambda: "watching" in (tmp_path / "err.log").read_text(), 20)
            (memdir / "team" / "polled.md").write_text(memory_text("polled"), encoding="utf-8")
            assert wait_for(lambda: remote_has(remote, "polled.md"), 20)
            popen.send_signal(signal.SIGINT)
            out, _ = popen.communicate(timeout=30)
        finally:
            if popen.poll() is None:
                popen.kill()
    assert popen.returncode == 0
    summary = json.loads(out)
    assert summary["mode"] == "polling" and summary["pushes"] >= 1
    assert summary["suspended"] is False
