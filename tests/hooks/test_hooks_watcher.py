"""The Watcher's scheduling with a fake clock: debounce, periodic pull, backoff, auth stop."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from teamsync.errors import AuthError, BackendError
from teamsync.hooks.watch import SyncOps, Timing, Watcher, run_loop


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class World:
    """Fake remote outcomes and a fake team directory state."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.pushes: list[float] = []
        self.pulls: list[float] = []
        self.push_error: Exception | None = None
        self.pull_error: Exception | None = None
        self.tree = 0
        self.stamp = 0
        self.logs: list[str] = []

    def push(self) -> int:
        self.pushes.append(self.clock.now)
        if self.push_error is not None:
            raise self.push_error
        return 0

    def pull(self) -> int:
        self.pulls.append(self.clock.now)
        if self.pull_error is not None:
            raise self.pull_error
        return 0

    def watcher(self, **timing: float) -> Watcher:
        ops = SyncOps(
            push=self.push,
            pull=self.pull,
            config_stamp=lambda: self.stamp,
            log=self.logs.append,
        )
        return Watcher(ops, self.clock, Timing(**timing), random.Random(3))

    def run_until(self, w: Watcher, end: float) -> None:
        """Advance the fake clock deadline by deadline, stepping as the real loop does."""
        while True:
            w.step()
            nxt = w.next_deadline()
            if nxt > end:
                self.clock.now = end
                w.step()
                return
            self.clock.now = max(self.clock.now, nxt)


@pytest.fixture
def world() -> World:
    return World()


def test_start_pulls_then_pushes_after_debounce(world: World) -> None:
    w = world.watcher(debounce=2.0, pull_interval=300.0)
    w.step()
    assert world.pulls == [1000.0] and world.pushes == []
    world.clock.now = 1002.0
    w.step()
    assert world.pushes == [1002.0]


def test_changes_are_debounced_into_one_push(world: World) -> None:
    w = world.watcher(debounce=2.0)
    world.run_until(w, 1010.0)
    world.pushes.clear()
    for t in (1010.0, 1011.0, 1012.5):
        world.clock.now = t
        world.tree += 1
        w.changed()
        w.step()
    assert world.pushes == []
    world.run_until(w, 1020.0)
    assert world.pushes == [1014.5]


def test_periodic_pull(world: World) -> None:
    w = world.watcher(pull_interval=300.0)
    world.run_until(w, 1000.0 + 3 * 300 + 1)
    assert world.pulls == [1000.0, 1300.0, 1600.0, 1900.0]


def test_pushes_wait_while_edits_keep_coming(world: World) -> None:
    w = world.watcher(debounce=2.0, pull_interval=10_000.0)
    world.run_until(w, 1010.0)
    world.pushes.clear()
    for i in range(20):  # an edit every second for 20 s
        world.clock.now = 1010.0 + i
        w.changed()
        w.step()
    assert world.pushes == []
    world.run_until(w, 1040.0)
    assert world.pushes == [1031.0]


def test_failed_push_retried_with_backoff_until_success(world: World) -> None:
    w = world.watcher(debounce=2.0, retry_base=2.0, pull_interval=10_000.0)
    world.push_error = BackendError("connection refused")
    world.run_until(w, 1040.0)
    gaps = [b - a for a, b in zip(world.pushes, world.pushes[1:], strict=False)]
    assert len(world.pushes) >= 4
    for n, gap in enumerate(gaps[:4], start=1):
        assert 2.0 * 2 ** (n - 1) <= gap <= 2.0 * 2 ** (n - 1) * 1.25 + 1e-9
    world.push_error = None
    world.run_until(w, 1200.0)
    assert w.failures == 0 and "push succeeded after" in world.logs[-1]
    count = len(world.pushes)
    world.run_until(w, 1500.0)
    assert len(world.pushes) == count  # nothing pending: no more pushes


def test_backoff_is_capped(world: World) -> None:
    w = world.watcher(retry_base=2.0, retry_max=300.0)
    assert all(w.backoff(n) <= 300.0 for n in range(1, 40))
    assert w.backoff(20) >= 300.0 * 0.999


def test_auth_error_stops_pushing_until_config_changes(world: World) -> None:
    w = world.watcher(debounce=2.0, pull_interval=50.0)
    world.push_error = AuthError("401 from server: token revoked")
    world.run_until(w, 1010.0)
    assert len(world.pushes) == 1 and w.suspended
    pulls = len(world.pulls)
    world.tree += 1
    w.changed()
    world.run_until(w, 1500.0)
    assert len(world.pushes) == 1 and len(world.pulls) == pulls
    world.push_error = None
    world.stamp += 1  # the user fixed the configuration
    world.run_until(w, 1510.0)
    assert not w.suspended and len(world.pushes) == 2
    assert any("resuming" in line for line in world.logs)


def test_flush_pushes_pending_changes_once(world: World) -> None:
    w = world.watcher(debounce=2.0)
    world.run_until(w, 1010.0)
    world.tree += 1
    w.changed()
    w.flush()
    assert len(world.pushes) == 2
    w.flush()
    assert len(world.pushes) == 2


def test_run_loop_polling_with_real_files(tmp_path: Path) -> None:
    """The real loop (polling mode) on a real directory, with the wall clock."""
    import time

    pushed = threading.Event()
    snapshots: list[object] = []

    def push() -> int:
        snapshots.append(sorted(p.name for p in tmp_path.iterdir()))
        if any("fresh.md" in str(s) for s in snapshots):
            pushed.set()
        return 0

    ops = SyncOps(push, lambda: 0, lambda: 0, lambda m: None)
    watcher = Watcher(ops, time.monotonic, Timing(debounce=0.2, pull_interval=60.0))
    stop = threading.Event()
    loop = threading.Thread(
        target=run_loop,
        args=(watcher, tmp_path),
        kwargs={"poll": True, "poll_period": 0.05, "stop": stop},
    )
    loop.start()
    time.sleep(0.5)
    (tmp_path / "fresh.md").write_text("x\n", encoding="utf-8")
    assert pushed.wait(5.0)
    stop.set()
    loop.join(5.0)
    assert not loop.is_alive()
