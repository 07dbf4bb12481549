"""Deletions a remote still lists (Claude Code's ``deletedEntries``), honoured safely.

A teammate deleted a memory; this machine holds a copy of it that it never synced
(no base), so planning alone would share it again. The copy is taken to be the
deleted version, and is deleted here (planned against a base equal to it: the
usual backup and guards apply), only when both hold:

- its bytes are exactly the version the remote recorded and then deleted: the
  checksum the deletion's entry names (teamsync's ``deletedChecksums``, beside
  ``deletedEntries``). A copy that differs in one byte is a memory the remote
  never held under that name, and is pushed. (The remote's history view gives the
  same proof through :mod:`teamsync.sync.recover`; the entry saves that request.)
- it is not a rename made here, under the rule :mod:`teamsync.sync.recover` uses:
  the key is not one this machine synced or renamed, and its bytes are not among
  those this machine holds or held under any key. A memory renamed back onto a
  deleted name carries the deleted version's bytes (and its old modification
  time), yet it is the memory that left its other name: it is kept and pushed.

Time alone never deletes anything: a server that lists only a deletion time (a
plain legacy server) gives no proof, so the copy is kept and shared again. A
deletion may be undone that way; a memory is never lost.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping


def tombstoned_bases(
    deleted_sums: Mapping[str, str],
    base: Mapping[str, str],
    local: Mapping[str, str],
    remote: Mapping[str, str],
    synced_here: Callable[[str], bool],
    known: Callable[[], Collection[str]],
) -> dict[str, str]:
    """key -> base checksum for each local copy that is exactly a version the remote
    deleted (``deleted_sums``: key -> checksum the deletion names).

    ``synced_here(key)`` and ``known()`` are :func:`teamsync.sync.recover.recover_bases`'s.
    """
    keys = [
        k
        for k, sha in deleted_sums.items()
        if k not in base and k not in remote and local.get(k) == sha and not synced_here(k)
    ]
    if not keys:
        return {}
    held = set(known())
    return {k: deleted_sums[k] for k in keys if deleted_sums[k] not in held}
