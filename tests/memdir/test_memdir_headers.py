"""Header scan: first 30 lines only, newest first, capped, never following symlinks."""

from __future__ import annotations

import os
from pathlib import Path

from teamsync.memdir.headers import scan_headers, walk
from testing.memdir import memory_text, write_memory


def _touch(path: Path, mtime: float) -> None:
    os.utime(path, (mtime, mtime))


def test_scan_reads_frontmatter_newest_first_including_team(tmp_path: Path) -> None:
    old = write_memory(tmp_path, "old.md", name="Old", description="old one", type="user")
    new = write_memory(
        tmp_path / "team", "new.md", name="New", description="new one", type="project"
    )
    (tmp_path / "MEMORY.md").write_text("- [Old](old.md)\n", encoding="utf-8")
    (tmp_path / "team" / "MEMORY.md").write_text("- [New](new.md)\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a memory", encoding="utf-8")
    _touch(old, 1_000_000)
    _touch(new, 2_000_000)
    headers = scan_headers(tmp_path)
    assert [(h.path, h.type, h.name, h.description) for h in headers] == [
        ("team/new.md", "project", "New", "new one"),
        ("old.md", "user", "Old", "old one"),
    ]
    assert headers[0].abs_path == new
    assert headers[0].mtime == 2_000_000


def test_scan_caps_and_breaks_ties_by_path(tmp_path: Path) -> None:
    for n in range(7):
        _touch(write_memory(tmp_path, f"m{n}.md"), 5_000)
    assert [h.path for h in scan_headers(tmp_path, limit=3)] == ["m0.md", "m1.md", "m2.md"]
    assert scan_headers(tmp_path, limit=0) == []


def test_only_the_first_30_lines_are_read(tmp_path: Path) -> None:
    late = "---\n" + "x: y\n" * 30 + "type: user\n---\nbody\n"
    (tmp_path / "late.md").write_text(late, encoding="utf-8")
    body_only = memory_text(type="feedback", body="line\n" * 10_000)
    (tmp_path / "long.md").write_text(body_only, encoding="utf-8")
    by_path = {h.path: h for h in scan_headers(tmp_path)}
    assert by_path["late.md"].type is None  # frontmatter not closed within 30 lines
    assert by_path["long.md"].type == "feedback"


def test_broken_files_still_appear_with_empty_fields(tmp_path: Path) -> None:
    (tmp_path / "bin.md").write_bytes(b"\x00\xff\xfe")
    (tmp_path / "bomb.md").write_text("---\na: &a [1]\nb: *a\n---\n", encoding="utf-8")
    headers = {h.path: h for h in scan_headers(tmp_path)}
    assert set(headers) == {"bin.md", "bomb.md"}
    assert headers["bomb.md"].type is None


def test_symlinks_dot_dirs_and_temp_files_are_skipped(tmp_path: Path) -> None:
    outside = write_memory(tmp_path / "outside", "secret.md")
    mem = tmp_path / "mem"
    write_memory(mem, "real.md")
    (mem / "link.md").symlink_to(outside)
    (mem / "linkdir").symlink_to(outside.parent, target_is_directory=True)
    write_memory(mem / ".git", "hidden.md")
    write_memory(mem, ".teamsync-tmp-123.md")
    assert [h.path for h in scan_headers(mem)] == ["real.md"]
    kinds = {e.path: e.kind for e in walk(mem)}
    assert kinds == {"link.md": "symlink", "linkdir": "symlink", "real.md": "file"}


def test_missing_directory_scans_empty(tmp_path: Path) -> None:
    assert scan_headers(tmp_path / "nope") == []
