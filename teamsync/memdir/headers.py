"""Header scan: the cheap view of every memory that recall ranks.

Like Claude Code's ``memoryScan``: every ``*.md`` under the memory directory
(``team/`` included) except ``MEMORY.md`` indexes, reading only the first 30
lines, newest mtime first, capped at 200. Symlinks are never followed, dot
directories and teamsync temp files are skipped, and a file whose frontmatter
cannot be read still appears (with ``None`` fields) so recall can fall back.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from teamsync import _walk
from teamsync.errors import MemoryFormatError
from teamsync.memdir.format import (
    INDEX_NAME,
    MAX_MEMORY_BYTES,
    decode_memory,
    parse_memory,
    too_big,
)

HEAD_LINES = 30
HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class WalkEntry:
    """One directory entry below a root; ``kind`` is ``file``, ``symlink`` or ``other``."""

    path: str
    """posix path relative to the walk root"""
    abs_path: Path
    kind: str
    mtime: float


@dataclass(frozen=True)
class MemoryHeader:
    path: str
    """posix path relative to the memory directory"""
    abs_path: Path
    type: str | None
    name: str | None
    description: str | None
    mtime: float
    modified: float | None = None
    """``metadata.modified`` as a timestamp, when the frontmatter has one."""


def walk(root: Path, prefix: str = "") -> Iterator[WalkEntry]:
    """Every entry below ``root`` (files before subdirectories, by name), never following links.

    Dot directories and teamsync temp files are left out (:func:`teamsync._walk.walk`).
    """
    for rel, entry in _walk.walk(root, prefix=prefix):
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        kind = "other"
        if stat.S_ISREG(info.st_mode):
            kind = "file"
        elif stat.S_ISLNK(info.st_mode):
            kind = "symlink"
        yield WalkEntry(rel, Path(entry.path), kind, info.st_mtime)


def read_capped(path: Path, cap: int) -> tuple[bytes, int]:
    """Up to ``cap + 1`` bytes of a regular file (never following a symlink), and its size."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a regular file")
        if info.st_size > cap:
            return b"", info.st_size
        chunks = []
        remaining = cap + 1
        while remaining > 0 and (chunk := os.read(fd, min(remaining, 1 << 20))):
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        return data, len(data)
    finally:
        os.close(fd)


def load_text(entry: WalkEntry, cap: int = MAX_MEMORY_BYTES) -> str:
    """Read and decode one file of at most ``cap`` bytes, or raise MemoryFormatError."""
    try:
        data, size = read_capped(entry.abs_path, cap)
    except OSError as exc:
        raise MemoryFormatError(entry.path, f"cannot be read: {exc.strerror or exc}") from exc
    if size > cap:
        raise MemoryFormatError(entry.path, too_big(size, cap))
    return decode_memory(data, entry.path, limit=cap)


def is_memory_name(rel: str) -> bool:
    """A memory file: ``*.md`` that is not an index."""
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(".md") and name != INDEX_NAME


def read_head(path: Path, lines: int = HEAD_LINES) -> str:
    """The first ``lines`` lines of a file (at most 64 KiB), decoded leniently."""
    with open(path, "rb") as handle:
        data = handle.read(HEAD_BYTES)
    head = b"".join(data.splitlines(keepends=True)[:lines])
    return head.decode("utf-8", errors="replace")


def read_header(memdir: Path, entry: WalkEntry) -> MemoryHeader:
    """Parse one file's header; unreadable frontmatter gives ``None`` fields."""
    name = description = kind = None
    modified = None
    try:
        memory = parse_memory(read_head(entry.abs_path), entry.path)
        name, description, kind = memory.name, memory.description, memory.type
        modified = memory.modified.timestamp() if memory.modified is not None else None
    except (MemoryFormatError, OSError):
        pass
    return MemoryHeader(entry.path, entry.abs_path, kind, name, description, entry.mtime, modified)


def scan_headers(memdir: Path, limit: int = 200) -> list[MemoryHeader]:
    """Headers of the newest ``limit`` memories below ``memdir`` (ties broken by path)."""
    files = [e for e in walk(memdir) if e.kind == "file" and is_memory_name(e.path)]
    files.sort(key=lambda e: (-e.mtime, e.path))
    return [read_header(memdir, entry) for entry in files[: max(0, limit)]]
