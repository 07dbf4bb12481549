"""``teamsync guard --event NAME``: teamsync's handlers for the other hook events.

Claude Code (payload as JSON on stdin):

* ``SessionStart``: ``teamsync pull`` in the foreground, its output on stderr
  (stdout of a SessionStart hook becomes model context), when the memory
  directory is set up for sync; otherwise nothing.
* ``PostToolUse`` on Write/Edit/MultiEdit of a team-memory file: a debounced
  background ``teamsync push`` (:mod:`teamsync.hooks.deferred`).
* ``Stop`` (opt-in, ``install-hooks --claude-code --with-extract``): ``teamsync
  extract <transcript_path>`` in the background, at most one per transcript at a
  time, and only when ``ANTHROPIC_API_KEY`` is set (it calls the Claude API).

git (``post-merge``, ``post-checkout``): a background ``teamsync pull`` when the
repository's memory directory is set up for sync, at most once a minute;
``post-checkout`` prints nothing.

Every handler answers at once, exits 0 and never blocks the caller; background
output goes to ``<state dir>/hooks/<job>.log``.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from teamsync.config import Settings

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any, TextIO

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
    import subprocess

    from teamsync.hooks.gitenv import no_git_env

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


def post_tool_use(
    settings: Settings, payload: dict[str, Any], out: TextIO, *, failed: bool = False
) -> int:
    """Check what the call changed (:mod:`teamsync.hooks.verify`), answer with Claude
    Code's blocking PostToolUse decision when something was moved or put back, and
    start a debounced push after a clean Write or Edit of a team memory.

    ``failed``: the ``PostToolUseFailure`` event (the tool failed, or was interrupted,
    after it started: a Bash command that exited non-zero may have written anyway).
    The same check runs at once instead of at the session's next call; the answer is
    the event's ``additionalContext``, and no push is started."""
    from teamsync.hooks.guard import EDIT_TOOLS, READ_ONLY_TOOLS, _tool_path, locate
    from teamsync.hooks.places import expand, resolve
    from teamsync.hooks.verify import answer_json, check, check_written

    tool = payload.get("tool_name")
    if not isinstance(tool, str) or tool in READ_ONLY_TOOLS:
        return 0
    places = resolve(settings, payload)
    tool_input = payload.get("tool_input")
    file_path = _tool_path(tool_input) if isinstance(tool_input, dict) else None
    target = None
    if tool in EDIT_TOOLS:
        if file_path is not None:
            target = locate(expand(file_path, places.cwd, places.home), places)
        messages = (
            check_written(places, payload, target.team, target.key)
            if target is not None and target.problem is None
            else []
        )
    else:
        messages = check(places, payload)
    if messages:
        out.write(answer_json(messages, failed=failed) + "\n")
        out.flush()
        return 0
    if target is not None and not failed and target.problem is None and tool != "NotebookEdit":
        _schedule_push(settings, target.team.parent)
    return 0


def _schedule_push(settings: Settings, memdir: Path) -> None:
    from teamsync._lock import FileLock
    from teamsync.hooks.background import job_name, spawn
    from teamsync.hooks.deferred import write_due
    from teamsync.limits import CONFIG_NAME

    if not (memdir / CONFIG_NAME).is_file():
        return
    name = job_name("push", str(memdir))
    state = _hooks_state(settings)
    due_file, lock = state / f"{name}.due", FileLock(state / f"{name}.lock")
    write_due(due_file, time.time() + PUSH_DEBOUNCE)
    if not lock.try_acquire():
        return  # a waiter is already running; it sees the new due time
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


def stop(settings: Settings, payload: dict[str, Any], err: TextIO) -> int:
    from teamsync._lock import FileLock
    from teamsync.hooks.background import job_name, spawn

    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not Path(transcript).is_file():
        return 0
    if not settings.environ.get("ANTHROPIC_API_KEY"):
        return 0  # extraction needs the (opt-in, paid) Claude API: nothing to start
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


def git_pull(settings: Settings, err: TextIO, *, quiet: bool = False) -> int:
    from teamsync.hooks.background import job_name, spawn

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
    if not quiet:
        err.write(f"teamsync: pulling team memory in the background (log: {log})\n")
    return 0


def run_event(settings: Settings, event: str, stdin: TextIO, out: TextIO, err: TextIO) -> int:
    """Handle one non-PreToolUse event; always 0 (hooks never fail their caller)."""
    if event in ("post-merge", "post-checkout"):
        # post-checkout runs on every `git checkout`/`switch`: it pulls without a word.
        return git_pull(settings, err, quiet=event == "post-checkout")
    payload = _payload(stdin.read(), err)
    if event in ("PostToolUse", "PostToolUseFailure"):  # the session's project, not the cwd
        failed = event == "PostToolUseFailure"
        try:
            return post_tool_use(settings, payload, out, failed=failed)
        except Exception as exc:  # noqa: BLE001 - say so; push still scans everything
            from teamsync.hooks.verify import answer_json

            err.write(f"teamsync guard: internal error after the call ({type(exc).__name__})\n")
            message = (
                "teamsync could not check what this call changed in team memory "
                f"({type(exc).__name__}); nothing it wrote there is shared until "
                "`teamsync push` has scanned it."
            )
            out.write(answer_json([message], failed=failed) + "\n")
            return 0
    settings = _settings_for(settings, payload)
    if event == "SessionStart":
        return session_start(settings, err)
    if event == "Stop":
        return stop(settings, payload, err)
    return 0
