"""The local writes of a round's incoming steps, every text through the gate.

A pulled text is written as it came (with this side's withheld index lines put
back); a merge is written when the 3-way merge (or the index's entry-aware one)
succeeds, else the local version is kept in a conflict copy and the remote's
takes the name. A refused incoming entry is not written. Nothing is written
here: :class:`teamsync.sync.apply.Applier` makes the writes durable.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence

from teamsync.errors import TeamsyncError
from teamsync.memdir.format import INDEX_NAME
from teamsync.memdir.lint import backup_index
from teamsync.security.guard import guard_write
from teamsync.sync.base import checksum
from teamsync.sync.context import RunContext
from teamsync.sync.indexmerge import merge_index
from teamsync.sync.merge import merge3, union_lines
from teamsync.sync.plan import (
    ADOPT,
    DELETE_LOCAL,
    FORGET,
    MERGE,
    PULL,
    Step,
    conflict_name,
    is_conflict_copy_of,
)
from teamsync.sync.report import LocalWrite, gate_reason


def prepare_incoming(
    ctx: RunContext,
    steps: Sequence[Step],
    texts: Mapping[str, str],
    changed_at: Mapping[str, float],
    local: Mapping[str, str],
    remote_keys: Iterable[str] = (),
) -> list[LocalWrite]:
    """The writes for ``steps`` (already decided: :mod:`teamsync.sync.decide`)."""
    writes: list[LocalWrite] = []
    taken = set(local) | set(remote_keys)
    mine = {s.key: ctx.local_text(s.key, s.local) for s in steps if s.action == ADOPT}
    adopted = {key: text for key, text in mine.items() if text is not None}
    arriving = {s.key: texts[s.key] for s in steps if s.action in (PULL, MERGE) and s.key in texts}
    # The base store keeps contents: a secret both sides hold is never recorded.
    refused = ctx.gate.check({**arriving, **adopted})
    for s in steps:
        problem = refused.get(s.key)
        if s.action == FORGET:
            writes.append(LocalWrite(s.key, FORGET))
        elif s.action == ADOPT:
            writes += _adopt(ctx, s, adopted.get(s.key), problem)
        elif s.action == DELETE_LOCAL:
            writes.append(LocalWrite(s.key, "delete", expect=s.local))
        elif s.key in arriving and problem is not None:
            why = f"remote version not written: {gate_reason(problem)}"
            ctx.report.reject(s.key, why, code="gate-held")
        elif s.key in arriving:
            remote, when = arriving[s.key], changed_at.get(s.key)
            if s.action == PULL:
                base = (checksum(remote), remote)
                text = ctx.restored(s.key, s.local, remote)
                writes.append(LocalWrite(s.key, PULL, text, s.local, base, changed_at=when))
            else:
                writes.extend(_merge(ctx, s, remote, when, local, taken))
    return writes


def _adopt(
    ctx: RunContext, s: Step, text: str | None, problem: TeamsyncError | None
) -> list[LocalWrite]:
    if text is None:
        return []
    if problem is not None:
        why = f"not recorded as synced: {gate_reason(problem)}"
        ctx.report.reject(s.key, why, held=True, code="gate-held")
        return []
    return [LocalWrite(s.key, ADOPT, base=(checksum(text), text))]


def _merge(
    ctx: RunContext,
    s: Step,
    remote: str,
    when: float | None,
    local: Mapping[str, str],
    taken: set[str],
) -> list[LocalWrite]:
    mine = ctx.local_text(s.key, s.local)
    if mine is None:
        return []
    merged = _merged(ctx, s, mine, remote, when)
    new_base = (checksum(remote), remote)
    if merged is not None:
        try:
            guard_write(s.key, merged, baseline=ctx.allowlist)
        except TeamsyncError as exc:
            why = f"merge not written: {gate_reason(exc)}"
            ctx.report.reject(s.key, why, held=True, code="gate-held")
            return []
        return [LocalWrite(s.key, MERGE, merged, s.local, new_base)]
    copy = next(
        (k for k, c in local.items() if c == s.local and is_conflict_copy_of(k, s.key)), None
    )
    out = []
    if copy is None:
        copy = conflict_name(s.key, ctx.who, ctx.now, taken)
        try:
            guard_write(copy, mine, baseline=ctx.allowlist)
        except TeamsyncError as exc:
            why = f"conflict not resolved: {gate_reason(exc)}"
            ctx.report.reject(s.key, why, held=True, code="gate-held")
            return []
        taken.add(copy)
        out.append(LocalWrite(copy, "copy", mine, None, advance=False))
    conflict = LocalWrite(s.key, "conflict", remote, s.local, new_base, changed_at=when, copy=copy)
    return [*out, conflict]


def _merged(ctx: RunContext, s: Step, mine: str, remote: str, when: float | None) -> str | None:
    """The merged text (this side's withheld index lines back), or None: a conflict."""
    base_text = (ctx.state.content(s.key) if s.base else None) or ""
    # Both sides created the key: an empty side is content too, never "merged" away.
    created_both = s.base is None and not (mine and remote)
    merged = None if created_both else merge3(base_text, mine, remote)
    if merged is None and s.key == INDEX_NAME and not created_both:
        merged = _merge_index(ctx, base_text, mine, remote, when)
    if merged is None and s.key.rsplit("/", 1)[-1] == INDEX_NAME:
        merged = union_lines(remote, mine)
    return None if merged is None else ctx.restored(s.key, s.local, merged)


def _merge_index(ctx: RunContext, base: str, mine: str, remote: str, when: float | None) -> str:
    """The entry-aware index merge; an entry both sides edited keeps the later edit,
    and the other line is recorded (report and a file under the state dir)."""
    st = ctx.team.stat(INDEX_NAME)
    ours_later = st is not None and when is not None and st.st_mtime > when
    merged, conflicts = merge_index(base, mine, remote, ours_later=ours_later)
    if not conflicts:
        return merged
    record = "\n".join(f"{c.entry}\n  kept: {c.kept}\n  set aside: {c.lost}" for c in conflicts)
    where = None
    if ctx.freshness_dir is not None:
        with contextlib.suppress(OSError):
            where = backup_index(
                ctx.freshness_dir / "index-conflicts",
                "team/" + INDEX_NAME,
                (record + "\n").encode("utf-8"),
                ctx.now,
            )
    kept_in = f" (kept in {where})" if where is not None else ""
    ctx.report.add(
        ctx.report.index_conflicts,
        [
            f"{c.entry}: both sides edited its entry; kept the later edit, "
            f"set aside {c.lost!r}{kept_in}"
            for c in conflicts
        ],
    )
    return merged
