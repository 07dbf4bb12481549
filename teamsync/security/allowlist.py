"""The reviewed allowlist: the only way a finding gets through a team-memory gate.

An inline ``teamsync: allow`` comment is written by whoever writes the line, so
it proves nothing in team memory: the model or teammate that wrote the secret
can write the comment too. Team-memory gates ignore it. A false positive passes
only when its fingerprint is in this allowlist, which

* lives **outside** ``team/``: ``.teamsync/allowlist.json`` at the root of the
  project's git checkout (committed, so it is reviewed like code), or
  ``<memory dir>/allowlist.json`` when the project is not a git checkout;
* counts **as committed**: every gate that decides what leaves the machine (the
  Claude Code hook, ``push``/``sync``) reads the project's file from ``HEAD``
  (:func:`load_committed`), so an uncommitted change, whoever made it, counts for
  nothing until a person commits it and it is reviewed;
* is changed only by ``teamsync allow``, which asks a person at a terminal to
  confirm (it refuses to run without one), and records who, when and why;
* is itself guarded: the Claude Code hook refuses a model's Write, Edit or Bash
  aimed at it.

The file is a baseline (:mod:`teamsync.security.baseline`, version 1) whose
entries also carry ``reason``, ``added_by`` and ``added_at``. Fingerprints only:
the secret never reaches the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from teamsync.errors import ConfigError

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any

ALLOWLIST_DIR = ".teamsync"
ALLOWLIST_NAME = "allowlist.json"
VERSION = 1


def git_root(start: Path) -> Path | None:
    for candidate in (start, *start.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def allowlist_paths(cwd: Path, memory_dir: Path | None) -> list[Path]:
    """Where the reviewed allowlist may be, most authoritative first."""
    paths: list[Path] = []
    root = git_root(Path(os.path.abspath(cwd)))
    if root is not None:
        paths.append(root / ALLOWLIST_DIR / ALLOWLIST_NAME)
    if memory_dir is not None:
        paths.append(memory_dir / ALLOWLIST_NAME)
    return paths


def default_path(cwd: Path, memory_dir: Path | None) -> Path:
    """The file ``teamsync allow`` writes: the project's, else the memory dir's."""
    paths = allowlist_paths(cwd, memory_dir)
    if not paths:
        raise ConfigError("no project checkout and no memory directory: pass --file PATH")
    return paths[0]


@dataclass(frozen=True)
class Entry:
    fingerprint: str
    reason: str
    rule: str = ""
    path: str = ""
    added_by: str = ""
    added_at: str = ""
    repo: str = ""
    """On a server's allowlist: the repository it applies to (empty: every repository)."""

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v}


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: cannot read the allowlist ({type(exc).__name__}); fix it by hand "
            "or restore it from git"
        ) from None
    return _entries(data, str(path))


def _entries(data: object, where: str) -> list[dict[str, Any]]:
    if (
        not isinstance(data, dict)
        or data.get("version") != VERSION
        or not isinstance(data.get("fingerprints"), list)
    ):
        raise ConfigError(f"{where}: not a teamsync allowlist (version {VERSION} expected)")
    return [e for e in data["fingerprints"] if isinstance(e, dict) and "fingerprint" in e]


def load_entries(path: Path) -> list[Entry]:
    fields = set(Entry.__dataclass_fields__)
    return [
        Entry(
            **{k: str(v) for k, v in e.items() if k in fields}
            | {"reason": str(e.get("reason", ""))}
        )
        for e in _read(path)
    ]


def load_allowlist(cwd: Path, memory_dir: Path | None) -> frozenset[str]:
    """Every fingerprint in the reviewed allowlist files (missing files: none)."""
    found: set[str] = set()
    for path in allowlist_paths(cwd, memory_dir):
        found.update(str(e["fingerprint"]) for e in _read(path))
    return frozenset(found)


def committed_text(
    root: Path, rev: str = "HEAD", environ: Mapping[str, str] | None = None
) -> str | None:
    """``.teamsync/allowlist.json`` as committed at ``rev`` of the repository at ``root``.

    None when the revision holds no such file (or the repository has no commit
    yet). Read through the one git runner; the work tree's copy is never consulted.
    """
    from teamsync import _git

    result = _git.run(
        ["show", f"{rev}:{ALLOWLIST_DIR}/{ALLOWLIST_NAME}"], cwd=root, environ=environ, timeout=10
    )
    if not result.ok:
        return None
    return result.stdout.decode("utf-8", "replace")


def parse_fingerprints(text: str | None, where: str) -> frozenset[str]:
    """The fingerprints of allowlist ``text`` (None: no file, no fingerprint)."""
    if text is None:
        return frozenset()
    try:
        data = json.loads(text)
    except ValueError:
        raise ConfigError(
            f"{where}: cannot read the allowlist (not JSON); fix it in a reviewed commit"
        ) from None
    return frozenset(str(e["fingerprint"]) for e in _entries(data, where))


def load_committed(
    cwd: Path, memory_dir: Path | None, environ: Mapping[str, str] | None = None
) -> frozenset[str]:
    """The reviewed allowlist as the gates that decide what leaves the machine see it.

    In a git checkout: the project's ``.teamsync/allowlist.json`` at ``HEAD`` only
    (the work-tree copy and ``<memory dir>/allowlist.json`` count for nothing there:
    an uncommitted change is not reviewed). Outside a git checkout there is no
    commit to read, and ``<memory dir>/allowlist.json`` is the allowlist.
    """
    root = git_root(Path(os.path.abspath(cwd)))
    if root is not None:
        return parse_fingerprints(
            committed_text(root, environ=environ), f"HEAD:{ALLOWLIST_DIR}/{ALLOWLIST_NAME}"
        )
    if memory_dir is None:
        return frozenset()
    return frozenset(str(e["fingerprint"]) for e in _read(memory_dir / ALLOWLIST_NAME))


def save_entries(path: Path, entries: list[Entry]) -> None:
    """Write the allowlist atomically, sorted, one entry per fingerprint."""
    unique = {e.fingerprint: e for e in entries}
    doc = {
        "version": VERSION,
        "fingerprints": [unique[k].as_dict() for k in sorted(unique)],
    }
    from teamsync._files import write_atomic

    # a file reviewed and committed with the project: readable like its other files
    write_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n", new_mode=0o644)


def now_iso() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
