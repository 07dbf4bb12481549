"""The model-based fuzzer in the suite: 3 teammates over a real bare git repository and
over a real ``teamsync serve`` on loopback, a short bounded run each (hypothesis
stateful, which shrinks any failure to a short sequence of operations).

The oracle and the operations are in :mod:`testing.fuzz` (lost lines, memories gone
under every name through renames and renames back, divergence, failures);
``bench/sync_fuzz.py`` runs the long seeded campaigns.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from testing.fuzz import KEYS, RestHost, World, random_op, replay, rest_host

MATES = 3
M = st.integers(min_value=0, max_value=MATES - 1)
PICK = st.integers(min_value=0, max_value=999)
KEY = st.integers(min_value=0, max_value=len(KEYS) - 1)
RUN = settings(
    max_examples=3,
    stateful_step_count=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
_HOST: dict[str, RestHost] = {}


class Team(RuleBasedStateMachine):
    kind = "git"
    casefold = 0

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix=f"fuzz-{self.kind}-"))
        self.world = World(self.kind, self.root, MATES, _HOST.get("rest"), casefold=self.casefold)

    @rule(m=M, k=KEY, crlf=st.booleans())
    def create(self, m: int, k: int, crlf: bool) -> None:
        self.world.apply(("create", m, k, crlf))

    @rule(m=M, k=KEY)
    def empty(self, m: int, k: int) -> None:
        self.world.apply(("empty", m, k))

    @rule(m=M, pick=PICK)
    def append(self, m: int, pick: int) -> None:
        self.world.apply(("append", m, pick))

    @rule(m=M, pick=PICK, pos=PICK)
    def edit(self, m: int, pick: int, pos: int) -> None:
        self.world.apply(("edit", m, pick, pos))

    @rule(m=M, pick=PICK)
    def rewrite(self, m: int, pick: int) -> None:
        self.world.apply(("rewrite", m, pick))

    @rule(m=M, pick=PICK)
    def delete(self, m: int, pick: int) -> None:
        self.world.apply(("delete", m, pick))

    @rule(m=M, pick=PICK, k=KEY)
    def rename(self, m: int, pick: int, k: int) -> None:
        self.world.apply(("rename", m, pick, k))

    @rule(m=M, pick=PICK)
    def rename_back(self, m: int, pick: int) -> None:
        self.world.apply(("rename_back", m, pick))

    @rule(m=M, other=M, pick=PICK, k=KEY)
    def handoff(self, m: int, other: int, pick: int, k: int) -> None:
        if m != other:
            self.world.apply(("handoff", m, other, pick, k))

    @rule(m=M, syncs=st.integers(min_value=1, max_value=8))
    def offline(self, m: int, syncs: int) -> None:
        self.world.apply(("offline", m, syncs))

    @rule(m=M, which=st.integers(min_value=0, max_value=1))
    def case_rename(self, m: int, which: int) -> None:
        self.world.apply(("case_rename", m, which))

    @rule(m=M, pick=PICK)
    def index_edit(self, m: int, pick: int) -> None:
        self.world.apply(("index_edit", m, pick))

    @rule(m=M, mode=st.sampled_from(["sync", "sync", "pull", "push"]))
    def sync(self, m: int, mode: str) -> None:
        self.world.apply(("sync", m, mode))
        assert self.world.stats.violations == []

    @rule(ms=st.lists(M, min_size=2, max_size=MATES, unique=True))
    def together(self, ms: list[int]) -> None:
        self.world.apply(("together", tuple(ms)))
        assert self.world.stats.violations == []

    def teardown(self) -> None:
        try:
            assert self.world.check() == [], self.world.log
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


class GitTeam(Team):
    kind = "git"


class RestTeam(Team):
    kind = "rest"


class MemoryTeam(Team):
    """The contract's in-memory backend (testing/memory_backend.py)."""

    kind = "memory"


class CasefoldGitTeam(Team):
    """Alice's disk is case-insensitive (macOS, Windows), simulated."""

    kind = "git"
    casefold = 1


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestHost]:
    with rest_host(tmp_path_factory.mktemp("fuzz-server")) as h:
        _HOST["rest"] = h
        try:
            yield h
        finally:
            _HOST.pop("rest", None)


def test_fuzz_git() -> None:
    run_state_machine_as_test(GitTeam, settings=RUN)


def test_fuzz_rest(host: RestHost) -> None:
    run_state_machine_as_test(RestTeam, settings=RUN)


def test_fuzz_memory() -> None:
    run_state_machine_as_test(MemoryTeam, settings=RUN)


def test_fuzz_git_with_a_case_insensitive_teammate() -> None:
    run_state_machine_as_test(CasefoldGitTeam, settings=RUN)


RENAME_SEEDS = range(1, 5)
RENAME_STEPS = 60


@pytest.mark.parametrize("kind", ["git", "rest", "memory"])
def test_fuzz_renames_back_by_other_teammates(kind: str, host: RestHost) -> None:
    """Issue 31: seeded runs heavy in renames, hand-offs (a teammate renames and syncs,
    another syncs and renames it back) and teammates offline for a few syncs. The
    identity oracle (``gone``) reports a memory lost under every name. With the
    byte-match recovery put back, git seed 4 and REST seed 2 of these fail (``gone``)."""
    for seed in RENAME_SEEDS:
        rng = random.Random(f"{kind}-{seed}")
        ops = [random_op(rng, MATES, renames=True) for _ in range(RENAME_STEPS)]
        world = replay(kind, ops, MATES, host if kind == "rest" else None)
        assert world.stats.violations == [], (seed, world.stats.violations, ops)


def test_the_oracle_confirms_a_mass_change_stop_at_the_end_and_still_judges_it() -> None:
    """A teammate who deleted most memories makes the others' next sync stop on the
    mass-change guard, by design. The final rounds confirm it (``yes``, as a person
    reading the stop would), so the world converges and the deletes are judged by the
    lost/gone oracle instead of showing as a divergence."""
    ops = [("create", 0, k, False) for k in range(len(KEYS))]
    ops += [("sync", 0, "sync"), ("sync", 1, "sync"), ("sync", 2, "sync")]
    ops += [("delete", 0, 0) for _ in range(len(KEYS) - 1)]
    ops += [("sync", 0, "sync"), ("sync", 1, "sync")]
    world = replay("git", ops, MATES, None)
    assert world.stats.stops >= 1  # bob's sync above stopped: it would delete 6 of 7
    assert world.stats.confirmed >= 1
    assert world.stats.violations == []
