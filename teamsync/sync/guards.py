"""The guards that stop a sync before it destroys what the remote forgot.

Pure functions over plain data; the engine calls them before it changes
anything and turns a :class:`Stop` into a report that changes nothing, exits 1
and names the way forward:

- :func:`lost_history`: the remote is missing, empty, or older than what this
  machine last synced with (a REST 404 or a version counter going back; a git
  branch gone or force-pushed to a commit that does not descend from the last
  synced one). Reading that as "everything was deleted / reverted" is how a
  lost server database becomes lost memories on every laptop.
- :func:`mass_change`: a sync that would delete or revert more than a share of
  the team's memories (as Dropbox and Syncthing ask before a mass delete).

The flags that get past each (``--restore-remote``, ``--accept-remote``,
``--yes``) are documented in docs/sync.md, "What teamsync will never do".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from teamsync.security.names import printable
from teamsync.sync.base import Snapshot
from teamsync.sync.plan import DELETE_LOCAL, DELETE_REMOTE, MERGE, PULL, PUSH, Step
from teamsync.sync.state import RemoteMark

Recovery = Literal["restore-remote", "accept-remote"]
DEFAULT_MASS_SHARE = 0.25
"""Stop when a sync would delete or revert more than this share of the team's memories…"""
DEFAULT_MASS_MIN = 5
"""…and at least this many of them (deleting 1 of 2 is an ordinary edit)."""

RESTORE_HINT = "`teamsync sync --restore-remote` (safe: re-push your copies)"
ACCEPT_HINT = (
    "`teamsync sync --accept-remote` (take the remote's state; what it removes here "
    "stays recoverable with `teamsync restore KEY`)"
)


@dataclass(frozen=True)
class Safety:
    """What the person running the sync allowed (CLI flags and teamsync.yaml)."""

    yes: bool = False
    """``--yes``: go past the mass-change guard."""
    recover: Recovery | None = None
    """How to go on when the remote lost history (None: stop)."""
    mass_share: float = DEFAULT_MASS_SHARE
    mass_min: int = DEFAULT_MASS_MIN


@dataclass(frozen=True)
class Stop:
    """Why a run changed nothing, and the commands that go on."""

    kind: Literal["remote_lost_history", "mass_change"]
    message: str
    way_forward: Sequence[str] = field(default_factory=tuple)

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "message": self.message, "way_forward": list(self.way_forward)}


def lost_history(
    mark: RemoteMark | None,
    base: Mapping[str, str],
    snap: Snapshot,
    descends: Callable[[str], bool | None] | None,
    where: str,
) -> Stop | None:
    """A :class:`Stop` when ``snap`` is missing, empty or older than ``mark``."""
    seen = _seen(mark, base, snap, descends)
    if seen is None:
        return None
    held = f"{len(base)} memor{'y' if len(base) == 1 else 'ies'}"
    message = (
        f"{printable(where)} {seen}, but this machine last synced {held} with it. "
        "The remote lost history (a lost or restored database, a deleted or force-pushed "
        "branch); reading that as deletions and reverts would destroy memories, so nothing "
        "was changed here. Your copies are intact."
    )
    return Stop("remote_lost_history", message, (RESTORE_HINT, ACCEPT_HINT))


def _seen(
    mark: RemoteMark | None,
    base: Mapping[str, str],
    snap: Snapshot,
    descends: Callable[[str], bool | None] | None,
) -> str | None:
    existed = (mark is not None and mark.version is not None) or bool(base)
    if snap.version is None:
        return "holds nothing (no store, or no branch)" if existed else None
    if base and all(snap.checksums.get(k) == c for k, c in base.items()):
        return None  # it holds all this machine last synced (e.g. a teammate restored it)
    empty = bool(base) and not snap.checksums and not snap.rejected
    if mark is None or mark.version is None:
        return "is empty" if empty else None
    if snap.version == mark.version:
        return None
    moved_on = False
    if snap.serial is not None and mark.serial is not None:
        if snap.serial < mark.serial:
            return f"is at version {snap.serial}, older than version {mark.serial} seen last"
        if snap.serial == mark.serial:
            return f"holds other content under the same version {snap.serial} seen last"
        moved_on = True
    follows = descends(mark.version) if descends is not None else None
    if follows is False:
        return f"is at {snap.version[:12]}, which does not descend from {mark.version[:12]}"
    # emptied by ordinary deletes that descend from what we saw: a change, not a loss
    return "is empty" if empty and not (moved_on or follows) else None


def restore_plan(
    steps: Sequence[Step], base: Mapping[str, str], past: Callable[[str], Collection[str]]
) -> list[Step]:
    """``--restore-remote``: for the keys the base knows, the local copy is the truth.

    A key this machine holds is pushed where the remote lost it or holds a
    version this machine had before; a remote version it never saw beside a
    local edit is merged as usual (a conflict copy keeps both). A key deleted
    here, and every key the base does not know, is planned as usual.
    """
    out = []
    for s in steps:
        older = s.remote is None or s.remote in past(s.key)
        lost = s.action in (PULL, DELETE_LOCAL) or (s.action == MERGE and older)
        if s.key in base and s.local is not None and lost:
            out.append(Step(s.key, PUSH, s.base, s.local, s.remote))
        else:
            out.append(s)
    return out


def mass_change(
    steps: Sequence[Step],
    base: Mapping[str, str],
    past: Callable[[str], Collection[str]],
    safety: Safety,
    command: str,
) -> Stop | None:
    """A :class:`Stop` when ``steps`` delete or revert too large a share of ``base``."""
    if safety.yes or safety.mass_share >= 1:
        return None
    hit = [s.key for s in steps if _destructive(s, past)]
    total = max(len(base), 1)
    if len(hit) < safety.mass_min or len(hit) <= safety.mass_share * total:
        return None
    shown = ", ".join(printable(f"team/{k}") for k in hit[:10])
    more = f" and {len(hit) - 10} more" if len(hit) > 10 else ""
    message = (
        f"this {command} would delete or revert {len(hit)} of the team's {len(base)} memories "
        f"({len(hit) / total:.0%}; the limit is {safety.mass_share:.0%}): {shown}{more}. "
        "Nothing was changed."
    )
    return Stop(
        "mass_change",
        message,
        (
            f"`teamsync {command} --yes` if this is intended",
            "`teamsync status` to see every change first",
            "`mass_change_share` in teamsync.yaml to change the limit (1 turns the guard off)",
        ),
    )


def _destructive(s: Step, past: Callable[[str], Collection[str]]) -> bool:
    if s.action in (DELETE_LOCAL, DELETE_REMOTE):
        return True
    # a pull (or merge) that brings back a version this machine already replaced is a revert
    return s.action in (PULL, MERGE) and s.remote is not None and s.remote in past(s.key)


__all__ = ["Recovery", "Safety", "Stop", "lost_history", "mass_change", "restore_plan"]
