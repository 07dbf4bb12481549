"""A minimal in-memory backend: the whole :class:`~teamsync.sync.base.Backend` contract
over a Python object, with no network, no git and no server (dulwich's ``MemoryRepo``
is the model).

:class:`MemoryRemote` is the shared remote: a chain of versions, each the full
key -> text map it held, with a parent, so history (:meth:`MemoryBackend.past_checksums`)
and ancestry (:meth:`MemoryBackend.descends_from`, the force-push check) are real.
:meth:`MemoryRemote.force_push` starts a new chain, as ``git push --force`` of an
unrelated branch would. :class:`MemoryBackend` implements every member itself
(none comes from :class:`~teamsync.sync.base.BackendDefaults`), vets what it lists
as the other backends do, and writes under the same two preconditions: the store
version and each key's checksum.

:func:`make_memory_team` gives teammates (:class:`MemoryMate`) that sync through
the real engine and base store, exactly as :class:`testing.gitrepos.Teammate` does,
with ``backend: memory`` in their ``teamsync.yaml`` (registered in
:data:`teamsync.sync.BACKENDS` while this module is imported).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from teamsync.config import Settings
from teamsync.security.keys import key_clashes
from teamsync.sync import BACKENDS
from teamsync.sync.base import (
    Applied,
    ChangeSet,
    ListingCache,
    PreconditionFailed,
    Snapshot,
    checksum,
)
from teamsync.sync.config import SyncConfig, save_config
from teamsync.sync.local import file_problem
from testing.gitrepos import Member

BACKENDS.setdefault("memory", "testing.memory_backend:MemoryBackend")
_REMOTES: dict[str, MemoryRemote] = {}
_IDS = itertools.count(1)


@dataclass(frozen=True)
class Version:
    id: str
    files: Mapping[str, str]
    parent: Version | None
    changed_at: Mapping[str, float]


@dataclass
class MemoryRemote:
    """One shared remote, named by its URL (``memory://<name>``)."""

    url: str
    head: Version | None = None
    writes: int = 0
    """Change sets accepted (the tests count pushes with it)."""
    seen: dict[str, Version] = field(default_factory=dict)

    @classmethod
    def named(cls, url: str) -> MemoryRemote:
        return _REMOTES.setdefault(url, cls(url))

    def files(self) -> dict[str, str]:
        return dict(self.head.files) if self.head is not None else {}

    def commit(self, files: Mapping[str, str], parent: Version | None) -> Version:
        now = time.time()
        old = parent.files if parent is not None else {}
        kept = parent.changed_at if parent is not None else {}
        stamps = {k: kept[k] if old.get(k) == t else now for k, t in files.items()}
        version = Version(f"m{next(_IDS)}", dict(files), parent, stamps)
        self.seen[version.id] = version
        self.head = version
        return version

    def force_push(self, files: Mapping[str, str]) -> None:
        """Replace the remote with an unrelated history holding ``files``."""
        self.commit(files, None)


class MemoryBackend:
    """A :class:`~teamsync.sync.base.Backend` over a :class:`MemoryRemote`."""

    name = "memory"

    def __init__(self, remote: MemoryRemote, who: str = "someone") -> None:
        self.remote, self.who = remote, who
        self._head: Version | None = None
        self._listed: dict[str, str] = {}
        self._refused: dict[str, str] = {}

    def snapshot(self) -> Snapshot:
        """The head's keys and checksums; a key no memory may have is refused here."""
        self._head = head = self.remote.head
        self._refused = {}
        if head is None:
            self._listed = {}
            return Snapshot(version=None, checksums={})
        sums: dict[str, str] = {}
        rejected: dict[str, str] = {}
        for key, text in sorted(head.files.items()):
            problem = file_problem(key, len(text.encode("utf-8")))
            if problem is None:
                sums[key] = checksum(text)
            else:
                rejected[key] = problem
        for key, why in key_clashes(sums).items():
            rejected[key] = why
            sums.pop(key)
        self._listed = sums
        stamps = {k: head.changed_at[k] for k in sums}
        return Snapshot(head.id, dict(sums), stamps, rejected)

    def fetch(self, keys: Sequence[str]) -> Mapping[str, str]:
        """Texts exactly as the snapshot listed them (the version planned on)."""
        self._refused = {}
        files = self._head.files if self._head is not None else {}
        return {k: files[k] for k in keys if k in self._listed and k in files}

    def apply(self, changes: ChangeSet) -> Applied | PreconditionFailed:
        head = self.remote.head
        if (head.id if head is not None else None) != changes.base_version:
            return PreconditionFailed()
        files = dict(head.files) if head is not None else {}
        moved = [
            k
            for k, want in changes.base_checksums.items()
            if (checksum(files[k]) if k in files else None) != want
        ]
        if moved:
            return PreconditionFailed(keys=sorted(moved))
        files.update(changes.upserts)
        for key in changes.deletes:
            files.pop(key, None)
        version = self.remote.commit(files, head)
        self.remote.writes += 1
        done = {k: checksum(t) for k, t in changes.upserts.items()}
        return Applied(version=version.id, checksums=done)

    @property
    def refused_on_fetch(self) -> Mapping[str, str]:
        """Nothing: what :meth:`fetch` serves is what :meth:`snapshot` vetted."""
        return self._refused

    def identity(self) -> str:
        return self.who

    def close(self) -> None:
        self._head = None

    def descends_from(self, version: str) -> bool | None:
        """Is ``version`` on the chain that leads to the snapshot's head?"""
        at = self._head
        while at is not None:
            if at.id == version:
                return True
            at = at.parent
        return False

    def past_checksums(self, keys: Collection[str]) -> Mapping[str, Collection[str]]:
        """Every checksum each key had on the head's chain."""
        wanted, seen = set(keys), {}
        at = self._head
        while at is not None:
            for key in wanted & at.files.keys():
                seen.setdefault(key, set()).add(checksum(at.files[key]))
            at = at.parent
        return seen

    def use_cache(self, cache: ListingCache) -> None:
        """The listing is in memory already: nothing is kept across runs."""

    def keep_listing_at_mark(self) -> None:
        """Nothing is kept across runs, so nothing is put back."""


def from_config(config: SyncConfig, settings: Settings) -> MemoryBackend:
    env = settings.environ
    return MemoryBackend(MemoryRemote.named(config.url), env.get("USER") or "someone")


@dataclass
class MemoryMate(Member):
    """A teammate syncing through the in-memory backend."""

    url: str = "memory://remote"

    @property
    def remote(self) -> MemoryRemote:
        return MemoryRemote.named(self.url)

    @property
    def environ(self) -> dict[str, str]:
        return {**super().environ, "USER": self.name.title()}

    def init(self) -> None:
        save_config(self.memdir, SyncConfig("memory", self.url))


def make_memory_team(root: Path, names: Sequence[str] = ("alice", "bob")) -> list[MemoryMate]:
    """One fresh in-memory remote (named after ``root``) and one teammate per name."""
    url = f"memory://{root}"
    _REMOTES.pop(url, None)
    mates = []
    for name in names:
        home = root / f"home-{name}"
        home.mkdir()
        mate = MemoryMate(name, home, root / f"mem-{name}", url)
        mate.team.mkdir(parents=True)
        mate.init()
        mates.append(mate)
    return mates
