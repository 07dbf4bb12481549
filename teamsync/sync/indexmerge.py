"""Merging two teammates' ``MEMORY.md`` when a plain three-way line merge conflicts.

An index is lines a person owns (prose, headings, hooks) around entry lines,
each naming a memory. The plain fallback (every line of both sides) brought
back the old line of an entry whose hook one side edited, and every line the
other side had removed: a hook edit then "went missing" behind a ``duplicate``.
This merge works per entry (issue 31 §4):

* an entry line changed on one side only takes that side's version;
* an entry changed on both sides takes the **later edit**; the other line goes
  into the run's conflict record (:class:`IndexConflict`), never silently away;
* a line one side removed and the other left alone stays removed;
* every line a side added is kept, after the line it followed there.
"""

from __future__ import annotations

from dataclasses import dataclass

from teamsync.memdir.index import scan_index
from teamsync.memdir.indexfix import resolve
from teamsync.sync.merge import merge3, split_lines


@dataclass(frozen=True)
class IndexConflict:
    """One entry both sides edited: the line kept and the one set aside."""

    entry: str
    """The memory the entry names (its first link)."""
    kept: str
    lost: str


def _entry_key(line: str) -> str | None:
    scanned = scan_index(line if line.endswith("\n") else line + "\n")
    if not scanned or scanned[0].kind not in ("bullet", "table") or not scanned[0].entries:
        return None
    keys = sorted({k for k in (resolve(e.target) for e in scanned[0].entries) if k})
    return "\0".join(keys) or None


def _entries(lines: list[str]) -> dict[str, str]:
    """entry key -> its first line (a key on two lines keeps its first)."""
    out: dict[str, str] = {}
    for line in lines:
        key = _entry_key(line)
        if key is not None:
            out.setdefault(key, line)
    return out


def merge_index(
    base: str, ours: str, theirs: str, *, ours_later: bool
) -> tuple[str, list[IndexConflict]]:
    """Merge ``ours`` and ``theirs`` (against ``base``); the later edit wins an entry
    both sides changed. Returns the text and the entries set aside."""
    merged = merge3(base, ours, theirs)
    if merged is not None:
        return merged, []
    b, o, t = split_lines(base), split_lines(ours), split_lines(theirs)
    eb, eo, et = _entries(b), _entries(o), _entries(t)
    conflicts: list[IndexConflict] = []
    choice: dict[str, str] = {}  # entry key -> the line both sides now carry
    for key, old in eb.items():
        mine, yours = eo.get(key), et.get(key)
        if mine is None or yours is None or mine == yours:
            continue
        if mine == old:
            choice[key] = yours
        elif yours == old:
            choice[key] = mine
        else:
            kept, lost = (mine, yours) if ours_later else (yours, mine)
            choice[key] = kept
            conflicts.append(
                IndexConflict(key.split("\0")[0], kept.rstrip("\r\n"), lost.rstrip("\r\n"))
            )

    def aligned(lines: list[str], side: dict[str, str]) -> list[str]:
        out = []
        for line in lines:
            key = _entry_key(line)
            out.append(choice[key] if key in choice and side.get(key) == line else line)
        return out

    o, t = aligned(o, eo), aligned(t, et)
    merged = merge3(base, "".join(o), "".join(t))
    if merged is not None:
        return merged, conflicts
    return _union(b, o, t), conflicts


def _union(base: list[str], ours: list[str], theirs: list[str]) -> str:
    """``theirs`` without the base lines ``ours`` removed, plus every line ``ours``
    added, each placed after the line it follows in ``ours``."""
    base_set, ours_set, theirs_set = set(base), set(ours), set(theirs)
    out = [line for line in theirs if not (line in base_set and line not in ours_set)]
    have = set(out)
    for pos, line in enumerate(ours):
        if line in base_set or line in theirs_set or line in have:
            continue
        line = line if line.endswith("\n") else line + "\n"
        before = next((ours[p] for p in range(pos - 1, -1, -1) if ours[p] in have), None)
        if before is None:
            out.insert(0, line)
        else:
            at = max(i for i, x in enumerate(out) if x == before) + 1
            if at == len(out) and not out[-1].endswith("\n"):
                out[-1] += "\n"
            out.insert(at, line)
        have.add(line)
    return "".join(out)
