"""``teamsync guard --event NAME``: teamsync's handlers for the other hook events.

Claude Code (payload as JSON on stdin):

* ``SessionStart``: ``teamsync pull`` in the foreground, its output on stderr
  (stdout of a SessionStart hook becomes model context), when the memory
  directory is set up for sync; otherwise nothing.
* ``PostToolUse`` on Write/Edit/MultiEdit of a team-memory file: a debounced
  background ``teamsync push`` (:mod:`teamsync.hooks.deferred`).
* ``Stop``: ``teamsync extract <transcript_path>`` in the background, at most one
  per transcript at a time.

git (``post-merge``, ``post-checkout``): a background ``teamsync pull`` when the
repository's memory directory is set up for sync, at most once a minute.

Every handler answers at once, exits 0 and never blocks the caller; background
output goes to ``<state dir>/hooks/<job>.log``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from teamsync._lock import FileLock
from teamsync.config import Settings
from teamsync.hooks.background import job_name, spawn
from teamsync.hooks.gitenv import no_git_env

PUSH_DEBOUNCE = 2.0
PULL_MIN_INTERVAL = 60.0
SESSION_PULL_TIMEOUT = 50.0


def _payload(raw: str, err: TextIO) -> dict[str, Any]:
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError:
        err.write("teamsync: the hook payload is not JSON; nothing to do\n")
        return {}
    return data if isinstance(data, dict) else {}


def _settings_for(settings: Settings, payload: dict[str, Any]) -> Settings:
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and Path(cwd).is_absolute() and settings.dir is None:
        return replace(settings, cwd=Path(cwd))
    return settings


def _configured_memdir(settings: Settings) -> Path | None:
    from teamsync.memdir.paths import memory_dir
    from teamsync.sync.config import config_path

    memdir = memory_dir(settings)
    return memdir if config_path(memdir).is_file() else None


def _hooks_state(settings: Settings) -> Path:
    return settings.state_dir / "hooks"


def session_start(settings: Settings, err: TextIO) -> int:
    memdir = _configured_memdir(settings)
    if memdir is None:
        return 0
    cmd = [sys.executable, "-m", "teamsync", "--dir", str(memdir), "pull"]
    try:
        proc = subprocess.run(
            cmd,
            cwd=settings.cwd,
            env=no_git_env(settings.environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=SESSION_PULL_TIMEOUT,
            check=False,
        )
        err.write(proc.stdout + proc.stderr)
    except subprocess.TimeoutExpired:
        err.write(f"teamsync: pull still running after {SESSION_PULL_TIMEOUT:.0f} s; gave up\n")
    return 0


def post_tool_use(settings: Settings, payload: dict[str, Any]) -> int:
    from teamsync.hooks.deferred import write_due
    from teamsync.hooks.guard import classify

    tool_input = payload.get("tool_input")
    file_path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    memdir = _configured_memdir(settings)
    if not isinstance(file_path, str) or memdir is None:
        return 0
    target = classify(file_path, str(settings.cwd), memdir / "team")
    if target is None or target.problem is not None:
        return 0
    name = job_name("push", str(memdir))
    state = _hooks_state(settings)
    due_file, lock = state / f"{name}.due", FileLock(state / f"{name}.lock")
    write_due(due_file, time.time() + PUSH_DEBOUNCE)
    if not lock.try_acquire():
        return 0  # a waiter is already running; it sees the new due time
    args = [str(memdir), str(due_file), str(lock.path), str(lock.fileno())]
    pid = spawn(
        args,
        cwd=settings.cwd,
        log=state / f"{name}.log",
        environ=settings.environ,
        module="teamsync.hooks.deferred",
        pass_fds=(lock.fileno(),),
    )
    lock.hand_over(pid)
    return 0


def stop(settings: Settings, payload: dict[str, Any], err: TextIO) -> int:
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not Path(transcript).is_file():
        return 0
    name = job_name("extract", transcript)
    state = _hooks_state(settings)
    lock = FileLock(state / f"{name}.lock")
    if not lock.try_acquire():
        return 0  # an extraction of this transcript is still running
    args = ["--dir", str(settings.dir)] if settings.dir is not None else []
    pid = spawn(
        [*args, "extract", transcript],
        cwd=settings.cwd,
        log=state / "extract.log",
        environ=settings.environ,
        pass_fds=(lock.fileno(),),  # the extraction holds the lock until it exits
    )
    lock.hand_over(pid)
    return 0


def git_pull(settings: Settings, err: TextIO) -> int:
    memdir = _configured_memdir(settings)
    if memdir is None:
        return 0
    name = job_name("pull", str(memdir))
    state = _hooks_state(settings)
    stamp = state / f"{name}.stamp"
    try:
        if time.time() - stamp.stat().st_mtime < PULL_MIN_INTERVAL:
            return 0
    except FileNotFoundError:
        pass
    state.mkdir(parents=True, exist_ok=True)
    stamp.touch()
    log = state / f"{name}.log"
    spawn(["--dir", str(memdir), "pull"], cwd=settings.cwd, log=log, environ=settings.environ)
    err.write(f"teamsync: pulling team memory in the background (log: {log})\n")
    return 0


def run_event(settings: Settings, event: str, stdin: TextIO, out: TextIO, err: TextIO) -> int:
    """Handle one non-PreToolUse event; always 0 (hooks never fail their caller)."""
    if event in ("post-merge", "post-checkout"):
        return git_pull(settings, err)
    payload = _payload(stdin.read(), err)
    settings = _settings_for(settings, payload)
    if event == "SessionStart":
        return session_start(settings, err)
    if event == "PostToolUse" and payload.get("tool_name") in ("Write", "Edit", "MultiEdit"):
        return post_tool_use(settings, payload)
    if event == "Stop":
        return stop(settings, payload, err)
    return 0
