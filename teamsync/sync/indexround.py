"""``MEMORY.md`` in a round: planned on the shared view while files are held back
here, settled before a sync sends anything, fixed after a round wrote files.

Every fix is lossless (:func:`teamsync.sync.local.fix_index`): only entries for
new files are added and dead ones removed, and a backup goes to the state dir.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Mapping, Sequence

from teamsync.errors import TeamsyncError
from teamsync.memdir.format import INDEX_NAME
from teamsync.sync.base import checksum
from teamsync.sync.context import RunContext
from teamsync.sync.indexview import view_of
from teamsync.sync.local import LocalTree, fix_index, read_memory
from teamsync.sync.report import LocalWrite, gate_reason

TeamIndex = Callable[[], "str | None"]


def view_index(
    ctx: RunContext,
    local: LocalTree,
    remote: Mapping[str, str],
    team_index: TeamIndex = lambda: None,
) -> None:
    """Plan this round on the shared view of ``MEMORY.md`` when files are held back here.

    A held file is one this side cannot send: refused by the gate (a secret)
    or not syncable at all (``local.rejected``). Its entry lines that were
    never shared stay in the local index and are not sent
    (:mod:`teamsync.sync.indexview`); ``local.checksums`` gets the shared
    view's checksum for the index. ``team_index`` gives the remote's index
    text (asked only when a file is held here).
    """
    ctx.index, ctx.held = None, frozenset()
    base = ctx.state.checksums()
    texts = {}
    for key, sum_ in local.checksums.items():
        if key == INDEX_NAME or sum_ in (remote.get(key), base.get(key)):
            continue  # the base and the remote never hold a secret: nothing to gate
        with contextlib.suppress(OSError, TeamsyncError):
            texts[key] = read_memory(ctx.team, key)
    ctx.held = frozenset(set(local.rejected) | set(ctx.gate.outgoing(texts)))
    if not ctx.held or INDEX_NAME not in local.checksums:
        return
    try:
        full = read_memory(ctx.team, INDEX_NAME)
    except (OSError, TeamsyncError):
        return
    if checksum(full) != local.checksums[INDEX_NAME]:
        return  # changed since the scan: the next run sees it
    if remote.get(INDEX_NAME) is None:
        theirs = None
    elif remote.get(INDEX_NAME) == base.get(INDEX_NAME):
        theirs = ctx.state.content(INDEX_NAME)
    else:
        theirs = team_index()
    before = (ctx.state.content(INDEX_NAME) if INDEX_NAME in base else None) or ""
    ctx.index = view_of(full, ctx.held, theirs, remote.keys(), before)
    if ctx.index is not None:
        local.checksums[INDEX_NAME] = ctx.index.shared_sum


def settle_index(
    ctx: RunContext,
    local: LocalTree,
    remote: Mapping[str, str],
    team_index: TeamIndex = lambda: None,
) -> bool:
    """Before a sync sends anything: bring ``MEMORY.md`` in line with the local files.

    The same lossless fix as after a pull, so the index a teammate receives already
    lists what it receives, and no side has an entry to add or remove after the other
    (the sync settles in one round). Returns True when the index was rewritten (the
    caller plans again).
    """
    if INDEX_NAME not in local.checksums:
        return False
    try:
        # entries only for what this side brings: the remote's index answers for the rest
        keys = local.checksums.keys() - ctx.held - remote.keys()
        if not fix_index(ctx.team, keys, ctx.backups, present=local.checksums.keys() | remote):
            return False
        local.checksums[INDEX_NAME] = checksum(read_memory(ctx.team, INDEX_NAME))
    except (OSError, TeamsyncError) as exc:
        why = f"index not regenerated: {gate_reason(exc)}"
        ctx.report.reject(INDEX_NAME, why, code="index-not-fixed")
        return False
    ctx.report.add(ctx.report.written, [INDEX_NAME])
    view_index(ctx, local, remote, team_index)
    return True


def fix_after(
    ctx: RunContext,
    writes: Sequence[LocalWrite],
    local: Mapping[str, str],
    remote_keys: Collection[str] = (),
) -> bool:
    """Fix ``MEMORY.md``'s owned entries when this round changed the files or the index.

    A file held back here that the remote lacks gets no entry (its name is not
    the team's); one the remote has is listed as the remote's file.
    """
    created = {w.key for w in writes if w.touch and w.text is not None and w.key not in local}
    deleted = {w.key for w in writes if w.kind == "delete"}
    if not (created or deleted or any(w.key == INDEX_NAME and w.touch for w in writes)):
        return False
    keys = (set(local) | created) - deleted - (ctx.held - set(remote_keys))
    try:
        changed = fix_index(ctx.team, keys, ctx.backups)
    except TeamsyncError as exc:
        why = f"index not regenerated: {gate_reason(exc)}"
        ctx.report.reject(INDEX_NAME, why, code="index-not-fixed")
        return False
    if changed:
        ctx.report.add(ctx.report.written, [INDEX_NAME])
    return changed
