"""A first-come, first-served lock with a deadline: how writers queue inside one process.

SQLite writers queue on one for the whole database; PostgreSQL writers on one per
repository, before they take a pooled connection, so writers queued for a busy
repository's row lock do not hold the connections the reads need.
"""

from __future__ import annotations

import threading
from collections import deque

WRITER_WAIT_S = 30.0
"""Longest a write waits in its process's queue (then 503 with ``Retry-After``)."""


class FairLock:
    """A lock that serves waiters in arrival order, with a deadline.

    ``threading.Lock`` wakes an arbitrary waiter, so under contention one writer
    can lose the race again and again; here the releasing thread hands the lock
    to the oldest waiter directly.
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._waiters: deque[threading.Event] = deque()
        self._held = False

    def acquire(self, timeout: float) -> bool:
        with self._mutex:
            if not self._held and not self._waiters:
                self._held = True
                return True
            turn = threading.Event()
            self._waiters.append(turn)
        if turn.wait(timeout):
            return True
        with self._mutex:
            if turn.is_set():  # handed over just as the wait ran out
                return True
            self._waiters.remove(turn)
            return False

    def release(self) -> None:
        with self._mutex:
            if self._waiters:
                self._waiters.popleft().set()  # ownership passes on; still held
            else:
                self._held = False


class KeyedLocks:
    """One :class:`FairLock` per key (a repository), made on first use."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, FairLock] = {}

    def get(self, key: str) -> FairLock:
        with self._guard:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = FairLock()
            return lock
