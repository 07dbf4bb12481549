"""Three-way line merge (diff3 semantics) in pure Python.

``merge3(base, ours, theirs)`` returns the merged text, or ``None`` when both
sides changed overlapping (or touching) regions of the base differently. The
rule is deliberately conservative, like ``git merge-file``: two changes that
touch the same base line, or insert at the same point, conflict unless they
are identical. No external program is needed, so the REST backend works on a
machine without git.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher


@dataclass(frozen=True)
class _Hunk:
    side: int
    """0 = ours, 1 = theirs."""
    base_start: int
    base_end: int
    start: int
    end: int


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only, keeping line ends (``str.splitlines`` splits on more)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _hunks(side: int, base: Sequence[str], other: Sequence[str]) -> list[_Hunk]:
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    return [
        _Hunk(side, i1, i2, j1, j2)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _group(hunks: list[_Hunk]) -> list[list[_Hunk]]:
    """Group hunks whose base ranges overlap or touch."""
    groups: list[list[_Hunk]] = []
    end = -1
    for hunk in sorted(hunks, key=lambda h: (h.base_start, h.base_end, h.side)):
        if groups and hunk.base_start <= end:
            groups[-1].append(hunk)
            end = max(end, hunk.base_end)
        else:
            groups.append([hunk])
            end = hunk.base_end
    return groups


def _side_text(
    side: int, group: list[_Hunk], lo: int, hi: int, base: Sequence[str], lines: Sequence[str]
) -> list[str]:
    """What ``side`` made of base[lo:hi]."""
    mine = [h for h in group if h.side == side]
    if not mine:
        return list(base[lo:hi])
    start = mine[0].start - (mine[0].base_start - lo)
    end = mine[-1].end + (hi - mine[-1].base_end)
    return list(lines[start:end])


def merge3(base: str, ours: str, theirs: str) -> str | None:
    """Merge ``ours`` and ``theirs`` against ``base``; ``None`` on a real conflict."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    b, o, t = split_lines(base), split_lines(ours), split_lines(theirs)
    out: list[str] = []
    pos = 0
    for group in _group(_hunks(0, b, o) + _hunks(1, b, t)):
        lo = min(h.base_start for h in group)
        hi = max(h.base_end for h in group)
        out.extend(b[pos:lo])
        mine, yours = _side_text(0, group, lo, hi, b, o), _side_text(1, group, lo, hi, b, t)
        if {h.side for h in group} == {0, 1} and mine != yours:
            return None
        out.extend(mine if any(h.side == 0 for h in group) else yours)
        pos = hi
    out.extend(b[pos:])
    return "".join(out)


def union_lines(theirs: str, ours: str) -> str:
    """``theirs`` followed by every line of ``ours`` it lacks (git's ``merge=union``).

    Used for the index, whose lines are derived data: nothing is lost and the
    index fix-up then removes dead links and duplicates.
    """
    have = set(split_lines(theirs))
    extra = [line for line in split_lines(ours) if line not in have]
    if not extra:
        return theirs
    head = theirs if not theirs or theirs.endswith("\n") else theirs + "\n"
    tail = "".join(line if line.endswith("\n") else line + "\n" for line in extra)
    return head + tail
