"""What a sync run reports, and the small records the engine passes around."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from teamsync.errors import SecretFound, where_found
from teamsync.sync import decide as d
from teamsync.sync.decide import Outcome
from teamsync.sync.guards import Stop
from teamsync.sync.plan import ADOPT, FORGET, is_below


@dataclass(frozen=True)
class Rejection:
    key: str
    reason: str
    code: str = field(default="", compare=False)
    """The reason code (:data:`teamsync.sync.decide.REASONS`), when the site knows it."""


@dataclass(frozen=True)
class Conflict:
    key: str
    """The name the remote version keeps."""
    copy: str | None
    """Where the local version was kept."""


@dataclass
class LocalWrite:
    """One planned local change. Invariant: ``text`` has already passed ``guard_write``."""

    key: str
    kind: str
    """pull, delete, merge, conflict, copy, adopt or forget."""
    text: str | None = None
    expect: str | None = None
    """The checksum the local file must still have (None: must be absent)."""
    base: tuple[str, str] | None = None
    advance: bool = True
    changed_at: float | None = None
    copy: str | None = None

    @property
    def touch(self) -> bool:
        return self.kind not in (ADOPT, FORGET)


def _shown(key: str) -> str:
    """A refused key as reports show it: a secret in the name is replaced by its rule id."""
    from teamsync.security.names import redact_name

    return redact_name(key)


def gate_reason(exc: BaseException) -> str:
    """A one-line reason naming rules and lines, never content."""
    if isinstance(exc, SecretFound):
        return f"contains a likely secret: {where_found(exc.findings)}"
    if isinstance(exc, OSError) and exc.strerror:  # never a temp file's name
        return exc.strerror.lower()
    return str(getattr(exc, "reason", None) or getattr(exc, "message", None) or exc)


class Progress(Protocol):
    """Receives progress with counts: files scanned, then files written and pushed (the
    CLI draws a bar). ``label`` names the step (``Scanning``, ``Syncing``)."""

    def start(self, total: int, label: str = "Syncing") -> None: ...

    def advance(self, n: int) -> None: ...


@dataclass
class SyncReport:
    """What a run did (or, with ``dry_run``, would do)."""

    mode: str = "sync"
    dry_run: bool = False
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    remote_deleted: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    held_back: list[Rejection] = field(default_factory=list)
    unknown: list[Rejection] = field(default_factory=list)
    """Local paths whose subtree could not be listed: left alone this run."""
    stop: Stop | None = None
    """Set when a guard stopped the run before it changed anything."""
    recovered: list[str] = field(default_factory=list)
    """Keys with no base here whose base the remote's history supplied (see sync.recover)."""
    renamed: list[str] = field(default_factory=list)
    """``"old -> new"``: a local file moved to the spelling the remote uses for it (a
    teammate's case-only rename, or one memory created under two spellings)."""
    index_conflicts: list[str] = field(default_factory=list)
    """One line per ``MEMORY.md`` entry both sides edited: the later edit was kept, and
    the other is named here and kept in the state dir (:mod:`teamsync.sync.indexmerge`)."""
    version: str | None = None
    plan: Any = None
    """The last round's :class:`~teamsync.sync.decide.Plan`, settled with what it did
    (``teamsync status --explain KEY`` reads it)."""

    def reject(self, key: str, reason: str, *, held: bool = False, code: str = "") -> None:
        """Report ``key`` as refused (or, ``held``, held back here) with the reason."""
        self.add(self.held_back if held else self.rejected, [Rejection(key, reason, code)])

    def outcomes(self) -> dict[str, Outcome]:
        """key -> what the run reported for it (:func:`teamsync.sync.decide.settle`);
        a later kind wins: merged, conflicts, renames, refused, held back."""
        out: dict[str, Outcome] = {}
        for key in self.merged:
            out[key] = Outcome(d.MERGE, "merged", d.REASONS["merged"])
        for c in self.conflicts:
            where = f": the local version is in {c.copy}" if c.copy else ""
            out[c.key] = Outcome(
                d.CONFLICT_COPY, "conflict-copy", d.REASONS["conflict-copy"] + where
            )
        for pair in self.renamed:
            old, _, new = pair.partition(" -> ")
            out[new] = Outcome(d.RENAME, "renamed", f"{d.REASONS['renamed']} (was {old})")
        for r in self.rejected:
            out[r.key] = Outcome(d.REFUSE, r.code or "not-written", r.reason)
        for r in self.held_back:
            out[r.key] = Outcome(d.HOLD_BACK, r.code or "gate-held", r.reason)
        return out

    def note_rejected(self, remote: Mapping[str, str], local: Mapping[str, str]) -> None:
        """Names either side refused to list. One batched add: a hostile remote may list
        100,000 refused keys."""
        refused = [
            Rejection(k, f"remote entry refused: {r}", "remote-refused")
            for k, r in sorted(remote.items())
        ]
        refused += [
            Rejection(k, f"local file not synced: {r}", "local-refused")
            for k, r in sorted(local.items())
        ]
        self.add(self.rejected, refused)

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
                    "folder-unreadable",
                )
            )
        self.add(self.unknown, found)

    def exit_code(self) -> int:
        trouble = self.conflicts or self.rejected or self.held_back or self.unknown
        return 1 if trouble or self.stop is not None else 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "written": self.written,
            "deleted": self.deleted,
            "conflicts": [{"key": c.key, "copy": c.copy} for c in self.conflicts],
            "rejected": [{"key": _shown(r.key), "reason": r.reason} for r in self.rejected],
            "pushed": self.pushed,
            "remote_deleted": self.remote_deleted,
            "merged": self.merged,
            "held_back": [{"key": _shown(r.key), "reason": r.reason} for r in self.held_back],
            "unknown": [{"key": _shown(r.key), "reason": r.reason} for r in self.unknown],
            "stopped": None if self.stop is None else self.stop.to_json(),
            "recovered": self.recovered,
            "renamed": [_shown(r) for r in self.renamed],
            "index_conflicts": self.index_conflicts,
            "dry_run": self.dry_run,
        }
        if self.dry_run:  # status, --dry-run: the plan itself
            plan = [] if self.plan is None else self.plan.to_json()
            for entry in plan:
                entry["key"] = _shown(entry["key"])
            out["plan"] = plan
        return out

    def add(self, items: list[Any], values: Iterable[Any]) -> None:
        """Append ``values`` not yet in ``items`` (keeps order; a run may retry rounds)."""
        have = set(items)
        for value in values:
            if value not in have:
                items.append(value)
                have.add(value)
