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

RESTORE_LOCAL_HINT = (
    "`teamsync pull --restore-local` (safe: download the remote's copy of every memory "
    "missing here; nothing is deleted anywhere)"
)
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
    restore_local: bool = False
    """``--restore-local``: a memory synced here whose file is missing is downloaded
    again instead of deleted on the remote (a wiped or moved folder)."""


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
    past: Callable[[str], Collection[str]] | None = None,
) -> Stop | None:
    """A :class:`Stop` when ``snap`` is missing, empty or older than ``mark``.

    With ``past`` (key -> the contents this machine replaced or removed), two more
    rollbacks are told: the server says it held another store checksum at the
    mark's serial than this machine saw there (restored, then written past the
    mark), and a remote with neither a counter nor a history that holds an older
    version of a memory this machine synced since. Either stops only when reading
    the remote would revert or delete something this machine synced.
    """
    seen = _seen(mark, base, snap, descends)
    if seen is None and past is not None:
        seen = _rolled_back(mark, base, snap, descends, past)
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
    if snap.went_back:
        return _went_back(snap.went_back)
    empty = bool(base) and not snap.checksums and not snap.rejected
    if mark is None or mark.version is None:
        return "is empty" if empty else None
    if snap.version == mark.version:
        return None
    said, moved_on = _by_serial(mark, snap)
    if said is not None:
        return said
    follows = descends(mark.version) if descends is not None else None
    if follows is False:
        return f"is at {snap.version[:12]}, which does not descend from {mark.version[:12]}"
    # emptied by ordinary deletes that descend from what we saw: a change, not a loss
    return "is empty" if empty and not (moved_on or follows) else None


def _went_back(keys: Sequence[str]) -> str:
    shown = ", ".join(printable(k) for k in keys[:5])
    more = f" and {len(keys) - 5} more" if len(keys) > 5 else ""
    n = len(keys)
    return (
        f"lists {n} memor{'y' if n == 1 else 'ies'} at an older version than this machine saw "
        f"there ({shown}{more}): the store was put back to an earlier state"
    )


def _by_serial(mark: RemoteMark, snap: Snapshot) -> tuple[str | None, bool]:
    """What the version counters say (when both sides have one): a verdict, and
    whether the remote moved on past the mark."""
    if snap.serial is None or mark.serial is None:
        return None, False
    if snap.serial < mark.serial:
        return f"is at version {snap.serial}, older than version {mark.serial} seen last", False
    if snap.serial == mark.serial:
        return f"holds other content under the same version {snap.serial} seen last", False
    return None, True


def _rolled_back(
    mark: RemoteMark | None,
    base: Mapping[str, str],
    snap: Snapshot,
    descends: Callable[[str], bool | None] | None,
    past: Callable[[str], Collection[str]],
) -> str | None:
    if mark is None or mark.version is None or snap.version in (None, mark.version):
        return None
    reverted = sorted(
        k for k, c in base.items() if snap.checksums.get(k, c) != c and snap.checksums[k] in past(k)
    )
    if _other_at_mark(mark, snap):
        gone = [k for k in base if k not in snap.checksums and k not in snap.rejected]
        if reverted or gone:
            return (
                f"holds other content at version {mark.serial} than this machine saw there "
                "(restored from a backup, then written again past it)"
            )
        return None  # whatever it lost, nothing this machine synced reads as a revert
    if snap.serial is not None or mark.serial is not None or not reverted:
        return None
    if descends is not None and descends(mark.version) is not None:
        return None  # it has a history that can tell
    return _reverted_without_history(reverted)


def _other_at_mark(mark: RemoteMark, snap: Snapshot) -> bool:
    """The server says it held another store checksum at the mark's serial than the mark."""
    at = snap.checksum_at
    return (
        at is not None
        and mark.serial is not None
        and at[0] == mark.serial
        and at[1] != mark.version
    )


def _reverted_without_history(reverted: list[str]) -> str:
    shown = ", ".join(printable(k) for k in reverted[:5])
    more = f" and {len(reverted) - 5} more" if len(reverted) > 5 else ""
    return (
        "sends no version counter and keeps no history, and it now holds an older version "
        f"of {len(reverted)} memor{'y' if len(reverted) == 1 else 'ies'} this machine synced "
        f"since ({shown}{more})"
    )


def restore_plan(
    steps: Sequence[Step],
    base: Mapping[str, str],
    past: Callable[[str], Collection[str]],
    remote: Mapping[str, str] | None = None,
    changed_at: Mapping[str, float] | None = None,
) -> list[Step]:
    """``--restore-remote``: for the keys the base knows, the local copy is the truth.

    A key this machine holds is pushed where the remote lost it or holds a
    version this machine had before; a remote version it never saw beside a
    local edit is merged as usual (a conflict copy keeps both). A key deleted
    here, and every key the base does not know, is planned as usual.

    With the remote's checksums and change times, a version this machine never
    saw that the remote wrote *after* the newest one it still holds at this
    machine's base (a teammate's write since the restore; one clock, the
    remote's) is pulled as usual, not overwritten.
    """
    agreed = [
        changed_at[k]
        for k, c in base.items()
        if remote is not None and changed_at is not None and remote.get(k) == c and k in changed_at
    ]
    since = max(agreed) if agreed else None
    out = []
    for s in steps:
        older = s.remote is None or s.remote in past(s.key)
        when = None if changed_at is None else changed_at.get(s.key)
        newer = not older and since is not None and when is not None and when > since
        lost = s.action == DELETE_LOCAL or (s.action == PULL and not newer)
        lost = lost or (s.action == MERGE and older)
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
    yes = f"`teamsync {command} --yes` if this is intended"
    ways = [yes, "`teamsync status` to see every change first"]
    if any(s.action == DELETE_REMOTE for s in steps if s.key in set(hit)):
        # files missing here: the first way forward brings them back; --yes deletes for everyone
        yes = f"`teamsync {command} --yes` only to delete them for everyone"
        ways = [RESTORE_LOCAL_HINT, "`teamsync status` to see every change first", yes]
    ways.append("`mass_change_share` in teamsync.yaml to change the limit (1 turns the guard off)")
    return Stop("mass_change", message, tuple(ways))


def missing_here(
    steps: Sequence[Step], base: Mapping[str, str], safety: Safety, command: str
) -> Stop | None:
    """A :class:`Stop` for a ``pull`` that finds most of the local side missing (the
    mass-change measure over the synced files gone here): a wiped or moved folder is not
    "up to date"."""
    if safety.yes or safety.mass_share >= 1 or safety.restore_local:
        return None
    gone = [s.key for s in steps if s.action == DELETE_REMOTE]
    total = max(len(base), 1)
    if len(gone) < safety.mass_min or len(gone) <= safety.mass_share * total:
        return None
    shown = ", ".join(printable(f"team/{k}") for k in gone[:10])
    more = f" and {len(gone) - 10} more" if len(gone) > 10 else ""
    message = (
        f"{len(gone)} of the {len(base)} memories synced here are missing from team/ "
        f"({len(gone) / total:.0%}; the limit is {safety.mass_share:.0%}): {shown}{more}. "
        "A wiped or moved folder? Nothing was changed."
    )
    return Stop(
        "mass_change",
        message,
        (
            RESTORE_LOCAL_HINT,
            "`teamsync status` to see every change first",
            f"`teamsync {command} --yes` to leave them missing here (a later `teamsync sync` "
            "would delete them for everyone)",
        ),
    )


def restore_local(steps: Sequence[Step]) -> list[Step]:
    """``--restore-local``: a synced file missing here is pulled again, not deleted remotely."""
    return [
        Step(s.key, PULL, s.base, s.local, s.remote) if s.action == DELETE_REMOTE else s
        for s in steps
    ]


def _destructive(s: Step, past: Callable[[str], Collection[str]]) -> bool:
    if s.action in (DELETE_LOCAL, DELETE_REMOTE):
        return True
    # a pull (or merge) that brings back a version this machine already replaced is a revert
    return s.action in (PULL, MERGE) and s.remote is not None and s.remote in past(s.key)


__all__ = [
    "Recovery",
    "Safety",
    "Stop",
    "lost_history",
    "mass_change",
    "missing_here",
    "restore_local",
    "restore_plan",
]
