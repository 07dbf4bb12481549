"""``check``'s library: every problem kind, and ``--fix`` that only ever rewrites indexes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from teamsync.errors import MemoryFormatError, SecretFound, TeamsyncError
from teamsync.memdir.format import MAX_MEMORY_BYTES
from teamsync.memdir.index import parse_index
from teamsync.memdir.lint import Problem, check_memdir, fix_memdir, lint_memdir
from testing.memdir import clean_memdir, write_index, write_memory


def _kinds(root: Path) -> list[tuple[str, str]]:
    return [(p.path, p.kind) for p in lint_memdir(root)]


def test_clean_directory_has_no_problems(tmp_path: Path) -> None:
    root = clean_memdir(tmp_path / "mem")
    report = check_memdir(root)
    assert report.problems == []
    assert report.memories == 4


def test_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TeamsyncError, match="does not exist; pass --dir or set TEAMSYNC_DIR"):
        lint_memdir(tmp_path / "nope")


def test_index_problems(tmp_path: Path) -> None:
    root = clean_memdir(tmp_path)
    write_memory(root, "extra.md", name="Extra", description="not indexed", type="user")
    (root / "MEMORY.md").write_text(
        "- [Role](user_role.md) — backend\n"
        "- [Prefs](prefs.md) — small PRs\n"
        "- [Gone](gone.md) — dead\n"
        "- [Role again](./user_role.md) — dup\n"
        "- [Escape](../elsewhere.md) — outside\n"
        "- [Site](https://example.com/x.md) — external links are fine\n"
        "- [Team](team/deploys.md) — a team file linked from the root is fine\n"
        "- [Txt](notes.txt) — not a memory\n"
        f"- [Long](prefs.md) — {'x' * 250}\n",
        encoding="utf-8",
    )
    (root / "notes.txt").write_text("x", encoding="utf-8")
    problems = lint_memdir(root)
    assert [(p.path, p.kind) for p in problems] == [
        ("MEMORY.md", "long-line"),
        ("MEMORY.md", "dead-link"),
        ("MEMORY.md", "duplicate"),
        ("MEMORY.md", "bad-link"),
        ("MEMORY.md", "duplicate"),
        ("extra.md", "orphan"),
    ]
    assert problems[1].message == "line 3: gone.md does not exist; fix or remove the line"
    assert problems[2].message == "line 4: ./user_role.md is already listed on line 1"
    assert "outside the memory directory" in problems[3].message
    # a link to a file that is not a memory (notes.txt) is not an index entry at all


def test_missing_index_is_reported_once(tmp_path: Path) -> None:
    write_memory(tmp_path / "team", "a.md")
    write_memory(tmp_path / "team", "b.md")
    problems = lint_memdir(tmp_path)
    assert problems == [
        Problem(
            "team/MEMORY.md",
            "missing-index",
            "missing, but 2 memory files exist; run `teamsync check --fix` to create it",
        )
    ]


def test_index_over_limits(tmp_path: Path) -> None:
    write_index(tmp_path, *[(f"M{n}", f"m{n}.md", "h") for n in range(201)])
    for n in range(201):
        write_memory(tmp_path, f"m{n}.md")
    assert _kinds(tmp_path) == [("MEMORY.md", "index-limit")]


def test_frontmatter_problems(tmp_path: Path) -> None:
    team = tmp_path / "team"
    write_memory(team, "a.md", type="opinion")
    write_memory(team, "b.md", description=None, type=None)
    (team / "c.md").write_text("---\na: &x 1\nb: *x\n---\n", encoding="utf-8")
    (team / "d.md").write_text("no frontmatter\n", encoding="utf-8")
    (team / "e.md").write_text("---\ndescription: |\n  two\n  lines\nname: e\ntype: user\n---\n")
    write_index(team, *[(n, f"{n}.md", "h") for n in "abcde"])
    assert _kinds(tmp_path) == [
        ("team/a.md", "type"),
        ("team/b.md", "type"),
        ("team/b.md", "description"),
        ("team/c.md", "frontmatter"),
        ("team/e.md", "description"),
    ]
    # no frontmatter: the milder legacy kind, a note that does not fail check
    assert [(n.path, n.kind) for n in check_memdir(tmp_path).notes] == [("team/d.md", "legacy")]


def test_unreadable_files_are_problems_not_crashes(tmp_path: Path) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "bin.md").write_bytes(b"\x89PNG\r\n\x00\x00")
    (team / "latin1.md").write_bytes(b"caf\xe9\n")
    (team / "huge.md").write_bytes(b"x" * (MAX_MEMORY_BYTES + 10))
    (team / "MEMORY.md").write_text("", encoding="utf-8")
    problems = lint_memdir(tmp_path)
    assert [(p.path, p.kind) for p in problems] == [
        ("team/bin.md", "unreadable"),
        ("team/huge.md", "unreadable"),
        ("team/latin1.md", "unreadable"),
    ]
    assert "250,010 bytes" in problems[1].message


def test_team_directory_hygiene(tmp_path: Path) -> None:
    team = tmp_path / "team"
    write_memory(team, "ok.md")
    write_memory(team, "OK.md")
    (team / "image.png").write_bytes(b"\x89PNG")
    (team / "link.md").symlink_to(team / "ok.md")
    os.mkfifo(team / "pipe.md")
    write_index(team, ("ok", "ok.md", "h"), ("OK", "OK.md", "h"))
    kinds = _kinds(tmp_path)
    assert ("team/OK.md", "bad-name") in kinds
    assert ("team/image.png", "not-markdown") in kinds
    assert ("team/link.md", "unsafe-file") in kinds
    assert ("team/pipe.md", "unsafe-file") in kinds
    assert not any(kind == "orphan" for _, kind in kinds)


def test_private_non_markdown_files_are_fine(tmp_path: Path) -> None:
    root = clean_memdir(tmp_path)
    (root / "teamsync.yaml").write_text("backend: git\n", encoding="utf-8")
    assert lint_memdir(root) == []


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file() and p.name != "MEMORY.md"
    }


def test_fix_adds_and_removes_only_owned_lines_and_never_touches_memories(
    tmp_path: Path,
) -> None:
    root = clean_memdir(tmp_path / "mem")
    write_memory(root, "orphan.md", name="Orphan", description="was missing", type="project")
    original = "- [My title](user_role.md) — my hook\n- [Gone](gone.md)\n- [Dup](user_role.md)\n"
    (root / "MEMORY.md").write_text(original, encoding="utf-8")
    write_memory(root / "team", "bad.md", type="bogus")
    before = _snapshot(root)
    result = fix_memdir(root, backup_dir=tmp_path / "state")
    assert result.written == ["MEMORY.md", "team/MEMORY.md"]
    assert result.left_out == []
    assert result.added == ["prefs.md", "orphan.md", "team/bad.md"]
    assert result.removed == ["MEMORY.md:2"]
    assert [(p.path, p.kind) for p in result.problems] == [
        ("MEMORY.md", "duplicate"),
        ("team/bad.md", "type"),
    ]
    assert _snapshot(root) == before
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert text == (
        "- [My title](user_role.md) — my hook\n- [Dup](user_role.md)\n"
        "\n## Feedback\n- [Prefs](prefs.md) — Prefers small PRs\n"
        "\n## Project\n- [Orphan](orphan.md) — was missing\n"
    )
    assert [b.read_text(encoding="utf-8") for b in result.backups][0] == original
    assert all(tmp_path / "state" in b.parents for b in result.backups)
    assert not list(root.rglob(".teamsync-tmp-*"))


def test_fix_is_idempotent(tmp_path: Path) -> None:
    root = clean_memdir(tmp_path)
    write_memory(root, "new.md", type="user")
    first = fix_memdir(root, backup_dir=tmp_path / "state")
    texts = [(root / "MEMORY.md").read_bytes(), (root / "team" / "MEMORY.md").read_bytes()]
    second = fix_memdir(root, backup_dir=tmp_path / "state")
    assert first.written == ["MEMORY.md"]
    assert second.written == []
    assert second.unchanged == ["MEMORY.md", "team/MEMORY.md"]
    assert [(root / "MEMORY.md").read_bytes(), (root / "team" / "MEMORY.md").read_bytes()] == texts


def test_fix_refuses_a_backup_dir_inside_team(tmp_path: Path) -> None:
    root = clean_memdir(tmp_path)
    with pytest.raises(TeamsyncError, match="would sync"):
        fix_memdir(root, backup_dir=root / "team" / "backups")


def test_fix_does_not_create_a_team_directory(tmp_path: Path) -> None:
    write_memory(tmp_path, "a.md")
    assert fix_memdir(tmp_path).written == ["MEMORY.md"]
    assert not (tmp_path / "team").exists()


def test_fix_includes_files_with_broken_frontmatter_but_not_binaries(tmp_path: Path) -> None:
    (tmp_path / "broken.md").write_text("---\nx: [\n---\n", encoding="utf-8")
    (tmp_path / "bin.md").write_bytes(b"\x00")
    fix_memdir(tmp_path)
    targets = [e.target for e in parse_index((tmp_path / "MEMORY.md").read_text(encoding="utf-8"))]
    assert targets == ["broken.md"]


def test_fix_refuses_an_index_from_a_newer_teamsync(tmp_path: Path) -> None:
    write_memory(tmp_path, "a.md")
    (tmp_path / "MEMORY.md").write_text("<!-- teamsync-index v9 -->\n", encoding="utf-8")
    assert _kinds(tmp_path)[0] == ("MEMORY.md", "index-version")
    with pytest.raises(MemoryFormatError, match="newer teamsync"):
        fix_memdir(tmp_path)


def test_fix_never_writes_through_a_symlinked_team_index(tmp_path: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("keep me", encoding="utf-8")
    team = tmp_path / "mem" / "team"
    write_memory(team, "a.md")
    (team / "MEMORY.md").symlink_to(target)
    result = fix_memdir(tmp_path / "mem")
    assert ("team/MEMORY.md", "unsafe-file") in [(p.path, p.kind) for p in result.problems]
    assert result.written == []
    assert target.read_text(encoding="utf-8") == "keep me"
    assert (team / "MEMORY.md").is_symlink()


def test_fix_reports_memories_that_do_not_fit(tmp_path: Path) -> None:
    for n in range(230):
        write_memory(tmp_path, f"m{n:03d}.md", name=f"M{n}", description="d", type="project")
    result = fix_memdir(tmp_path)
    assert len(result.left_out) == 230 - 197  # marker, blank, heading, 197 entries
    index = (tmp_path / "MEMORY.md").read_text(encoding="utf-8")
    assert len(parse_index(index)) == 230  # never dropped: reported instead
    assert {p.kind for p in result.problems} == {"index-limit"}
    (problem,) = result.problems
    assert "Claude Code would not load 33 entries: m197.md, m198.md" in problem.message


def test_fix_refuses_to_copy_a_secret_into_an_index(tmp_path: Path) -> None:
    fake_token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    write_memory(tmp_path / "team", "leak.md", description=f"use token {fake_token}")
    with pytest.raises(SecretFound) as info:
        fix_memdir(tmp_path)
    assert fake_token not in str(info.value)
    assert not (tmp_path / "team" / "MEMORY.md").exists()


def test_colon_in_a_file_name_is_still_checked(tmp_path: Path) -> None:
    write_index(tmp_path, ("a", "notes:v2.md", "h"), ("b", "mailto:x@example.com", "h"))
    assert _kinds(tmp_path) == [("MEMORY.md", "dead-link")]
