"""The MEMORY.md index: parsing lines, the loader's limits, regeneration and versioning."""

from __future__ import annotations

import time

import pytest

from teamsync.errors import MemoryFormatError
from teamsync.memdir.format import Memory
from teamsync.memdir.index import (
    MARKER,
    MAX_ENTRY_CHARS,
    IndexEntry,
    escape_target,
    index_limit_problems,
    index_version,
    left_out,
    load_index,
    parse_index,
    regenerate_index,
    render_entry,
)


def _m(name: str | None, description: str | None, type: str | None) -> Memory:
    return Memory(name, description, type, "body\n", {})


def test_parse_index_reads_entries_and_skips_prose() -> None:
    text = (
        "# Memory index\n"
        "- [Role](user_role.md) — senior backend dev\n"
        "Some prose line.\n"
        "* [Deploys](./team/deploys.md): Friday freeze\n"
        "- [No hook](plain.md)\n"
        "- [Bare](bare.md) trailing words\n"
        "  - [Escaped \\[x\\]](with%20space.md) -- hook\n"
    )
    assert parse_index(text) == [
        IndexEntry("Role", "user_role.md", "senior backend dev", 2),
        IndexEntry("Deploys", "./team/deploys.md", "Friday freeze", 4),
        IndexEntry("No hook", "plain.md", "", 5),
        IndexEntry("Bare", "bare.md", "trailing words", 6),
        IndexEntry("Escaped [x]", "with space.md", "hook", 7),
    ]


def test_render_entry_escapes_and_parses_back() -> None:
    line = render_entry("A [tricky] title", "my (file) #1.md", "hook text")
    assert line == "- [A \\[tricky\\] title](my%20%28file%29%20%231.md) — hook text"
    assert parse_index(line) == [IndexEntry("A [tricky] title", "my (file) #1.md", "hook text", 1)]


def test_render_entry_shortens_long_hooks() -> None:
    line = render_entry("T", "t.md", "word " * 100)
    assert len(line) <= MAX_ENTRY_CHARS
    assert line.endswith("…")


def test_escape_target_encodes_line_breaking_characters() -> None:
    assert escape_target("a\u2028b\x85.md") == "a%E2%80%A8b%C2%85.md"


def test_load_index_under_limits_is_untouched() -> None:
    loaded = load_index("- [A](a.md) — x\n")
    assert loaded.text == "- [A](a.md) — x"
    assert (loaded.truncated, loaded.warning) == (False, None)


def test_load_index_cuts_lines_and_names_the_limit() -> None:
    loaded = load_index("".join(f"- [M{n}](m{n}.md)\n" for n in range(250)))
    assert loaded.truncated
    body, _, warning = loaded.text.partition("\n\n")
    assert len(body.split("\n")) == 200
    assert body.endswith("- [M199](m199.md)")
    assert loaded.warning is not None and "250 lines (limit: 200)" in loaded.warning
    assert warning == loaded.warning


def test_load_index_counts_utf8_bytes_and_cuts_at_a_line_boundary() -> None:
    line = "- [É](e.md) — " + "é" * 200  # ~415 UTF-8 bytes, ~215 UTF-16 units
    text = "\n".join([line] * 100)
    assert len(text) < 25_000 < len(text.encode("utf-8"))
    loaded = load_index(text)
    body = loaded.text.split("\n\n> WARNING")[0]
    assert len(body.encode("utf-8")) <= 25_000
    assert all(part == line for part in body.split("\n"))
    assert loaded.warning is not None and "(limit: 25,000)" in loaded.warning
    assert "lines (limit" not in loaded.warning


def test_load_index_reports_both_limits() -> None:
    loaded = load_index("\n".join(["- [x](x.md) — " + "y" * 200] * 300))
    assert loaded.warning is not None
    assert "300 lines (limit: 200) and" in loaded.warning


def test_limit_problems() -> None:
    assert index_limit_problems("- [a](a.md)\n" * 200) == []
    assert index_limit_problems("- [a](a.md)\n" * 201) == [
        "index has 201 lines; loaders read only the first 200"
    ]
    assert index_limit_problems("x" * 25_001) == ["index is 25,001 bytes; loaders read only 25,000"]


def test_regenerate_groups_by_type_and_sorts_by_file() -> None:
    memories = {
        "z.md": _m("Zed", "last one", "user"),
        "a.md": _m("Ay", "first one", "user"),
        "team_ref.md": _m("Board", "the dashboard", "reference"),
        "odd.md": _m(None, None, "bogus"),
        "rule.md": _m("Rule", "multi\nline", "feedback"),
    }
    assert regenerate_index(memories) == (
        f"{MARKER}\n"
        "\n## User\n- [Ay](a.md) — first one\n- [Zed](z.md) — last one\n"
        "\n## Feedback\n- [Rule](rule.md) — multi line\n"
        "\n## Reference\n- [Board](team_ref.md) — the dashboard\n"
        "\n## Other\n- [odd](odd.md)\n"
    )


def test_regenerate_keeps_existing_titles_and_hooks_and_drops_only_dead_entries() -> None:
    existing = (
        "- [My own title](a.md) — my own hook\n"
        "- [Gone](gone.md) — dead\n"
        "- [Again](./a.md) — duplicate\n"
    )
    text = regenerate_index(
        {"a.md": _m("Name", "desc", "user"), "b.md": _m("B", "bee", "user")}, existing
    )
    assert text == (
        "- [My own title](a.md) — my own hook\n"
        "- [Again](./a.md) — duplicate\n"  # a duplicate is reported by check, not removed
        "\n## User\n- [B](b.md) — bee\n"
    )


def test_regenerate_title_falls_back_to_the_file_name() -> None:
    text = regenerate_index({"notes/db_tuning-tips.md": _m(None, "x", "project")})
    assert "- [db tuning tips](notes/db_tuning-tips.md) — x" in text


def test_index_version_marker() -> None:
    assert regenerate_index({}) == ""  # no memory, no index: nothing is written
    assert index_version(regenerate_index({"a.md": _m("A", "a", "user")})) == 1
    assert index_version(regenerate_index({"a.md": _m("A", "a", "user")}, "# Mine\n")) == 0
    assert index_version("- [a](a.md)\n") == 0
    assert index_version("<!-- teamsync-index v7 -->\n") == 7


def test_regenerate_refuses_an_index_from_a_newer_teamsync() -> None:
    with pytest.raises(MemoryFormatError, match="newer teamsync"):
        regenerate_index({}, "<!-- teamsync-index v2 -->\n- [a](a.md)\n")


def test_regenerate_never_leaves_out_and_names_what_a_loader_would_cut() -> None:
    memories = {f"m{n:03d}.md": _m(f"M{n}", "d", "project") for n in range(300)}
    text = regenerate_index(memories)
    entries = parse_index(text)
    assert [e.target for e in entries] == sorted(memories)
    assert left_out(memories, text) == sorted(memories)[197:]  # marker, blank, heading


def test_pathological_lines_parse_in_linear_time() -> None:
    start = time.perf_counter()
    entries = parse_index("- [a](b.md) —" + " " * 500_000 + "x\n- [c](d.md)" + "\t" * 500_000 + "y")
    assert time.perf_counter() - start < 1.0
    assert [(e.target, e.hook) for e in entries] == [("b.md", "x"), ("d.md", "y")]
