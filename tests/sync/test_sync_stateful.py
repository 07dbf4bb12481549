"""Random edits, deletes and syncs across three replicas converge, and nothing is lost.

Every line anyone writes is a unique token. A token leaves the "must survive"
set only when a replica removes it from a file it is looking at (a delete
after being seen). After everyone syncs a few rounds, all trees and the remote
are identical and every surviving token is in some file (merged, or in a
conflict copy).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from testing.gitrepos import Teammate, converge, make_team, remote_files

MATES = st.integers(min_value=0, max_value=2)
PICK = st.integers(min_value=0, max_value=1_000)


class ThreeReplicas(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="sync-sm-"))
        self.mates: list[Teammate] = make_team(self.root, ("alice", "bob", "carol"))
        self.counter = 0
        self.alive: set[str] = set()

    def _token(self) -> str:
        self.counter += 1
        return f"line-{self.counter}"

    def _pick(self, mate: Teammate, pick: int) -> str | None:
        keys = sorted(mate.files())
        return keys[pick % len(keys)] if keys else None

    @rule(m=MATES, f=st.integers(min_value=0, max_value=3))
    def append(self, m: int, f: int) -> None:
        mate = self.mates[m]
        key = f"f{f}.md"
        old = mate.files().get(key, "")
        token = self._token()
        mate.write(key, old + token + "\n")
        self.alive.add(token)

    @rule(m=MATES, pick=PICK, pos=PICK)
    def replace_line(self, m: int, pick: int, pos: int) -> None:
        mate = self.mates[m]
        key = self._pick(mate, pick)
        if key is None:
            return
        lines = mate.read(key).splitlines()
        if not lines:
            return
        i = pos % len(lines)
        self.alive.discard(lines[i])
        lines[i] = self._token()
        self.alive.add(lines[i])
        mate.write(key, "\n".join(lines) + "\n")

    @rule(m=MATES, pick=PICK)
    def delete(self, m: int, pick: int) -> None:
        mate = self.mates[m]
        key = self._pick(mate, pick)
        if key is None:
            return
        self.alive.difference_update(mate.read(key).splitlines())
        mate.delete(key)

    @rule(m=MATES, mode=st.sampled_from(["sync", "sync", "pull", "push"]))
    def sync(self, m: int, mode: str) -> None:
        report = self.mates[m].sync(mode)  # type: ignore[arg-type]
        assert not report.rejected

    def teardown(self) -> None:
        try:
            converge(self.mates, rounds=3)
            trees = [mate.files() for mate in self.mates]
            assert trees[0] == trees[1] == trees[2]
            assert remote_files(self.mates[0].remote) == trees[0]
            lines = {line for text in trees[0].values() for line in text.splitlines()}
            assert self.alive <= lines, sorted(self.alive - lines)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


ThreeReplicas.TestCase.settings = settings(
    max_examples=20,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_three_replicas_converge = ThreeReplicas.TestCase
