"""``teamsync watch``: keep the team directory in sync while it runs (foreground).

Wires :class:`teamsync.hooks.watch.Watcher` to the real sync commands
(:func:`teamsync.commands.sync.run` in push and pull mode), the wall clock,
the team directory and the configuration files.
"""

from __future__ import annotations

import os
import time
from collections.abc import Hashable
from pathlib import Path

from teamsync.config import Settings
from teamsync.errors import ConfigError
from teamsync.hooks.watch import SyncOps, Timing, Watcher, run_loop
from teamsync.memdir.paths import working_memory_dir
from teamsync.output import Output
from teamsync.sync.config import config_path, load_config


def _mtime(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def config_stamp(memdir: Path) -> Hashable:
    """The mtimes of the config file and of its token file (an auth fix changes one)."""
    paths = [config_path(memdir)]
    try:
        token_file = load_config(memdir).token_file
    except ConfigError:
        token_file = None
    if token_file:
        paths.append(Path(token_file).expanduser())
    return tuple((str(p), _mtime(p)) for p in paths)


def sync_ops(settings: Settings, output: Output, memdir: Path) -> SyncOps:
    """The real push/pull (one engine run each), config stamp and timestamped log."""
    from teamsync.commands.sync import run

    # Each sync run prints human lines only (to stderr under --json): the one JSON
    # object on stdout is watch's own summary.
    runs = Output(
        json_mode=False,
        color=output.err_color
        if output.json_mode and output.err_color is not None
        else output.color,
        out=output.err if output.json_mode else output.out,
        err=output.err,
        err_color=output.err_color,
        quiet=output.quiet,
        verbose=output.verbose,
    )

    def log(message: str) -> None:
        output.info(f"[{time.strftime('%H:%M:%S')}] {message}")

    return SyncOps(
        push=lambda: run(settings, runs, mode="push"),
        pull=lambda: run(settings, runs, mode="pull"),
        config_stamp=lambda: config_stamp(memdir),
        log=log,
    )


def watch(
    settings: Settings,
    output: Output,
    *,
    debounce: float,
    pull_interval: float,
    retry_base: float,
    poll: bool,
) -> int:
    """Run until SIGINT/SIGTERM; return 0 after a clean shutdown."""
    memdir = working_memory_dir(settings)
    load_config(memdir)  # a clear ConfigError before anything starts
    team = memdir / "team"
    team.mkdir(parents=True, exist_ok=True)
    ops = sync_ops(settings, output, memdir)
    timing = Timing(debounce=debounce, pull_interval=pull_interval, retry_base=retry_base)
    watcher = Watcher(ops, time.monotonic, timing)
    ops.log(f"watching {team} (push {debounce:g} s after a change, pull every {pull_interval:g} s)")
    mode = run_loop(watcher, team, poll=poll)
    ops.log(f"stopped ({mode}): {watcher.pushes} push(es), {watcher.pulls} pull(s)")
    output.emit(
        {
            "mode": mode,
            "pushes": watcher.pushes,
            "pulls": watcher.pulls,
            "suspended": watcher.suspended,
        }
    )
    return 0
