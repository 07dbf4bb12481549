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

Before step 3 the guards (:mod:`teamsync.sync.guards`) may stop the run with
nothing changed: when the remote lost history (missing, empty, or older than
the :class:`~teamsync.sync.state.RemoteMark` the base recorded at the last
sync) and when the plan would delete or revert too much. Local paths that
could not be listed are *unknown*: nothing at or below them is planned. A
completed round records the remote's new mark.

Merges and conflict copies are written locally in one round and pushed in the
next (``sync`` mode), so a crash between the two loses nothing: the result is
an ordinary local change. The engine never imports GitPython or httpx2.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from teamsync.errors import ConflictError
from teamsync.memdir.format import INDEX_NAME
from teamsync.security.fs import SafeDir
from teamsync.sync import context
from teamsync.sync import decide as d
from teamsync.sync.apply import Applier
from teamsync.sync.base import Applied, Backend, ChangeSet, Snapshot, check_backend
from teamsync.sync.guards import (
    Safety,
    Stop,
    lost_history,
    mass_change,
    missing_here,
    restore_local,
    restore_plan,
)
from teamsync.sync.incoming import prepare_incoming
from teamsync.sync.indexround import fix_after, settle_index, view_index
from teamsync.sync.local import LocalTree, scan_local
from teamsync.sync.outgoing import prepare_outgoing
from teamsync.sync.plan import MERGE, PULL, Step, plan
from teamsync.sync.recover import recover_bases
from teamsync.sync.renames import find_renames, make_moves, preview, redo_renames, renames_in
from teamsync.sync.report import Conflict, Progress, Rejection, SyncReport
from teamsync.sync.retry import Backoff
from teamsync.sync.state import BaseStore, RemoteMark
from teamsync.sync.tombstones import tombstoned_bases

Mode = Literal["pull", "push", "sync", "status"]
INCOMING_ACTIONS = frozenset({d.RECORD, d.WRITE_HERE, d.DELETE_HERE, d.MERGE})
OUTGOING_ACTIONS = frozenset({d.PUSH, d.DELETE_REMOTE})
MAX_ROUNDS = 5
"""Rounds that only carry this run's own merges and copies to the remote, at most."""

__all__ = ["Conflict", "Mode", "Progress", "Rejection", "Safety", "SyncReport", "run_sync"]


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
    safety: Safety | None = None,
    where: str = "the remote",
    backoff: Backoff | None = None,
    allowlist: frozenset[str] = frozenset(),
) -> SyncReport:
    """Reconcile ``team`` with ``backend``; see the module docstring.

    ``status`` is a dry-run ``sync``. ``freshness_dir`` (the user's state dir)
    receives each pulled file's remote change time. ``safety`` says which
    guards the person chose to go past; ``where`` names the remote in messages.
    A remote that moved under a push is retried with ``backoff`` (jittered)
    until its deadline. ``allowlist`` holds the reviewed allowlist's
    fingerprints: the only findings the gates let through.
    """
    dry = dry_run or mode == "status"
    report = SyncReport(mode=mode, dry_run=dry)
    applier = Applier(
        context.RunContext(
            team,
            state,
            report,
            who=who,
            now=now,
            freshness_dir=freshness_dir,
            allowlist=allowlist,
            progress=None if dry else progress,
        )
    )
    check_backend(backend)  # a wrapper that drops a member would drop its safety check
    backend.use_cache(state)  # REST: the listing and its ETag outlive the run (one 304 next time)
    run = _Run(applier, backend, mode, dry, progress, safety or Safety(), where)
    backoff = backoff or Backoff()
    rounds = 0
    while rounds < MAX_ROUNDS:
        outcome = run.round()
        if outcome in ("done", "stopped"):
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


class _Run:
    """One run's fixed inputs; :meth:`round` is one snapshot-plan-apply-push round."""

    def __init__(
        self,
        applier: Applier,
        backend: Backend,
        mode: Mode,
        dry: bool,
        progress: Progress | None,
        safety: Safety,
        where: str,
    ) -> None:
        self.applier, self.backend, self.mode, self.dry = applier, backend, mode, dry
        self.progress, self.safety, self.where = progress, safety, where
        self.hold: set[str] = set()
        """Keys this round leaves alone (push: a rename for ``sync`` to follow)."""
        self.hold_why: dict[str, str] = {}
        """Why, for each key of :attr:`hold`."""
        self.plan_base: Mapping[str, str] = {}
        """The base this round was planned on (the store's, with recovered bases)."""
        self.lost: Stop | None | bool = True
        """This round's lost-history verdict (True: not judged yet)."""

    def round(self) -> str:
        """``done``, ``again`` (precondition failed), ``more`` or ``stopped`` (a guard).

        A case-only rename racing an edit is lined up first (:mod:`teamsync.sync.renames`),
        but only once the guards have seen the round as it would be with the moves made:
        a stop moves nothing. ``push`` never moves a local file: such a pair is held
        back for ``sync``. This side's own renames undone for the round are put back
        whatever happens.
        """
        applier, backend, mode, dry = self.applier, self.backend, self.mode, self.dry
        state = applier.state
        snap = backend.snapshot()
        applier.report.version = snap.version
        local = scan_local(applier.team, state, clean=not dry)
        applier.report.note_rejected(snap.rejected, local.rejected)
        applier.report.note_unknown(local.unknown, state.checksums())
        self.hold, self.hold_why, self.lost = set(), {}, True
        if dry:
            return self._rest(snap, local)
        skip = set(snap.rejected) | set(local.rejected)
        base = state.checksums()
        moves = find_renames(base, local.checksums, snap.checksums, skip, local.unknown)
        if moves:
            after, after_base = preview(moves, local.checksums, base)
            verdict = self._plan(snap, local, after, after_base)
            if isinstance(verdict, Stop):
                applier.report.stop = verdict
                return "stopped"
        if moves and mode == "push":
            for m in moves:
                why = (
                    f"the team renamed it ({m.old} and {m.new} are one memory) while it "
                    "changed here: run `teamsync sync` to follow the rename"
                )
                self.hold |= {m.old, m.new}
                self.hold_why.update({m.old: why, m.new: why})
                applier.report.reject(m.source, why, held=True, code="rename-pending")
            moves = []
        moved = make_moves(applier.team, state, moves, local.checksums, base)
        applier.report.add(applier.report.renamed, [f"{o} -> {n}" for o, n in moved.followed])
        state.record_renames((o, n, local.checksums[n]) for o, n in moved.followed)
        try:
            outcome = self._rest(snap, local)
        finally:
            put_back = redo_renames(applier.team, state, moved.redo)
        return "more" if put_back and outcome == "done" and mode == "sync" else outcome

    def _rest(self, snap: Snapshot, local: LocalTree) -> str:
        """The round after the scan: decide (:mod:`teamsync.sync.decide`), pull, push."""
        ctx, backend, report = self.applier.ctx, self.backend, self.applier.report
        remote = {**snap.rejected, **snap.checksums}  # a refused remote name is taken too
        early: dict[str, str] = {}

        def team_index() -> str | None:
            if INDEX_NAME not in early and INDEX_NAME in snap.checksums:
                early.update(backend.fetch([INDEX_NAME]))
            return early.get(INDEX_NAME)

        view_index(ctx, local, remote, team_index)
        steps = self._plan(snap, local)
        if not isinstance(steps, Stop) and self._settles(local):
            if settle_index(ctx, local, remote, team_index):
                steps = self._plan(snap, local)
        if isinstance(steps, Stop):
            report.stop = steps
            report.plan = d.decide(self._view(snap, local))
            return "stopped"
        plan = d.decide(self._view(snap, local), steps)
        for e in plan.holds(before_fetch=True):
            report.reject(e.key, e.why, held=True, code=e.code)
        try:
            return self._execute(plan, snap, local, early)
        finally:
            report.plan = d.settle(plan, report.outcomes())

    def _settles(self, local: LocalTree) -> bool:
        """Does this round settle ``MEMORY.md`` before sending (see :func:`settle_index`)?"""
        return self.mode == "sync" and not self.dry and not local.unknown

    def _view(self, snap: Snapshot, local: LocalTree) -> d.View:
        """The plain data this round decides on."""
        return d.View(
            base=self.plan_base,
            local=local.checksums,
            remote=snap.checksums,
            remote_refused=snap.rejected,
            local_refused=local.rejected,
            unknown=local.unknown,
            hold=self.hold_why,
            gate_refused=self.applier.ctx.gate.refused_now(local.checksums),
            mode=self.mode,
        )

    def _execute(
        self, plan: d.Plan, snap: Snapshot, local: LocalTree, early: dict[str, str]
    ) -> str:
        """Carry ``plan`` out: fetch, prepare and apply the local writes, then push."""
        ctx, backend, report = self.applier.ctx, self.backend, self.applier.report
        incoming, outgoing = plan.steps(INCOMING_ACTIONS), plan.steps(OUTGOING_ACTIONS)
        wanted = [s.key for s in incoming if s.action in (PULL, MERGE)]
        texts = {**backend.fetch([k for k in wanted if k not in early]), **early}
        refused = backend.refused_on_fetch
        report.note_rejected({k: r for k, r in refused.items() if k not in snap.rejected}, {})
        for e in plan.holds(before_fetch=False):
            report.reject(e.key, e.why, held=e.action != d.REFUSE, code=e.code)
        names = snap.checksums.keys() | snap.rejected.keys()
        writes = prepare_incoming(ctx, incoming, texts, snap.changed_at, local.checksums, names)
        changes = prepare_outgoing(ctx, outgoing, snap.version)
        if self.dry:
            self.applier.report_planned(writes, changes)
            return "done"
        total = sum(1 for w in writes if w.touch) + len(changes.upserts) + len(changes.deletes)
        if self.progress is not None:
            self.progress.start(total)
        more = self.applier.apply_local(writes, self.progress)
        ctx.state.record_renames(
            (old, new, c)
            for old, new, c in renames_in(incoming, incoming=True)
            if old in report.deleted and new in report.written
        )
        if not local.unknown:  # an index rebuilt without the unknown folder would drop it
            more = fix_after(ctx, writes, local.checksums, names) or more
        outcome = self._push(snap, outgoing, changes)
        if outcome == "again":
            return outcome
        return "more" if more and self.mode == "sync" else "done"

    def _push(self, snap: Snapshot, outgoing: list[Step], changes: ChangeSet) -> str:
        """Send ``changes`` (if any) and record the remote's new mark; ``again`` when the
        remote moved under the push."""
        state, applier = self.applier.state, self.applier
        mark = RemoteMark(snap.version, snap.serial)
        if changes.upserts or changes.deletes:
            result = self.backend.apply(changes)
            if not isinstance(result, Applied):
                return "again"
            changes = _without_held(applier, changes, result)
            applier.pushed(changes, result)
            state.record_renames(
                (old, new, c)
                for old, new, c in renames_in(outgoing, incoming=False)
                if old in changes.deletes and new in changes.upserts
            )
            mark = RemoteMark(result.version, result.serial)
            if self.progress is not None:
                self.progress.advance(len(changes.upserts) + len(changes.deletes))
        state.set_remote_mark(mark)
        return "done"

    def _plan(
        self,
        snap: Snapshot,
        local: LocalTree,
        sums: Mapping[str, str] | None = None,
        moved_base: Mapping[str, str] | None = None,
    ) -> list[Step] | Stop:
        """The allowed steps of this round, or the guard that stops it.

        ``sums`` and ``moved_base`` preview the round with its rename moves made
        (:func:`teamsync.sync.renames.preview`); the remote's history is judged once per
        round, against the base as it was before any move.
        """
        state, safety = self.applier.state, self.safety
        real = state.checksums()
        base = real if moved_base is None else dict(moved_base)
        local_sums = local.checksums if sums is None else sums
        skip = set(snap.rejected) | set(local.rejected) | self.hold
        recovered, gone = self._proven_bases(snap, base, local_sums, skip)
        plan_base = {**base, **recovered, **gone}
        self.plan_base = plan_base
        steps = plan(plan_base, local_sums, snap.checksums, skip=skip, unknown=local.unknown)
        if self.lost is True:
            self.lost = lost_history(
                state.remote_mark(),
                real,
                snap,
                self.backend.descends_from,
                self.where,
                state.past_checksums,
            )
        lost = self.lost if isinstance(self.lost, Stop) else None
        if lost is not None:
            if safety.recover is None:
                self.backend.keep_listing_at_mark()  # the next run asks about the mark again
                return lost
            if safety.recover == "restore-remote":
                steps = restore_plan(
                    steps, base, state.past_checksums, snap.checksums, snap.changed_at
                )
        if safety.restore_local:
            steps = restore_local(steps)
        elif self.mode == "pull":
            stop = missing_here(steps, plan_base, safety, "pull")
            if stop is not None:
                return stop
        proven = {**recovered, **gone} if sums is None else {}
        return self._allowed_steps(steps, plan_base, lost, proven)

    def _proven_bases(
        self, snap: Snapshot, base: Mapping[str, str], local_sums: Mapping[str, str], skip: set[str]
    ) -> tuple[dict[str, str], dict[str, str]]:
        """Bases this round may take as synced: recovered from the remote's history, and
        tombstoned copies whose bytes are exactly the deleted version."""
        state = self.applier.state
        history = self.backend.past_checksums if snap.version is not None else None  # empty: none
        renamed = state.renamed_keys()

        def synced_here(key: str) -> bool:
            return key in renamed or bool(state.past_checksums(key))

        gone = tombstoned_bases(
            snap.deleted_sums, base, local_sums, snap.checksums, synced_here, state.known_checksums
        )
        recovered = recover_bases(
            base,
            local_sums,
            snap.checksums,
            history,
            # a held file's bytes were never shared: no history to ask; a tombstoned
            # copy is already proven
            skip | self.applier.ctx.held | set(gone),
            synced_here=synced_here,
            known=state.known_checksums,
        )
        return recovered, gone

    def _allowed_steps(
        self,
        steps: list[Step],
        plan_base: Mapping[str, str],
        lost: Stop | None,
        recovered: Mapping[str, str],
    ) -> list[Step] | Stop:
        """The steps this mode takes, unless the mass-change guard stops them; the
        ``recovered`` bases are reported."""
        state, report = self.applier.state, self.applier.report
        steps = [s for s in steps if s.action in d.allowed(self.mode)]
        if lost is None or self.safety.recover != "accept-remote":
            command = "sync" if self.mode == "status" else self.mode
            stop = mass_change(steps, plan_base, state.past_checksums, self.safety, command)
            if stop is not None:
                return stop
        report.add(report.recovered, sorted(recovered))
        return steps


def _without_held(applier: Applier, changes: ChangeSet, result: Applied) -> ChangeSet:
    """``changes`` minus the upserts the remote refused; those are reported as held back
    and stay local changes (the base does not advance for them)."""
    if not result.held:
        return changes
    for key, why in sorted(result.held.items()):
        why = f"not pushed: the remote refused it: {why}"
        applier.report.reject(key, why, held=True, code="remote-held")
    kept = {k: v for k, v in changes.upserts.items() if k not in result.held}
    return ChangeSet(
        kept,
        changes.deletes,
        changes.base_version,
        changes.base_checksums,
        changes.message,
        changes.modified,
    )
