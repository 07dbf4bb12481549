"""Bringing back a memory a sync deleted or replaced on this machine.

The base store keeps every content a sync removed or overwrote
(:meth:`~teamsync.sync.state.BaseStore.past`). :func:`restore` writes one of
those versions back into ``team/`` through the write guard (key checks, secret
scan, atomic no-follow write); the next ``teamsync sync`` shares it again as an
ordinary local change. It never overwrites a different current file unless
asked (``force``), and then keeps that current content among the past versions
first, so a restore can itself be undone.

Versions are chosen by :func:`pick`: the newest, or the newest at or before a
moment (``before``), so ``restore --at`` needs no other machinery.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from teamsync.errors import RestoreError
from teamsync.security.fs import SafeDir
from teamsync.security.guard import safe_write
from teamsync.security.keys import validate_key
from teamsync.security.names import printable
from teamsync.sync.base import checksum
from teamsync.sync.local import read_memory
from teamsync.sync.state import BaseStore, PastVersion


@dataclass(frozen=True)
class Restored:
    key: str
    version: PastVersion
    replaced: bool
    """A different current file was overwritten (kept among the past versions)."""
    unchanged: bool = False
    """The file already held that content; nothing was written."""


def pick(versions: Sequence[PastVersion], before: float | None = None) -> PastVersion | None:
    """The newest of ``versions`` (newest first), or the newest at or before ``before``."""
    for v in versions:
        if before is None or v.at <= before:
            return v
    return None


def restore(
    team: SafeDir,
    state: BaseStore,
    key: str,
    *,
    before: float | None = None,
    force: bool = False,
) -> Restored:
    """Write back the newest kept version of ``key`` (at or before ``before``)."""
    validate_key(key)
    version = pick(state.past(key), before)
    if version is None:
        raise RestoreError(
            f"no earlier version of team/{printable(key)} is kept on this machine; "
            "`teamsync restore --list` shows what can be restored"
        )
    replaced, unchanged = _bring_back(
        team, state, key, version.content, force, "the version to restore"
    )
    return Restored(key, version, replaced=replaced, unchanged=unchanged)


def _bring_back(
    team: SafeDir, state: BaseStore, key: str, text: str, force: bool, what: str
) -> tuple[bool, bool]:
    """Write ``text`` at ``key`` as a local change: ``(replaced, unchanged)``.

    A different current file is replaced only with ``force``, and is kept among
    the past versions first, so the restore can itself be undone.
    """
    try:
        current: str | None = read_memory(team, key)
    except FileNotFoundError:
        current = None
    if current == text:
        return False, True
    if current is not None and not force:
        raise RestoreError(
            f"team/{printable(key)} exists and differs from {what}; "
            "rerun with --force to replace it (its current content is kept and can be "
            "restored in turn)"
        )
    if current is not None:
        state.keep_past(key, checksum(current), current, "replaced by restore")
    safe_write(team, key, text)
    _keep_as_change(state, key)
    return current is not None, False


@dataclass(frozen=True)
class RemoteVersion:
    """What a backend knows of ``key`` at a remote version (``restore --at``)."""

    key: str
    ref: str
    """The commit sha or the server's history id it was asked for."""
    content: str | None
    """The text (git); None when the remote keeps only its checksum (REST history)."""
    checksum: str | None
    at: float = 0.0


def restore_remote(
    team: SafeDir, state: BaseStore, found: RemoteVersion, *, force: bool = False
) -> tuple[str, bool, bool]:
    """Write ``found`` back into ``team/``: ``(text, replaced, unchanged)``.

    REST history keeps checksums only: the text then comes from this machine's
    base or past versions with that checksum, else the run fails naming why.
    """
    key = found.key
    validate_key(key)
    text = found.content
    if text is None and found.checksum is not None:
        held = state.content(key)
        if held is not None and checksum(held) == found.checksum:
            text = held
        for v in state.past(key):
            if text is None and v.checksum == found.checksum:
                text = v.content
    if text is None:
        raise RestoreError(
            f"version {printable(found.ref)} of team/{printable(key)} "
            + (
                "was a delete: there is no content to bring back"
                if found.checksum is None
                else "is known to the server only by its checksum, and this machine keeps "
                "no copy of it; `teamsync restore --list` shows the versions kept here"
            )
        )
    replaced, unchanged = _bring_back(
        team, state, key, text, force, f"version {printable(found.ref)}"
    )
    return text, replaced, unchanged


def _keep_as_change(state: BaseStore, key: str) -> None:
    """Make a restored key with no base a local edit, so the next sync pushes it.

    Without a base, the next sync would recover one from the remote's history
    (:mod:`teamsync.sync.recover`): the restored content *is* a version the
    remote once held, so the remote's delete would be applied again and the
    restore undone. The empty text as base makes it "edited here": a push when
    the remote deleted it, a merge when the remote holds another version.
    """
    if state.content(key) is None:
        state.advance({key: (checksum(""), "")})


__all__ = ["RemoteVersion", "Restored", "pick", "restore", "restore_remote"]
