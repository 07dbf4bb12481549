"""The local side of a sync: list and hash the team directory, fix up its index.

Everything goes through :class:`~teamsync.security.fs.SafeDir` (no symlink is
ever followed). Hashing is skipped for files whose ``(size, mtime_ns, inode)``
matches the base store's stat cache, so a no-op sync reads no file contents.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from teamsync.errors import MemoryFormatError, TeamsyncError
from teamsync.memdir.format import INDEX_NAME, MAX_MEMORY_BYTES, Memory, decode_memory, parse_memory
from teamsync.memdir.index import mentioned, normalize_target, parse_index
from teamsync.memdir.indexfix import fix_index_text, resolve
from teamsync.memdir.lint import backup_index
from teamsync.security.fs import SafeDir, WalkItem
from teamsync.security.guard import safe_write
from teamsync.security.keys import is_memory_key, key_clashes, key_problem
from teamsync.sync.base import checksum
from teamsync.sync.plan import is_below
from teamsync.sync.state import BaseStore, FileStat
from teamsync.wire import MANIFEST_NAME

NOT_MEMORY = "not a memory file: only *.md files are synced"
TOO_BIG = f"over the {MAX_MEMORY_BYTES:,}-byte limit for one memory"


@dataclass
class LocalTree:
    """The team directory as the engine sees it."""

    checksums: dict[str, str] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)
    """path -> reason for every entry whose subtree could not be listed (a symlink, a
    folder that cannot be entered or is nested too deeply): for this run, nothing at or
    below it is known, so nothing there is deleted or written."""

    def is_unknown(self, key: str) -> bool:
        """Is ``key`` at or below an :attr:`unknown` path?"""
        return is_below(key, self.unknown)


def file_problem(key: str, size: int | None = None) -> str | None:
    """Why ``key`` (of ``size`` bytes) may not travel in either direction, or None."""
    problem = key_problem(key)
    if problem is not None:
        return problem
    if not is_memory_key(key):
        return NOT_MEMORY
    if size is not None and size > MAX_MEMORY_BYTES:
        return TOO_BIG
    return None


def read_memory(team: SafeDir, key: str) -> str:
    """The text at ``key``; MemoryFormatError when binary, not UTF-8 or too big."""
    return decode_memory(team.read_bytes(key), key)


def scan_local(team: SafeDir, state: BaseStore, *, clean: bool = False) -> LocalTree:
    """Checksum every syncable file; everything else lands in ``rejected`` with a reason.

    With ``clean``, stale temp files of an interrupted run are removed first
    (only needed when the quick check fails: a temp file always fails it).
    """
    quick = state.unchanged(team.root)
    if quick is not None:
        return LocalTree(checksums=quick)
    if clean:
        team.cleanup_temp(older_than=0)
    tree = LocalTree()
    fresh: list[tuple[str, FileStat, str]] = []
    started = time.time_ns()
    for item in team.walk():
        key = item.key
        if key == MANIFEST_NAME and not item.opaque:
            continue  # Claude Code's mount manifest: bookkeeping, never synced
        listed = _listed(team, item)
        if listed is None:
            continue  # vanished while listing
        problem, st = listed
        if item.opaque:
            tree.unknown[key] = problem or "cannot be listed"
            continue
        if problem is not None or st is None:
            tree.rejected[key] = problem or "vanished while listing"
            continue
        fst = FileStat.of(st)
        cached = state.cached_checksum(key, fst)
        if cached is None:
            try:
                cached = checksum(read_memory(team, key))
            except (TeamsyncError, OSError) as exc:
                tree.rejected[key] = _reason(exc)
                continue
            fresh.append((key, fst, cached))
        tree.checksums[key] = cached
    _reject_collisions(tree)
    fresh = [row for row in fresh if row[0] in tree.checksums]
    gone = state.stat_keys() - tree.checksums.keys()
    state.remember_stats(fresh, gone, seen_ns=started)
    return tree


def _listed(team: SafeDir, item: WalkItem) -> tuple[str | None, os.stat_result | None] | None:
    """Why a listed file cannot be synced (None: it can) and its stat; None when it
    vanished while listing."""
    problem = item.problem  # walk already checked the key itself
    st = team.stat(item.key) if problem is None else None
    if problem is None and st is None:
        return None
    if problem is None and st is not None:
        problem = NOT_MEMORY if not is_memory_key(item.key) else None
        problem = problem or (TOO_BIG if st.st_size > MAX_MEMORY_BYTES else None)
    return problem, st


def _reason(exc: BaseException) -> str:
    if isinstance(exc, MemoryFormatError):
        return exc.message
    return getattr(exc, "reason", None) or str(exc) or type(exc).__name__


def _reject_collisions(tree: LocalTree) -> None:
    for key, reason in key_clashes(tree.checksums).items():
        tree.rejected[key] = reason
        tree.checksums.pop(key, None)


def fix_index(
    team: SafeDir,
    keys: Iterable[str],
    backup_dir: Path | None = None,
    *,
    present: Iterable[str] = (),
) -> bool:
    """After a sync round, bring ``MEMORY.md`` in line with the files, losslessly.

    The index has already been merged three-way like any file; here only the
    entry lines teamsync owns change (:mod:`teamsync.memdir.indexfix`): an entry
    is added for a memory file of ``keys`` it does not list, and a bullet or
    table-row entry whose every memory link is dead (not in ``keys``, not in
    ``present``, not a file here) is removed. Every other line (prose, headings,
    notes, teammates' hook edits) is kept byte for byte. Only the memories it
    lists are read. The previous text is kept under ``backup_dir`` first.
    Returns True when it was rewritten.
    """
    key_list = sorted(k for k in keys if k != INDEX_NAME)
    try:
        text = read_memory(team, INDEX_NAME)
    except FileNotFoundError:
        return False
    linked = {resolve(e.target) for e in parse_index(text)} - {None}
    listed = linked | {resolve(m) for m in mentioned(text)}
    missing = [k for k in key_list if resolve(k) not in listed]
    known = {normalize_target(k) for k in key_list} | {normalize_target(k) for k in present}
    if not missing and linked <= known:
        return False
    memories: dict[str, Memory] = {}
    for key in missing:
        try:
            body = read_memory(team, key)
        except (FileNotFoundError, TeamsyncError):
            continue
        try:
            memories[key] = parse_memory(body, key)
        except MemoryFormatError:
            stem = key.rsplit("/", 1)[-1].removesuffix(".md")
            memories[key] = Memory(name=stem, description=None, type=None, body=body)
    # A link to a file that exists but does not sync (too big, a refused name) is not dead.
    here = known | {item.key for item in team.walk()}
    new = fix_index_text(text, memories, present=here).text
    if new == text:
        return False
    if backup_dir is not None:
        backup_index(backup_dir, "team/" + INDEX_NAME, text.encode("utf-8"), time.time())
    safe_write(team, INDEX_NAME, new)
    return True
