"""Decide, then write: one round of a sync as a plain plan, on plain data.

:func:`decide` turns what the caller read (the base, the local tree and the
remote listing, as checksum maps, plus the names either side refused, the
folders that could not be listed and this round's gate verdicts) into a
:class:`Plan`: one :class:`Entry` per key, with its action, a short stable
reason code and a human sentence. :func:`settle` folds in what executing the
plan reported (a merge that became a conflict copy, a push the gate held
back), so ``teamsync status --explain KEY`` gives the one answer to "why
wasn't my file synced?". The plan also states the order its writes are made
durable in (:data:`PHASES`, :data:`WRITE_ORDER`); the appliers follow it.

This module does no I/O (like httpx's ``_auth.py``: the protocol logic apart
from the transport); a contract in ``pyproject.toml`` keeps it that way. It
reads nothing, writes nothing and imports no file, process, HTTP or database
module. The action and reason tables are in ``docs/sync.md``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from teamsync.security.keys import clashes_with, fold_key
from teamsync.sync import plan as p

NOTHING, RECORD, WRITE_HERE, DELETE_HERE = "nothing", "record", "write_here", "delete_here"
PUSH, DELETE_REMOTE, MERGE, CONFLICT_COPY = "push", "delete_remote", "merge", "conflict_copy"
HOLD_BACK, REFUSE, RENAME = "hold_back", "refuse", "rename"
ACTIONS: tuple[str, ...] = (NOTHING, RECORD, WRITE_HERE, DELETE_HERE, PUSH, DELETE_REMOTE)
ACTIONS += (MERGE, CONFLICT_COPY, HOLD_BACK, REFUSE, RENAME)

_OF_STEP = {
    p.ADOPT: RECORD,
    p.FORGET: RECORD,
    p.PULL: WRITE_HERE,
    p.DELETE_LOCAL: DELETE_HERE,
    p.PUSH: PUSH,
    p.DELETE_REMOTE: DELETE_REMOTE,
    p.MERGE: MERGE,
}

PHASES = ("conflict copies", "deletes here", "writes here", "base records", "the remote")
"""The order a round is made durable in, each phase before the next: a local version
is safe in its conflict copy before the remote's takes its name; deletes come before
creations (a case-only rename on a case-insensitive disk); the remote change set is
sent only after every local write of the round is durable."""
_PHASE = {
    CONFLICT_COPY: 0,
    DELETE_HERE: 1,
    WRITE_HERE: 2,
    MERGE: 2,
    RECORD: 3,
    PUSH: 4,
    DELETE_REMOTE: 4,
}
WRITE_ORDER = {"copy": 0, "delete": 1}
"""The phase of a local write by its kind (:class:`~teamsync.sync.report.LocalWrite`);
every other kind is :data:`WRITE_LATER`."""
WRITE_LATER = 2

REASONS: Mapping[str, str] = {
    "in-sync": "the same on both sides and in the base",
    "agree": "both sides hold the same new version: recorded as synced",
    "gone-both": "deleted on both sides: the record is dropped",
    "new-here": "new here: sent to the remote",
    "changed-here": "changed here since the last sync: sent to the remote",
    "deleted-here": "deleted here since the last sync: deleted on the remote",
    "kept-edit-here": "edited here, deleted on the remote: the edit is sent back",
    "new-there": "new on the remote: written here",
    "changed-there": "changed on the remote since the last sync: written here",
    "deleted-there": "deleted on the remote since the last sync: deleted here",
    "kept-edit-there": "deleted here, edited on the remote: the edit is written here",
    "changed-both": "changed on both sides: a 3-way merge, or a conflict copy",
    "created-both": "created on both sides with different text: a merge or a conflict copy",
    "restored": "put back from the other side (--restore-remote / --restore-local)",
    "other-mode": "this command does not take it; `teamsync sync` does",
    "left-by-guard": "left alone by a guard this round",
    "remote-refused": "the remote's entry was refused (a hostile or invalid name)",
    "local-refused": "the local file cannot be synced",
    "folder-unreadable": "its folder in team/ could not be listed: left alone",
    "rename-pending": "the team renamed it while it changed here: `teamsync sync` follows",
    "merge-in-sync-only": "changed on the remote too: `teamsync sync` merges it",
    "gate-held": "the write guard refused its text (a secret, a bad frontmatter)",
    "name-collides-remote": "its name cannot live beside a remote name",
    "name-collides-local": "the remote's name cannot live beside a local file",
    "merged": "merged with the remote's version",
    "conflict-copy": "the merge failed: the local version is kept in a conflict copy",
    "renamed": "moved to the spelling the remote uses for it",
    "remote-held": "the remote refused it while storing the rest",
    "not-written": "the local write failed",
    "index-not-fixed": "MEMORY.md could not be brought in line with the files",
}
"""Every reason code and what it means (``docs/sync.md`` shows this table)."""


@dataclass(frozen=True)
class Entry:
    """One key's decision this round."""

    key: str
    action: str
    code: str
    why: str
    base: str | None = None
    local: str | None = None
    remote: str | None = None

    @property
    def phase(self) -> int | None:
        """The index in :data:`PHASES` of the step that carries it out (None: no write)."""
        return _PHASE.get(self.action)

    def to_json(self) -> dict[str, Any]:
        phase = self.phase
        return {
            "key": self.key,
            "action": self.action,
            "code": self.code,
            "reason": self.why,
            "phase": None if phase is None else PHASES[phase],
            "base": self.base,
            "local": self.local,
            "remote": self.remote,
        }


@dataclass(frozen=True)
class Outcome:
    """What executing a key's step reported: it replaces the plan's action and reason."""

    action: str
    code: str
    why: str


@dataclass(frozen=True)
class View:
    """What the caller read for one round (every field plain data)."""

    base: Mapping[str, str]
    local: Mapping[str, str]
    remote: Mapping[str, str]
    remote_refused: Mapping[str, str] = field(default_factory=dict)
    """Remote names the backend refused to list, with why."""
    local_refused: Mapping[str, str] = field(default_factory=dict)
    """Local files that cannot be synced, with why."""
    unknown: Collection[str] = ()
    """Local folders that could not be listed: nothing at or below them is planned."""
    hold: Mapping[str, str] = field(default_factory=dict)
    """Keys this round leaves alone, with why (a rename for ``sync`` to follow)."""
    gate_refused: Mapping[str, str] = field(default_factory=dict)
    """Keys whose current local text the write guard refused, with why."""
    mode: str = "sync"


@dataclass(frozen=True)
class Plan:
    """One round: every key once. ``entries`` are in durable order (phase, then key);
    keys in sync everywhere are kept apart (``in_sync``: key -> checksum), as most
    keys of a big tree are, and :meth:`get` gives their entry too."""

    entries: tuple[Entry, ...]
    mode: str = "sync"
    in_sync: Mapping[str, str] = field(default_factory=dict)

    def get(self, key: str) -> Entry | None:
        if key in self.in_sync:
            c = self.in_sync[key]
            return Entry(key, NOTHING, "in-sync", REASONS["in-sync"], c, c, c)
        return next((e for e in self.entries if e.key == key), None)

    def keys(self) -> list[str]:
        """Every key of the plan (each once, unless a caller built a broken plan)."""
        return [e.key for e in self.entries] + list(self.in_sync)

    def to_json(self) -> list[dict[str, Any]]:
        """The entries that do something or say why not (keys in sync everywhere are
        left out: ``status --explain KEY`` gives theirs)."""
        return [e.to_json() for e in self.entries]

    def steps(self, actions: Collection[str]) -> list[p.Step]:
        """The steps to execute for entries whose action is in ``actions``, sorted by key
        (actions that execute nothing, such as a hold, have no step)."""
        out = [e for e in self.entries if e.action in actions and e.action in _EXECUTED]
        return [p.Step(e.key, _step_action(e), e.base, e.local, e.remote) for e in _by_key(out)]

    def holds(self, *, before_fetch: bool) -> list[Entry]:
        """The holds this plan decided among the steps, to report: those known before
        the remote's texts are fetched (pushes whose names clash, merges held back), or
        those after (arrivals whose names clash here). Refused names, unknown folders
        and renames on hold are reported when they are found (the scan, the rename)."""
        codes = _EARLY_HOLDS if before_fetch else _LATE_HOLDS
        found = [e for e in self.entries if e.code in codes]
        return sorted(found, key=lambda e: (codes.index(e.code), e.key))


_EARLY_HOLDS = ("name-collides-remote", "gate-held", "merge-in-sync-only")
_LATE_HOLDS = ("name-collides-local",)


def _by_key(entries: Iterable[Entry]) -> list[Entry]:
    return sorted(entries, key=lambda e: e.key)


_TO_STEP = {
    WRITE_HERE: p.PULL,
    DELETE_HERE: p.DELETE_LOCAL,
    PUSH: p.PUSH,
    DELETE_REMOTE: p.DELETE_REMOTE,
    MERGE: p.MERGE,
}


_EXECUTED = frozenset({RECORD, *_TO_STEP})


def _step_action(e: Entry) -> str:
    if e.action == RECORD:
        return p.FORGET if e.local is None else p.ADOPT
    return _TO_STEP[e.action]


def allowed(mode: str) -> frozenset[str]:
    """The step actions ``mode`` carries out (``status`` is a dry-run ``sync``)."""
    if mode == "pull":
        return p.INCOMING
    if mode == "push":
        return p.OUTGOING | {p.ADOPT, p.FORGET, p.MERGE}
    return p.INCOMING | p.OUTGOING


def code_of(b: str | None, loc: str | None, rem: str | None) -> str:
    """The reason code of the plain three-way table (:mod:`teamsync.sync.plan`)."""
    action = p.classify(b, loc, rem)
    if action is None:
        return "in-sync"
    if action in (p.ADOPT, p.FORGET):
        return "agree" if action == p.ADOPT else "gone-both"
    if action == p.MERGE:
        return "created-both" if b is None else "changed-both"
    return _code_one_side(action, b, rem if action in p.OUTGOING else loc)


def _code_one_side(action: str, b: str | None, unchanged: str | None) -> str:
    """One side changed: ``here`` (pushed) or ``there`` (pulled); ``unchanged`` is the
    other side's checksum, which still equals the base unless both sides moved."""
    side = "here" if action in p.OUTGOING else "there"
    if action in (p.DELETE_REMOTE, p.DELETE_LOCAL):
        return f"deleted-{side}"
    if unchanged == b:
        return f"new-{side}" if b is None else f"changed-{side}"
    return f"kept-edit-{side}"


def decide(view: View, steps: Sequence[p.Step] | None = None) -> Plan:
    """The plan of one round.

    ``steps`` are the round's steps after the guards (:mod:`teamsync.sync.guards`,
    which may turn deletes into restores or stop the round); without them the plain
    table of :func:`teamsync.sync.plan.plan` is used, filtered to the mode.
    """
    skip = set(view.remote_refused) | set(view.local_refused) | set(view.hold)
    if steps is None:
        raw = p.plan(view.base, view.local, view.remote, skip=skip, unknown=view.unknown)
        steps = [s for s in raw if s.action in allowed(view.mode)]
    held = _holds(view, steps)
    by_key = {s.key: s for s in steps}
    keys = view.base.keys() | view.local.keys() | view.remote.keys()
    keys |= view.remote_refused.keys() | view.local_refused.keys()
    in_sync: dict[str, str] = {}
    entries = []
    for key in keys:
        step, hold = by_key.get(key), held.get(key)
        loc = view.local.get(key)
        if step is None and hold is None and _quiet(view, key, loc):
            in_sync[key] = loc  # type: ignore[assignment]  # _quiet: loc is a checksum
        else:
            entries.append(_entry(view, key, step, hold))
    entries.sort(key=_order)
    return Plan(tuple(entries), view.mode, in_sync)


def _order(e: Entry) -> tuple[int, str]:
    return (-1 if e.phase is None else e.phase, e.key)


def _quiet(view: View, key: str, loc: str | None) -> bool:
    """Is ``key`` the same checksum in the base, here and there (and nothing else)?"""
    return (
        loc is not None
        and view.base.get(key) == loc
        and view.remote.get(key) == loc
        and key not in view.remote_refused
        and key not in view.local_refused
        and key not in view.hold
        and not p.is_below(key, view.unknown)
    )


def _entry(view: View, key: str, step: p.Step | None, held: tuple[str, str, str] | None) -> Entry:
    b, loc, rem = view.base.get(key), view.local.get(key), view.remote.get(key)
    if key in view.remote_refused:
        why = f"remote entry refused: {view.remote_refused[key]}"
        return Entry(key, REFUSE, "remote-refused", why, b, loc, rem)
    if key in view.local_refused:
        why = f"local file not synced: {view.local_refused[key]}"
        return Entry(key, REFUSE, "local-refused", why, b, loc, rem)
    if key in view.hold:
        return Entry(key, HOLD_BACK, "rename-pending", view.hold[key], b, loc, rem)
    if p.is_below(key, view.unknown):
        return Entry(key, NOTHING, "folder-unreadable", REASONS["folder-unreadable"], b, loc, rem)
    if held is not None:
        action, code, why = held
        return Entry(key, action, code, why, b, loc, rem)
    if step is None:
        return _idle(view, key, b, loc, rem)
    b, loc, rem = step.base, step.local, step.remote
    code = code_of(b, loc, rem)
    if p.classify(b, loc, rem) != step.action:
        code = "restored"
    return Entry(key, _OF_STEP[step.action], code, REASONS[code], b, loc, rem)


def _idle(view: View, key: str, b: str | None, loc: str | None, rem: str | None) -> Entry:
    """A key without a step: in sync, another command's business, or left by a guard."""
    raw = p.classify(b, loc, rem)
    if raw is None:
        return Entry(key, NOTHING, "in-sync", REASONS["in-sync"], b, loc, rem)
    if raw not in allowed(view.mode):
        why = f"{REASONS[code_of(b, loc, rem)]}, but `teamsync {view.mode}` does not do that"
        return Entry(key, NOTHING, "other-mode", why + "; `teamsync sync` does", b, loc, rem)
    return Entry(key, NOTHING, "left-by-guard", REASONS["left-by-guard"], b, loc, rem)


def _holds(view: View, steps: Sequence[p.Step]) -> dict[str, tuple[str, str, str]]:
    """key -> (action, code, why) for steps this round holds back or refuses."""
    held: dict[str, tuple[str, str, str]] = {}
    for s in steps:
        if s.action != p.MERGE:
            continue
        problem = view.gate_refused.get(s.key)
        if problem is not None:
            held[s.key] = (HOLD_BACK, "gate-held", f"conflict not resolved: {problem}")
        elif view.mode == "push":
            why = "changed on the remote too: run `teamsync sync` to merge"
            held[s.key] = (HOLD_BACK, "merge-in-sync-only", why)
    remote_names = view.remote.keys() | view.remote_refused.keys()
    for key, why in push_clashes(steps, remote_names).items():
        held[key] = (HOLD_BACK, "name-collides-remote", why)
    for key, why in arrival_clashes(steps, view.local).items():
        held[key] = (REFUSE, "name-collides-local", why)
    return held


def push_clashes(steps: Sequence[p.Step], remote_keys: Iterable[str]) -> dict[str, str]:
    """key -> why, for pushes of keys the remote cannot hold beside the keys it has.

    A key new to the remote that folds like a remote key, or whose name a remote
    key needs as a folder (or the reverse), is held; a key deleted in the same push
    frees its name (a case-only rename).
    """
    new = {s.key for s in steps if s.action == p.PUSH and s.remote is None}
    if not new:
        return {}
    gone = {s.key for s in steps if s.action == p.DELETE_REMOTE}
    after = (set(remote_keys) - gone) | {s.key for s in steps if s.action == p.PUSH}
    found: dict[str, str] = {}
    for key, other in clashes_with(new, after):
        found.setdefault(key, other)
    out = {}
    for key, other in sorted(found.items()):
        how = "collides with" if fold_key(key) == fold_key(other) else "clashes (file/folder) with"
        out[key] = f"not pushed: {how} {other!r} on the remote; rename one"
    return out


def arrival_clashes(steps: Sequence[p.Step], local: Mapping[str, str]) -> dict[str, str]:
    """key -> why, for pulls of keys that cannot live beside a local file that stays.

    ``deploy.md`` arriving while ``Deploy.md`` is deleted in the same round is a
    case-only rename and goes ahead (the delete is applied first).
    """
    arriving = {s.key for s in steps if s.action == p.PULL and s.local is None}
    if not arriving:
        return {}
    leaving = {s.key for s in steps if s.action == p.DELETE_LOCAL}
    found: dict[str, str] = {}
    for key, other in clashes_with(arriving, (set(local) - leaving) | arriving):
        found.setdefault(key, other)
    return {
        key: f"remote version not written: it clashes with local {other!r}"
        for key, other in sorted(found.items())
    }


def settle(plan: Plan, outcomes: Mapping[str, Outcome]) -> Plan:
    """``plan`` with what execution reported: a key's outcome replaces its action and
    reason (a key the plan did not know, such as a new conflict copy, is added).
    Settling twice with the same outcomes changes nothing more."""
    if not outcomes:
        return plan
    entries = [e if e.key not in outcomes else _settled(e, outcomes[e.key]) for e in plan.entries]
    known = {e.key for e in entries}
    in_sync = dict(plan.in_sync)
    for key, o in outcomes.items():
        if key in known:
            continue
        c = in_sync.pop(key, None)
        entries.append(Entry(key, o.action, o.code, o.why, c, c, c))
    entries.sort(key=_order)
    return Plan(tuple(entries), plan.mode, in_sync)


def _settled(e: Entry, o: Outcome) -> Entry:
    return replace(e, action=o.action, code=o.code, why=o.why)
