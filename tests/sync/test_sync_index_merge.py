"""MEMORY.md edited on both sides (issue 31 §4): a hook edit never goes missing.

The cause of the missing hook edits: when the line merge of two indexes
conflicted (both sides appended, or edited near each other), the fallback kept
every line of both sides, so the old line of an entry whose hook one side had
edited came back beside the new one (``check``: ``duplicate``), and a line the
other side had removed came back too. The merge is now per entry.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from teamsync.memdir.index import parse_index
from teamsync.sync.indexmerge import merge_index
from testing.gitrepos import memory
from testing.teams import BACKENDS, team

BASE = "# Index\n\n- [A](a.md) — old hook a\n- [B](b.md) — old hook b\n\nprose\n"


def test_a_hook_edited_on_one_side_survives_an_append_on_the_other() -> None:
    ours = BASE.replace("old hook a", "new hook a") + "- [C](c.md) — c\n"
    theirs = BASE + "more prose\n"
    merged, conflicts = merge_index(BASE, ours, theirs, ours_later=False)
    assert "new hook a" in merged and "old hook a" not in merged
    assert "more prose\n" in merged and "- [C](c.md) — c\n" in merged
    assert conflicts == []


def test_a_hook_edited_on_both_sides_keeps_the_later_edit_and_records_the_other() -> None:
    ours = BASE.replace("old hook a", "mine") + "x\n"
    theirs = BASE.replace("old hook a", "yours") + "y\n"
    merged, conflicts = merge_index(BASE, ours, theirs, ours_later=True)
    assert [e.hook for e in parse_index(merged) if e.target == "a.md"] == ["mine"]
    assert [(c.entry, c.lost) for c in conflicts] == [("a.md", "- [A](a.md) — yours")]
    merged, conflicts = merge_index(BASE, ours, theirs, ours_later=False)
    assert [e.hook for e in parse_index(merged) if e.target == "a.md"] == ["yours"]
    assert "x\n" in merged and "y\n" in merged


def test_a_line_removed_on_one_side_stays_removed() -> None:
    ours = BASE.replace("- [B](b.md) — old hook b\n", "") + "x\n"
    theirs = BASE + "y\n"
    merged, _ = merge_index(BASE, ours, theirs, ours_later=False)
    assert "b.md" not in merged and "x\n" in merged and "y\n" in merged


@pytest.mark.parametrize("kind", BACKENDS)
def test_hook_edits_on_both_sides_end_as_one_entry_everywhere(tmp_path: Path, kind: str) -> None:
    with team(kind, tmp_path) as t:
        alice, bob = t.mates
        alice.write("a.md", memory("A", "a\n"))
        alice.write("b.md", memory("B", "b\n"))
        alice.write("MEMORY.md", BASE.replace("(b.md) — old hook b", "(b.md) — b"))
        alice.sync()
        bob.sync()
        alice.write("MEMORY.md", alice.read("MEMORY.md").replace("old hook a", "alice's") + "x\n")
        alice.sync()
        bob.write("MEMORY.md", bob.read("MEMORY.md").replace("old hook a", "bob's") + "y\n")
        later = bob.team / "MEMORY.md"
        os.utime(later, (later.stat().st_atime, later.stat().st_mtime + 60))
        done = bob.cli("--json", "sync")
        payload = json.loads(done.stdout)
        assert done.returncode == 0, done.stderr
        (line,) = payload["index_conflicts"]
        assert line.startswith("a.md: both sides edited") and "alice's" in line
        alice.sync()
        for mate in (alice, bob):
            index = mate.read("MEMORY.md")
            assert [e.hook for e in parse_index(index) if e.target == "a.md"] == ["bob's"]
            assert "x\n" in index and "y\n" in index
            assert mate.cli("check").returncode == 0, mate.cli("check").stdout
