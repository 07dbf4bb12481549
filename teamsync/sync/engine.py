"""The sync engine: one reconciliation loop over any :class:`~teamsync.sync.base.Backend`.

A run is a few *rounds*. Each round:

1. ``backend.snapshot()`` (remote keys and checksums), a scan of ``team/``
   (checksums, stat-cached) and the base store give three maps;
2. :func:`teamsync.sync.plan.plan` turns them into steps;
3. incoming steps are applied locally through the write guard (every pulled
   key validated, every pulled text scanned), in batches: the base advances
   after each batch is durable;
4. outgoing steps are gated the same way and sent as one
   :class:`~teamsync.sync.base.ChangeSet` with per-key and store preconditions.
   :class:`~teamsync.sync.base.PreconditionFailed` starts another round.

Merges and conflict copies are written locally in one round and pushed in the
next (``sync`` mode), so a crash between the two loses nothing: the result is
an ordinary local change. The engine never imports GitPython or httpx2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from teamsync.errors import ConflictError
from teamsync.security.fs import SafeDir
from teamsync.sync.apply import Applier
from teamsync.sync.base import Applied, Backend
from teamsync.sync.local import scan_local
from teamsync.sync.plan import INCOMING, MERGE, OUTGOING, PULL, plan
from teamsync.sync.report import Conflict, Progress, Rejection, SyncReport
from teamsync.sync.state import BaseStore

Mode = Literal["pull", "push", "sync", "status"]
MAX_ROUNDS = 5
"""Bounded retries: snapshot + reconcile + push at most this many times per run."""

__all__ = ["Conflict", "Mode", "Progress", "Rejection", "SyncReport", "run_sync"]


def _allowed(mode: Mode) -> frozenset[str]:
    if mode == "pull":
        return INCOMING
    if mode == "push":
        return OUTGOING | {"adopt", "forget", MERGE}
    return INCOMING | OUTGOING


def run_sync(
    team: SafeDir,
    backend: Backend,
    state: BaseStore,
    *,
    mode: Mode,
    dry_run: bool,
    who: str,
    now: float,
    freshness_dir: Path | None = None,
    progress: Progress | None = None,
    allowlist: frozenset[str] = frozenset(),
) -> SyncReport:
    """Reconcile ``team`` with ``backend``; see the module docstring.

    ``status`` is a dry-run ``sync``. ``freshness_dir`` (the user's state dir)
    receives each pulled file's remote change time. ``allowlist`` holds the
    reviewed allowlist's fingerprints: the only findings the gates let through.
    """
    dry = dry_run or mode == "status"
    report = SyncReport(mode=mode, dry_run=dry)
    applier = Applier(
        team, state, report, who=who, now=now, freshness_dir=freshness_dir, allowlist=allowlist
    )
    outcome = "more"
    for _ in range(MAX_ROUNDS):
        outcome = _round(applier, backend, mode, dry, progress)
        if outcome == "done":
            break
    if outcome == "again":
        raise ConflictError(
            f"the remote kept changing during {MAX_ROUNDS} attempts; run the command again"
        )
    return report


def _round(
    applier: Applier, backend: Backend, mode: Mode, dry: bool, progress: Progress | None
) -> str:
    """One snapshot-plan-apply-push round: ``done``, ``again`` (precondition) or ``more``."""
    snap = backend.snapshot()
    applier.report.version = snap.version
    local = scan_local(applier.team, applier.state, clean=not dry)
    applier.note_rejected(snap.rejected, local.rejected)
    skip = set(snap.rejected) | set(local.rejected)
    allowed = _allowed(mode)
    steps = [
        s
        for s in plan(applier.state.checksums(), local.checksums, snap.checksums, skip=skip)
        if s.action in allowed
    ]
    incoming = [s for s in steps if s.action in INCOMING]
    outgoing = [s for s in steps if s.action in OUTGOING]
    if mode == "push":
        incoming = applier.hold_merges(incoming)
    texts = backend.fetch([s.key for s in incoming if s.action in (PULL, MERGE)])
    writes = applier.prepare_incoming(
        incoming,
        texts,
        snap.changed_at,
        local.checksums,
        snap.checksums.keys() | snap.rejected.keys(),
    )
    changes = applier.prepare_outgoing(outgoing, snap.version, dry)
    if dry:
        applier.report_planned(writes, changes)
        return "done"
    total = sum(1 for w in writes if w.touch) + len(changes.upserts) + len(changes.deletes)
    if progress is not None:
        progress.start(total)
    more = applier.apply_local(writes, progress)
    more = applier.fix_index(writes, local.checksums) or more
    if changes.upserts or changes.deletes:
        result = backend.apply(changes)
        if not isinstance(result, Applied):
            return "again"
        applier.pushed(changes, result)
        if progress is not None:
            progress.advance(len(changes.upserts) + len(changes.deletes))
    return "more" if more and mode == "sync" else "done"
