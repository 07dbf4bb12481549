"""What this side sends of its ``MEMORY.md`` while it holds files back.

A file held back (a secret, a name the remote refuses, broken frontmatter)
stays here, and so does its index line: a teammate who cannot have the file
would remove the line as dead, this side would add it back, and each sync
would push ``MEMORY.md`` again, for ever. So the engine plans, pushes and
records the **shared view** of the index (:func:`teamsync.memdir.indexfix.shared_view`:
the index without the entry lines of held keys), and whatever it writes into
the index here (a pull, a merge) gets this side's withheld lines back where
they stood (:meth:`IndexView.restore`). Nothing about a held file is sent.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from teamsync.memdir.index import scan_index
from teamsync.memdir.indexfix import shared_view, withheld_lines
from teamsync.sync.base import checksum
from teamsync.sync.merge import merge3, split_lines


@dataclass(frozen=True)
class IndexView:
    """The local index (``full``) and what of it is shared (``shared``)."""

    full: str
    shared: str
    held: frozenset[str]
    team_index: str | None = None
    """The team's index (the remote's), which decides what stays here for a name it has."""
    team_keys: frozenset[str] = frozenset()
    before: str = ""
    """The index as this side last shared it (the base)."""

    @property
    def full_sum(self) -> str:
        return checksum(self.full)

    @property
    def shared_sum(self) -> str:
        return checksum(self.shared)

    def restore(self, result: str) -> str:
        """``result`` (a shared text: pulled or merged) with this side's withheld lines
        put back where they stood: by a three-way merge, else each after the line it
        followed here (when ``result`` still has that line), else at the end."""
        placed = merge3(self.shared, self.full, result)
        if placed is not None:
            return placed
        full = [line.text for line in scan_index(self.full)]
        withheld = set(
            withheld_lines(self.full, self.held, self.team_index, self.team_keys, self.before)
        )
        out = split_lines(result)
        have = set(out)
        tail: list[str] = []
        for pos in sorted(withheld):
            line = full[pos]
            if line in have:
                continue
            line = line if line.endswith("\n") else line + "\n"
            before = next((full[p] for p in range(pos - 1, -1, -1) if p not in withheld), None)
            if before is None:
                out.insert(0, line)
            elif before in have:
                at = out.index(before) + 1
                if at == len(out) and not out[-1].endswith("\n"):
                    out[-1] += "\r\n" if out[-1].endswith("\r") else "\n"
                out.insert(at, line)
            else:
                tail.append(line)
            have.add(line)
        if tail and out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        return "".join(out + tail)


def view_of(
    full: str,
    held: Collection[str],
    team_index: str | None,
    team_keys: Collection[str],
    before: str,
) -> IndexView | None:
    """The view of ``full`` when it withholds a line (:func:`withheld_lines`); None when
    all of it is shared."""
    shared = shared_view(full, held, team_index, team_keys, before)
    if shared == full:
        return None
    return IndexView(full, shared, frozenset(held), team_index, frozenset(team_keys), before)
