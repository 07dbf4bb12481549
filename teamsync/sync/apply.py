"""Turning planned steps into gated local writes and a remote change set.

Every byte that crosses the boundary passes the same gate in both directions:
key validation, ``*.md`` and the size limit, and a whole-content secret scan
(:func:`teamsync.security.guard.guard_write`). A refused incoming entry is not
written; a refused outgoing file is held back while the rest goes on. Reasons
name the rule and line, never the text.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from teamsync.errors import MemoryFormatError, SecurityError, SyncError, TeamsyncError
from teamsync.memdir.format import INDEX_NAME, parse_memory
from teamsync.memdir.freshness import content_time, record_changes
from teamsync.memdir.lint import backup_index
from teamsync.security.fs import SafeDir, WriteBatch
from teamsync.security.guard import guard_many, guard_write, scanner_identity
from teamsync.security.keys import clashes_with, fold_key
from teamsync.sync.base import Applied, ChangeSet, checksum
from teamsync.sync.indexmerge import merge_index
from teamsync.sync.indexview import IndexView, view_of
from teamsync.sync.local import LocalTree, fix_index, read_memory
from teamsync.sync.merge import merge3, union_lines
from teamsync.sync.plan import (
    ADOPT,
    DELETE_LOCAL,
    DELETE_REMOTE,
    FORGET,
    MERGE,
    PULL,
    PUSH,
    Step,
    conflict_name,
    is_below,
    is_conflict_copy_of,
)
from teamsync.sync.report import Conflict, LocalWrite, Progress, Rejection, SyncReport, gate_reason
from teamsync.sync.state import RACY_NS, BaseStore, FileStat

BATCH = 1000
"""Local writes per durable batch: one barrier and one base-store transaction."""
MAX_DIRS = 64
"""Directories per batch (each is held open until the batch is durable)."""
GATE_CHUNK = 1000
"""Texts per scanner pass when a big gate reports progress."""
FIRST_TIME_FLOOR = 946_684_800.0
"""2000-01-01: an older change time on a first share is a broken clock, not an age."""


class Applier:
    """Holds one run's context and its report."""

    def __init__(
        self,
        team: SafeDir,
        state: BaseStore,
        report: SyncReport,
        *,
        who: str,
        now: float,
        freshness_dir: Path | None,
        allowlist: frozenset[str] = frozenset(),
        progress: Progress | None = None,
    ) -> None:
        self.team, self.state, self.report = team, state, report
        self.allowlist, self.progress = allowlist, progress
        self.who, self.now, self.freshness_dir = who, now, freshness_dir
        self.index: IndexView | None = None
        """This round's view of ``MEMORY.md`` while files are held back here (else None)."""
        self.held: frozenset[str] = frozenset()
        """Keys held back here this round that the remote lacks (their index lines stay here)."""
        self._refused: dict[tuple[str, str], TeamsyncError] = {}
        """(key, checksum) -> why the gate refused that text, this run (scanned once)."""

    # -- reporting ------------------------------------------------------------------
    def reject(self, key: str, reason: str, *, held: bool = False) -> None:
        items = self.report.held_back if held else self.report.rejected
        self.report.add(items, [Rejection(key, reason)])

    def note_rejected(self, remote: Mapping[str, str], local: Mapping[str, str]) -> None:
        # One batched add: a hostile remote may list 100,000 refused keys.
        refused = [Rejection(k, f"remote entry refused: {r}") for k, r in sorted(remote.items())]
        refused += [Rejection(k, f"local file not synced: {r}") for k, r in sorted(local.items())]
        self.report.add(self.report.rejected, refused)

    def note_unknown(self, unknown: Mapping[str, str], base: Mapping[str, str]) -> None:
        """Tell once per path that its subtree is left alone, and the way out."""
        found = []
        for path, why in sorted(unknown.items()):
            held = sum(1 for k in base if is_below(k, (path,)))
            what = f"its {held} synced memor{'y' if held == 1 else 'ies'}" if held else "it"
            found.append(
                Rejection(
                    path,
                    f"{why}: {what} left alone this run (nothing under it is deleted "
                    "anywhere or written). teamsync never follows links or guesses inside "
                    "team/: move the folder back into team/ (or link the whole team/ directory "
                    "instead), or fix its permissions, then sync again",
                )
            )
        self.report.add(self.report.unknown, found)

    def hold_merges(self, steps: list[Step]) -> list[Step]:
        for s in steps:
            if s.action == MERGE:
                self.reject(
                    s.key, "changed on the remote too: run `teamsync sync` to merge", held=True
                )
        return [s for s in steps if s.action in (ADOPT, FORGET)]

    def hold_held_merges(self, steps: list[Step]) -> list[Step]:
        """Hold a merge whose local side the gate refused, without fetching the remote side:
        both the merge and a conflict copy would carry the local text."""
        out = []
        for s in steps:
            problem = self._refused.get((s.key, s.local or "")) if s.action == MERGE else None
            if problem is None:
                out.append(s)
            else:
                self.reject(s.key, f"conflict not resolved: {gate_reason(problem)}", held=True)
        return out

    def hold_clashes(self, steps: list[Step], remote_keys: Iterable[str]) -> list[Step]:
        """Hold back pushes of keys the remote cannot hold beside the keys it has.

        A key new to the remote that folds like a remote key, or whose name a
        remote key needs as a folder (or the reverse), is held with the reason;
        a key deleted in the same push frees its name (a case-only rename).
        """
        new = {s.key for s in steps if s.action == PUSH and s.remote is None}
        if not new:
            return steps
        gone = {s.key for s in steps if s.action == DELETE_REMOTE}
        after = (set(remote_keys) - gone) | {s.key for s in steps if s.action == PUSH}
        held: dict[str, str] = {}
        for key, other in clashes_with(new, after):
            held.setdefault(key, other)
        for key, other in sorted(held.items()):
            why = (
                "collides with"
                if fold_key(key) == fold_key(other)
                else "clashes (file/folder) with"
            )
            self.reject(key, f"not pushed: {why} {other!r} on the remote; rename one", held=True)
        return [s for s in steps if s.key not in held]

    # -- incoming -------------------------------------------------------------------
    def _local_text(self, key: str, expect: str | None) -> str | None:
        """The local text when it still has checksum ``expect`` (else None: skip this round).

        For the index while files are held back, ``expect`` is the shared view's
        checksum and the shared view is what is returned (:mod:`teamsync.sync.indexview`).
        """
        try:
            text = read_memory(self.team, key)
        except (OSError, TeamsyncError):
            return None
        view = self.index
        if key == INDEX_NAME and view is not None and expect == view.shared_sum:
            return view.shared if text == view.full else None
        return text if checksum(text) == expect else None

    def _restored(self, key: str, expect: str | None, text: str) -> str:
        """``text`` (the shared index written here) with this side's withheld lines back."""
        view = self.index
        if key != INDEX_NAME or view is None or expect != view.shared_sum:
            return text
        return view.restore(text)

    def view_index(
        self,
        local: LocalTree,
        remote: Mapping[str, str],
        team_index: Callable[[], str | None] = lambda: None,
    ) -> None:
        """Plan this round on the shared view of ``MEMORY.md`` when files are held back here.

        A held file is one this side cannot send: refused by the gate (a secret)
        or not syncable at all (``local.rejected``). Its entry lines that were
        never shared stay in the local index and are not sent
        (:mod:`teamsync.sync.indexview`); ``local.checksums`` gets the shared
        view's checksum for the index. ``team_index`` gives the remote's index
        text (asked only when a file is held here).
        """
        self.index, self.held = None, frozenset()
        base = self.state.checksums()
        texts = {}
        for key, sum_ in local.checksums.items():
            if key == INDEX_NAME or sum_ in (remote.get(key), base.get(key)):
                continue  # the base and the remote never hold a secret: nothing to gate
            with contextlib.suppress(OSError, TeamsyncError):
                texts[key] = read_memory(self.team, key)
        self.held = frozenset(set(local.rejected) | set(self.gate_outgoing(texts)))
        if not self.held or INDEX_NAME not in local.checksums:
            return
        try:
            full = read_memory(self.team, INDEX_NAME)
        except (OSError, TeamsyncError):
            return
        if checksum(full) != local.checksums[INDEX_NAME]:
            return  # changed since the scan: the next run sees it
        if remote.get(INDEX_NAME) is None:
            theirs = None
        elif remote.get(INDEX_NAME) == base.get(INDEX_NAME):
            theirs = self.state.content(INDEX_NAME)
        else:
            theirs = team_index()
        before = (self.state.content(INDEX_NAME) if INDEX_NAME in base else None) or ""
        self.index = view_of(full, self.held, theirs, remote.keys(), before)
        if self.index is not None:
            local.checksums[INDEX_NAME] = self.index.shared_sum

    def gate(self, items: Mapping[str, str]) -> dict[str, TeamsyncError]:
        """key -> why its text may not cross (the write guard), for many texts at once.

        One scanner pass over the texts this machine has not scanned clean before
        (under the same scanner: :func:`~teamsync.security.guard.scanner_identity`);
        a text it has is only put through the key and size rules again. The
        texts scanned clean now are remembered.
        """
        if not items:
            return {}
        identity = scanner_identity()
        sums = {key: checksum(text) for key, text in items.items()}
        refused: dict[str, TeamsyncError] = {
            key: self._refused[key, sums[key]] for key in items if (key, sums[key]) in self._refused
        }
        items = {key: text for key, text in items.items() if key not in refused}
        known = self.state.vetted(sums.values(), identity) if identity else set()
        todo = [(key, text, sums[key] not in known) for key, text in items.items()]
        progress = self.progress if len(todo) > GATE_CHUNK else None
        if progress is not None:
            progress.start(sum(1 for _, _, scan in todo if scan), "Scanning")
        for start in range(0, len(todo), GATE_CHUNK):
            chunk = todo[start : start + GATE_CHUNK]
            clean = self._gate_chunk(chunk, refused)
            if identity and clean:
                self.state.remember_vetted((sums[key] for key in clean), identity)
            if progress is not None:
                progress.advance(sum(1 for _, _, scan in chunk if scan))
        self._refused.update(((key, sums[key]), problem) for key, problem in refused.items())
        return refused

    def gate_outgoing(self, items: Mapping[str, str]) -> dict[str, TeamsyncError]:
        """:meth:`gate`, and a memory whose frontmatter neither YAML attempt can read is
        held back too, with its line and column, until it is fixed (Claude Code could
        not read it either; a teammate would receive a file nothing can parse)."""
        refused: dict[str, TeamsyncError] = {}
        for key, text in items.items():
            if key.rsplit("/", 1)[-1] == INDEX_NAME:
                continue
            try:
                parse_memory(text, key)
            except MemoryFormatError as exc:
                refused[key] = MemoryFormatError(
                    key, f"{exc.message}; fix the frontmatter (`teamsync check`), then sync again"
                )
        return {**self.gate({k: t for k, t in items.items() if k not in refused}), **refused}

    def _gate_chunk(
        self, chunk: list[tuple[str, str, bool]], refused: dict[str, TeamsyncError]
    ) -> list[str]:
        """One scanner pass over ``chunk``; the keys scanned clean. If the pass itself
        fails (detect-secrets raised on some text), each text is judged alone, so only
        the text that makes it fail is refused, as a write of that one file would be."""
        try:
            verdicts = guard_many(chunk, baseline=self.allowlist)
        except SecurityError:
            if len(chunk) == 1:
                raise
            clean: list[str] = []
            for item in chunk:
                try:
                    clean += self._gate_chunk([item], refused)
                except SecurityError as exc:
                    refused[item[0]] = exc
            return clean
        refused.update(verdicts.refused)
        return list(verdicts.clean)

    def prepare_incoming(
        self,
        steps: Sequence[Step],
        texts: Mapping[str, str],
        changed_at: Mapping[str, float],
        local: Mapping[str, str],
        remote_keys: Iterable[str] = (),
    ) -> list[LocalWrite]:
        writes: list[LocalWrite] = []
        taken = set(local) | set(remote_keys)
        steps = self._refuse_clashing_arrivals(steps, local)
        mine = {s.key: self._local_text(s.key, s.local) for s in steps if s.action == ADOPT}
        adopted = {key: text for key, text in mine.items() if text is not None}
        arriving = {
            s.key: texts[s.key] for s in steps if s.action in (PULL, MERGE) and s.key in texts
        }
        # The base store keeps contents: a secret both sides hold is never recorded.
        refused = self.gate({**arriving, **adopted})
        for s in steps:
            problem = refused.get(s.key)
            if s.action == FORGET:
                writes.append(LocalWrite(s.key, FORGET))
            elif s.action == ADOPT:
                text = adopted.get(s.key)
                if text is not None and problem is not None:
                    self.reject(s.key, f"not recorded as synced: {gate_reason(problem)}", held=True)
                elif text is not None:
                    writes.append(LocalWrite(s.key, ADOPT, base=(checksum(text), text)))
            elif s.action == DELETE_LOCAL:
                writes.append(LocalWrite(s.key, "delete", expect=s.local))
            elif s.key in arriving and problem is not None:
                self.reject(s.key, f"remote version not written: {gate_reason(problem)}")
            elif s.key in arriving:
                remote = arriving[s.key]
                when = changed_at.get(s.key)
                if s.action == PULL:
                    base = (checksum(remote), remote)
                    text = self._restored(s.key, s.local, remote)
                    writes.append(LocalWrite(s.key, PULL, text, s.local, base, changed_at=when))
                else:
                    writes.extend(self._merge(s, remote, when, local, taken))
        return writes

    def _refuse_clashing_arrivals(
        self, steps: Sequence[Step], local: Mapping[str, str]
    ) -> Sequence[Step]:
        """Do not pull a key that cannot live beside a local file that stays.

        ``deploy.md`` arriving while ``Deploy.md`` is deleted in the same round
        is a case-only rename and goes ahead (the delete is applied first).
        """
        arriving = {s.key for s in steps if s.action == PULL and s.local is None}
        if not arriving:
            return steps
        leaving = {s.key for s in steps if s.action == DELETE_LOCAL}
        refused: dict[str, str] = {}
        for key, other in clashes_with(arriving, (set(local) - leaving) | arriving):
            refused.setdefault(key, other)
        for key, other in sorted(refused.items()):
            self.reject(key, f"remote version not written: it clashes with local {other!r}")
        return [s for s in steps if s.key not in refused]

    def _merge(
        self,
        s: Step,
        remote: str,
        when: float | None,
        local: Mapping[str, str],
        taken: set[str],
    ) -> list[LocalWrite]:
        mine = self._local_text(s.key, s.local)
        if mine is None:
            return []
        base_text = (self.state.content(s.key) if s.base else None) or ""
        # Both sides created the key: an empty side is content too, never "merged" away.
        created_both = s.base is None and not (mine and remote)
        merged = None if created_both else merge3(base_text, mine, remote)
        if merged is None and s.key == INDEX_NAME and not created_both:
            merged = self._merge_index(base_text, mine, remote, when)
        if merged is None and s.key.rsplit("/", 1)[-1] == INDEX_NAME:
            merged = union_lines(remote, mine)
        if merged is not None:
            merged = self._restored(s.key, s.local, merged)
        new_base = (checksum(remote), remote)
        if merged is not None:
            try:
                guard_write(s.key, merged, baseline=self.allowlist)
            except TeamsyncError as exc:
                self.reject(s.key, f"merge not written: {gate_reason(exc)}", held=True)
                return []
            return [LocalWrite(s.key, MERGE, merged, s.local, new_base)]
        copy = next(
            (k for k, c in local.items() if c == s.local and is_conflict_copy_of(k, s.key)), None
        )
        out = []
        if copy is None:
            copy = conflict_name(s.key, self.who, self.now, taken)
            try:
                guard_write(copy, mine, baseline=self.allowlist)
            except TeamsyncError as exc:
                self.reject(s.key, f"conflict not resolved: {gate_reason(exc)}", held=True)
                return []
            taken.add(copy)
            out.append(LocalWrite(copy, "copy", mine, None, advance=False))
        conflict = LocalWrite(
            s.key, "conflict", remote, s.local, new_base, changed_at=when, copy=copy
        )
        return [*out, conflict]

    def _merge_index(self, base: str, mine: str, remote: str, when: float | None) -> str:
        """The entry-aware index merge; an entry both sides edited keeps the later edit,
        and the other line is recorded (report and a file under the state dir)."""
        st = self.team.stat(INDEX_NAME)
        ours_later = st is not None and when is not None and st.st_mtime > when
        merged, conflicts = merge_index(base, mine, remote, ours_later=ours_later)
        if not conflicts:
            return merged
        record = "\n".join(f"{c.entry}\n  kept: {c.kept}\n  set aside: {c.lost}" for c in conflicts)
        where = None
        if self.freshness_dir is not None:
            with contextlib.suppress(OSError):
                where = backup_index(
                    self.freshness_dir / "index-conflicts",
                    "team/" + INDEX_NAME,
                    (record + "\n").encode("utf-8"),
                    self.now,
                )
        kept_in = f" (kept in {where})" if where is not None else ""
        self.report.add(
            self.report.index_conflicts,
            [
                f"{c.entry}: both sides edited its entry; kept the later edit, "
                f"set aside {c.lost!r}{kept_in}"
                for c in conflicts
            ],
        )
        return merged

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
        writes = sorted(writes, key=lambda w: (w.kind != "copy", w.kind != "delete"))
        # Freshness records are hints outside the base's promise: one thread writes them
        # while the next batch is written.
        with ThreadPoolExecutor(max_workers=1) as hints:
            pending: list[Future[None]] = []
            for batch in batches(writes):
                # three phases, each durable before the next: conflict copies, deletes, the rest
                phases: list[list[LocalWrite]] = [[], [], []]
                for w in batch:
                    phases[0 if w.kind == "copy" else 1 if w.kind == "delete" else 2].append(w)
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
                    self.reject(w.key, f"not written: {gate_reason(exc)}")
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
                    self.reject(w.key, f"not written: {gate_reason(exc)}")
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
        elif w.expect is None or self._local_text(w.key, w.expect) is None:
            return False
        # a conflict's local version must be safe in its copy first
        return w.kind != "conflict" or (
            w.copy is not None and self._local_text(w.copy, w.expect) is not None
        )

    def _record_freshness(self, placed: Iterable[LocalWrite]) -> None:
        """Record each pulled file's content time where its mtime (the remote's change
        time, set when it was written) does not already say it."""
        if self.freshness_dir is None:
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
            record_changes(self.freshness_dir, records, implied)

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

    def fix_index(
        self,
        writes: Sequence[LocalWrite],
        local: Mapping[str, str],
        remote_keys: Collection[str] = (),
    ) -> bool:
        """Fix ``MEMORY.md``'s owned entries when this round changed the files or the index.

        Lossless: only entries for new files are added and dead ones removed
        (:func:`teamsync.sync.local.fix_index`); a backup goes to the state dir.
        A file held back here that the remote lacks gets no entry (its name is not
        the team's); one the remote has is listed as the remote's file.
        """
        created = {w.key for w in writes if w.touch and w.text is not None and w.key not in local}
        deleted = {w.key for w in writes if w.kind == "delete"}
        if not (created or deleted or any(w.key == INDEX_NAME and w.touch for w in writes)):
            return False
        keys = (set(local) | created) - deleted - (self.held - set(remote_keys))
        backups = None if self.freshness_dir is None else self.freshness_dir / "index-backups"
        try:
            changed = fix_index(self.team, keys, backups)
        except TeamsyncError as exc:
            self.reject(INDEX_NAME, f"index not regenerated: {gate_reason(exc)}")
            return False
        if changed:
            self.report.add(self.report.written, [INDEX_NAME])
        return changed

    def settle_index(
        self,
        local: LocalTree,
        remote: Mapping[str, str],
        team_index: Callable[[], str | None] = lambda: None,
    ) -> bool:
        """Before a sync sends anything: bring ``MEMORY.md`` in line with the local files.

        The same lossless fix as after a pull (:func:`teamsync.sync.local.fix_index`),
        so the index a teammate receives already lists what it receives, and no
        side has an entry to add or remove after the other (the sync settles in one
        round). Returns True when the index was rewritten (the caller plans again).
        """
        if INDEX_NAME not in local.checksums:
            return False
        backups = None if self.freshness_dir is None else self.freshness_dir / "index-backups"
        try:
            # entries only for what this side brings: the remote's index answers for the rest
            keys = local.checksums.keys() - self.held - remote.keys()
            if not fix_index(self.team, keys, backups, present=local.checksums.keys() | remote):
                return False
            local.checksums[INDEX_NAME] = checksum(read_memory(self.team, INDEX_NAME))
        except (OSError, TeamsyncError) as exc:
            self.reject(INDEX_NAME, f"index not regenerated: {gate_reason(exc)}")
            return False
        self.report.add(self.report.written, [INDEX_NAME])
        self.view_index(local, remote, team_index)
        return True

    # -- outgoing -------------------------------------------------------------------
    def prepare_outgoing(self, steps: Sequence[Step], version: str | None, dry: bool) -> ChangeSet:
        upserts: dict[str, str] = {}
        deletes: list[str] = []
        preconditions: dict[str, str | None] = {}
        modified: dict[str, float] = {}
        mine = {s.key: self._local_text(s.key, s.local) for s in steps if s.action != DELETE_REMOTE}
        sending = {key: text for key, text in mine.items() if text is not None}
        refused = self.gate_outgoing(sending)
        for s in steps:
            if s.action == DELETE_REMOTE:
                deletes.append(s.key)
                preconditions[s.key] = s.remote
                continue
            text = sending.get(s.key)
            if text is None:
                continue
            problem = refused.get(s.key)
            if problem is not None:
                self.reject(s.key, f"not pushed: {gate_reason(problem)}", held=True)
                continue
            upserts[s.key] = text
            preconditions[s.key] = s.remote
            if s.base is None and s.remote is None:
                when = self._first_share_time(s.key)
                if when is not None:
                    modified[s.key] = when
        message = _message(upserts, deletes)
        return ChangeSet(upserts, deletes, version, preconditions, message, modified)

    def _first_share_time(self, key: str) -> float | None:
        """The local file's change time, when it is a sane past time (else None)."""
        st = self.team.stat(key)
        when = None if st is None else st.st_mtime
        return when if when is not None and FIRST_TIME_FLOOR < when < self.now else None

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


def _message(upserts: Mapping[str, str], deletes: Sequence[str], limit: int = 50) -> str:
    n = len(upserts) + len(deletes)
    lines = [f"teamsync: update {n} memor{'y' if n == 1 else 'ies'}", ""]
    entries = [f"M {k}" for k in sorted(upserts)] + [f"D {k}" for k in sorted(deletes)]
    lines.extend(entries[:limit])
    if len(entries) > limit:
        lines.append(f"... and {len(entries) - limit} more")
    return "\n".join(lines) + "\n"
