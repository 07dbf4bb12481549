"""``teamsync restore KEY [--at VERSION] [--force] | restore --list``: bring a memory back.

Without ``--at``: what a sync removed or replaced here (offline, from the base
store). With ``--at``: the version a remote held (a git commit of the sync
branch, or a REST history id; both shown by ``teamsync log``), written as an
ordinary local change that the next sync shares.

Works offline: the versions come from this machine's base store for the
configured remote (see :mod:`teamsync.sync.restore`). With ``--json`` one
object: ``{"restored": {key, checksum, at, why, replaced, unchanged}}`` or
``{"versions": [{key, checksum, at, why}]}``.
"""

from __future__ import annotations

import time
from typing import Any

from teamsync.commands.sync import remote_id
from teamsync.config import Settings
from teamsync.errors import RestoreError
from teamsync.memdir.paths import working_memory_dir
from teamsync.output import Output
from teamsync.security.fs import SafeDir
from teamsync.security.names import printable
from teamsync.sync.base import checksum
from teamsync.sync.config import load_config
from teamsync.sync.restore import restore
from teamsync.sync.state import BaseStore, PastVersion


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


def _row(v: PastVersion) -> dict[str, Any]:
    return {"key": v.key, "checksum": v.checksum, "at": _when(v.at), "why": v.why}


def run_restore(
    settings: Settings,
    output: Output,
    key: str | None,
    *,
    force: bool = False,
    at: str | None = None,
) -> int:
    """Restore ``key`` (or, with ``key`` None, list what can be restored).

    ``at``: a remote version (git commit, REST history id, from `teamsync log`).
    """
    if at is not None and key is not None:
        return _restore_at(settings, output, key, at, force=force)
    memdir = working_memory_dir(settings)
    config = load_config(memdir)
    team = SafeDir(memdir / "team", create=True)
    try:
        state = BaseStore.open(settings.state_dir, team.root, remote_id(config))
        try:
            if key is None:
                return _list(output, state.past())
            done = restore(team, state, key, force=force)
        finally:
            state.close()
    finally:
        team.close()
    v = done.version
    where = printable(f"team/{key}")
    if done.unchanged:
        output.success(f"{where} already holds the version {v.why} on {_when(v.at)}.")
    else:
        output.success(
            f"restored {where} as it was before it was {v.why} on {_when(v.at)}"
            + (" (the content it replaced is kept: restore again to undo)" if done.replaced else "")
            + ". Run `teamsync sync` to share it again."
        )
    output.emit({"restored": {**_row(v), "replaced": done.replaced, "unchanged": done.unchanged}})
    return 0


def _restore_at(settings: Settings, output: Output, key: str, at: str, *, force: bool) -> int:
    from teamsync.commands.sync import open_backend, remote_id
    from teamsync.sync.restore import restore_remote

    memdir = working_memory_dir(settings)
    config = load_config(memdir)
    backend = open_backend(config, settings)
    try:
        from teamsync.sync.base import Logs

        if not isinstance(backend, Logs):
            raise RestoreError(f"the {backend.name} backend cannot restore remote versions")
        ref = at.strip()  # memory-store version ids (memver_…) are case-sensitive
        found = backend.version_at(key, ref if ref.startswith("memver_") else ref.lower())
    finally:
        backend.close()
    team = SafeDir(memdir / "team", create=True)
    try:
        state = BaseStore.open(settings.state_dir, team.root, remote_id(config))
        try:
            text, replaced, unchanged = restore_remote(team, state, found, force=force)
        finally:
            state.close()
    finally:
        team.close()
    where = printable(f"team/{key}")
    ref = printable(found.ref[:12])
    if unchanged:
        output.success(f"{where} already holds version {ref}.")
    else:
        output.success(
            f"restored {where} as of version {ref}"
            + (" (the content it replaced is kept: restore again to undo)" if replaced else "")
            + ". Run `teamsync sync` to share it again."
        )
    output.emit(
        {
            "restored": {
                "key": key,
                "version": found.ref,
                "checksum": checksum(text),
                "replaced": replaced,
                "unchanged": unchanged,
            }
        }
    )
    return 0


def _list(output: Output, versions: list[PastVersion]) -> int:
    newest: dict[str, PastVersion] = {}
    for v in versions:
        newest.setdefault(v.key, v)
    if not newest:
        output.info("Nothing to restore: no memory was deleted or replaced by a sync here.")
    for k in sorted(newest):
        v = newest[k]
        output.info(
            f"team/{printable(k)}  {v.why} {_when(v.at)}  (`teamsync restore {printable(k)}`)"
        )
    output.emit({"versions": [_row(v) for v in versions]})
    return 0
