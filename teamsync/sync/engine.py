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
   :class:`~teamsync.sync.base.PreconditionFailed` starts another round, after
   a jittered backoff (:mod:`teamsync.sync.retry`) while a deadline allows.

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
from teamsync.sync.recover import recover_bases
from teamsync.sync.report import Conflict, Progress, Rejection, SyncReport
from teamsync.sync.retry import Backoff
from teamsync.sync.state import BaseStore

Mode = Literal["pull", "push", "sync", "status"]
MAX_ROUNDS = 5
"""Rounds that only carry this run's own merges and copies to the remote, at most."""

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
    backoff: Backoff | None = None,
) -> SyncReport:
    """Reconcile ``team`` with ``backend``; see the module docstring.

    ``status`` is a dry-run ``sync``. ``freshness_dir`` (the user's state dir)
    receives each pulled file's remote change time. A remote that moved under
    a push is retried with ``backoff`` (jittered) until its deadline.
    """
    dry = dry_run or mode == "status"
    report = SyncReport(mode=mode, dry_run=dry)
    applier = Applier(team, state, report, who=who, now=now, freshness_dir=freshness_dir)
    backoff = backoff or Backoff()
    rounds = 0
    while rounds < MAX_ROUNDS:
        outcome = _round(applier, backend, mode, dry, progress)
        if outcome == "done":
            break
        if outcome == "more":
            rounds += 1
        elif not backoff.pause():
            raise ConflictError(
                f"the remote kept changing for {backoff.elapsed():.0f} s ({backoff.attempts + 1} "
                "attempts): teammates are pushing at the same moment. Nothing was lost and "
                "what could be pulled was written here; run the command again in a minute"
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
    base = applier.state.checksums()
    history = backend if snap.version is not None else None  # an empty remote has none
    recovered = recover_bases(base, local.checksums, snap.checksums, history, skip)
    applier.report.add(applier.report.recovered, sorted(recovered))
    steps = [
        s
        for s in plan({**base, **recovered}, local.checksums, snap.checksums, skip=skip)
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
