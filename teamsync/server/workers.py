"""``teamsync serve --workers N``: N server processes accepting on one listening socket.

One process tops out near one core, so a team outgrows it; the way past that is
more processes on one PostgreSQL database (several machines behind a proxy, or
several processes on one machine, which is what this module runs). The parent
binds the socket, then forks the workers; each builds its own app and storage
after the fork (no connection, pool or thread crosses it) and runs uvicorn on
the inherited socket, where the kernel hands each new connection to one of
them. The parent only supervises: SIGTERM or SIGINT is passed on to every
worker, and a worker that dies on its own is started again, unless workers keep
dying within seconds of starting (then the parent stops them all and fails).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from collections.abc import Callable

log = logging.getLogger("teamsync.server")

QUICK_DEATH_S = 5.0
"""A worker that exits sooner than this after starting counts towards giving up."""
MAX_QUICK_DEATHS = 3


def pool_per_worker(workers: int, total: int = 32, most: int = 16, least: int = 4) -> int:
    """Connections each worker's PostgreSQL pool may open: ``total`` shared out, within
    [least, most] (one worker keeps the single-process default of 16)."""
    return max(least, min(most, total // max(1, workers)))


def run_workers(count: int, child: Callable[[], None]) -> int:
    """Fork ``count`` workers running ``child`` and supervise them; the exit code."""
    started: dict[int, float] = {}
    stopping = False

    def spawn() -> None:
        sys.stdout.flush()  # nothing buffered is written twice
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker: default signals (uvicorn installs its own), then serve
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            code = 0
            try:
                child()
            except BaseException:  # a worker never returns into the parent's code
                log.exception("worker %d failed", os.getpid())
                code = 1
            finally:
                os._exit(code)
        started[pid] = time.monotonic()

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(started):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    quick = 0
    failed = False
    try:
        for _ in range(count):
            spawn()
        while started:
            pid, status = os.wait()
            began = started.pop(pid, None)
            if began is None or stopping:
                continue
            code = os.waitstatus_to_exitcode(status)
            quick = quick + 1 if time.monotonic() - began < QUICK_DEATH_S else 0
            if quick >= MAX_QUICK_DEATHS:
                log.error("workers keep exiting (last: %d, code %d): stopping", pid, code)
                failed = True
                stop(signal.SIGTERM, None)
                continue
            log.warning("worker %d exited (code %d): starting another", pid, code)
            spawn()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 1 if failed else 0
