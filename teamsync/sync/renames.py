"""A case-only (or normalisation-only) rename that races a teammate's edit.

The planner works key by key, so ``Deploy.md`` → ``deploy.md`` is a delete and
a create, and an edit of ``Deploy.md`` made meanwhile beats the delete: both
names would end up wanted on the remote, which cannot hold them side by side
(and a case-insensitive disk cannot either). Before planning, each round
follows such a pair so the edit and the rename meet under one name:

- **the remote renamed, this side edited the old name** (``Deploy.md`` in the
  base and edited here; the remote has only ``deploy.md``, new): the local
  file is moved to the new name and its base with it, so the normal plan
  pushes the edit onto the new name, or 3-way merges it with an edit made
  there;
- **both sides created it, spelled differently** (``Deploy.md`` new here,
  ``deploy.md`` new on the remote): the local file takes the remote's
  spelling, and the two meet as an ordinary create/create (a merge, or a
  conflict copy holding this side's text). When both sides renamed one
  memory two ways (``fixnote.md`` to ``Fixnote.md`` there, to ``ﬁxnote.md``
  here), the spelling only the base still holds carries its base over, so the
  two meet 3-way: an edit made with the rename is pushed, not copied aside;
- **this side renamed, the remote edited the old name** (``deploy.md`` new
  here, ``Deploy.md`` edited on the remote): for this round the local file
  goes back to the old name, so the edit is pulled (or merged) into it; when
  the round ends, the file is renamed again, and the next round pushes the
  rename with the edit in it.

A local move keeps the file's bytes and modification time; it deletes the
old name before writing the new one, as a case-insensitive disk needs, and
the old text stays among the base store's past versions.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, MutableMapping
from dataclasses import dataclass, field

from teamsync.errors import TeamsyncError
from teamsync.security.fs import SafeDir
from teamsync.security.keys import fold_key
from teamsync.sync.base import checksum
from teamsync.sync.plan import DELETE_LOCAL, DELETE_REMOTE, PULL, PUSH, Step, is_below
from teamsync.sync.state import BaseStore


@dataclass
class Renames:
    """What :func:`follow_renames` did: ``followed`` (old, new) pairs taken from the
    remote, and ``redo`` (old, new) local renames to put back when the round ends."""

    followed: list[tuple[str, str]] = field(default_factory=list)
    redo: list[tuple[str, str]] = field(default_factory=list)


def _pairs(keys: Collection[str]) -> list[tuple[str, str]]:
    groups: dict[str, list[str]] = {}
    for key in keys:
        groups.setdefault(fold_key(key), []).append(key)
    return [(a, b) for a, b in (sorted(g) for g in groups.values() if len(g) == 2)]


def _stored(team: SafeDir, key: str) -> bool:
    """Is there an entry spelled exactly ``key`` (a case-insensitive lookup would say yes
    for its case variant)? True when the folder cannot be listed: then nothing moves."""
    folder, _, name = key.rpartition("/")
    try:
        return name in os.listdir(team.root / folder if folder else team.root)
    except FileNotFoundError:
        return False
    except OSError:
        return True


def move_local(team: SafeDir, state: BaseStore, old: str, new: str) -> bool:
    """Rename the local file ``old`` to ``new`` (bytes and mtime kept); False if not done."""
    try:
        st = team.stat(old)
        if st is None or _stored(team, new):
            return False
        data = team.read_bytes(old)
        text = data.decode("utf-8", "replace")
        state.keep_past(old, checksum(text), text, f"renamed to {new}")
        team.delete(old)
    except (OSError, TeamsyncError):
        return False
    try:
        team.write_bytes(new, data, mtime=st.st_mtime)
    except (OSError, TeamsyncError):
        team.write_bytes(old, data, mtime=st.st_mtime)  # put it back; raises if it cannot
        return False
    return True


@dataclass(frozen=True)
class Move:
    """One local move a round wants: ``follow`` (the remote renamed ``old`` to ``new``,
    this side edited ``old``), ``meet`` (created under two spellings: ``old`` here takes
    the remote's ``new``) or ``redo`` (this side renamed ``old`` to ``new`` and the
    remote edited ``old``: the file goes back to ``old`` for the round)."""

    old: str
    new: str
    kind: str
    rebase: str | None = None
    """``meet``: a third spelling only the base still holds (the name both sides renamed
    from); its base moves to ``new``, so the two sides meet 3-way, not as two creates."""

    @property
    def source(self) -> str:
        """The local name the file is moved from."""
        return self.new if self.kind == "redo" else self.old

    @property
    def target(self) -> str:
        return self.old if self.kind == "redo" else self.new


def find_renames(
    base: Mapping[str, str],
    local: Mapping[str, str],
    remote: Mapping[str, str],
    skip: Collection[str],
    unknown: Collection[str],
) -> list[Move]:
    """The moves that line up case-only renames with edits made meanwhile (see the module
    docstring). Pure: nothing is moved, so a guard can stop the round first."""
    moves = []
    gone = {fold_key(k): k for k in base if k not in local and k not in remote and k not in skip}
    # A spelling neither side holds any more (only the base remembers it) takes no part:
    # ``fixnote.md`` renamed to ``Fixnote.md`` there and to ``ﬁxnote.md`` here is a pair.
    keys = [k for k in local.keys() | remote.keys() if k not in skip and not is_below(k, unknown)]
    for a, b in _pairs(keys):
        for old, new in ((a, b), (b, a)):
            move = _move(old, new, base, local, remote, gone)
            if move is not None:
                moves.append(move)
    return moves


def _move(
    old: str,
    new: str,
    base: Mapping[str, str],
    local: Mapping[str, str],
    remote: Mapping[str, str],
    gone: Mapping[str, str],
) -> Move | None:
    """The move that lines up ``old`` with ``new`` (two spellings of one name), if any."""
    if old not in base and new not in base:
        only_here = old in local and old not in remote
        if only_here and new in remote and new not in local:
            # a create/create under two spellings, or one memory renamed two ways
            return Move(old, new, "meet", gone.get(fold_key(new)))
        return None
    if old not in base or new in base:
        return None
    if old in local and new not in local and new in remote and old not in remote:
        return Move(old, new, "follow") if local[old] != base[old] else None
    if new in local and old not in local and old in remote and new not in remote:
        return Move(old, new, "redo") if remote[old] != base[old] else None
    return None


def preview(
    moves: Collection[Move], local: Mapping[str, str], base: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """``local`` and ``base`` as they would be once ``moves`` are made."""
    after, after_base = dict(local), dict(base)
    for m in moves:
        if m.source in after:
            after[m.target] = after.pop(m.source)
        moved = m.old if m.kind == "follow" else m.rebase
        if moved is not None and moved in after_base:
            after_base[m.new] = after_base.pop(moved)
    return after, after_base


def make_moves(
    team: SafeDir,
    state: BaseStore,
    moves: Collection[Move],
    local: MutableMapping[str, str],
    base: Mapping[str, str],
) -> Renames:
    """Make ``moves`` (:func:`find_renames`); ``local`` is updated to the moves made and
    the base store re-keyed for a followed remote rename."""
    done = Renames()
    for m in moves:
        if not move_local(team, state, m.source, m.target):
            continue
        local[m.target] = local.pop(m.source)
        moved = m.old if m.kind == "follow" else m.rebase
        if moved is not None and moved in base:
            state.advance({m.new: (base[moved], state.content(moved) or ""), moved: None})
        if m.kind == "redo":
            done.redo.append((m.old, m.new))
        else:
            done.followed.append((m.old, m.new))
    return done


def redo_renames(team: SafeDir, state: BaseStore, redo: Collection[tuple[str, str]]) -> bool:
    """Put back this side's renames after the round; True when any was put back."""
    again = False
    for old, new in redo:
        if _stored(team, old) and not _stored(team, new):
            again = move_local(team, state, old, new) or again
    return again


def renames_in(steps: Collection[Step], *, incoming: bool) -> list[tuple[str, str, str]]:
    """``(old, new, checksum)`` for each rename in a round's steps: a delete and a create
    of the same content (pulled when ``incoming``, else pushed), paired one to one."""
    gone: dict[str, list[str]] = {}
    deleting, creating = (DELETE_LOCAL, PULL) if incoming else (DELETE_REMOTE, PUSH)
    for s in sorted(steps, key=lambda s: s.key):
        content = s.local if incoming else s.remote
        if s.action == deleting and content is not None:
            gone.setdefault(content, []).append(s.key)
    out = []
    for s in sorted(steps, key=lambda s: s.key):
        content = s.remote if incoming else s.local
        fresh = s.base is None and (s.local if incoming else s.remote) is None
        if s.action == creating and fresh and content is not None and gone.get(content):
            out.append((gone[content].pop(0), s.key, content))
    return out
