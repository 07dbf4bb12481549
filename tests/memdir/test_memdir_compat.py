"""Compatibility suite: memory directories as Claude Code users have them today.

The fixtures under ``tests/memdir/compat/`` are synthetic, one per layout and
per index style in ``research/claude-code-formats-today.md``: the metadata
block (with and without ``modified``, ``name: ""``, an unknown nested type,
CRLF, wiki links, non-English text), the older top-level layout, the four
lenient-YAML shapes Claude Code's retry reads, a legacy file without
frontmatter, and one file Claude Code cannot read either. Index styles: the
common grouped list with notes, file names as titles, a hyphen separator,
table rows, heading links, notes-style (backtick mentions), notes only.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from datetime import datetime
from pathlib import Path

import pytest

from teamsync.memdir.format import (
    LAYOUT_LEGACY,
    LAYOUT_METADATA,
    LAYOUT_TOP,
    parse_memory,
    render_memory,
)
from teamsync.memdir.index import parse_index, scan_index
from teamsync.memdir.lint import check_memdir, fix_memdir
from testing.recall import teamsync

COMPAT = Path(__file__).parent / "compat"
MEMORY = COMPAT / "memory"
STYLES = sorted(p.stem for p in (COMPAT / "indexes").glob("*.md"))

# What Claude Code itself cannot read (broken.md) or reads as "undefined" type (report).
TRUE_ALARMS = {("team/broken.md", "frontmatter"), ("team/weekly-report.md", "type")}
NOTES = {("team/legacy-notes.md", "legacy"), ("team/db-migrations.md", "wiki-link")}


def _iso(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


# path -> (layout, type, name, description, metadata.modified or None)
EXPECTED: dict[str, tuple[str, str | None, str, str | None, str | None]] = {
    "team/deploy-freeze.md": (
        LAYOUT_METADATA,
        "project",
        "deploy-freeze",
        "No prod deploys after Friday noon; ops is thin at weekends",
        "2026-08-01T09:00:00.000Z",
    ),
    "team/oncall-rotation.md": (
        LAYOUT_METADATA,
        "reference",
        "oncall-rotation",
        "The on-call rotation lives in the pager tool, not in the wiki",
        None,
    ),
    "team/ci-flakes.md": (
        LAYOUT_METADATA,
        "feedback",
        "ci-flakes",  # name: "" falls back to the file stem
        "Retry the e2e job once before debugging: the runner image is flaky",
        "2026-07-15T18:30:12.345Z",
    ),
    "team/weekly-report.md": (
        LAYOUT_METADATA,
        "report",  # unknown, not missing
        "weekly-report",
        "What goes into the Monday status report",
        "2026-06-01T08:00:00.000Z",
    ),
    "team/db-migrations.md": (
        LAYOUT_METADATA,
        "project",
        "db-migrations",
        "Migrations run in a separate deploy step, never at app start",
        "2026-09-10T12:00:00.000Z",
    ),
    "team/release-train.md": (
        LAYOUT_METADATA,
        "project",
        "Release train",
        "배포는 격주 화요일에 합니다 (release every other Tuesday)",
        "2026-09-01T07:45:00.500Z",
    ),
    "user-role.md": (
        LAYOUT_METADATA,
        "user",
        "役割",
        "Backend developer, new to the frontend; explain React by analogy",
        "2026-08-20T10:00:00.000Z",
    ),
    "team/api-style.md": (
        LAYOUT_TOP,
        "feedback",
        "API style",
        "Public endpoints use snake_case JSON keys",
        None,
    ),
    "team/grafana-board.md": (
        LAYOUT_TOP,
        "reference",
        "Latency board",
        "The API latency board is the first place to look during an incident",
        None,
    ),
    "team/cover-letters.md": (
        LAYOUT_TOP,
        "feedback",
        "Cover letters: format rules",
        "Deploy rule: never on Friday; see `make release`",
        None,
    ),
    "team/ticket-42.md": (
        LAYOUT_TOP,
        "project",
        "Ticket #42 workaround",
        "Ticket #42 is open; pin the client to 2.3 until it closes",
        None,
    ),
    "team/wip-flags.md": (
        LAYOUT_TOP,
        "project",
        "[WIP] feature flags",
        "*Every* new flag needs an owner and an expiry date",
        None,
    ),
    "team/mentions.md": (
        LAYOUT_TOP,
        "reference",
        "@platform ownership",
        "`infra/` belongs to the platform team; ask before editing",
        None,
    ),
    "team/legacy-notes.md": (LAYOUT_LEGACY, None, "legacy-notes", None, None),
}


def _copy(tmp_path: Path, style: str | None = None) -> Path:
    memdir = tmp_path / "memory"
    shutil.copytree(MEMORY, memdir)
    if style is not None:
        shutil.copyfile(COMPAT / "indexes" / f"{style}.md", memdir / "team" / "MEMORY.md")
    now = time.time()
    for path in memdir.rglob("*.md"):  # a fresh pull or copy: every mtime is "now"
        os.utime(path, (now, now))
    return memdir


def _kinds(problems: list) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(p.path, p.kind) for p in problems}


def test_fixtures_cover_every_layout() -> None:
    layouts = [e[0] for e in EXPECTED.values()]
    assert {LAYOUT_METADATA, LAYOUT_TOP, LAYOUT_LEGACY} == set(layouts)
    on_disk = {p.relative_to(MEMORY).as_posix() for p in MEMORY.rglob("*.md")}
    assert on_disk - {"MEMORY.md", "team/MEMORY.md"} == set(EXPECTED) | {"team/broken.md"}
    assert (MEMORY / "team/db-migrations.md").read_bytes().count(b"\r\n") > 5  # CRLF case


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_type_name_description_and_modified_are_read(path: str) -> None:
    layout, kind, name, description, modified = EXPECTED[path]
    text = (MEMORY / path).read_bytes().decode("utf-8")
    memory = parse_memory(text, path)
    assert (memory.layout, memory.type, memory.name, memory.description) == (
        layout,
        kind,
        name,
        description,
    )
    got = memory.modified.timestamp() if memory.modified else None
    assert got == (_iso(modified) if modified else None)
    assert render_memory(memory) == text  # byte for byte, in whichever layout it came


def test_check_raises_no_false_alarm(tmp_path: Path) -> None:
    report = check_memdir(_copy(tmp_path))
    assert _kinds(report.problems) == TRUE_ALARMS
    assert _kinds(report.notes) == NOTES
    assert report.memories == len(EXPECTED) + 1


@pytest.mark.parametrize("style", STYLES)
def test_every_index_style_reads_without_false_alarms_and_fix_changes_nothing(
    tmp_path: Path, style: str
) -> None:
    memdir = _copy(tmp_path, style)
    report = check_memdir(memdir)
    expected = TRUE_ALARMS
    if style == "notes-only":  # the topic files are simply not mentioned there
        expected = expected | {(p, "orphan") for p in EXPECTED if p.startswith("team/")}
        expected |= {("team/broken.md", "orphan")}
    assert _kinds(report.problems) == expected
    before = (memdir / "team" / "MEMORY.md").read_bytes()
    if style != "notes-only":
        result = fix_memdir(memdir, backup_dir=tmp_path / "state")
        assert "team/MEMORY.md" not in result.written
        assert (memdir / "team" / "MEMORY.md").read_bytes() == before


def test_an_index_without_topic_files_is_left_alone(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    (memdir / "team").mkdir(parents=True)
    shutil.copyfile(COMPAT / "indexes" / "notes-only.md", memdir / "team" / "MEMORY.md")
    before = (memdir / "team" / "MEMORY.md").read_bytes()
    assert check_memdir(memdir).problems == []
    result = fix_memdir(memdir, backup_dir=tmp_path / "state")
    assert result.written == [] and result.problems == []
    assert (memdir / "team" / "MEMORY.md").read_bytes() == before


@pytest.mark.parametrize("style", [*STYLES, None])
def test_fix_after_a_delete_and_a_new_memory_keeps_every_line_it_does_not_own(
    tmp_path: Path, style: str | None
) -> None:
    memdir = _copy(tmp_path, style)
    index = memdir / "team" / "MEMORY.md"
    before = index.read_text(encoding="utf-8")
    (memdir / "team" / "api-style.md").unlink()
    (memdir / "team" / "new-rule.md").write_text(
        "---\nname: new-rule\ndescription: Lint runs before tests\nmetadata:\n"
        "  node_type: memory\n  type: feedback\n  modified: 2026-10-01T00:00:00.000Z\n---\nx\n",
        encoding="utf-8",
    )
    result = fix_memdir(memdir, backup_dir=tmp_path / "state")
    after = index.read_text(encoding="utf-8")
    removed = [
        line.text
        for line in scan_index(before)
        if line.kind in ("bullet", "table") and [e.target for e in line.entries] == ["api-style.md"]
    ]
    kept = [line for line in before.splitlines(keepends=True) if line not in removed]
    lines = after.splitlines(keepends=True)
    position = 0
    for line in kept:  # every other line, byte for byte and in order
        position = lines.index(line, position) + 1
    assert "new-rule.md" in {e.target for e in parse_index(after)}
    assert result.backups and result.backups[0].read_text(encoding="utf-8") == before
    assert tmp_path / "state" in result.backups[0].parents
    if style == "heading-links":  # a dead heading link is reported, never removed
        assert ("team/MEMORY.md", "dead-link") in _kinds(result.problems)
    else:
        assert not {k for _, k in _kinds(result.problems)} & {"dead-link", "orphan"}
    again = fix_memdir(memdir, backup_dir=tmp_path / "state")
    assert again.written == [] and index.read_text(encoding="utf-8") == after


def test_fix_files_new_entries_under_the_matching_type_heading(tmp_path: Path) -> None:
    memdir = _copy(tmp_path)
    (memdir / "team" / "new-rule.md").write_text(
        "---\nname: Lint first\ndescription: Lint runs before tests\nmetadata:\n"
        "  node_type: memory\n  type: feedback\n---\nx\n",
        encoding="utf-8",
    )
    fix_memdir(memdir, backup_dir=tmp_path / "state")
    lines = (memdir / "team" / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    at = lines.index("- [Lint first](new-rule.md) — Lint runs before tests")
    assert lines[at - 1] == "- [Cover letters](cover-letters.md) — one page"
    assert lines.index("## Feedback") < at < lines.index("## Reference")


def test_crlf_index_gets_crlf_entries(tmp_path: Path) -> None:
    memdir = _copy(tmp_path)
    index = memdir / "team" / "MEMORY.md"
    index.write_bytes(index.read_bytes().replace(b"\n", b"\r\n"))
    (memdir / "team" / "api-style.md").unlink()
    (memdir / "team" / "x.md").write_text("---\nname: x\ndescription: d\ntype: user\n---\n")
    fix_memdir(memdir, backup_dir=tmp_path / "state")
    data = index.read_bytes()
    assert b"- [x](x.md) \xe2\x80\x94 d\r\n" in data and b"api-style" not in data
    assert data.count(b"\n") == data.count(b"\r\n")


def test_over_the_load_limit_nothing_is_dropped_and_the_cut_is_named(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    team = memdir / "team"
    team.mkdir(parents=True)
    for n in range(230):
        (team / f"m{n:03d}.md").write_text(
            f"---\nname: m{n}\ndescription: fact {n}\nmetadata: \n  node_type: memory\n"
            "  type: project\n---\nbody\n",
            encoding="utf-8",
        )
    (team / "MEMORY.md").write_text("# Team\n\n## Project\n", encoding="utf-8")
    result = fix_memdir(memdir, backup_dir=tmp_path / "state")
    assert len(parse_index((team / "MEMORY.md").read_text(encoding="utf-8"))) == 230
    assert result.left_out == [f"team/m{n:03d}.md" for n in range(197, 230)]
    (limit,) = [p for p in result.problems if p.kind == "index-limit"]
    assert "Claude Code would not load 33 entries: m197.md" in limit.message


def test_recall_json_and_the_manifest_show_type_description_and_content_age(
    tmp_path: Path,
) -> None:
    memdir = _copy(tmp_path)
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    env.pop("ANTHROPIC_API_KEY", None)
    done = teamsync(
        ["--dir", str(memdir), "--json", "recall", "--offline", "prod deploys Friday noon"],
        env=env,
    )
    assert done.returncode == 0, done.stderr
    hits = {m["path"]: m for m in json.loads(done.stdout)["memories"]}
    hit = hits["team/deploy-freeze.md"]
    assert hit["type"] == "project"
    assert hit["description"] == EXPECTED["team/deploy-freeze.md"][3]
    days = math.floor((time.time() - _iso("2026-08-01T09:00:00.000Z")) / 86_400)
    assert hit["age_days"] == max(0, days)  # metadata.modified, not the fresh mtime
    if days >= 2:
        assert hit["stale"] is True and hit["freshness_note"]
        assert any("days old" in reason for reason in hit["stale_reasons"])

    from teamsync.recall.recall import build_manifest

    manifest, offered = build_manifest(memdir, tmp_path / "state")
    lines = {line.split("] ", 1)[1].split(" (", 1)[0]: line for line in manifest.splitlines()}
    assert lines["team/deploy-freeze.md"].startswith("- [project] team/deploy-freeze.md ")
    assert "(2026-08-01T09:00:00Z)" in lines["team/deploy-freeze.md"]
    assert lines["team/cover-letters.md"].startswith("- [feedback] ")
    assert lines["team/cover-letters.md"].endswith(
        ": Deploy rule: never on Friday; see `make release`"
    )
    untyped = [line for line in manifest.splitlines() if line.startswith("- [unknown]")]
    assert {line.split()[2] for line in untyped} == {"team/legacy-notes.md", "team/broken.md"}


def test_dir_at_the_wrong_level_gets_one_line(tmp_path: Path) -> None:
    memdir = _copy(tmp_path)
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    wrong = teamsync(["--dir", str(memdir / "team"), "check"], env=env)
    assert wrong.returncode == 1
    (line,) = wrong.stderr.strip().splitlines()
    assert "is a team/ directory" in line and f"pass --dir {memdir}" in line
    empty = tmp_path / "empty"
    empty.mkdir()
    done = teamsync(["--dir", str(empty), "check"], env=env)
    assert done.returncode == 0
    assert "holds no memory files; --dir expects the memory directory" in done.stderr
