"""Waiting out contention: jittered exponential backoff until a bounded deadline.

When several teammates push at the same moment, all but one get a failed
precondition and must re-snapshot, merge and push again. Retrying at once
makes them collide again; waiting a random slice of a growing window (full
jitter) spreads them out, so a crowd of ``N`` finishes in about ``N`` rounds.
The wait is bounded by a wall-clock deadline, after which the engine says
what to do instead of retrying forever.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

DEADLINE_S = 60.0
"""How long one run keeps retrying a remote that keeps changing."""
FIRST_S = 0.05
CAP_S = 2.0


@dataclass
class Backoff:
    """One run's retry budget; :meth:`pause` sleeps, or says the deadline has passed."""

    deadline_s: float = DEADLINE_S
    first_s: float = FIRST_S
    cap_s: float = CAP_S
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    rand: Callable[[], float] = random.random
    attempts: int = 0
    _start: float | None = field(default=None, repr=False)

    def pause(self) -> bool:
        """Sleep before the next attempt; False (no sleep) once the deadline is reached."""
        now = self.clock()
        if self._start is None:
            self._start = now
        left = self._start + self.deadline_s - now
        if left <= 0:
            return False
        window = min(self.cap_s, self.first_s * 2**self.attempts)
        self.attempts += 1
        self.sleep(min(left, window * self.rand()))
        return True

    def elapsed(self) -> float:
        return 0.0 if self._start is None else self.clock() - self._start
