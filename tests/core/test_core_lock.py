"""The one lock (teamsync._lock) and the one atomic writer (teamsync._files)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from teamsync._files import write_atomic
from teamsync._lock import FileLock
from teamsync.errors import LockBusy

RACER = """
import sys, time
from pathlib import Path
from teamsync._lock import FileLock
go = float(sys.argv[2])
while time.time() < go:
    pass
lock = FileLock(Path(sys.argv[1]))
print("owner" if lock.try_acquire() else "busy", flush=True)
time.sleep(1.5)
"""


@pytest.mark.parametrize("round_", range(5))
def test_processes_started_together_get_exactly_one_owner(tmp_path: Path, round_: int) -> None:
    # The race PidLock had: a second process arriving between the create and the pid
    # write saw pid 0 ("dead") and took the lock too. Bounded: 6 racers, 5 rounds.
    path = tmp_path / "job.lock"
    go = time.time() + 1.0
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, str(path), str(go)], stdout=subprocess.PIPE)
        for _ in range(6)
    ]
    answers = [p.communicate(timeout=60)[0].decode().strip() for p in racers]
    assert sorted(answers) == ["busy"] * 5 + ["owner"]


def test_exclusive_within_one_process_and_freed_on_release(tmp_path: Path) -> None:
    first, second = FileLock(tmp_path / "x.lock"), FileLock(tmp_path / "x.lock")
    assert first.try_acquire()
    assert not second.try_acquire()
    assert first.owner() == os.getpid()
    first.release()
    assert second.try_acquire()
    second.release()


def test_a_busy_lock_says_who_holds_it_and_what_we_wait_for(tmp_path: Path) -> None:
    holder = FileLock(tmp_path / "x.lock", "another teamsync sync")
    assert holder.try_acquire()
    told: list[str] = []
    waiter = FileLock(tmp_path / "x.lock", "another teamsync sync")
    with pytest.raises(LockBusy, match=rf"another teamsync sync \(PID {os.getpid()}\)"):
        waiter.acquire(timeout=0.2, on_wait=told.append)
    assert len(told) == 1 and told[0].startswith("waiting for another teamsync sync")
    holder.release()
    waiter.acquire(timeout=0.2, on_wait=told.append)
    assert len(told) == 1  # free: no waiting message
    waiter.release()


def test_a_waiter_gets_the_lock_when_the_holder_lets_go(tmp_path: Path) -> None:
    holder = FileLock(tmp_path / "x.lock")
    assert holder.try_acquire()
    calls = []

    def sleep(seconds: float) -> None:
        calls.append(seconds)
        if len(calls) == 3:
            holder.release()

    waiter = FileLock(tmp_path / "x.lock")
    waiter.acquire(timeout=30, sleep=sleep)
    assert waiter.locked and len(calls) == 3
    waiter.release()


def test_a_handed_over_lock_lives_exactly_as_long_as_the_child(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / "job.lock")
    assert lock.try_acquire()
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE,
        pass_fds=(lock.fileno(),),
    )
    lock.hand_over(child.pid)
    assert not lock.locked and lock.owner() == child.pid
    assert not FileLock(tmp_path / "job.lock").try_acquire()  # the child holds it
    assert child.stdin is not None
    child.stdin.close()
    child.wait(timeout=30)
    assert FileLock(tmp_path / "job.lock").try_acquire()


def test_write_atomic_replaces_durably_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "state.json"
    write_atomic(target, "one")
    assert target.read_text() == "one" and (target.stat().st_mode & 0o777) == 0o600
    target.chmod(0o644)
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two" and (target.stat().st_mode & 0o777) == 0o644
    write_atomic(tmp_path / "hook", "#!/bin/sh\n", mode=0o755)
    assert (tmp_path / "hook").stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in target.parent.iterdir()) == ["state.json"]


def test_write_atomic_cleans_up_when_the_write_fails(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    with pytest.raises(TypeError):
        write_atomic(target, 42)  # type: ignore[arg-type]
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_two_writers_never_share_a_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    code = (
        "import sys; from pathlib import Path; from teamsync._files import write_atomic\n"
        "for i in range(200): write_atomic(Path(sys.argv[1]), sys.argv[2] * 1000, durable=False)\n"
    )
    writers = [subprocess.Popen([sys.executable, "-c", code, str(target), c]) for c in ("a", "b")]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    assert target.read_text() in ("a" * 1000, "b" * 1000)
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]
