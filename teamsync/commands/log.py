"""``teamsync log [KEY] [-n N]``: who changed what on the remote, and when.

REST reads the server's history view (the ``history`` extension: a plain
Claude Code server keeps none, and says so); git reads the sync branch's
commits; a memory store reads its ``memory_versions``, with ``created_by`` as
who. With ``--json`` one object: ``{"changes": [{at, who, key, action,
version, checksum}]}``, newest first.
"""

from __future__ import annotations

import time
from typing import Any

from teamsync.config import Settings
from teamsync.errors import UsageError
from teamsync.memdir.paths import working_memory_dir
from teamsync.output import Output
from teamsync.security.keys import key_problem
from teamsync.security.names import printable
from teamsync.sync.config import load_config
from teamsync.sync.history import DEFAULT_LIMIT, Change


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


def _short(version: str) -> str:
    """A git sha's first 12 digits; a memory-store version id whole (it is what --at takes)."""
    shown = printable(version)
    return shown if shown.startswith("memver_") else shown[:12]


def _row(c: Change) -> dict[str, Any]:
    return {
        "at": _when(c.at),
        "who": c.who,
        "key": c.key,
        "action": c.action,
        "version": c.version,
        "checksum": c.checksum,
    }


def changes(settings: Settings, key: str | None, limit: int = DEFAULT_LIMIT) -> list[Change]:
    """The library entry point: the newest ``limit`` changes (of ``key``), newest first."""
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    if key is not None and key_problem(key) is not None:
        raise UsageError(f"{printable(key)!r} is not a memory key: {key_problem(key)}")
    from teamsync.commands.sync import open_backend

    backend = open_backend(load_config(working_memory_dir(settings)), settings)
    try:
        from teamsync.sync.base import Logs

        if not isinstance(backend, Logs):
            raise UsageError(f"the {backend.name} backend has no history to show")
        return backend.log(key, limit)
    finally:
        backend.close()


def run_log(settings: Settings, output: Output, key: str | None, *, limit: int) -> int:
    rows = changes(settings, key, limit)
    if not rows:
        output.info("No changes recorded" + (f" for team/{printable(key)}." if key else "."))
    for c in rows:
        verb = "deleted" if c.action == "delete" else "changed"
        output.info(
            f"{_when(c.at)}  {printable(c.who)[:40]}  {verb} team/{printable(c.key)}  "
            f"({_short(c.version)})"
        )
    output.emit({"changes": [_row(c) for c in rows]})
    return 0
