"""Scan a large tree on every core: worker processes read and scan, the parent merges.

Used by ``teamsync scan PATH…`` when the files add up to at least
:data:`PARALLEL_MIN_BYTES` and more than one CPU is usable. Each worker reads
its share of the files with :func:`teamsync.security.sources.read_file` and runs
the specific rules; the generic candidates come back to the parent, which runs
detect-secrets once over all of them (:meth:`Scanner.finish`), so the findings
are exactly those of a sequential scan. Workers are forked where the platform
allows it (no re-import), spawned elsewhere.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from teamsync.security.secrets import Finding, Scanner, _Candidate, plan
from teamsync.security.sources import Chunk, Skipped, read_file

PARALLEL_MIN_BYTES = 8 * 1024 * 1024
Batch = list[tuple[str, str]]
Result = tuple[list[str], list[Finding], list[_Candidate], list[Skipped]]


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the platform has one)."""
    getter = getattr(os, "sched_getaffinity", None)
    return len(getter(0)) if getter is not None else (os.cpu_count() or 1)


def scan_batch(
    batch: Batch, generic: bool, engine: str | None = None, *, inline_allow: bool = False
) -> Result:
    """Scan ``(full path, display path)`` pairs; findings and generic candidates, not finished.

    ``inline_allow`` is the scan's setting; a file in a memory path never honours pragmas.
    """
    scanner = Scanner(generic=generic, engine=engine, inline_allow=inline_allow)
    scanned: list[str] = []
    skipped: list[Skipped] = []
    for full, shown in batch:
        for item in read_file(full, shown):
            if isinstance(item, Chunk):
                if not scanned or scanned[-1] != item.path:
                    scanned.append(item.path)
                scanner.add_chunk(item)
            else:
                skipped.append(item)
    findings, candidates = scanner.take()
    return scanned, findings, candidates, skipped


def _star(args: tuple[Batch, bool, str | None, bool]) -> Result:
    batch, generic, engine, inline_allow = args
    return scan_batch(batch, generic, engine, inline_allow=inline_allow)


def split(files: Sequence[tuple[str, str, int]], parts: int) -> list[Batch]:
    """``(full, shown, size)`` files dealt into ``parts`` batches of about equal bytes."""
    batches: list[Batch] = [[] for _ in range(parts)]
    loads = [0] * parts
    for full, shown, size in sorted(files, key=lambda f: -f[2]):
        lightest = loads.index(min(loads))
        batches[lightest].append((full, shown))
        loads[lightest] += size
    return [b for b in batches if b]


def scan_parallel(
    files: Sequence[tuple[str, str, int]],
    generic: bool,
    jobs: int,
    engine: str | None = None,
    *,
    inline_allow: bool = False,
) -> list[Result]:
    """Results of scanning ``files`` in ``jobs`` worker processes."""
    import multiprocessing

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    if method == "fork":
        plan(engine).compile_all()  # compiled once here, inherited by every worker
    batches = split(files, jobs * 4)
    with context.Pool(jobs) as pool:
        return list(
            pool.imap_unordered(_star, [(b, generic, engine, inline_allow) for b in batches])
        )
