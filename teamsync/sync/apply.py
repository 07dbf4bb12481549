"""Durable execution of a round's plan: local writes in batches, then the base.

The decisions are made before (:mod:`teamsync.sync.decide`), and the texts
prepared and gated (:mod:`teamsync.sync.incoming`, :mod:`teamsync.sync.outgoing`);
:class:`Applier` only carries them out, in the order the plan states
(:data:`teamsync.sync.decide.PHASES`): conflict copies, deletes here, the other
writes here, each phase durable before the next; the base store advances only
after a batch is durable, and the remote change set is sent after every local
write of the round.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from teamsync.errors import SyncError, TeamsyncError
from teamsync.memdir.freshness import content_time, record_changes
from teamsync.security.fs import WriteBatch
from teamsync.sync.base import Applied, ChangeSet, checksum
from teamsync.sync.context import RunContext
from teamsync.sync.decide import PHASES, WRITE_LATER, WRITE_ORDER
from teamsync.sync.plan import MERGE
from teamsync.sync.report import Conflict, LocalWrite, Progress, gate_reason
from teamsync.sync.state import RACY_NS, FileStat

BATCH = 1000
"""Local writes per durable batch: one barrier and one base-store transaction."""
MAX_DIRS = 64
"""Directories per batch (each is held open until the batch is durable)."""


class Applier:
    """Carries out one run's local writes and records what was pushed."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.team, self.state, self.report = ctx.team, ctx.state, ctx.report

    def apply_local(self, writes: Sequence[LocalWrite], progress: Progress | None) -> bool:
        """Apply ``writes`` in durable batches; advance the base after each batch.

        A batch (:func:`batches`) is written the way :meth:`SafeDir.batch
        <teamsync.security.fs.SafeDir.batch>` describes: every file to its own
        temp, one barrier for all their data, the re-checks and renames, the
        directory fsyncs, and only then one base-store transaction for the batch.
        Conflict copies are durable before the remote version takes their key's
        name, and deletes come before any new file (a case-only rename on a
        case-insensitive disk). Returns True when the writes created local
        changes to push (merges, copies).
        """
        more = False
        # Deletes before creations, across batches too: on a case-insensitive file
        # system, deleting 'Deploy.md' after writing 'deploy.md' deletes the new file.
        writes = sorted(writes, key=_phase)
        # Freshness records are hints outside the base's promise: one thread writes them
        # while the next batch is written.
        with ThreadPoolExecutor(max_workers=1) as hints:
            pending: list[Future[None]] = []
            for batch in batches(writes):
                # three phases, each durable before the next: conflict copies, deletes, the rest
                phases: list[list[LocalWrite]] = [[] for _ in PHASES[: WRITE_LATER + 1]]
                for w in batch:
                    phases[_phase(w)].append(w)
                done = [d for phase in phases if phase for d in self._apply_phase(phase)]
                self._commit(done)
                pending.append(hints.submit(self._record_freshness, [w for w, _ in done]))
                self._report_writes(w for w, _ in done if w.touch)
                more = more or any(w.kind in (MERGE, "copy") for w, _ in done)
                if progress is not None:
                    progress.advance(sum(1 for w in batch if w.touch))
            for future in pending:
                future.result()
        return more

    def _apply_phase(
        self, writes: Sequence[LocalWrite]
    ) -> list[tuple[LocalWrite, FileStat | None]]:
        """Write and delete ``writes`` as one durable batch; what was applied, with new stats."""
        done: list[tuple[LocalWrite, FileStat | None]] = [(w, None) for w in writes if not w.touch]
        touching = [w for w in writes if w.touch]
        staged: dict[str, FileStat] = {}
        placed: list[LocalWrite] = []
        with self.team.batch(len(touching)) as batch:
            for w in touching:
                if w.text is None:
                    continue
                # every text was passed through guard_write when it was prepared
                try:
                    staged[w.key] = FileStat.of(batch.stage_text(w.key, w.text, mtime=w.changed_at))
                except (TeamsyncError, OSError) as exc:
                    self.report.reject(
                        w.key, f"not written: {gate_reason(exc)}", code="not-written"
                    )
            _barrier(batch.durable)
            for w in touching:
                if w.text is not None and w.key not in staged:
                    continue
                try:
                    if not self._still_expected(batch, w):
                        batch.discard(w.key)
                        continue
                    if w.text is None:
                        batch.delete(w.key)
                    else:
                        batch.place(w.key, new=w.expect is None)
                except FileExistsError:  # a file appeared since the plan: the next run sees it
                    continue
                except (TeamsyncError, OSError) as exc:
                    batch.discard(w.key)
                    self.report.reject(
                        w.key, f"not written: {gate_reason(exc)}", code="not-written"
                    )
                    continue
                placed.append(w)
            _barrier(batch.finish)
        done.extend((w, staged.get(w.key)) for w in placed)
        return done

    def _still_expected(self, batch: WriteBatch, w: LocalWrite) -> bool:
        """Is the local file still what the plan saw (so ``w`` may replace or delete it)?"""
        current = batch.stat(w.key)
        if current is None:
            if w.expect is not None and w.kind != "delete":
                return False
        elif w.expect is None or self.ctx.local_text(w.key, w.expect) is None:
            return False
        # a conflict's local version must be safe in its copy first
        return w.kind != "conflict" or (
            w.copy is not None and self.ctx.local_text(w.copy, w.expect) is not None
        )

    def _record_freshness(self, placed: Iterable[LocalWrite]) -> None:
        """Record each pulled file's content time where its mtime (the remote's change
        time, set when it was written) does not already say it."""
        if self.ctx.freshness_dir is None:
            return
        records, implied = [], []
        for w in placed:
            if not w.touch or w.changed_at is None or w.text is None:
                continue
            when = content_time(w.text, w.changed_at)
            if when == w.changed_at:
                implied.append(self.team.root / w.key)
            else:
                records.append((self.team.root / w.key, checksum(w.text), when))
        if not (records or implied):
            return
        with contextlib.suppress(OSError):  # hints: each file's own mtime is the fallback
            record_changes(self.ctx.freshness_dir, records, implied)

    def _report_writes(self, writes: Iterable[LocalWrite]) -> None:
        r = self.report
        writes = list(writes)
        r.add(r.deleted, [w.key for w in writes if w.kind == "delete"])
        r.add(r.written, [w.key for w in writes if w.kind != "delete"])
        r.add(r.merged, [w.key for w in writes if w.kind == MERGE])
        r.add(r.conflicts, [Conflict(w.key, w.copy) for w in writes if w.kind == "conflict"])

    def _commit(self, done: Iterable[tuple[LocalWrite, FileStat | None]]) -> None:
        entries: dict[str, tuple[str, str] | None] = {}
        stats: list[tuple[str, FileStat, str]] = []
        pinned: list[tuple[str, FileStat, str]] = []
        now_ns = time.time_ns()
        for w, st in done:
            if w.advance:
                entries[w.key] = w.base
            if st is None or w.text is None:
                continue
            row = (w.key, st, checksum(w.text))
            # A file still carrying the past mtime we set (the remote's change time) cannot
            # be a later edit: edits stamp the current time. Trust it without the racy wait.
            set_ns = None if w.changed_at is None else int(w.changed_at * 1e9)
            if set_ns is not None and abs(st.mtime_ns - set_ns) < 1_000 and set_ns < now_ns - 10**7:
                pinned.append(row)
            else:
                stats.append(row)
        self.state.advance(entries)
        self.state.remember_stats(stats)
        if pinned:
            self.state.remember_stats(
                pinned, seen_ns=max(st.mtime_ns for _, st, _ in pinned) + RACY_NS + 1
            )

    def pushed(self, changes: ChangeSet, result: Applied) -> None:
        entries: dict[str, tuple[str, str] | None] = {
            key: (checksum(text), text) for key, text in changes.upserts.items()
        }
        entries.update({key: None for key in changes.deletes})
        self.state.advance(entries)
        self.report.add(self.report.pushed, sorted(changes.upserts))
        self.report.add(self.report.remote_deleted, sorted(changes.deletes))
        self.report.version = result.version

    def report_planned(self, writes: Sequence[LocalWrite], changes: ChangeSet) -> None:
        self._report_writes(w for w in writes if w.touch)
        self.report.add(self.report.pushed, sorted(changes.upserts))
        self.report.add(self.report.remote_deleted, sorted(changes.deletes))


def _phase(w: LocalWrite) -> int:
    """The plan's phase of a local write (:data:`teamsync.sync.decide.WRITE_ORDER`)."""
    return WRITE_ORDER.get(w.kind, WRITE_LATER)


def batches(writes: Sequence[LocalWrite]) -> Iterable[list[LocalWrite]]:
    """``writes`` in order, cut into batches of at most :data:`BATCH` writes in
    :data:`MAX_DIRS` directories."""
    batch: list[LocalWrite] = []
    dirs: set[str] = set()
    for w in writes:
        parent = w.key.rpartition("/")[0]
        if len(batch) >= BATCH or (parent not in dirs and len(dirs) >= MAX_DIRS):
            yield batch
            batch, dirs = [], set()
        batch.append(w)
        dirs.add(parent)
    if batch:
        yield batch


def _barrier(step: Callable[[], None]) -> None:
    """Run a durability step; a failure stops the run before the base records anything."""
    try:
        step()
    except OSError as exc:
        raise SyncError(
            f"could not make the written memories durable ({gate_reason(exc)}): nothing of "
            "this batch was recorded as synced. Check the disk (space, errors), then run the "
            "command again: it finishes the job"
        ) from exc
