"""The lossless index fix: what ``check --fix`` and sync may change in a ``MEMORY.md``.

teamsync owns exactly two kinds of line in an index, and nothing else:

* **entry lines it adds** for memory files the index does not list yet
  (``- [Title](file.md) — hook``, the title from ``name``, the hook from
  ``description``, cut at a word boundary outside inline code and emphasis). They
  go under the heading of the memory's type (``## Project``; a heading whose
  words include ``project`` or ``projects`` counts), after the last entry already
  there; a missing heading is appended at the end;
* **dead entry lines it removes**: a bullet or table-row line whose every link
  to a memory file points at a file that does not exist.

Every other line stays where it stands, byte for byte: headings, prose, notes,
tables, quotes, comments, code fences, live entries with their titles and hooks,
and heading links (``### [x](x.md)``, even dead ones: their description lines
below would be orphaned; ``check`` reports them instead). A file named in prose
(a link or a backtick mention) counts as listed. Nothing is ever dropped to fit
the 200-line / 25,000-byte load limit: :attr:`IndexFix.past_limit` names the
memories whose entries a loader would not load.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from teamsync.errors import MemoryFormatError
from teamsync.memdir.format import MEMORY_TYPES, Memory
from teamsync.memdir.index import (
    INDEX_VERSION,
    MARKER,
    IndexLine,
    default_title,
    index_version,
    normalize_target,
    past_limit,
    render_entry,
    scan_index,
    split_lines,
    unclosed,
)

GROUP_TITLES: dict[str | None, str] = {
    "user": "User",
    "feedback": "Feedback",
    "project": "Project",
    "reference": "Reference",
    None: "Other",
}
_GROUPS: tuple[str | None, ...] = (*MEMORY_TYPES, None)
_GROUP_WORDS: dict[str | None, tuple[str, ...]] = {
    "user": ("user", "users"),
    "feedback": ("feedback", "feedbacks"),
    "project": ("project", "projects"),
    "reference": ("reference", "references"),
    None: ("other", "others"),
}
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class IndexFix:
    text: str
    added: list[str] = field(default_factory=list)
    """keys given a new entry line"""
    removed: list[int] = field(default_factory=list)
    """1-based numbers (in the old text) of the dead entry lines removed"""
    past_limit: list[str] = field(default_factory=list)
    """keys whose entries a loader would not load (past 200 lines / 25,000 bytes)"""
    collapsed: list[int] = field(default_factory=list)
    """1-based numbers (in the old text) of byte-identical repeats of an entry line, removed"""


def resolve(target: str) -> str | None:
    """A link target as a path relative to the index's directory; None when it leaves it."""
    joined = posixpath.normpath(normalize_target(target)) if target.strip("/") else "."
    if target.startswith("/") or joined == ".." or joined.startswith("../"):
        return None
    return joined


def _newline(lines: list[IndexLine]) -> str:
    crlf = sum(1 for line in lines if line.text.endswith("\r\n"))
    return "\r\n" if crlf * 2 > len(lines) else "\n"


def _is_dead(line: IndexLine, present: Collection[str]) -> bool:
    if line.kind not in ("bullet", "table") or not line.entries:
        return False
    targets = [resolve(e.target) for e in line.entries]
    return all(t is not None and t not in present for t in targets)


def _group_of(title: str) -> str | None | bool:
    """The memory type a heading stands for; False when it stands for none."""
    words = set(_WORD.findall(title.lower()))
    for group in _GROUPS:
        if words & set(_GROUP_WORDS[group]):
            return group
    return False


def _anchors(lines: list[IndexLine]) -> dict[str | None, int]:
    """group -> index in ``lines`` after which new entries of that group go."""
    anchors: dict[str | None, int] = {}
    for pos, line in enumerate(lines):
        if line.kind != "heading":
            continue
        group = _group_of(line.heading)
        if group is False or group in anchors:
            continue
        anchor = pos
        for later in range(pos + 1, len(lines)):
            other = lines[later]
            if other.kind == "heading" and other.level <= line.level:
                break
            if other.kind == "bullet" and other.entries:
                anchor = later
        anchors[group if isinstance(group, str) else None] = anchor
    return anchors


def _listed(lines: list[IndexLine]) -> set[str]:
    found: set[str] = set()
    for line in lines:
        for target in [e.target for e in line.entries] + list(line.mentions):
            resolved = resolve(target)
            if resolved is not None:
                found.add(resolved)
    return found


def _group(memory: Memory) -> str | None:
    return memory.type if memory.type in MEMORY_TYPES else None


def _entry(key: str, memory: Memory) -> str:
    hook = " ".join((memory.description or "").split())
    return render_entry(default_title(key, memory), key, hook)


def _terminated(text: str, nl: str) -> str:
    return text if text.endswith(("\n", "\r")) or not text else text + nl


def fix_index_text(
    text: str, memories: Mapping[str, Memory], *, present: Collection[str]
) -> IndexFix:
    """Add entries for unlisted ``memories``, remove dead entry lines; keep every other line.

    ``memories`` maps keys (relative to the index's directory) to the memories
    the index should list; ``present`` holds every path (same base) that exists,
    memory or not, so a link to an existing non-memory file is never "dead".
    """
    if index_version(text) > INDEX_VERSION:
        raise MemoryFormatError(
            "MEMORY.md",
            f"written by a newer teamsync (index v{index_version(text)}); upgrade teamsync",
        )
    lines = scan_index(text)
    nl = _newline(lines)
    seen: set[str] = set()
    kept: list[IndexLine] = []
    removed: list[int] = []
    collapsed: list[int] = []
    for scanned in lines:
        if _is_dead(scanned, present):
            removed.append(scanned.number)
            continue
        if scanned.entries and scanned.kind in ("bullet", "table"):
            same = scanned.text.rstrip("\r\n")
            if same in seen:  # a byte-identical copy holds no choice: keep the first
                collapsed.append(scanned.number)
                continue
            seen.add(same)
        kept.append(scanned)
    listed = _listed(kept)
    missing = sorted(
        (k for k in memories if resolve(k) not in listed),
        key=lambda k: (_GROUPS.index(_group(memories[k])), k),
    )
    out = [line.text for line in kept]
    if not text and missing:
        out = [MARKER + nl]
    anchors = _anchors(kept) if text else {}
    after: dict[int, list[str]] = {}
    appended: dict[str | None, list[str]] = {}
    for key in missing:
        group = _group(memories[key])
        line = _entry(key, memories[key]) + nl
        if group in anchors:
            after.setdefault(anchors[group], []).append(line)
        else:
            appended.setdefault(group, []).append(line)
    for pos in sorted(after, reverse=True):
        out[pos] = _terminated(out[pos], nl)
        out[pos + 1 : pos + 1] = after[pos]
    closing = unclosed("".join(out)) if appended else None
    if closing is not None:  # never append entries inside a fence or comment left open
        out[-1] = _terminated(out[-1], nl)
        out.append(closing + nl)
    for group in _GROUPS:
        if group not in appended:
            continue
        if out:
            out[-1] = _terminated(out[-1], nl)
            if out[-1].strip():
                out.append(nl)
        out.append(f"## {GROUP_TITLES[group]}{nl}")
        out.extend(appended[group])
    new = "".join(out)
    cut = [normalize_target(e.target) for e in past_limit(new)]
    return IndexFix(new, missing, removed, sorted(set(cut)), collapsed)


def withheld_lines(
    text: str,
    held: Collection[str],
    team_index: str | None = None,
    team_keys: Collection[str] = (),
    before: str = "",
) -> list[int]:
    """0-based positions (in :func:`~teamsync.memdir.index.scan_index` order) of the
    bullet and table-row entry lines of ``text`` that stay on this side: every
    memory link on the line points at a ``held`` key, and each such key is one the
    team lacks (not in ``team_keys``), or one the team's index (``team_index``)
    lists already while this line was never shared from here (not in ``before``,
    the index as this side last shared it).

    Sync keeps these lines on the side that holds the files and never sends them:
    a teammate who cannot have the file would otherwise remove the line as dead,
    and this side would add it back, one push each, for ever. A line for a name
    the team has but does not list stays shared, so the name is listed.
    """
    if not held:
        return []
    theirs = set()
    for line in scan_index(team_index or ""):
        for target in [e.target for e in line.entries] + list(line.mentions):
            theirs.add(resolve(target))
    lines = scan_index(text)
    shared = _aligned([line.text for line in lines], split_lines(before))
    out = []
    for pos, line in enumerate(lines):
        if line.kind not in ("bullet", "table") or not line.entries:
            continue
        new = pos not in shared
        targets = [resolve(e.target) for e in line.entries]
        if all(
            t is not None and t in held and (t not in team_keys or (t in theirs and new))
            for t in targets
        ):
            out.append(pos)
    return out


def _aligned(lines: list[str], before: list[str]) -> set[int]:
    """Positions in ``lines`` that a line diff matches with a line of ``before``
    (line ends ignored; a repeated line matches once, where it stood)."""
    from difflib import SequenceMatcher

    a = [line.rstrip("\r\n") for line in before]
    b = [line.rstrip("\r\n") for line in lines]
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    return {j + k for _, j, size in matcher.get_matching_blocks() for k in range(size)}


def shared_view(
    text: str,
    held: Collection[str],
    team_index: str | None = None,
    team_keys: Collection[str] = (),
    before: str = "",
) -> str:
    """``text`` without the entry lines that stay here (:func:`withheld_lines`)."""
    drop = set(withheld_lines(text, held, team_index, team_keys, before))
    if not drop:
        return text
    return "".join(line.text for pos, line in enumerate(scan_index(text)) if pos not in drop)
