"""The SQLite writers' queue: first come, first served, and a wait that ends."""

from __future__ import annotations

import threading
import time

from teamsync.server.fairlock import FairLock


def _queued(lock: FairLock, n: int) -> None:
    deadline = time.monotonic() + 10
    while len(lock._waiters) < n:  # noqa: SLF001 - the queue's length is the observable here
        assert time.monotonic() < deadline, "waiters did not queue"
        time.sleep(0.001)


def test_waiters_get_the_lock_in_arrival_order() -> None:
    lock = FairLock()
    assert lock.acquire(1)
    order: list[int] = []

    def waiter(n: int) -> None:
        assert lock.acquire(10)
        order.append(n)
        lock.release()

    threads = []
    for n in range(6):
        thread = threading.Thread(target=waiter, args=(n,))
        thread.start()
        threads.append(thread)
        _queued(lock, n + 1)
    lock.release()
    for thread in threads:
        thread.join(10)
    assert order == list(range(6))
    assert lock.acquire(0.01)  # free again
    lock.release()


def test_a_wait_that_runs_out_leaves_the_queue() -> None:
    lock = FairLock()
    assert lock.acquire(1)
    started = time.monotonic()
    assert lock.acquire(0.05) is False
    assert time.monotonic() - started >= 0.05
    assert not lock._waiters  # noqa: SLF001
    lock.release()
    assert lock.acquire(0.01)
    lock.release()
