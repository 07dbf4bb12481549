"""Group commit: concurrent writers' transactions share one commit, so one fsync.

With ``synchronous=FULL`` every SQLite commit waits for an fsync of the WAL (2-7 ms
on the shared disk this was measured on), and SQLite has one writer at a time: eight clients
writing at once queue eight fsyncs deep, whatever the CPU does. Here the writers
that arrive while a commit is in flight are run together in the next transaction,
each inside a savepoint of its own, and committed with one fsync:

- a writer is answered only after the commit that holds its work has returned, so
  an acknowledged write is as durable as before (one transaction per write gave no
  more: the fsync is the same);
- a writer whose work raises is rolled back to its savepoint alone; the others in
  its batch still commit. A commit that fails fails every writer of the batch, none
  of which was answered yet;
- writers are served in arrival order, at most :data:`MAX_BATCH` a transaction; a
  writer not taken into a batch within its deadline is told so (the caller answers
  503), one already taken waits for its batch to end.

There is no thread of its own: the first writer that finds nobody committing leads
the batch on its own thread, and on the way out hands the lead to the oldest writer
still queued (flat combining).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")
Ctx = TypeVar("Ctx")

MAX_BATCH = 64
"""Writes one transaction takes at most."""


class QueueTimeout(Exception):
    """A write waited past its deadline without being taken into a batch (nothing ran)."""


@dataclass(eq=False)
class Job(Generic[Ctx]):
    work: Callable[[Ctx], object]
    wake: threading.Event = field(default_factory=threading.Event)
    lead: bool = False
    result: object = None
    error: BaseException | None = None


Batch = Callable[[list[Job[Ctx]]], None]


class GroupCommit(Generic[Ctx]):
    """Runs ``work(ctx)`` callables in shared transactions.

    ``run_batch(jobs)`` opens one transaction, runs each job's ``work`` in a savepoint
    of its own (setting ``job.result``, or ``job.error`` and rolling back to it), and
    commits; when it raises (the transaction could not begin or commit), every job of
    the batch fails with that exception.
    """

    def __init__(self, run_batch: Batch[Ctx]) -> None:
        self._run_batch = run_batch
        self._mutex = threading.Lock()
        self._queue: deque[Job[Ctx]] = deque()
        self._leading = False
        self.batches = 0
        """Transactions committed or tried (with :attr:`jobs`, the batch size seen)."""
        self.jobs = 0

    def submit(self, work: Callable[[Ctx], T], timeout: float) -> T:
        """``work``'s result once its transaction committed; its exception otherwise."""
        job: Job[Ctx] = Job(work)
        with self._mutex:
            if self._leading:
                self._queue.append(job)
            else:
                self._leading = job.lead = True
        if not job.lead and not job.wake.wait(timeout):
            with self._mutex:
                if job in self._queue:  # never taken into a batch: nothing of it ran
                    self._queue.remove(job)
                    raise QueueTimeout
            job.wake.wait()  # taken: its batch is running, and ends
        if job.lead:
            self._lead(job)
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[return-value]

    def _lead(self, first: Job[Ctx]) -> None:
        try:
            with self._mutex:
                batch = [first]
                while self._queue and len(batch) < MAX_BATCH:
                    batch.append(self._queue.popleft())
            try:
                self._run_batch(batch)
            except BaseException as exc:  # the batch never ran or never committed
                for job in batch:
                    if job.error is None:
                        job.error = exc
            self.batches += 1
            self.jobs += len(batch)
            for job in batch[1:]:
                job.wake.set()
        finally:
            with self._mutex:
                if self._queue:
                    nxt = self._queue.popleft()
                    nxt.lead = True
                    nxt.wake.set()
                else:
                    self._leading = False
