"""The CLI's fast no-op path for ``teamsync [--json] [-q] [--dir D] [--color C] sync``
(and ``status``, ``pull``, ``push``) on the git backend.

Most syncs change nothing, and then a full run spends its time starting
Python and importing click, the engine and GitPython. :func:`fast_sync` runs
first, before any of those is imported (as :func:`teamsync.commands.guard.fast_guard`
does for the write guard): it asks :func:`teamsync.sync.noop.noop_version`
whether the last full run's no-op certificate still holds, which costs a few
reads and one ``git ls-remote``. When it does, it prints exactly what the full
path prints for a no-op (the same lines, the same ``--json`` object, exit 0);
otherwise it returns None and the full path runs. Set
``TEAMSYNC_NO_FAST_PATH=1`` to always take the full path.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

UP_TO_DATE = "Already up to date."
"""What a no-op ``sync``, ``pull`` or ``push`` prints (:mod:`teamsync.commands.sync` too)."""
STATUS_CLEAN = "Up to date: nothing to pull or push."
"""What a no-op ``status`` prints."""
VERBS = frozenset({"sync", "status", "pull", "push"})
_COLORS = ("auto", "always", "never")


def noop_json(dry_run: bool) -> dict[str, object]:
    """``SyncReport.to_json()`` of a run that did nothing (a test keeps the two equal)."""
    return {
        "written": [],
        "deleted": [],
        "conflicts": [],
        "rejected": [],
        "pushed": [],
        "remote_deleted": [],
        "merged": [],
        "held_back": [],
        "unknown": [],
        "stopped": None,
        "recovered": [],
        "renamed": [],
        "index_conflicts": [],
        "dry_run": dry_run,
        **({"plan": []} if dry_run else {}),  # status: the plan of a no-op has no entry
    }


class _Options(NamedTuple):
    verb: str
    json: bool
    quiet: bool
    memdir: str | None
    color: str


class _Places(NamedTuple):
    """What :func:`teamsync.memdir.paths.memory_dir` reads, as :class:`~teamsync.config.Settings`
    would hold it, without the dataclass machinery."""

    dir: Path | None
    cwd: Path
    environ: Mapping[str, str]

    @property
    def home(self) -> Path:
        return Path(self.environ.get("HOME") or str(Path.home()))


def parse(args: Sequence[str]) -> _Options | None:
    """The global options and the verb, when ``args`` are a form the fast path serves."""
    if not args or args[-1] not in VERBS:
        return None
    json_mode = quiet = False
    memdir: str | None = None
    color = "auto"
    rest = list(args[:-1])
    while rest:
        arg = rest.pop(0)
        if arg == "--json":
            json_mode = True
        elif arg in ("-q", "--quiet"):
            quiet = True
        elif arg in ("--dir", "--color") and rest:
            value = rest.pop(0)
            memdir, color = (value, color) if arg == "--dir" else (memdir, value)
        elif arg.startswith("--dir="):
            memdir = arg.partition("=")[2]
        elif arg.startswith("--color="):
            color = arg.partition("=")[2]
        else:
            return None
    if color not in _COLORS or memdir == "":
        return None
    return _Options(args[-1], json_mode, quiet, memdir, color)


def fast_sync(args: Sequence[str], environ: Mapping[str, str] | None = None) -> int | None:
    """Answer a no-op sync without the full machinery; None: run the full path."""
    env = dict(os.environ if environ is None else environ)
    options = parse(args)
    if options is None or env.get("TEAMSYNC_NO_FAST_PATH"):
        return None
    try:
        if not _is_noop(options, env):
            return None
    except KeyboardInterrupt:  # as the full path says it (teamsync.cli._errors)
        print("Interrupted.", file=sys.stderr)
        if options.json:
            import json

            error = {"error": {"kind": "interrupted", "message": "interrupted"}}
            print(json.dumps(error, indent=2))
        return 130
    except Exception:  # noqa: BLE001 - any doubt: the full path decides, and reports
        return None
    return _report(options, env)


def _is_noop(options: _Options, env: dict[str, str]) -> bool:
    from teamsync._env import xdg_dir
    from teamsync.memdir.paths import working_memory_dir
    from teamsync.sync.noop import noop_version

    chosen = options.memdir if options.memdir is not None else (env.get("TEAMSYNC_DIR") or None)
    where = Path(chosen).expanduser() if chosen is not None else None
    if options.memdir is not None and where is not None and where.exists() and not where.is_dir():
        return False  # click refuses a --dir that is a file: let it say so
    memdir = working_memory_dir(_Places(where, Path.cwd(), env))
    version = noop_version(
        memdir,
        state_dir=xdg_dir(env, "XDG_STATE_HOME", ".local/state"),
        cache_dir=xdg_dir(env, "XDG_CACHE_HOME", ".cache"),
        environ=env,
    )
    return version is not None


def _report(options: _Options, env: Mapping[str, str]) -> int:
    from teamsync._env import wants_color
    from teamsync.output import Output

    output = Output(
        json_mode=options.json,
        color=wants_color(sys.stdout.isatty(), options.color, env) and not options.json,
        err_color=wants_color(sys.stderr.isatty(), options.color, env),
        quiet=options.quiet,
    )
    try:
        if options.verb == "status":
            output.info(STATUS_CLEAN)
        else:
            output.success(UP_TO_DATE)
        output.emit(noop_json(options.verb == "status"))
    except BrokenPipeError:
        return 1
    return 0
