"""The backend interface and the plain data the engine plans with.

A backend knows how to talk to one kind of remote; the engine knows how to
reconcile. The engine only ever sees the types below, never GitPython or httpx2.

Contents travel as ``str`` (memory files are UTF-8 Markdown); a checksum is
``"sha256:" + hexdigest(content.encode("utf-8"))``, exactly as Claude Code's
wire format computes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from teamsync.wire import checksum as checksum  # re-exported: the engine plans on these


@dataclass(frozen=True)
class Snapshot:
    """What the remote holds right now, cheaply: keys and their checksums."""

    version: str | None
    """Opaque store version (REST checksum/ETag, git commit sha); None when empty."""
    checksums: Mapping[str, str]
    """key -> ``sha256:…`` for every live key."""
    changed_at: Mapping[str, float] = field(default_factory=dict)
    """key -> POSIX time the remote last changed it, when the backend knows."""
    rejected: Mapping[str, str] = field(default_factory=dict)
    """key -> reason, for remote entries the backend refused to even list (hostile keys)."""
    serial: int | None = None
    """The server's monotonic version counter (REST ``version``), when it sends one."""
    deleted: Mapping[str, float] = field(default_factory=dict)
    """key -> POSIX time the remote deleted it, for deletions it still lists (Claude
    Code's ``deletedEntries``)."""
    deleted_sums: Mapping[str, str] = field(default_factory=dict)
    """key -> checksum of the content the remote held when it deleted it (teamsync's
    ``deletedChecksums``): a never-synced local copy with exactly those bytes is that
    deleted version, and is not shared again (:mod:`teamsync.sync.tombstones`)."""
    checksum_at: tuple[int, str] | None = None
    """``(serial, store checksum)`` the server says it held at an earlier serial the
    client asked about (its mark), when it can tell (the ``delta`` extension)."""


@dataclass(frozen=True)
class ChangeSet:
    """What the engine asks the remote to become, guarded by preconditions."""

    upserts: Mapping[str, str]
    """key -> new content."""
    deletes: Sequence[str]
    """keys to delete (tombstones where the backend keeps them)."""
    base_version: str | None
    """The snapshot version this change was planned against (store-level precondition)."""
    base_checksums: Mapping[str, str | None]
    """key -> checksum the remote must still hold (None: must not exist) for per-key CAS."""
    message: str = ""
    """Human description (git commit message body; REST ignores it)."""
    modified: Mapping[str, float] = field(default_factory=dict)
    """key -> the sharer's own change time (POSIX), for keys shared for the first time:
    it travels with the push so teammates see the memory's true age."""


@dataclass(frozen=True)
class Applied:
    """The remote accepted the change set."""

    version: str | None
    checksums: Mapping[str, str]
    """key -> checksum now stored, for every key the change touched."""
    serial: int | None = None
    """The server's version counter after the change, when it sends one."""
    held: Mapping[str, str] = field(default_factory=dict)
    """key -> why, for upserts the remote refused while storing the rest (they stay
    local changes, reported as held back)."""


@dataclass(frozen=True)
class PreconditionFailed:
    """The remote moved since the snapshot; re-snapshot, reconcile, retry."""

    keys: Sequence[str] = ()
    """Keys known to conflict (empty when the backend only knows the store moved)."""


@runtime_checkable
class Backend(Protocol):
    """One remote. Implementations: :class:`teamsync.sync.git.GitBackend`,
    :class:`teamsync.sync.rest.RestBackend`."""

    name: str

    def snapshot(self) -> Snapshot:
        """List the remote's keys and checksums (no contents)."""
        ...

    def fetch(self, keys: Sequence[str]) -> Mapping[str, str]:
        """Return the contents of ``keys``; a key that vanished meanwhile is omitted.

        The backend validates keys and sizes it returns; the engine validates again.
        """
        ...

    def apply(self, changes: ChangeSet) -> Applied | PreconditionFailed:
        """Write ``changes`` atomically if the preconditions still hold."""
        ...

    def descends_from(self, version: str) -> bool | None:
        """Does the remote's current state descend from ``version`` (an earlier snapshot's)?

        Git: is that commit an ancestor of the fetched head. None when the
        backend cannot tell (REST compares :attr:`Snapshot.serial` instead).
        Optional: the engine treats a backend without it as "cannot tell".
        """
        ...

    def identity(self) -> str:
        """Who we are, short and filename-safe (used in conflict-copy names)."""
        ...

    def close(self) -> None:
        """Release connections, clones, locks."""
        ...
