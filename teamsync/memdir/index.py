"""The ``MEMORY.md`` index: one ``- [Title](file.md) — hook`` line per memory.

Loading follows Claude Code's caps (200 lines, 25,000 bytes, cut at a line
boundary, a warning naming the limit hit) except that teamsync counts real
UTF-8 bytes where Claude Code counts UTF-16 code units.

A generated index is versioned: its first line is the HTML comment
``<!-- teamsync-index v1 ... -->`` (Claude Code strips HTML comments before the
index reaches the model, so the marker costs no context). :func:`index_version`
reads it; an index from a newer teamsync is refused rather than overwritten.
Hand-written indexes (no marker) are version 0 and are upgraded by regenerating.
Upgrades from one version to the next go in :data:`UPGRADES` (none yet: v1 is
the first versioned format).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from teamsync.errors import MemoryFormatError
from teamsync.limits import MAX_INDEX_BYTES as MAX_INDEX_BYTES
from teamsync.limits import MAX_INDEX_LINES as MAX_INDEX_LINES
from teamsync.memdir.format import MEMORY_TYPES, Memory

MAX_ENTRY_CHARS = 150
"""Generated lines stay under this; ``check`` reports hand-written lines over LONG_LINE_CHARS."""
LONG_LINE_CHARS = 200
INDEX_VERSION = 1
MARKER = f"<!-- teamsync-index v{INDEX_VERSION}: regenerate with `teamsync check --fix` -->"
UPGRADES: dict[int, Callable[[str], str]] = {}
"""from-version -> function rewriting an index of that version into the next one."""

_ENTRY = re.compile(
    r"[ \t]*[-*+][ \t]+\[(?P<title>(?:\\.|[^\]\\])*)\]\((?P<target>(?:\\.|[^)\\])*)\)"
    r"(?:[ \t]*(?:—|–|--?|:)[ \t]*(?P<hook>.*)|[ \t]+(?P<bare>.*))?"
)
_MARKER = re.compile(r"<!--\s*teamsync-index\s+v(\d+)\b")
_TITLE_ESCAPE = re.compile(r"([\\\[\]])")
_ENCODE = frozenset("#()<>%\\[]")
_UNESCAPE = re.compile(r"\\([\\\[\]()<>])")
_GROUPS = (*MEMORY_TYPES, None)
_GROUP_TITLES = {
    "user": "User",
    "feedback": "Feedback",
    "project": "Project",
    "reference": "Reference",
    None: "Other",
}
_TRUNCATION_ADVICE = (
    "Only part of it was loaded. Keep index entries to one line under ~200 chars; "
    "move detail into topic files."
)


@dataclass(frozen=True)
class IndexEntry:
    title: str
    target: str
    """The link target as written (unescaped and percent-decoded)."""
    hook: str
    line: int
    """1-based line number in the index text."""


@dataclass(frozen=True)
class LoadedIndex:
    """What a loader hands the model: ``text`` is cut to the limits, warning appended."""

    text: str
    truncated: bool
    warning: str | None


def parse_index(text: str) -> list[IndexEntry]:
    """Every ``- [Title](target) — hook`` line; other lines (headings, prose) are skipped."""
    entries = []
    for number, line in enumerate(text.split("\n"), start=1):
        match = _ENTRY.fullmatch(line.removesuffix("\r"))
        if match is None:
            continue
        title = _UNESCAPE.sub(r"\1", match.group("title")).strip()
        raw_target = _UNESCAPE.sub(r"\1", match.group("target")).strip(" \t")
        if raw_target.startswith("<") and raw_target.endswith(">"):
            raw_target = raw_target[1:-1]
        hook = (match.group("hook") or match.group("bare") or "").strip()
        entries.append(IndexEntry(title, unquote(raw_target), hook, number))
    return entries


def load_index(text: str) -> LoadedIndex:
    """Trim, cap at 200 lines, then cut at the last line boundary under 25,000 bytes."""
    trimmed = text.strip()
    lines = trimmed.split("\n")
    reasons = []
    if len(lines) > MAX_INDEX_LINES:
        reasons.append(f"{len(lines)} lines (limit: {MAX_INDEX_LINES})")
        trimmed = "\n".join(lines[:MAX_INDEX_LINES])
    size = len(text.strip().encode("utf-8"))
    data = trimmed.encode("utf-8")
    if len(data) > MAX_INDEX_BYTES:
        reasons.append(f"{size:,} bytes (limit: {MAX_INDEX_BYTES:,}) — index entries are too long")
        cut = data.rfind(b"\n", 0, MAX_INDEX_BYTES + 1)
        trimmed = data[: cut if cut > 0 else MAX_INDEX_BYTES].decode("utf-8", errors="ignore")
    if not reasons:
        return LoadedIndex(trimmed, False, None)
    warning = f"> WARNING: MEMORY.md is {' and '.join(reasons)}. {_TRUNCATION_ADVICE}"
    return LoadedIndex(f"{trimmed}\n\n{warning}", True, warning)


def index_limit_problems(text: str) -> list[str]:
    """Messages for each limit the index exceeds (what load_index would cut)."""
    trimmed = text.strip()
    problems = []
    count = len(trimmed.split("\n")) if trimmed else 0
    if count > MAX_INDEX_LINES:
        problems.append(f"index has {count} lines; loaders read only the first {MAX_INDEX_LINES}")
    size = len(trimmed.encode("utf-8"))
    if size > MAX_INDEX_BYTES:
        problems.append(f"index is {size:,} bytes; loaders read only {MAX_INDEX_BYTES:,}")
    return problems


def index_version(text: str) -> int:
    """The teamsync-index version in the first marker comment; 0 when there is none."""
    match = _MARKER.search(text[:4096])
    return int(match.group(1)) if match else 0


def normalize_target(target: str) -> str:
    """A link target as a posix path relative to the index's directory (``./`` dropped)."""
    parts = [p for p in target.split("/") if p not in ("", ".")]
    return "/".join(parts)


def escape_title(title: str) -> str:
    return _TITLE_ESCAPE.sub(r"\\\1", " ".join(title.split()))


def escape_target(key: str) -> str:
    """Percent-encode what would break a Markdown link target (and any space or invisible)."""
    out = []
    for char in key:
        if char in _ENCODE or char.isspace() or not char.isprintable():
            out.append("".join(f"%{byte:02X}" for byte in char.encode("utf-8")))
        else:
            out.append(char)
    return "".join(out)


def render_entry(title: str, key: str, hook: str, max_chars: int | None = MAX_ENTRY_CHARS) -> str:
    """One index line; the hook is shortened (with an ellipsis) to fit ``max_chars``."""
    line = f"- [{escape_title(title)}]({escape_target(key)})"
    hook = " ".join(hook.split())
    if not hook:
        return line
    full = f"{line} — {hook}"
    if max_chars is None or len(full) <= max_chars:
        return full
    room = max_chars - len(line) - 4
    if room < 8:
        return line
    return f"{line} — {hook[: room - 1].rstrip()}…"


def default_title(key: str, memory: Memory) -> str:
    name = " ".join((memory.name or "").split())
    if name:
        return name
    stem = key.rsplit("/", 1)[-1].removesuffix(".md")
    return " ".join(stem.replace("_", " ").replace("-", " ").split()) or stem


def _known(existing: str | None) -> dict[str, tuple[str, str]]:
    """normalized target -> (title, hook) from the first entry naming it."""
    if not existing:
        return {}
    if index_version(existing) > INDEX_VERSION:
        raise MemoryFormatError(
            "MEMORY.md",
            f"written by a newer teamsync (index v{index_version(existing)}); upgrade teamsync",
        )
    known: dict[str, tuple[str, str]] = {}
    for entry in parse_index(existing):
        known.setdefault(normalize_target(entry.target), (entry.title, entry.hook))
    return known


@dataclass(frozen=True)
class _Row:
    group: str | None
    key: str
    title: str
    hook: str


def _rows(memories: Mapping[str, Memory], existing: str | None) -> list[_Row]:
    known = _known(existing)
    rows = []
    for key, memory in memories.items():
        title, hook = known.get(normalize_target(key), ("", ""))
        title = title or default_title(key, memory)
        hook = hook or " ".join((memory.description or "").split())
        group = memory.type if memory.type in MEMORY_TYPES else None
        rows.append(_Row(group, key, title, hook))
    order = {group: n for n, group in enumerate(_GROUPS)}
    rows.sort(key=lambda r: (order[r.group], r.key))
    return rows


def _render(rows: list[_Row], max_chars: int | None) -> str:
    out = [MARKER]
    for group in _GROUPS:
        members = [r for r in rows if r.group == group]
        if not members:
            continue
        out.extend(["", f"## {_GROUP_TITLES[group]}"])
        out.extend(render_entry(r.title, r.key, r.hook, max_chars) for r in members)
    return "\n".join(out) + "\n"


def _fits(text: str) -> bool:
    return not index_limit_problems(text)


def regenerate_index(memories: Mapping[str, Memory], existing: str | None = None) -> str:
    """A deterministic index: grouped by type, sorted by file name, within the limits.

    Titles and hooks of entries already in ``existing`` are kept; new entries take
    the memory's ``name`` and ``description``. Hooks are shortened, then dropped,
    and finally trailing entries are left out until the index fits its limits
    (:func:`left_out` names them).
    """
    rows = _rows(memories, existing)
    for max_chars in (MAX_ENTRY_CHARS, 120, 100, 80):
        text = _render(rows, max_chars)
        if _fits(text):
            return text
    low, high = 0, len(rows)  # rows[:low] fits; rows[:high + 1] does not
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if _fits(_render(rows[:mid], 80)) else (low, mid - 1)
    return _render(rows[:low], 80)


def indexed_keys(text: str) -> set[str]:
    """Normalized targets an index links to."""
    return {normalize_target(entry.target) for entry in parse_index(text)}


def left_out(memories: Mapping[str, Memory], text: str) -> list[str]:
    """Keys of ``memories`` that a (regenerated) index does not list."""
    listed = indexed_keys(text)
    return sorted(key for key in memories if normalize_target(key) not in listed)
