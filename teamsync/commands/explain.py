"""``teamsync status --explain KEY``: what the next sync would do with one memory, and why.

The answer is the entry of the plan that ``status`` and ``--dry-run`` show
(:mod:`teamsync.sync.decide`), read from one dry run: one answer to "why
wasn't my file synced?". Exit 0 when the key is explained, 1 when no side
knows it.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from teamsync.config import Settings
from teamsync.output import Output
from teamsync.security.names import printable
from teamsync.sync.decide import Entry


def normalise_key(key: str) -> str:
    """``KEY`` as the plan names it: a path in ``team/`` (``team/`` and ``./`` dropped)."""
    parts = [p for p in PurePosixPath(key.replace("\\", "/")).parts if p not in (".", "/")]
    if parts and parts[0] == "team":
        parts = parts[1:]
    return "/".join(parts)


def explain(settings: Settings, output: Output, key: str) -> int:
    """Print the plan entry of ``key`` (JSON: the entry itself); see the module docstring."""
    from teamsync.commands.sync import sync_once

    report = sync_once(settings, mode="status", dry_run=True)
    wanted = normalise_key(key)
    entry: Entry | None = None if report.plan is None else report.plan.get(wanted)
    stop = None if report.stop is None else report.stop.to_json()
    shown = printable(f"team/{wanted}")
    if report.stop is not None:
        output.warn(f"sync would stop before any write: {report.stop.message}")
    if entry is None:
        output.error(
            f"{shown}: no such memory here, in the last sync's record or on the remote "
            "(keys are paths in team/, e.g. `teamsync status --explain notes/deploy.md`; "
            "`teamsync status` lists what would change)"
        )
        output.emit({"key": wanted, "entry": None, "stopped": stop})
        return 1
    output.info(f"{shown}: {entry.action.replace('_', ' ')} ({entry.code})")
    output.info(f"  {printable(entry.why)}")
    sides = (("base", entry.base), ("here", entry.local), ("remote", entry.remote))
    output.info("  " + "  ".join(f"{name} {_short(c)}" for name, c in sides))
    output.emit({"key": wanted, "entry": entry.to_json(), "stopped": stop})
    return 0


def _short(checksum: str | None) -> str:
    return "(none)" if checksum is None else checksum.removeprefix("sha256:")[:12]
