"""Freshness: how old a memory is, without letting a sync make it look new.

Claude Code ages a memory by its file mtime, so every pull resets the clock.
teamsync records, per file, the time its *content* last changed (sync passes the
remote's change time when it writes a pulled file) together with the content's
checksum. :func:`changed_at` takes, in this order:

1. that record, while the file still holds exactly that content;
2. the file's own ``metadata.modified`` (the content's clock, which Claude Code
   writes and which survives a copy or a pull);
3. the file's mtime.

When sync writes a pulled file, it sets the file's mtime to the remote's change
time and records the content's ``metadata.modified`` when that is earlier
(:func:`content_time`), so a memory written months ago and pushed today still
shows its real age. When the content time is the remote's change time, the
mtime already says it and no record is written (an older record for the path is
removed): a large pull then creates one file per memory, not two.

Records live under ``<state_dir>/freshness/``, one small JSON file per memory
(named by a hash of the memory's absolute path), so recording one change never
rewrites the others. Record format version 1: ``{"v": 1, "path", "checksum",
"changed_at"}``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Iterable
from pathlib import Path

from teamsync._files import write_atomic
from teamsync.limits import TEMP_PREFIX

STALE_AFTER_DAYS = 2
RECORD_VERSION = 1
_DAY = 86_400.0
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW


def age_days(changed_at: float, now: float) -> int:
    """Whole days since ``changed_at`` (never negative, as Claude Code's memoryAge)."""
    return max(0, math.floor((now - changed_at) / _DAY))


def freshness_note(days: int) -> str | None:
    """The staleness note recall attaches from two days on; None for fresher memories."""
    if days < STALE_AFTER_DAYS:
        return None
    return (
        f"This memory is {days} days old. Memories are point-in-time observations, "
        "not live state: claims about code behavior or file:line citations may be outdated. "
        "Verify against the current code before relying on it."
    )


def checksum_bytes(data: bytes) -> str:
    """``sha256:<hex>``, the same value as :func:`teamsync.sync.base.checksum` of the text."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _record_name(absolute: str) -> str:
    return hashlib.sha256(os.fsencode(absolute)).hexdigest()[:40] + ".json"


def _record_path(state_dir: Path, file: Path) -> Path:
    return state_dir / "freshness" / _record_name(os.path.abspath(file))


def record_change(state_dir: Path, file: Path, content_checksum: str, changed_at: float) -> None:
    """Remember that ``file`` holding ``content_checksum`` last changed at ``changed_at``."""
    target = _record_path(state_dir, file)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "v": RECORD_VERSION,
        "path": os.path.abspath(file),
        "checksum": content_checksum,
        "changed_at": float(changed_at),
    }
    write_atomic(target, json.dumps(payload))


def record_changes(
    state_dir: Path, records: Iterable[tuple[Path, str, float]], forget: Iterable[Path] = ()
) -> None:
    """:func:`record_change` for many ``(file, checksum, changed_at)``, without fsyncs,
    and drop the records of ``forget`` (files whose own mtime now says their age).

    For a sync pull: each record is still replaced atomically (temp + rename), and
    a record a crash loses is only a hint lost (the file's mtime remains).
    """
    folder = state_dir / "freshness"
    folder.mkdir(parents=True, exist_ok=True)
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for file, content_checksum, when in records:
            path = os.path.abspath(file)
            payload = {
                "v": RECORD_VERSION,
                "path": path,
                "checksum": content_checksum,
                "changed_at": float(when),
            }
            name = _record_name(path)
            tmp = f"{TEMP_PREFIX}{os.urandom(8).hex()}"
            fd = os.open(tmp, _NEW_FLAGS, 0o600, dir_fd=dir_fd)
            try:
                os.write(fd, json.dumps(payload).encode("utf-8"))
            finally:
                os.close(fd)
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        gone = [_record_name(os.path.abspath(file)) for file in forget]
        if gone:
            present = set(os.listdir(dir_fd))  # one listing, not one failed unlink per file
            for name in gone:
                if name in present:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def _recorded(state_dir: Path, file: Path) -> tuple[str, float] | None:
    try:
        data = json.loads(_record_path(state_dir, file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("v") != RECORD_VERSION:
        return None
    if data.get("path") != os.path.abspath(file):
        return None
    stamp, checksum = data.get("changed_at"), data.get("checksum")
    if not isinstance(stamp, (int, float)) or not isinstance(checksum, str):
        return None
    return checksum, float(stamp)


def changed_at(
    state_dir: Path,
    file: Path,
    content_checksum: str | None = None,
    modified: float | None = None,
) -> float:
    """When ``file``'s content last changed: the record while it matches, else
    ``modified`` (the memory's ``metadata.modified`` as a timestamp), else the mtime.

    ``content_checksum`` is the file's current checksum when the caller already
    knows it; otherwise the file is read and hashed. Raises FileNotFoundError when
    the file is gone.
    """
    mtime = file.stat().st_mtime
    record = _recorded(state_dir, file)
    if record is not None:
        if content_checksum is None:
            content_checksum = checksum_bytes(file.read_bytes())
        if record[0] == content_checksum:
            return record[1]
    return modified if modified is not None else mtime


def content_time(text: str, remote_changed_at: float) -> float:
    """The change time sync records for pulled ``text``: the remote's change time, or the
    content's own ``metadata.modified`` when that is earlier (a memory written long ago and
    pushed today is not new). The remote time is an upper bound: content cannot reach the
    remote before it is written."""
    if "modified:" not in text[:4096]:
        return remote_changed_at
    from teamsync.errors import MemoryFormatError
    from teamsync.memdir.format import parse_memory

    try:
        modified = parse_memory(text).modified
    except MemoryFormatError:
        return remote_changed_at
    if modified is None:
        return remote_changed_at
    return min(remote_changed_at, modified.timestamp())


def age_reason(days: int) -> str | None:
    """The ``stale_reasons`` entry for age (from two days on), else None."""
    if days < STALE_AFTER_DAYS:
        return None
    return f"{days} days old: a point-in-time observation; verify it against the current code"
