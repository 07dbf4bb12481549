"""`teamsync guard --event …`: git post-merge/post-checkout pulls and Claude Code's
SessionStart / PostToolUse / Stop hooks, against a real git-backend remote."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from teamsync._lock import FileLock
from teamsync._process import pid_alive
from testing.hooks import git, make_repo, run_teamsync
from testing.watch import memory_text, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def synced(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A memory dir set up for sync with a bare remote, and a teammate's memory dir."""
    remote = tmp_path / "memory-remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    memdir, mate = tmp_path / "mem", tmp_path / "mate"
    for d in (memdir, mate):
        proc = run_teamsync(["--dir", str(d), "init", "--git", str(remote)], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    env = {**os.environ, "TEAMSYNC_DIR": str(memdir)}
    return memdir, mate, env


def mate_pushes(mate: Path, key: str, cwd: Path) -> None:
    (mate / "team" / key).write_text(memory_text(key[:-3]), encoding="utf-8")
    proc = run_teamsync(["--dir", str(mate), "push"], cwd=cwd)
    assert proc.returncode == 0, proc.stderr


def hook(
    event: str, payload: dict[str, object] | str, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return run_teamsync(["guard", "--event", event], cwd=cwd, input=data, env=env)


def test_post_merge_pulls_in_the_background(
    synced: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    memdir, mate, env = synced
    work, _ = make_repo(tmp_path)
    git(work, "checkout", "-q", "-b", "topic")
    (work / "x.txt").write_text("x\n", encoding="utf-8")
    git(work, "add", "x.txt")
    git(work, "commit", "-q", "-m", "x")
    git(work, "checkout", "-q", "main")
    assert run_teamsync(["install-hooks"], cwd=work).returncode == 0
    mate_pushes(mate, "from-mate.md", tmp_path)
    start = time.monotonic()
    merged = subprocess.run(
        ["git", "merge", "-q", "--no-ff", "-m", "merge", "topic"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert merged.returncode == 0, merged.stderr
    assert time.monotonic() - start < 5  # never blocks on the pull
    assert "pulling team memory in the background" in merged.stderr
    assert wait_for(lambda: (memdir / "team" / "from-mate.md").is_file(), 20)


def test_post_checkout_pulls_on_branch_checkout_only(
    synced: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    memdir, mate, env = synced
    work, _ = make_repo(tmp_path)
    assert run_teamsync(["install-hooks"], cwd=work).returncode == 0
    mate_pushes(mate, "checkout-pull.md", tmp_path)
    files = subprocess.run(
        ["git", "checkout", "--", "README.md"], cwd=work, env=env, capture_output=True, text=True
    )
    assert files.returncode == 0 and "pulling" not in files.stderr
    branch = subprocess.run(
        ["git", "checkout", "-b", "b2"], cwd=work, env=env, capture_output=True, text=True
    )
    assert branch.returncode == 0 and "pulling team memory in the background" in branch.stderr
    assert wait_for(lambda: (memdir / "team" / "checkout-pull.md").is_file(), 20)
    again = subprocess.run(
        ["git", "checkout", "main"], cwd=work, env=env, capture_output=True, text=True
    )
    assert "pulling" not in again.stderr  # at most one background pull a minute


def test_git_hooks_do_nothing_when_sync_is_not_configured(tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path)
    assert run_teamsync(["install-hooks"], cwd=work).returncode == 0
    env = {**os.environ, "TEAMSYNC_DIR": str(tmp_path / "unconfigured")}
    proc = subprocess.run(
        ["git", "checkout", "-b", "b"], cwd=work, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0 and "teamsync" not in proc.stderr
    assert not (tmp_path / "unconfigured").exists()


def test_session_start_pulls_before_returning_and_keeps_stdout_clean(
    synced: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    memdir, mate, env = synced
    mate_pushes(mate, "session.md", tmp_path)
    payload = {
        "session_id": "s",
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": str(tmp_path),
    }
    proc = hook("SessionStart", payload, tmp_path, env)
    assert proc.returncode == 0 and proc.stdout == ""
    assert (memdir / "team" / "session.md").is_file()


def test_post_tool_use_debounces_a_burst_into_one_push(
    synced: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    memdir, mate, env = synced
    team = memdir / "team"
    start = time.monotonic()
    gaps: list[float] = []
    for i in range(4):
        gaps.append(time.monotonic())
        (team / f"burst{i}.md").write_text(memory_text(f"burst{i}"), encoding="utf-8")
        payload = {
            "hook_event_name": "PostToolUse",
            "tool_name": "Write",
            "cwd": str(tmp_path),
            "tool_input": {"file_path": str(team / f"burst{i}.md"), "content": "..."},
            "tool_response": {"success": True},
        }
        proc = hook("PostToolUse", payload, tmp_path, env)
        assert proc.returncode == 0 and proc.stdout == ""
    assert time.monotonic() - start < 8  # each hook returns at once
    spread = max(b - a for a, b in zip(gaps, gaps[1:], strict=False))

    def pulled() -> bool:
        proc = run_teamsync(["--dir", str(mate), "pull"], cwd=tmp_path)
        return proc.returncode == 0 and (mate / "team" / "burst3.md").is_file()

    assert wait_for(pulled, 30, interval=1.0)
    logs = list(
        (Path(os.environ["HOME"]) / ".local" / "state" / "teamsync" / "hooks").glob("push-*.log")
    )
    assert len(logs) == 1
    (lock_path,) = logs[0].parent.glob("push-*.lock")

    def waiter_done() -> bool:
        probe = FileLock(lock_path)
        free = probe.try_acquire()
        probe.release()
        return free

    assert wait_for(waiter_done, 20)  # the waiter exited and its lock went with it
    pushes = logs[0].read_text(encoding="utf-8").count("teamsync push")
    # Edits closer together than the 2 s debounce coalesce into one push; a machine
    # slow enough to space the hooks further apart still may not push per edit.
    assert pushes == 1 if spread < 1.5 else 1 <= pushes < 4


def test_post_tool_use_outside_team_does_nothing(
    synced: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    _, _, env = synced
    payload = {
        "tool_name": "Write",
        "cwd": str(tmp_path),
        "tool_input": {"file_path": str(tmp_path / "a.py")},
    }
    proc = hook("PostToolUse", payload, tmp_path, env)
    assert proc.returncode == 0
    assert not list((Path(os.environ["HOME"]) / ".local" / "state").rglob("push-*"))


def test_stop_runs_extract_in_the_background(tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"content": "hi"}}) + "\n", encoding="utf-8"
    )
    env = {**os.environ, "TEAMSYNC_DIR": str(tmp_path / "mem")}
    payload = {
        "hook_event_name": "Stop",
        "cwd": str(tmp_path),
        "transcript_path": str(transcript),
        "stop_hook_active": False,
    }
    start = time.monotonic()
    proc = hook("Stop", payload, tmp_path, env)
    assert proc.returncode == 0 and proc.stdout == ""
    assert time.monotonic() - start < 3
    log = Path(os.environ["HOME"]) / ".local" / "state" / "teamsync" / "hooks" / "extract.log"
    assert wait_for(lambda: log.is_file() and log.stat().st_size > 0, 30)
    (lock,) = log.parent.glob("extract-*.lock")
    owner = FileLock(lock).owner()
    assert owner is not None
    assert wait_for(lambda: not pid_alive(owner), 30)  # the background extraction finished
    assert FileLock(lock).try_acquire()  # and its exit freed the lock it inherited
    text = log.read_text(encoding="utf-8")
    assert "Usage:" not in text and "unexpected" not in text and "Traceback" not in text


def test_unknown_event_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_teamsync(["guard", "--event", "Nope"], cwd=tmp_path, input="{}")
    assert proc.returncode == 2 and "unknown hook event" in proc.stderr
