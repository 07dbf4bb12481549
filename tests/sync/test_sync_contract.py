"""The declared backend contract (issue 25 §1): every member the engine uses is in
:class:`~teamsync.sync.base.Backend`, every backend declares them all, a wrapper that
lacks one is refused before a run, and a wrapper that forwards them keeps the
force-push check (shown on the in-memory backend, ``testing/memory_backend.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from teamsync.commands.sync import remote_id
from teamsync.security.fs import SafeDir
from teamsync.sync.base import (
    MEMBERS,
    Applied,
    Backend,
    BackendDefaults,
    ChangeSet,
    ForwardingBackend,
    PreconditionFailed,
    check_backend,
    missing_members,
)
from teamsync.sync.config import load_config
from teamsync.sync.engine import run_sync
from teamsync.sync.git import GitBackend
from teamsync.sync.memstore import MemstoreBackend
from teamsync.sync.report import SyncReport
from teamsync.sync.rest import RestBackend
from teamsync.sync.state import BaseStore
from testing.gitrepos import memory
from testing.memory_backend import MemoryBackend, MemoryMate, make_memory_team

OPTIONAL = ("refused_on_fetch", "descends_from", "past_checksums", "use_cache")
OPTIONAL += ("keep_listing_at_mark",)


def test_the_protocol_declares_exactly_the_listed_members() -> None:
    declared = {n for n in vars(Backend) if not n.startswith("_")} | set(Backend.__annotations__)
    assert declared == set(MEMBERS)


@pytest.mark.parametrize("cls", [GitBackend, RestBackend, MemstoreBackend, MemoryBackend])
def test_every_backend_declares_the_whole_contract(cls: type) -> None:
    assert missing_members(cls) == []
    for member in OPTIONAL:  # a default or its own, never a probe's None
        assert getattr(cls, member) is not None


def test_the_memory_backend_implements_every_member_itself() -> None:
    assert not issubclass(MemoryBackend, BackendDefaults)
    assert missing_members(MemoryBackend) == []


def test_forwarding_backend_forwards_every_member_itself() -> None:
    own = set(vars(ForwardingBackend))
    assert [m for m in MEMBERS if m != "name" and m not in own] == []
    assert not issubclass(ForwardingBackend, BackendDefaults)  # defaults would hide the inner


def _partial(dropped: str) -> type:
    """A wrapper that forwards every member but ``dropped`` (the old ``_RacingBackend``)."""
    body = {m: v for m, v in vars(ForwardingBackend).items() if m != dropped}
    return type(f"Without_{dropped}", (), body)


@pytest.mark.parametrize("dropped", OPTIONAL)
def test_a_wrapper_missing_a_member_is_refused_before_anything_runs(
    dropped: str, tmp_path: Path
) -> None:
    alice, bob = _rewound(tmp_path)
    before = bob.files()
    wrapper = _partial(dropped)(MemoryBackend(bob.remote, "Bob"))
    with pytest.raises(TypeError, match=rf"lacks {dropped}\b.*ForwardingBackend"):
        _run(bob, wrapper)
    assert bob.files() == before
    with pytest.raises(TypeError, match=dropped):
        check_backend(object())


def _rewound(tmp_path: Path) -> tuple[MemoryMate, MemoryMate]:
    """Alice shared plan.md v1, then v2 and new.md; Bob synced; the remote was then
    rewound to the v1 version (a force push)."""
    alice, bob = make_memory_team(tmp_path)
    alice.write("plan.md", memory("Plan", "v1\n"))
    alice.write("other.md", memory("Other", "kept\n"))
    assert alice.sync().exit_code() == 0
    old = alice.remote.head
    alice.write("plan.md", memory("Plan", "v2\n"))
    alice.write("new.md", memory("New", "added after\n"))
    assert alice.sync().exit_code() == 0
    assert bob.sync().exit_code() == 0
    assert bob.files() == alice.files()
    alice.remote.head = old  # rewound: the head does not descend from the synced one
    return alice, bob


def _run(mate: MemoryMate, backend: object) -> SyncReport:
    settings = mate.settings
    config = load_config(mate.memdir)
    team = SafeDir(mate.team)
    state = BaseStore.open(settings.state_dir, team.root, remote_id(config))
    try:
        return run_sync(team, backend, state, mode="sync", dry_run=False, who="bob", now=0.0)  # type: ignore[arg-type]
    finally:
        state.close()
        team.close()


class _Counting(ForwardingBackend):
    """A wrapper that changes one member (it counts pushes) and forwards the rest."""

    pushes = 0

    def apply(self, changes: ChangeSet) -> Applied | PreconditionFailed:
        self.pushes += 1
        return self.inner.apply(changes)


def test_a_forwarding_wrapper_keeps_the_force_push_check(tmp_path: Path) -> None:
    _, bob = _rewound(tmp_path)
    before = bob.files()
    wrapper = _Counting(MemoryBackend(bob.remote, "Bob"))
    report = _run(bob, wrapper)
    assert report.stop is not None and report.stop.kind == "remote_lost_history"
    assert "does not descend from" in report.stop.message
    assert bob.files() == before and wrapper.pushes == 0


def test_a_wrapper_that_takes_the_defaults_instead_of_forwarding_loses_memories(
    tmp_path: Path,
) -> None:
    """Why a wrapper must forward: one that inherits the defaults passes the contract
    check but answers "cannot tell" for the wrapped backend, and the rewind is read
    as the team deleting new.md and reverting plan.md (the check above then fails)."""

    class Lossy(BackendDefaults, ForwardingBackend):
        pass

    _, bob = _rewound(tmp_path)
    wrapper = Lossy(MemoryBackend(bob.remote, "Bob"))
    report = _run(bob, wrapper)
    assert report.stop is None
    assert "new.md" not in bob.files()
