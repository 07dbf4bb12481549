"""The lock for ``teamsync dream``: one consolidation per memory directory at a time.

It is :class:`teamsync._lock.FileLock` (an ``flock``): a dream that dies,
however it dies, frees it, so there is no stale lock to judge or take over.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from teamsync import _lock
from teamsync.errors import LockBusy as LockBusy

WHAT = "another teamsync dream"


@contextlib.contextmanager
def held(path: Path) -> Iterator[None]:
    """``with held(lock): ...`` — take the lock or raise :class:`LockBusy`, run, release."""
    with _lock.held(path, WHAT):
        yield
