"""The watch loop: push after quiet, pull on a timer, retry with backoff, stop on auth errors.

:class:`Watcher` is pure scheduling: it is told about changes
(:meth:`Watcher.changed`) and asked to do what is due (:meth:`Watcher.step`);
clock, push, pull and the configuration stamp are injected, so tests
drive it with a fake clock. :func:`run_loop` wires it to a change source
(watchdog's native observer, or its ``PollingObserver`` with ``--poll``) and to
SIGINT/SIGTERM.

Rules:

* a push runs ``debounce`` seconds after the last change (a pull's own writes
  count as changes: the push that follows finds nothing to send, which is
  cheaper than guessing which change was whose);
* a pull runs at start and every ``pull_interval`` seconds;
* a failed push is retried after ``retry_base`` · 2^(n-1) seconds (at most
  ``retry_max``), plus up to 25 % jitter — Claude Code never retries;
* an :class:`~teamsync.errors.AuthError` or
  :class:`~teamsync.errors.ConfigError` suspends pushing and pulling until the
  configuration stamp (the config and token files' mtimes) changes;
* :meth:`Watcher.flush` makes one last push of pending changes.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import threading
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teamsync.errors import AuthError, ConfigError, MissingExtra, TeamsyncError
from teamsync.limits import TEMP_PREFIX


@dataclass(frozen=True)
class Timing:
    debounce: float = 2.0
    pull_interval: float = 300.0
    retry_base: float = 2.0
    retry_max: float = 300.0
    jitter: float = 0.25


@dataclass
class SyncOps:
    """What the watcher drives; push/pull return an exit code or raise TeamsyncError."""

    push: Callable[[], int]
    pull: Callable[[], int]
    config_stamp: Callable[[], Hashable]
    log: Callable[[str], None]


class Watcher:
    """Decides when to push and pull; thread-safe :meth:`changed`."""

    def __init__(
        self,
        ops: SyncOps,
        clock: Callable[[], float],
        timing: Timing = Timing(),
        rng: random.Random | None = None,
    ) -> None:
        self.ops, self.clock, self.timing = ops, clock, timing
        self.rng = rng or random.Random()
        self._lock = threading.Lock()
        now = clock()
        self._dirty_at: float | None = now  # push whatever changed while we were not running
        self._next_pull = now
        self._failures = 0
        self._retry_at: float | None = None
        self._suspended: Hashable | None = None
        self.pushes = 0
        self.pulls = 0

    # -- inputs ---------------------------------------------------------------------

    def changed(self) -> None:
        with self._lock:
            self._dirty_at = self.clock()

    @property
    def suspended(self) -> bool:
        return self._suspended is not None

    @property
    def failures(self) -> int:
        return self._failures

    # -- scheduling -----------------------------------------------------------------

    def _push_due(self) -> float | None:
        if self._dirty_at is None or self._suspended is not None:
            return None
        if self._retry_at is not None:
            return self._retry_at
        return self._dirty_at + self.timing.debounce

    def next_deadline(self) -> float:
        """The next time :meth:`step` has something to do (a config check when suspended)."""
        if self._suspended is not None:
            return self.clock() + 1.0
        due = self._push_due()
        return self._next_pull if due is None else min(due, self._next_pull)

    def backoff(self, failures: int) -> float:
        base = min(self.timing.retry_max, self.timing.retry_base * 2.0 ** (failures - 1))
        jittered: float = base * (1.0 + self.rng.uniform(0.0, self.timing.jitter))
        return min(self.timing.retry_max, jittered)

    # -- actions --------------------------------------------------------------------

    def step(self) -> None:
        """Do whatever is due now."""
        if self._suspended is not None:
            if self.ops.config_stamp() == self._suspended:
                return
            self.ops.log("configuration changed: resuming sync")
            self._suspended, self._failures, self._retry_at = None, 0, None
            self._next_pull = self.clock()
        now = self.clock()
        if now >= self._next_pull:
            self._pull()
        due = self._push_due()
        if due is not None and self.clock() >= due:
            self._push()

    def flush(self) -> None:
        """One last push of pending changes (on exit)."""
        if self._dirty_at is not None and self._suspended is None:
            self._push(final=True)

    def _suspend(self, exc: Exception, what: str) -> None:
        self._suspended = self.ops.config_stamp()
        self.ops.log(f"{what} stopped: {exc} (sync resumes when the configuration file changes)")

    def _pull(self) -> None:
        self._next_pull = self.clock() + self.timing.pull_interval
        try:
            self.ops.pull()
        except (AuthError, ConfigError) as exc:
            self._suspend(exc, "pull")
            return
        except (TeamsyncError, OSError) as exc:  # keep watching; the next pull retries
            self.ops.log(f"pull failed: {exc}; next attempt in {self.timing.pull_interval:.0f} s")
            return
        self.pulls += 1

    def _push(self, final: bool = False) -> None:
        with self._lock:
            started_dirty, self._dirty_at = self._dirty_at, None
        try:
            self.ops.push()
        except (AuthError, ConfigError) as exc:
            self._restore(started_dirty)
            self._suspend(exc, "push")
            return
        except (TeamsyncError, OSError) as exc:  # retried on the backoff timer
            self._restore(started_dirty)
            self._failures += 1
            if final:
                self.ops.log(f"final push failed: {exc}")
                return
            delay = self.backoff(self._failures)
            self._retry_at = self.clock() + delay
            self.ops.log(f"push failed ({exc}); retry {self._failures} in {delay:.1f} s")
            return
        self.pushes += 1
        if self._failures:
            self.ops.log(f"push succeeded after {self._failures} failed attempt(s)")
        self._failures, self._retry_at = 0, None

    def _restore(self, started_dirty: float | None) -> None:
        with self._lock:
            if self._dirty_at is None:
                self._dirty_at = started_dirty


# -- the loop -----------------------------------------------------------------------------

STOP_CHECK_S = 1.0
_EVENT_TYPES = frozenset({"created", "deleted", "modified", "moved", "closed"})
TEMP_MARKER = TEMP_PREFIX


def _relevant(event: Any) -> bool:
    if getattr(event, "event_type", "") not in _EVENT_TYPES:
        return False
    paths = (getattr(event, "src_path", ""), getattr(event, "dest_path", ""))
    return not any(TEMP_MARKER in os.path.basename(os.fsdecode(p)) for p in paths if p)


def start_observer(
    root: Path, on_change: Callable[[], None], *, poll: bool = False, poll_period: float = 1.0
) -> tuple[Any, str]:
    """A running watchdog observer on ``root`` and its kind (``watchdog`` or ``polling``).

    ``poll`` uses watchdog's :class:`PollingObserver` (network file systems,
    containers without inotify); otherwise the platform's native observer.
    """
    try:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver
    except ImportError as exc:
        raise MissingExtra("watchdog", "watch", "teamsync watch") from exc

    class _Handler(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            if _relevant(event):
                on_change()

    observer = PollingObserver(timeout=poll_period) if poll else Observer()
    observer.schedule(_Handler(), str(root), recursive=True)
    observer.start()
    return observer, "polling" if poll else "watchdog"


@contextlib.contextmanager
def _signals(stop: threading.Event, wake: threading.Event) -> Iterator[None]:
    def handler(signum: int, frame: object) -> None:
        stop.set()
        wake.set()

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, previous in saved.items():
            signal.signal(sig, previous)


def run_loop(
    watcher: Watcher,
    root: Path,
    *,
    poll: bool = False,
    poll_period: float = 1.0,
    stop: threading.Event | None = None,
) -> str:
    """Watch ``root`` until SIGINT/SIGTERM (or ``stop``), then flush; return the mode used."""
    stop = stop or threading.Event()
    wake = threading.Event()

    def on_change() -> None:
        watcher.changed()
        wake.set()

    observer, mode = start_observer(root, on_change, poll=poll, poll_period=poll_period)
    with _signals(stop, wake):
        try:
            while not stop.is_set():
                watcher.step()
                timeout = max(0.0, watcher.next_deadline() - watcher.clock())
                wake.wait(min(timeout, STOP_CHECK_S))  # ``stop`` may be set from outside
                wake.clear()
        finally:
            observer.stop()
            observer.join(5)
            watcher.flush()
    return mode
