"""The index fixes of issue 24 §7–10, each against what was seen on real directories."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from teamsync.memdir.index import MAX_ENTRY_CHARS, parse_index, render_entry, scan_index
from teamsync.memdir.lint import check_memdir, fix_memdir
from testing.memdir import write_memory

TEAMSYNC = str(Path(sys.executable).with_name("teamsync"))


def test_a_hook_with_snake_case_words_is_cut_not_dropped() -> None:
    """§7: the underscores of ``some_name`` were taken for emphasis: no place to cut, no hook."""
    hook = (
        "the ingest_worker reads raw_events and writes event_rollups; run backfill_job "
        "with --since when the rollups lag behind the dashboard by more than an hour"
    )
    line = render_entry("Ingest pipeline", "ingest.md", hook)
    assert len(line) <= MAX_ENTRY_CHARS
    assert line.startswith("- [Ingest pipeline](ingest.md) — the ingest_worker reads raw_events")
    assert line.endswith("…")
    # real emphasis and inline code are still never cut inside
    code = "run " + "word " * 20 + "`make some_target ARGS=1` " + "word " * 20
    assert render_entry("T", "t.md", code).count("`") % 2 == 0
    emph = "say _this whole phrase is emphasised on purpose_ " + "word " * 40
    cut = render_entry("T", "t.md", emph)
    assert cut.count("_") in (0, 2)


def test_a_note_citing_a_file_in_its_prose_is_a_mention_not_a_second_entry(
    tmp_path: Path,
) -> None:
    """§8: ``- … See [freshness gate memory](x.md).`` was counted as a duplicate entry."""
    write_memory(tmp_path, "freshness.md", name="Freshness gate", description="d", type="project")
    (tmp_path / "MEMORY.md").write_text(
        "# Index\n\n- [Freshness gate](freshness.md) — when a memory counts as stale\n"
        "- Recall skips stale notes. See [freshness gate memory](freshness.md).\n",
        encoding="utf-8",
    )
    assert check_memdir(tmp_path).problems == []
    lines = scan_index((tmp_path / "MEMORY.md").read_text(encoding="utf-8"))
    assert [len(line.entries) for line in lines[2:4]] == [1, 0]
    assert lines[3].mentions == ("freshness.md",)


def test_byte_identical_entries_are_collapsed_and_only_those(tmp_path: Path) -> None:
    """§9: every entry five times stayed over 200 lines after --fix."""
    entries = []
    for n in range(60):
        write_memory(tmp_path, f"m{n:02d}.md", name=f"M{n}", description="d", type="project")
        entries.append(f"- [M{n}](m{n:02d}.md) — d\n")
    text = "# Index\n\n" + "".join(entries) * 5 + "- [M1](m01.md) — another hook\nprose\nprose\n"
    (tmp_path / "MEMORY.md").write_text(text, encoding="utf-8")
    result = fix_memdir(tmp_path, backup_dir=tmp_path.parent / "state")
    after = (tmp_path / "MEMORY.md").read_text(encoding="utf-8")
    assert (
        after == "# Index\n\n" + "".join(entries) + "- [M1](m01.md) — another hook\nprose\nprose\n"
    )
    assert len(result.collapsed) == 240
    # differing hooks are for a person: still reported, not removed
    assert [p.kind for p in result.problems] == ["duplicate"]
    (backup,) = result.backups
    assert backup.read_text(encoding="utf-8") == text
    assert fix_memdir(tmp_path, backup_dir=tmp_path.parent / "state").written == []


def test_fix_on_5000_memories_writes_the_index_and_says_what_it_did(tmp_path: Path) -> None:
    """§10: it refused with the 250,000-byte rule for one memory file."""
    memdir = tmp_path / "memory"
    team = memdir / "team"
    team.mkdir(parents=True)
    for n in range(5000):
        (team / f"note-{n:04d}.md").write_text(
            f"---\nname: Note {n}\ndescription: what the team learned about subsystem {n} "
            f"and when it matters\ntype: project\n---\nbody\n",
            encoding="utf-8",
        )
    (team / "MEMORY.md").write_text("# Team\n\nHand-written prose.\n", encoding="utf-8")
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path / "s")}
    done = subprocess.run(
        [TEAMSYNC, "--dir", str(memdir), "check", "--fix"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    index = (team / "MEMORY.md").read_text(encoding="utf-8")
    assert len(index.encode("utf-8")) > 250_000
    assert index.startswith("# Team\n\nHand-written prose.\n")
    assert len(parse_index(index)) == 5000
    out = done.stdout + done.stderr
    assert "updated team/MEMORY.md: 5000 entries added" in out, out
    assert "past the index load limit" in out and "index-limit" in out
    assert "250,000-byte" not in out
    assert done.returncode == 1  # index-limit stays for a person to consolidate
