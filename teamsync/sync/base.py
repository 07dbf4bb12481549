"""The backend interface and the plain data the engine plans with.

A backend knows how to talk to one kind of remote; the engine knows how to
reconcile. The engine only ever sees the types below, never GitPython or httpx2.

Contents travel as ``str`` (memory files are UTF-8 Markdown); a checksum is
``"sha256:" + hexdigest(content.encode("utf-8"))``, exactly as Claude Code's
wire format computes it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from teamsync.wire import checksum as checksum  # re-exported: the engine plans on these

if TYPE_CHECKING:
    from pathlib import Path

    from teamsync.sync.history import Change
    from teamsync.sync.restore import RemoteVersion
    from teamsync.sync.state import RemoteListing


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
    went_back: tuple[str, ...] = ()
    """Keys the remote lists at a version older than one this machine saw there, told
    by the backend's own record of versions (a memory store's ``memory_version_id`` and
    ``updated_at``): the remote was restored to an older state (the lost-history guard
    stops)."""


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


class ListingCache(Protocol):
    """Where a backend's listing outlives the process (the base store,
    :class:`~teamsync.sync.state.BaseStore`): the REST backend's ETag and hashes."""

    def listing(self) -> RemoteListing | None: ...

    def save_listing(self, listing: RemoteListing | None) -> None: ...


NO_REFUSALS: Mapping[str, str] = MappingProxyType({})
"""The default :attr:`Backend.refused_on_fetch`: a backend that vets every entry at
:meth:`~Backend.snapshot` refuses nothing later."""


def cannot_tell(version: str) -> bool | None:
    """The default :meth:`Backend.descends_from`: the backend cannot tell (None), and
    the guard judges by :attr:`Snapshot.serial` and the base's past versions."""
    return None


def no_history(keys: Collection[str]) -> Mapping[str, Collection[str]]:
    """The default :meth:`Backend.past_checksums`: no history, so no base is recovered
    (the first-sync plan stands: nothing deleted, conflicts kept as copies)."""
    return {}


def keeps_no_listing(cache: ListingCache) -> None:
    """The default :meth:`Backend.use_cache`: the backend keeps nothing across runs."""


def nothing_to_put_back() -> None:
    """The default :meth:`Backend.keep_listing_at_mark`: no kept listing to put back."""


@runtime_checkable
class Backend(Protocol):
    """One remote: the whole contract the engine relies on (see docs/architecture.md).

    Every member is required, so a backend or a wrapper that lacks one is refused
    by :func:`check_backend` before a run, never silently run without a safety
    check. The optional ones have a named default: a backend that has nothing to
    say inherits it from :class:`BackendDefaults`; a wrapper forwards them all
    (:class:`ForwardingBackend`). Implementations:
    :class:`teamsync.sync.git.GitBackend`, :class:`teamsync.sync.rest.RestBackend`,
    :class:`teamsync.sync.memstore.MemstoreBackend` and, for the tests,
    ``testing.memory_backend.MemoryBackend``.
    """

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

    def identity(self) -> str:
        """Who we are, short and filename-safe (used in conflict-copy names)."""
        ...

    def close(self) -> None:
        """Release connections, clones, locks."""
        ...

    @property
    def refused_on_fetch(self) -> Mapping[str, str]:
        """key -> why, for listed entries whose content the last :meth:`fetch` refused
        (reported as rejected, never pulled). Default :data:`NO_REFUSALS`."""
        ...

    def descends_from(self, version: str) -> bool | None:
        """Does the remote's current state descend from ``version`` (an earlier snapshot's)?

        The force-push check of the lost-history guard. Git: is that commit an
        ancestor of the fetched head. None when the backend cannot tell (REST
        compares :attr:`Snapshot.serial` instead). Default :func:`cannot_tell`.
        """
        ...

    def past_checksums(self, keys: Collection[str]) -> Mapping[str, Collection[str]]:
        """key -> every checksum the remote's history holds for it (any order): lost
        bases are recovered from it (:mod:`teamsync.sync.recover`). Default
        :func:`no_history`."""
        ...

    def use_cache(self, cache: ListingCache) -> None:
        """Keep the listing across runs in ``cache``; called once, before the first
        snapshot. Default :func:`keeps_no_listing`."""
        ...

    def keep_listing_at_mark(self) -> None:
        """A guard stopped the run: put back the listing kept when it started, so the
        next run asks about the mark's version again. Default :func:`nothing_to_put_back`."""
        ...


MEMBERS: tuple[str, ...] = (
    "name",
    "snapshot",
    "fetch",
    "apply",
    "identity",
    "close",
    "refused_on_fetch",
    "descends_from",
    "past_checksums",
    "use_cache",
    "keep_listing_at_mark",
)
"""Every member of :class:`Backend` (a test checks the Protocol declares exactly these)."""


def missing_members(backend: object) -> list[str]:
    """The members of the contract ``backend`` lacks (empty: it is a :class:`Backend`)."""
    return [m for m in MEMBERS if not hasattr(backend, m)]


def check_backend(backend: object) -> Backend:
    """``backend`` itself, once it is known to declare the whole contract.

    A wrapper that forwards only some members would otherwise run without the
    checks the others carry (a force-pushed remote not told from a moved one);
    it is refused, naming what it lacks.
    """
    missing = missing_members(backend)
    if missing or not isinstance(backend, Backend):
        raise TypeError(
            f"{type(backend).__name__} is not a teamsync Backend: it lacks "
            f"{', '.join(missing)}. Inherit the defaults from BackendDefaults, or "
            "forward every member (ForwardingBackend)"
        )
    return backend


class BackendDefaults:
    """The named default of every optional member; a backend inherits this and
    overrides what it supports (pre-commit's ``lang_base`` is the model)."""

    refused_on_fetch: Mapping[str, str] = NO_REFUSALS

    def descends_from(self, version: str) -> bool | None:
        return cannot_tell(version)

    def past_checksums(self, keys: Collection[str]) -> Mapping[str, Collection[str]]:
        return no_history(keys)

    def use_cache(self, cache: ListingCache) -> None:
        keeps_no_listing(cache)

    def keep_listing_at_mark(self) -> None:
        nothing_to_put_back()


class ForwardingBackend:
    """A wrapper that forwards every member of the contract to ``inner``.

    Subclass it and override what the wrapper changes: the members it does not
    override still reach the wrapped backend, so no safety check is lost (a
    wrapper must never inherit :class:`BackendDefaults`: the defaults would
    silently replace the wrapped backend's answers).
    """

    def __init__(self, inner: Backend) -> None:
        self.inner = check_backend(inner)
        self.name = inner.name

    def snapshot(self) -> Snapshot:
        return self.inner.snapshot()

    def fetch(self, keys: Sequence[str]) -> Mapping[str, str]:
        return self.inner.fetch(keys)

    def apply(self, changes: ChangeSet) -> Applied | PreconditionFailed:
        return self.inner.apply(changes)

    def identity(self) -> str:
        return self.inner.identity()

    def close(self) -> None:
        self.inner.close()

    @property
    def refused_on_fetch(self) -> Mapping[str, str]:
        return self.inner.refused_on_fetch

    def descends_from(self, version: str) -> bool | None:
        return self.inner.descends_from(version)

    def past_checksums(self, keys: Collection[str]) -> Mapping[str, Collection[str]]:
        return self.inner.past_checksums(keys)

    def use_cache(self, cache: ListingCache) -> None:
        self.inner.use_cache(cache)

    def keep_listing_at_mark(self) -> None:
        self.inner.keep_listing_at_mark()


# -- optional capabilities of the commands (not the engine's: no safety check rides on
# them), checked by type: a backend without one makes the command say so.
@runtime_checkable
class Logs(Protocol):
    """A remote that keeps a history: ``teamsync log`` and ``teamsync restore --at``."""

    def log(self, key: str | None, limit: int) -> list[Change]:
        """The newest ``limit`` changes (of ``key``), newest first."""
        ...

    def version_at(self, key: str, ref: str) -> RemoteVersion:
        """``key`` as the remote held it at ``ref``."""
        ...


@runtime_checkable
class ChecksServer(Protocol):
    """A remote that can tell, after an empty snapshot, that the URL is not one at all."""

    def check_server(self) -> None:
        """Raise a ConfigError naming what answered when it is not a remote of this kind."""
        ...


@runtime_checkable
class CertifiesNoop(Protocol):
    """A remote the CLI's fast no-op path can answer for (git: :mod:`teamsync.sync.noop`)."""

    path: Path
    """The local clone the fast path asks."""

    def noop_listing(self) -> tuple[str, Mapping[str, str]] | None:
        """The fetched head and its vetted listing, when it refuses nothing."""
        ...
