"""Deletions a remote still lists (Claude Code's ``deletedEntries``), honoured.

A key the remote lists as deleted, that this machine never synced (no base)
and holds only in a copy older than the deletion, is a teammate's delete that
this machine has not seen yet: planned against a base equal to the local copy,
it becomes an ordinary remote deletion (deleted here, with the usual backup and
guards), instead of being shared again. A local copy written after the
deletion is a new memory and is pushed as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

DeletedAt = Mapping[str, float]


def tombstoned_bases(
    deleted: DeletedAt,
    base: Mapping[str, str],
    local: Mapping[str, str],
    remote: Mapping[str, str],
    changed_at: Callable[[str], float | None],
) -> dict[str, str]:
    """key -> base checksum for each local copy a remote deletion supersedes.

    ``changed_at(key)`` is the local copy's change time (None: unknown, the copy is kept).
    """
    out: dict[str, str] = {}
    for key, when in deleted.items():
        if key in base or key in remote or key not in local:
            continue
        mine = changed_at(key)
        if mine is not None and mine <= when:
            out[key] = local[key]
    return out
