"""Reconciliation planning on plain data: three checksum maps in, a list of steps out.

Per key, with ``b`` the base (last synced) checksum, ``l`` the local one and
``r`` the remote one (``None`` = absent):

======================  ==========================  =====================
situation               condition                   action
======================  ==========================  =====================
in sync                 l == r, b == l              nothing
agree (new base)        l == r != b                 ``adopt`` / ``forget``
changed here            r == b, l != b              ``push`` / ``delete_remote``
changed there           l == b, r != b              ``pull`` / ``delete_local``
deleted here, edited    l is None, r != b           ``pull`` (keep the edit)
edited here, deleted    r is None, l != b           ``push`` (keep the edit)
both edited             l, r, b all differ          ``merge`` (3-way or copy)
======================  ==========================  =====================

With no base (first sync) ``b`` is None, so an absence never reads as a
delete: nothing is deleted anywhere. Keys either side refused are skipped.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from teamsync.security.keys import fold_key

ADOPT, FORGET = "adopt", "forget"
PULL, DELETE_LOCAL, MERGE = "pull", "delete_local", "merge"
PUSH, DELETE_REMOTE = "push", "delete_remote"

INCOMING = frozenset({ADOPT, FORGET, PULL, DELETE_LOCAL, MERGE})
"""Actions that change the local side (or only the base)."""
OUTGOING = frozenset({PUSH, DELETE_REMOTE})
"""Actions that change the remote."""

_CONFLICT_SUFFIX = re.compile(r"\.conflict-\d{8}T\d{6}Z-[A-Za-z0-9._-]+$")
_UNSAFE_WHO = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Step:
    key: str
    action: str
    base: str | None
    local: str | None
    remote: str | None


def classify(b: str | None, loc: str | None, rem: str | None) -> str | None:
    """The action for one key (see the module table); None when nothing is to be done."""
    if loc == rem:
        if loc is None:
            return FORGET if b is not None else None
        return ADOPT if b != loc else None
    if loc == b:
        return PULL if rem is not None else DELETE_LOCAL
    if rem == b:
        return PUSH if loc is not None else DELETE_REMOTE
    if loc is None:
        return PULL
    if rem is None:
        return PUSH
    return MERGE


def plan(
    base: Mapping[str, str],
    local: Mapping[str, str],
    remote: Mapping[str, str],
    *,
    skip: Collection[str] = (),
    unknown: Collection[str] = (),
) -> list[Step]:
    """Every key that needs an action, sorted by key.

    Keys in ``skip`` and keys at or below a path in ``unknown`` (a local folder
    that could not be listed) get no step at all: unknown is not deleted.
    """
    steps = []
    for key in sorted(base.keys() | local.keys() | remote.keys()):
        if key in skip or is_below(key, unknown):
            continue
        b, loc, rem = base.get(key), local.get(key), remote.get(key)
        action = classify(b, loc, rem)
        if action is not None:
            steps.append(Step(key, action, b, loc, rem))
    return steps


def is_below(key: str, roots: Collection[str]) -> bool:
    """Is ``key`` one of ``roots`` or inside one of them (``root/…``)?"""
    if not roots:
        return False
    if key in roots:
        return True
    cut = key.find("/")
    while cut != -1:
        if key[:cut] in roots:
            return True
        cut = key.find("/", cut + 1)
    return False


def safe_who(who: str) -> str:
    """A short, file-name-safe form of an identity."""
    cleaned = _UNSAFE_WHO.sub("-", who).strip("-")[:32]
    return cleaned or "someone"


def conflict_name(key: str, who: str, now: float, taken: Collection[str]) -> str:
    """``<stem>.conflict-<UTC YYYYMMDDTHHMMSSZ>-<who>.md`` beside ``key``, not in ``taken``.

    A previous conflict suffix on the stem is replaced, so names do not grow. A
    name that folds like a taken one (``ﬁle.conflict-…`` beside ``file.conflict-…``,
    conflicts on both sides of an NFKC-only rename in one second) is taken too:
    the two could not be synced side by side.
    """
    folded = {fold_key(t) for t in taken}
    folder, _, name = key.rpartition("/")
    ext = name[-3:]
    stem = _CONFLICT_SUFFIX.sub("", name[:-3]) or "memory"
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    n = 1
    while True:
        suffix = f".conflict-{stamp}-{safe_who(who)}{'' if n == 1 else f'-{n}'}{ext}"
        head = stem
        while len((head + suffix).encode("utf-8")) > 200:
            head = head[:-1]
        candidate = f"{folder}/{head}{suffix}" if folder else head + suffix
        if candidate not in taken and fold_key(candidate) not in folded:
            return candidate
        n += 1


def is_conflict_copy_of(candidate: str, key: str) -> bool:
    """Is ``candidate`` a conflict copy of ``key`` (same folder, same stem)?"""
    folder, _, name = key.rpartition("/")
    c_folder, _, c_name = candidate.rpartition("/")
    if folder != c_folder or c_name == name or c_name[-3:] != name[-3:]:
        return False
    stripped = _CONFLICT_SUFFIX.sub("", c_name[:-3])
    return stripped != c_name[:-3] and stripped == _CONFLICT_SUFFIX.sub("", name[:-3])
