"""The ``MEMORY.md`` index: what its lines mean and how loaders cut it.

An **entry** is a Markdown link to a memory file (``*.md``, not ``MEMORY.md``)
on a bullet line (``- [Title](file.md) — hook``), a table row
(``| [x.md](x.md) | type | summary |``) or a heading line (``### [x](x.md)``).
Links in prose lines and backtick mentions (`` `deploys.md` ``) are not
entries, but they do list the file for the orphan check. Lines inside code
fences and HTML comments are never read as anything (Claude Code strips
comments before the model sees the index). Every other line (headings,
prose, notes, tables, quotes) belongs to whoever wrote it; see
:mod:`teamsync.memdir.indexfix` for what ``check --fix`` changes.

Loading follows Claude Code's caps (200 lines, 25,000 bytes, cut at a line
boundary, a warning naming the limit hit) except that teamsync counts real
UTF-8 bytes where Claude Code counts UTF-16 code units.

A new index teamsync creates starts with the HTML comment ``<!-- teamsync-index
v1 ... -->``; :func:`index_version` reads it and an index from a newer teamsync
is refused rather than changed. Indexes without it (hand-written, or Claude
Code's) are version 0 and are edited in place, never regenerated. Upgrades from
one version to the next go in :data:`UPGRADES` (none yet).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from teamsync.limits import MAX_INDEX_BYTES as MAX_INDEX_BYTES
from teamsync.limits import MAX_INDEX_LINES as MAX_INDEX_LINES
from teamsync.memdir.format import INDEX_NAME as INDEX_FILE
from teamsync.memdir.format import Memory

MAX_ENTRY_CHARS = 150
"""Generated lines stay under this; ``check`` reports hand-written lines over LONG_LINE_CHARS."""
LONG_LINE_CHARS = 200
INDEX_VERSION = 1
MARKER = f"<!-- teamsync-index v{INDEX_VERSION}: regenerate with `teamsync check --fix` -->"
UPGRADES: dict[int, Callable[[str], str]] = {}
"""from-version -> function rewriting an index of that version into the next one."""

_ENTRY = re.compile(
    r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[(?P<title>(?:\\.|[^\]\\])*)\]"
    r"\((?P<target>(?:\\.|[^)\\])*)\)"
    r"(?:[ \t]*(?:—|–|--?|:)[ \t]*(?P<hook>.*)|[ \t]+(?P<bare>.*))?"
)
_LINK = re.compile(r"(?<!!)\[(?P<title>(?:\\.|[^\]\\\n])*)\]\((?P<target>(?:\\.|[^)\\\n])*)\)")
_BULLET = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]")
_TABLE = re.compile(r"[ \t]*\|")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_MENTION = re.compile(r"`([^`\s]+\.md)`")
_WIKI = re.compile(r"\[\[([^\[\]\n|#]+)(?:[|#][^\]\n]*)?\]\]")
_TICKS = re.compile(r"`+")
_EXTERNAL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://|mailto:|#", re.IGNORECASE)
_EMPHASIS = re.compile(
    # ``_`` and ``__`` open and close only at a word edge (CommonMark's intraword rule):
    # the underscores of ``some_name`` or ``a_b_c`` are not emphasis.
    r"(?:(\*\*|\*|~~)(?=\S)(?:(?!\1).)*?(?<=\S)\1)"
    r"|(?:(?<![^\W_])(__|_)(?=\S)(?:(?!\2).)*?(?<=\S)\2(?![^\W_]))"
)
_LEAD_NOISE = re.compile(
    r"\[[ xX]\]|[*_~`]+|(?<!!)\[(?:\\.|[^\]\\\n])*\]\((?:\\.|[^)\\\n])*\)[ \t]*(?:[,;/&|+·]|and)?"
)
_MARKER = re.compile(r"<!--\s*teamsync-index\s+v(\d+)\b")
_TITLE_ESCAPE = re.compile(r"([\\\[\]`])")
_ENCODE = frozenset("#()<>%\\[]`")
_UNESCAPE = re.compile(r"\\([\\\[\]()<>`])")
_TRUNCATION_ADVICE = (
    "Only part of it was loaded. Keep index entries to one line under ~200 chars; "
    "move detail into topic files."
)


@dataclass(frozen=True)
class IndexEntry:
    title: str
    target: str
    """The link target as written (unescaped and percent-decoded, ``#fragment`` dropped)."""
    hook: str
    line: int
    """1-based line number in the index text."""
    style: str = "bullet"
    """``bullet``, ``table`` or ``heading``: the kind of line the link is on."""


@dataclass(frozen=True)
class LoadedIndex:
    """What a loader hands the model: ``text`` is cut to the limits, warning appended."""

    text: str
    truncated: bool
    warning: str | None


@dataclass(frozen=True)
class IndexLine:
    """One line of an index, classified. ``text`` keeps its line end."""

    number: int
    text: str
    kind: str
    """``fence`` / ``comment`` (inside a code fence or HTML comment), ``heading``,
    ``bullet``, ``table``, ``blank`` or ``prose``."""
    entries: tuple[IndexEntry, ...] = ()
    """Links to memory files on a bullet, table or heading line."""
    mentions: tuple[str, ...] = ()
    """Memory files named in prose links or backticks (listed, but not entries)."""
    wiki: tuple[str, ...] = ()
    level: int = 0
    """Heading level (1-6) for a heading line."""
    heading: str = ""


def _target(raw: str) -> str | None:
    """A link target naming a memory file (decoded, fragment dropped), else None."""
    target = _UNESCAPE.sub(r"\1", raw).strip(" \t")
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    target = target.split(" ", 1)[0] if ' "' in target else target  # [x](x.md "title")
    if not target or _EXTERNAL.match(target):
        return None
    target = unquote(target.split("#", 1)[0])
    name = target.rsplit("/", 1)[-1]
    if not name.lower().endswith(".md") or name == INDEX_FILE:
        return None
    return target


def _hook(line: str, end: int) -> str:
    rest = line[end:].strip()
    for sep in ("—", "–", "--", "-", ":"):
        if rest.startswith(sep):
            return rest[len(sep) :].strip()
    return rest


def code_spans(line: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each inline code span: a backtick run closed by the next run of
    the same length (CommonMark); linear time, whatever the line holds."""
    runs = [
        (m.start() + 1, m.end()) if m.start() and line[m.start() - 1] == "\\" else m.span()
        for m in _TICKS.finditer(line)
    ]
    runs = [(a, b) for a, b in runs if b > a]
    following: list[int | None] = [None] * len(runs)
    seen: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        width = runs[i][1] - runs[i][0]
        following[i] = seen.get(width)
        seen[width] = i
    spans, i = [], 0
    while i < len(runs):
        j = following[i]
        if j is None:
            i += 1
            continue
        spans.append((runs[i][0], runs[j][1]))
        i = j + 1
    return spans


def _outside_code(line: str) -> str:
    """The line with inline code spans blanked out (same length)."""
    out = list(line)
    for start, end in code_spans(line):
        out[start:end] = " " * (end - start)
    return "".join(out)


def _leads(line: str, start: int) -> bool:
    """Does the link at ``start`` open the bullet's text (after the marker, a task box,
    emphasis or an earlier link), as an entry's link does? A link later in a note's
    prose (``- … See [x](x.md).``) is a citation, not an entry."""
    head = _BULLET.match(line)
    lead = line[head.end() if head is not None else 0 : start]
    return not _LEAD_NOISE.sub("", lead).strip()


def _classify(number: int, raw: str) -> IndexLine:
    line = raw.rstrip("\r\n")
    if not line.strip():
        return IndexLine(number, raw, "blank")
    heading = _HEADING.fullmatch(line)
    kind = "prose"
    if heading is not None:
        kind = "heading"
    elif _BULLET.match(line):
        kind = "bullet"
    elif _TABLE.match(line):
        kind = "table"
    plain = _outside_code(line)
    entries: list[IndexEntry] = []
    mentions = [m.group(1) for m in _MENTION.finditer(line)]
    for match in _LINK.finditer(plain):
        target = _target(line[match.start("target") : match.end("target")])
        if target is None:
            continue
        if kind == "prose" or (kind == "bullet" and not _leads(plain, match.start())):
            mentions.append(target)  # a link cited in a note's prose lists the file
            continue
        title = _UNESCAPE.sub(r"\1", line[match.start("title") : match.end("title")]).strip()
        hook = _hook(line, match.end()) if kind == "bullet" else ""
        entries.append(IndexEntry(title, target, hook, number, kind))
    wiki = tuple(m.group(1).strip() for m in _WIKI.finditer(plain))
    level = len(heading.group(1)) if heading is not None else 0
    title = (heading.group(2) or "") if heading is not None else ""
    return IndexLine(number, raw, kind, tuple(entries), tuple(mentions), wiki, level, title)


def split_lines(text: str) -> list[str]:
    """``text`` cut after each ``\\n`` (ends kept; ``\\r`` stays with its line), as loaders count."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def scan_index(text: str) -> list[IndexLine]:
    """Every line of ``text`` (line ends kept), classified; fences and comments are opaque."""
    return _scan(text)[0]


def unclosed(text: str) -> str | None:
    """The line that would close a code fence or HTML comment still open at the end, or None."""
    return _scan(text)[1]


def _scan(text: str) -> tuple[list[IndexLine], str | None]:
    out: list[IndexLine] = []
    fence: str | None = None
    in_comment = False
    for number, raw in enumerate(split_lines(text), start=1):
        line = raw.rstrip("\r\n")
        if fence is not None:
            out.append(IndexLine(number, raw, "fence"))
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        if in_comment:
            out.append(IndexLine(number, raw, "comment"))
            in_comment = "-->" not in line
            continue
        opening = _FENCE.match(line)
        if opening is not None:
            fence = opening.group(1)
            out.append(IndexLine(number, raw, "fence"))
            continue
        if line.lstrip().startswith("<!--"):
            out.append(IndexLine(number, raw, "comment"))
            in_comment = "-->" not in line
            continue
        out.append(_classify(number, raw))
    return out, fence if fence is not None else ("-->" if in_comment else None)


def parse_index(text: str) -> list[IndexEntry]:
    """Every entry: a link to a memory file on a bullet, table-row or heading line."""
    return [entry for line in scan_index(text) for entry in line.entries]


def mentioned(text: str) -> set[str]:
    """Normalized targets of prose links and backtick mentions (they list a file, as entries do)."""
    return {normalize_target(m) for line in scan_index(text) for m in line.mentions}


def wiki_links(text: str) -> list[tuple[int, str]]:
    """``(line, name)`` of every ``[[wiki link]]`` outside code."""
    return [(line.number, name) for line in scan_index(text) for name in line.wiki]


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


def past_limit(text: str) -> list[IndexEntry]:
    """Entries a loader would not load: past line 200, or past the 25,000-byte cut."""
    loaded = load_index(text)
    if not loaded.truncated:
        return []
    body = loaded.text[: len(loaded.text) - len(loaded.warning or "")].rstrip("\n")
    lead = len(text) - len(text.lstrip())
    kept_lines = text[:lead].count("\n") + body.count("\n") + 1
    return [e for e in parse_index(text) if e.line > kept_lines]


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


def _protected(text: str) -> list[tuple[int, int]]:
    """Spans a cut must not fall inside: inline code, then emphasis outside code."""
    text = text[:2000]  # a cut falls within the first ~150 characters
    spans = code_spans(text)
    spans += [(m.start(), m.end()) for m in _EMPHASIS.finditer(_outside_code(text))]
    return spans


def shorten_hook(hook: str, room: int) -> str:
    """``hook`` cut to at most ``room`` characters (ellipsis included) at a word boundary
    that is not inside inline code or emphasis; "" when no such cut leaves a word."""
    if len(hook) <= room:
        return hook
    spans = _protected(hook)
    limit = room - 1
    for cut in range(limit, 0, -1):
        if cut < len(hook) and not hook[cut].isspace() and not hook[cut - 1].isspace():
            continue
        if any(start < cut < end for start, end in spans):
            continue
        head = hook[:cut].rstrip()
        if head:
            return head + "…"
    return ""


def render_entry(title: str, key: str, hook: str, max_chars: int | None = MAX_ENTRY_CHARS) -> str:
    """One index line; the hook is shortened (with an ellipsis) to fit ``max_chars``."""
    line = f"- [{escape_title(title)}]({escape_target(key)})"
    hook = " ".join(hook.split())
    if not hook:
        return line
    full = f"{line} — {hook}"
    if max_chars is None or len(full) <= max_chars:
        return full
    room = max_chars - len(line) - 3
    short = shorten_hook(hook, room) if room >= 8 else ""
    return f"{line} — {short}" if short else line


def default_title(key: str, memory: Memory) -> str:
    name = " ".join((memory.name or "").split())
    if name:
        return name
    stem = key.rsplit("/", 1)[-1].removesuffix(".md")
    return " ".join(stem.replace("_", " ").replace("-", " ").split()) or stem


def indexed_keys(text: str) -> set[str]:
    """Normalized targets an index lists as entries."""
    return {normalize_target(entry.target) for entry in parse_index(text)}


def regenerate_index(memories: Mapping[str, Memory], existing: str | None = None) -> str:
    """``existing`` with entries added for unlisted memories and dead entries removed.

    Only lines :mod:`teamsync.memdir.indexfix` owns change; with no ``existing``
    index, a new one is built (grouped by type, sorted by file name).
    """
    from teamsync.memdir.indexfix import fix_index_text

    return fix_index_text(existing or "", memories, present=set(memories)).text


def left_out(memories: Mapping[str, Memory], text: str) -> list[str]:
    """Keys of ``memories`` whose entry a loader would not load (past the limits) or lacking one."""
    listed = indexed_keys(text) | mentioned(text)
    cut = {normalize_target(e.target) for e in past_limit(text)}
    return sorted(
        key
        for key in memories
        if normalize_target(key) not in listed or normalize_target(key) in cut
    )
