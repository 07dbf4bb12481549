"""``teamsync recall``: pick the memories relevant to a query, with their content and freshness.

Two selectors, as in Claude Code plus an offline path it lacks:

* **Claude** (``ANTHROPIC_API_KEY`` set and not ``offline``): a manifest of up
  to 200 memory headers, ``- [type] relpath (ISO time, N days old): description``
  (the same type, description and age the offline path reports), goes to the
  model, which answers ``{"selected_memories": [...]}`` through a JSON schema.
  With more than 200 memories the manifest holds the offline ranker's
  candidates for the query first, then the newest, so an old memory stays
  visible. Paths not in the manifest are dropped. A malformed answer, a
  timeout or an API error falls back to the offline path with a note; the
  selector connects with a :data:`CONNECT_TIMEOUT` of one second and never
  retries, so an unreachable API costs about a second.
* **Offline**: hybrid (:mod:`teamsync.recall.hybrid`: bm25 plus a local
  sentence-embedding model) when the ``teamsync[embed]`` extra is installed,
  else lexical (:mod:`teamsync.recall.lexical`: SQLite FTS5 + bm25), both
  cached on disk and both with a relevance floor: fewer than ``limit``
  memories, or none, come back when fewer clear it.

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
from teamsync.memdir.paths import working_memory_dir
from teamsync.recall import llm, models
from teamsync.recall.drift import Checkout, drift_reasons
from teamsync.recall.lexical import FLOOR, default_cache_path, lexical_search

MAX_LINES = 200
MAX_BYTES = 4096
MANIFEST_LIMIT = 200
RECALL_TIMEOUT = 20.0
CONNECT_TIMEOUT = 1.0
MODES = ("auto", "hybrid", "lexical")


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
    """``claude``, ``hybrid`` or ``lexical``"""
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


def manifest_line(header: MemoryHeader, stamp: float, now: float | None = None) -> str:
    """``- [type] relpath (ISO time, N days old): description`` (Claude Code's format plus age)."""
    description = " ".join((header.description or "").split())
    tail = f": {description}" if description else ""
    days = age_days(stamp, time.time() if now is None else now)
    age = {0: "today", 1: "1 day old"}.get(days, f"{days} days old")
    return f"- [{header.type or 'unknown'}] {header.path} ({iso(stamp)}, {age}){tail}"


def build_manifest(
    memdir: Path, state_dir: Path, first: list[str] | None = None
) -> tuple[str, set[str]]:
    """The manifest of at most 200 headers and the set of paths it offers.

    ``first`` (the offline ranker's candidates) are offered before the newest
    memories fill the rest, so a directory of more than 200 memories hides no
    memory the query is about.
    """
    headers = scan_headers(memdir, 10**9)
    stamped = []
    for header in headers:
        try:
            stamp = changed_at(state_dir, header.abs_path, modified=header.modified)
            stamped.append((stamp, header))
        except OSError:
            continue
    stamped.sort(key=lambda item: (-item[0], item[1].path))
    if len(stamped) > MANIFEST_LIMIT and first:
        wanted = {p: i for i, p in enumerate(first)}
        stamped.sort(key=lambda item: wanted.get(item[1].path, len(wanted)))
        stamped = stamped[:MANIFEST_LIMIT]
        stamped.sort(key=lambda item: (-item[0], item[1].path))
    stamped = stamped[:MANIFEST_LIMIT]
    now = time.time()
    lines = [manifest_line(header, stamp, now) for stamp, header in stamped]
    return "\n".join(lines), {header.path for _, header in stamped}


def _claude_picks(
    claude: llm.Claude,
    query: str,
    limit: int,
    memdir: Path,
    settings: Settings,
    notes: list[str],
) -> list[Pick]:
    first: list[str] | None = None
    if _count_memories(memdir) > MANIFEST_LIMIT:
        first = [p.path for p in _lexical_picks(settings, memdir, query, MANIFEST_LIMIT, None)]
    manifest, offered = build_manifest(memdir, settings.state_dir, first)
    if not offered:
        return []
    chosen = claude.select_memories(query, manifest, limit)
    unknown = [p for p in chosen if p not in offered]
    if unknown:
        notes.append(f"ignored {len(unknown)} path(s) Claude named that were not in its list")
    known = list(dict.fromkeys(p for p in chosen if p in offered))[:limit]
    why = f"chosen by {claude.model} from {len(offered)} memory headers"
    return [Pick(p, round(1.0 / (rank + 1), 4), why) for rank, p in enumerate(known)]


def _count_memories(memdir: Path) -> int:
    from teamsync.recall.lexical import iter_memory_files

    return sum(1 for _ in iter_memory_files(memdir))


def _lexical_picks(
    settings: Settings, memdir: Path, query: str, limit: int, floor: float | None = FLOOR
) -> list[Pick]:
    cache = default_cache_path(settings.cache_dir, memdir)
    hits = lexical_search(memdir, query, limit, cache_path=cache, explain=True, floor=floor)
    return [
        Pick(
            h.path,
            h.score,
            f"bm25 {h.score:g} on {', '.join(h.matched[:8])} "
            f"(covers {h.coverage:.0%} of the query; floor {FLOOR:.0%})",
        )
        for h in hits
    ]


def _hybrid_picks(settings: Settings, memdir: Path, query: str, limit: int) -> list[Pick]:
    from teamsync.recall.hybrid import hybrid_search

    model, cache, vectors = hybrid_paths(settings, memdir)
    hits = hybrid_search(
        memdir,
        query,
        limit,
        cache_path=cache,
        vectors_path=vectors,
        encoder=models.encoder(model),
    )
    return [Pick(h.path, round(h.score, 4), h.why) for h in hits]


def hybrid_paths(settings: Settings, memdir: Path) -> tuple[str, Path, Path]:
    """The directory's model (by the languages of its memories), FTS cache and vector cache."""
    from teamsync.recall.lexical import LexicalIndex
    from teamsync.recall.vectors import default_vectors_path

    cache = default_cache_path(settings.cache_dir, memdir)
    index = LexicalIndex(memdir, cache)
    try:
        index.refresh()
        model = models.choose(index.languages())
    finally:
        index.close()
    return model, cache, default_vectors_path(settings.state_dir, memdir, model)


def _offline(
    settings: Settings, memdir: Path, query: str, limit: int, mode: str
) -> tuple[list[Pick], str]:
    from teamsync.recall import embed

    if mode == "hybrid" or (mode == "auto" and embed.available()):
        return _hybrid_picks(settings, memdir, query, limit), "hybrid"
    return _lexical_picks(settings, memdir, query, limit), "lexical"


def _select(
    settings: Settings,
    query: str,
    limit: int,
    claude: llm.Claude | None,
    memdir: Path,
    mode: str,
) -> RecallResult:
    notes: list[str] = []
    if claude is not None:
        try:
            picks = _claude_picks(claude, query, limit, memdir, settings, notes)
            return RecallResult(_load(settings, memdir, picks, notes), "claude", notes)
        except LLMError as exc:
            notes.append(f"Claude recall failed: {exc}; fell back to offline ranking")
    picks, selector = _offline(settings, memdir, query, limit, mode)
    return RecallResult(_load(settings, memdir, picks, notes), selector, notes)


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


@dataclass(frozen=True)
class Warmed:
    """What :func:`warm` did."""

    model: str | None
    """the embedding model the directory uses (None: no model installed, lexical only)"""
    memories: int
    reread: int
    embedded: int
    seconds: float


def warm(settings: Settings) -> Warmed:
    """Build or bring up to date both caches of the memory directory, so a query waits for neither.

    Incremental like a query's refresh (only new or changed memories are read and embedded),
    batched (the encoders embed the whole batch at once, sorted by length); run by
    ``teamsync recall --warm`` and, in the background, after a pull.
    """
    from teamsync.recall import embed
    from teamsync.recall.lexical import LexicalIndex

    memdir = working_memory_dir(settings)
    if not memdir.is_dir():
        raise ConfigError(
            f"memory directory {memdir} does not exist; pass --dir or set TEAMSYNC_DIR"
        )
    start = time.perf_counter()
    if not embed.available():
        index = LexicalIndex(memdir, default_cache_path(settings.cache_dir, memdir))
        try:
            changed = index.refresh()
            count = len(index)
        finally:
            index.close()
        return Warmed(None, count, changed, 0, time.perf_counter() - start)
    from teamsync.recall.hybrid import HybridIndex

    model, cache, vectors = hybrid_paths(settings, memdir)
    hybrid = HybridIndex(memdir, cache, vectors, encoder=models.encoder(model))
    try:
        changed, embedded = hybrid.refresh()
        count = len(hybrid.lexical)
    finally:
        hybrid.close()
    return Warmed(model, count, changed, embedded, time.perf_counter() - start)


def recall(
    settings: Settings,
    query: str,
    *,
    limit: int = 5,
    offline: bool = False,
    claude: llm.Claude | None = None,
    model: str | None = None,
    mode: str = "auto",
) -> RecallResult:
    """Select and load at most ``limit`` memories for ``query`` (fewer when fewer are relevant).

    ``claude`` injects a client (tests); otherwise one is built from the
    environment unless ``offline`` or no API key is set. ``mode`` picks the
    offline ranker: ``auto`` (hybrid when the embedding extra is installed),
    ``hybrid`` (an error without the extra) or ``lexical``.
    """
    if mode not in MODES:
        raise UsageError(f"unknown recall mode {mode!r}; use one of {', '.join(MODES)}")
    memdir = working_memory_dir(settings)
    if not memdir.is_dir():
        raise ConfigError(
            f"memory directory {memdir} does not exist; pass --dir or set TEAMSYNC_DIR"
        )
    if not query.strip():
        raise UsageError("the query is empty; say what you are looking for")
    if offline:
        claude = None
    elif claude is None:
        claude = llm.from_settings(
            settings,
            model=model,
            timeout=RECALL_TIMEOUT,
            connect_timeout=CONNECT_TIMEOUT,
            max_retries=0,
        )
    return _select(settings, query, max(0, limit), claude, memdir, mode)
