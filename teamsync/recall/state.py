"""Per-memory-directory state for extract and dream (never synced, never inside the memdir).

Layout under ``<Settings.state_dir>/recall/<hash of the memory dir>/``:

* ``cursors/<hash of transcript>.json`` — ``{"v": 1, "transcript", "last_uuid",
  "updated"}``: the last transcript message already extracted;
* ``extractions.log`` — one POSIX time per successful extraction (dream's gate);
* ``last-dream`` — the time of the last completed consolidation;
* ``dream.lock`` — the PID of a running consolidation;
* ``dream-backups/<UTC stamp>/`` — pre-images of every file a dream changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from teamsync import _files

CURSOR_VERSION = 1


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", errors="surrogateescape")).hexdigest()[:16]


def state_root(state_dir: Path, memdir: Path) -> Path:
    """The state folder for one memory directory."""
    return state_dir / "recall" / _digest(os.path.realpath(memdir))


def write_atomic(path: Path, text: str) -> None:
    """Write a small state file atomically (:func:`teamsync._files.write_atomic`)."""
    _files.write_atomic(path, text)


def _cursor_path(root: Path, transcript: Path) -> Path:
    return root / "cursors" / f"{_digest(os.path.realpath(transcript))}.json"


def load_cursor(root: Path, transcript: Path) -> str | None:
    """The uuid of the last extracted message of ``transcript``, if any."""
    try:
        data = json.loads(_cursor_path(root, transcript).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("v") != CURSOR_VERSION:
        return None
    value = data.get("last_uuid")
    return value if isinstance(value, str) else None


def save_cursor(root: Path, transcript: Path, last_uuid: str, now: float) -> None:
    payload = {
        "v": CURSOR_VERSION,
        "transcript": os.path.realpath(transcript),
        "last_uuid": last_uuid,
        "updated": now,
    }
    write_atomic(_cursor_path(root, transcript), json.dumps(payload))


def record_extraction(root: Path, now: float) -> None:
    """Append one successful extraction to the log dream's gate counts."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "extractions.log", "a", encoding="utf-8") as handle:
        handle.write(f"{now:.3f}\n")


def extractions_since(root: Path, since: float) -> int:
    """How many extractions were recorded after ``since``."""
    try:
        lines = (root / "extractions.log").read_text(encoding="utf-8").split()
    except OSError:
        return 0
    count = 0
    for line in lines:
        try:
            count += float(line) > since
        except ValueError:
            continue
    return count


def last_dream(root: Path) -> float | None:
    try:
        return float((root / "last-dream").read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def set_last_dream(root: Path, now: float) -> None:
    write_atomic(root / "last-dream", f"{now:.3f}\n")
