"""``teamsync recall``: pick the memories relevant to a query, with their content and freshness.

Two selectors, as in Claude Code plus an offline path it lacks:

* **Claude** (``ANTHROPIC_API_KEY`` set and not ``offline``): a manifest of the
  200 newest memory headers, ``- [type] relpath (ISO time): description``,
  goes to the model, which answers ``{"selected_memories": [...]}`` through a
  JSON schema. Paths not in the manifest are dropped. A malformed answer, a
  timeout or an API error falls back to the lexical path, with a note saying so.
* **Lexical** (:mod:`teamsync.recall.lexical`): SQLite FTS5 + bm25 over every
  memory, cached on disk.

Each chosen memory is read without following symlinks, capped like Claude Code
(200 lines / 4,096 bytes, with a truncation note), aged from the history sync
records (:func:`teamsync.memdir.freshness.changed_at`), given the freshness note
from 2 days on, and checked for code drift (:mod:`teamsync.recall.drift`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from teamsync.config import Settings
from teamsync.errors import ConfigError, LLMError, MemoryFormatError, SecurityError, UsageError
from teamsync.memdir.freshness import (
    age_days,
    age_reason,
    changed_at,
    checksum_bytes,
    freshness_note,
)
from teamsync.memdir.headers import MemoryHeader, scan_headers
from teamsync.memdir.paths import memory_dir
from teamsync.recall import llm
from teamsync.recall.drift import Checkout, drift_reasons
from teamsync.recall.lexical import default_cache_path, lexical_search

MAX_LINES = 200
MAX_BYTES = 4096
MANIFEST_LIMIT = 200
RECALL_TIMEOUT = 20.0


@dataclass(frozen=True)
class Pick:
    """A selector's choice before the file is read."""

    path: str
    score: float
    why: str


@dataclass(frozen=True)
class Recalled:
    """One recalled memory, ready to show."""

    path: str
    score: float
    type: str | None
    description: str | None
    content: str
    truncated: str | None
    changed_at: float
    age_days: int
    freshness: str | None
    stale_reasons: tuple[str, ...]
    why: str

    @property
    def stale(self) -> bool:
        """True whenever a caveat is attached: 2 days old or more, or code drift found."""
        return bool(self.stale_reasons)


@dataclass
class RecallResult:
    memories: list[Recalled]
    selector: str
    """``claude`` or ``lexical``"""
    notes: list[str] = field(default_factory=list)


def cap_content(text: str, path: str) -> tuple[str, str | None]:
    """Cap ``text`` at 200 lines and 4,096 UTF-8 bytes (at a line boundary when possible)."""
    lines = text.splitlines(keepends=True)
    kept = lines[:MAX_LINES]
    out: list[str] = []
    size = 0
    for line in kept:
        length = len(line.encode("utf-8"))
        if size + length > MAX_BYTES:
            if not out:  # one huge first line: cut inside it, on a character boundary
                out.append(line.encode("utf-8")[:MAX_BYTES].decode("utf-8", errors="ignore"))
            break
        out.append(line)
        size += length
    capped = "".join(out)
    if capped == text:
        return text, None
    total = len(text.encode("utf-8"))
    note = (
        f"[truncated: showing {len(out)} of {len(lines)} lines, {len(capped.encode('utf-8')):,} "
        f"of {total:,} bytes; read {path} for the rest]"
    )
    return capped, note


def iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def manifest_line(header: MemoryHeader, stamp: float) -> str:
    """``- [type] relpath (ISO time): description`` (Claude Code's manifest format)."""
    description = " ".join((header.description or "").split())
    tail = f": {description}" if description else ""
    return f"- [{header.type or 'unknown'}] {header.path} ({iso(stamp)}){tail}"


def build_manifest(memdir: Path, state_dir: Path) -> tuple[str, set[str]]:
    """The manifest of the newest 200 headers and the set of paths it offers."""
    headers = scan_headers(memdir, MANIFEST_LIMIT)
    stamped = []
    for header in headers:
        try:
            stamp = changed_at(state_dir, header.abs_path, modified=header.modified)
            stamped.append((stamp, header))
        except OSError:
            continue
    stamped.sort(key=lambda item: (-item[0], item[1].path))
    lines = [manifest_line(header, stamp) for stamp, header in stamped]
    return "\n".join(lines), {header.path for _, header in stamped}


def _claude_picks(
    claude: llm.Claude, query: str, limit: int, memdir: Path, state_dir: Path, notes: list[str]
) -> list[Pick]:
    manifest, offered = build_manifest(memdir, state_dir)
    if not offered:
        return []
    chosen = claude.select_memories(query, manifest, limit)
    unknown = [p for p in chosen if p not in offered]
    if unknown:
        notes.append(f"ignored {len(unknown)} path(s) Claude named that are not memories")
    known = list(dict.fromkeys(p for p in chosen if p in offered))[:limit]
    why = f"chosen by {claude.model} from {len(offered)} memory headers"
    return [Pick(p, round(1.0 / (rank + 1), 4), why) for rank, p in enumerate(known)]


def _lexical_picks(settings: Settings, memdir: Path, query: str, limit: int) -> list[Pick]:
    cache = default_cache_path(settings.cache_dir, memdir)
    hits = lexical_search(memdir, query, limit, cache_path=cache, explain=True)
    return [Pick(h.path, h.score, "lexical match on " + ", ".join(h.matched[:8])) for h in hits]


def _select(
    settings: Settings, query: str, limit: int, claude: llm.Claude | None, memdir: Path
) -> RecallResult:
    notes: list[str] = []
    if claude is not None:
        try:
            picks = _claude_picks(claude, query, limit, memdir, settings.state_dir, notes)
            return RecallResult(_load(settings, memdir, picks, notes), "claude", notes)
        except LLMError as exc:
            notes.append(f"Claude recall failed: {exc}; fell back to lexical ranking")
    picks = _lexical_picks(settings, memdir, query, limit)
    return RecallResult(_load(settings, memdir, picks, notes), "lexical", notes)


def _load(settings: Settings, memdir: Path, picks: list[Pick], notes: list[str]) -> list[Recalled]:
    from teamsync.security.fs import SafeDir

    now = time.time()
    checkout: Checkout | None = None
    out: list[Recalled] = []
    with SafeDir(memdir) as root:
        for pick in picks:
            try:
                data = root.read_bytes(pick.path)
                text = data.decode("utf-8", errors="replace")
            except (OSError, SecurityError, MemoryFormatError) as exc:
                notes.append(f"skipped {pick.path}: {exc}")
                continue
            checkout = checkout or Checkout.find(settings.cwd)
            out.append(_recalled(settings, memdir, pick, text, data, checkout, now))
    return out


def _recalled(
    settings: Settings,
    memdir: Path,
    pick: Pick,
    text: str,
    data: bytes,
    checkout: Checkout,
    now: float,
) -> Recalled:
    from teamsync.memdir.format import parse_memory

    modified = None
    try:
        memory = parse_memory(text, pick.path)
        kind, description = memory.type, memory.description
        modified = memory.modified.timestamp() if memory.modified is not None else None
    except MemoryFormatError:
        kind = description = None
    stamp = changed_at(settings.state_dir, memdir / pick.path, checksum_bytes(data), modified)
    days = age_days(stamp, now)
    content, note = cap_content(text, pick.path)
    aged = age_reason(days)
    reasons = ([aged] if aged else []) + drift_reasons(text, stamp, checkout, memdir=memdir)
    return Recalled(
        path=pick.path,
        score=pick.score,
        type=kind,
        description=description,
        content=content,
        truncated=note,
        changed_at=stamp,
        age_days=days,
        freshness=freshness_note(days),
        stale_reasons=tuple(reasons),
        why=pick.why,
    )


def recall(
    settings: Settings,
    query: str,
    *,
    limit: int = 5,
    offline: bool = False,
    claude: llm.Claude | None = None,
    model: str | None = None,
) -> RecallResult:
    """Select and load up to ``limit`` memories for ``query``.

    ``claude`` injects a client (tests); otherwise one is built from the
    environment unless ``offline`` or no API key is set.
    """
    memdir = memory_dir(settings)
    if not memdir.is_dir():
        raise ConfigError(
            f"memory directory {memdir} does not exist; pass --dir or set TEAMSYNC_DIR"
        )
    if not query.strip():
        raise UsageError("the query is empty; say what you are looking for")
    if offline:
        claude = None
    elif claude is None:
        claude = llm.from_settings(settings, model=model, timeout=RECALL_TIMEOUT, max_retries=1)
    return _select(settings, query, max(0, limit), claude, memdir)
