"""The remote change set of a round's outgoing steps, every text through the gate.

A refused outgoing file is held back while the rest goes on; the change set
carries per-key preconditions (the checksum the remote must still hold) and,
for a key shared for the first time, the sharer's own change time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from teamsync.sync.base import ChangeSet
from teamsync.sync.context import RunContext
from teamsync.sync.plan import DELETE_REMOTE, Step
from teamsync.sync.report import gate_reason

FIRST_TIME_FLOOR = 946_684_800.0
"""2000-01-01: an older change time on a first share is a broken clock, not an age."""


def prepare_outgoing(ctx: RunContext, steps: Sequence[Step], version: str | None) -> ChangeSet:
    """The change set for ``steps`` (already decided: :mod:`teamsync.sync.decide`)."""
    upserts: dict[str, str] = {}
    deletes: list[str] = []
    preconditions: dict[str, str | None] = {}
    modified: dict[str, float] = {}
    mine = {s.key: ctx.local_text(s.key, s.local) for s in steps if s.action != DELETE_REMOTE}
    sending = {key: text for key, text in mine.items() if text is not None}
    refused = ctx.gate.outgoing(sending)
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
            why = f"not pushed: {gate_reason(problem)}"
            ctx.report.reject(s.key, why, held=True, code="gate-held")
            continue
        upserts[s.key] = text
        preconditions[s.key] = s.remote
        when = _first_share_time(ctx, s)
        if when is not None:
            modified[s.key] = when
    message = _message(upserts, deletes)
    return ChangeSet(upserts, deletes, version, preconditions, message, modified)


def _first_share_time(ctx: RunContext, s: Step) -> float | None:
    """For a key new on both sides: the local file's change time, when it is a sane
    past time (else None)."""
    if s.base is not None or s.remote is not None:
        return None
    st = ctx.team.stat(s.key)
    when = None if st is None else st.st_mtime
    return when if when is not None and FIRST_TIME_FLOOR < when < ctx.now else None


def _message(upserts: Mapping[str, str], deletes: Sequence[str], limit: int = 50) -> str:
    n = len(upserts) + len(deletes)
    lines = [f"teamsync: update {n} memor{'y' if n == 1 else 'ies'}", ""]
    entries = [f"M {k}" for k in sorted(upserts)] + [f"D {k}" for k in sorted(deletes)]
    lines.extend(entries[:limit])
    if len(entries) > limit:
        lines.append(f"... and {len(entries) - limit} more")
    return "\n".join(lines) + "\n"
