"""Recovering lost bases from the remote's history.

A key with no base (a first sync here, a lost state directory, an
interrupted first push) would otherwise be planned as if nobody had ever
synced it: a local copy the team has since deleted would be pushed back (the
deleted memory returns for everyone), and a local copy the team has since
edited would become a create/create conflict copy (a false conflict).

The remote's history (git commits, the server's history view) settles it:
when the local content is *exactly* a version the remote once held for that
key, this replica saw that version and has not changed it since, so it is
the base. The ordinary plan then pulls the newer version or applies the
delete. Content the remote never held is a local change and is kept.

A rename is an identity, not a coincidence of bytes (issue 31): content this
machine holds or held under *another* key (its base or past versions) may have
arrived here by a rename (pulled under one name, renamed back by hand), so it
proves nothing about this name and is never recovered; nor is a key a
recorded rename came from or went to. Such a file is planned as a local change
(pushed): at worst a memory comes back, never one lost under every name.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

PastChecksums = Callable[[Collection[str]], Mapping[str, Collection[str]]]
""":meth:`teamsync.sync.base.Backend.past_checksums`."""


def candidates(
    base: Mapping[str, str],
    local: Mapping[str, str],
    remote: Mapping[str, str],
    skip: Collection[str] = (),
) -> list[str]:
    """Keys with no base whose local content differs from the remote (or the remote lacks)."""
    return sorted(
        k for k, c in local.items() if k not in base and k not in skip and remote.get(k) != c
    )


def recover_bases(
    base: Mapping[str, str],
    local: Mapping[str, str],
    remote: Mapping[str, str],
    history: PastChecksums | None,
    skip: Collection[str] = (),
    synced_here: Callable[[str], bool] | None = None,
    known: Callable[[], Collection[str]] | None = None,
) -> dict[str, str]:
    """key -> recovered base checksum (the local one) for every key the history vouches for.

    ``synced_here(key)`` says the base store kept past versions of ``key`` (or a
    rename of it): such a key's base was not lost, and it is not recovered.
    ``known()`` gives the checksums this machine holds or held under any key: a
    local content among them is never taken as proof (see the module docstring).
    """
    keys = candidates(base, local, remote, skip)
    if synced_here is not None:
        keys = [k for k in keys if not synced_here(k)]
    if keys and known is not None:
        held = set(known())
        keys = [k for k in keys if local[k] not in held]
    if not keys or history is None:
        return {}
    past = history(keys)
    return {k: local[k] for k in keys if local[k] in past.get(k, ())}
