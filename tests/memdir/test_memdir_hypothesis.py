"""Property tests: memory files and the index survive round trips; the YAML fast path is exact."""

from __future__ import annotations

import string

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from teamsync.errors import MemoryFormatError
from teamsync.memdir import format as fmt
from teamsync.memdir.format import (
    MEMORY_TYPES,
    Memory,
    load_frontmatter,
    parse_memory,
    render_memory,
)
from teamsync.memdir.index import (
    MAX_INDEX_BYTES,
    MAX_INDEX_LINES,
    indexed_keys,
    left_out,
    load_index,
    parse_index,
    regenerate_index,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
line_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)
plain_value = st.text(
    string.ascii_letters + string.digits + " .,;:!?#'\"-_/()[]{}&*é中😀\t", min_size=1, max_size=40
)


@SETTINGS
@given(
    fields=st.dictionaries(
        st.sampled_from(["name", "description", "type", "owner", "tags"]), line_text, max_size=5
    ),
    body=st.text(max_size=300),
)
def test_rendered_memory_parses_back(fields: dict[str, str], body: str) -> None:
    memory = Memory(fields.get("name"), fields.get("description"), fields.get("type"), body, fields)
    text = render_memory(memory)
    again = parse_memory(text)
    assert again.body == body
    assert dict(again.frontmatter) == fields
    assert render_memory(again) == text


@SETTINGS
@given(st.text(max_size=400))
def test_any_parseable_text_round_trips_byte_for_byte(text: str) -> None:
    try:
        memory = parse_memory(text)
    except MemoryFormatError:
        return
    assert render_memory(memory) == text


@SETTINGS
@given(head=st.sampled_from(["---\n", "---\r\n", "--- \n"]), body=st.text(max_size=200))
def test_body_after_frontmatter_is_kept_exactly(head: str, body: str) -> None:
    text = f"{head}name: x\ntype: user\n---\n{body}"
    memory = parse_memory(text)
    assert memory.body == body
    assert render_memory(memory) == text


@SETTINGS
@given(
    st.lists(st.tuples(st.sampled_from(["name", "a", "on", "yes", "k_1"]), plain_value), max_size=6)
)
def test_fast_path_matches_the_yaml_loader(pairs: list[tuple[str, str]]) -> None:
    source = "".join(f"{key}: {value}\n" for key, value in pairs)
    try:
        expected = yaml.load(source, Loader=fmt._LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        expected = "error"
    fast = fmt._fast_load(source)
    if fast is not None:
        assert fast == (expected or {})
    lenient = fmt._requote(source, lambda v: fmt._has_comment_mark(v) or fmt._problematic(v))
    try:
        loaded = load_frontmatter(source)
    except MemoryFormatError:
        refused_guard = any(c in source for c in "&*!")
        assert expected == "error" or not isinstance(expected, dict) or refused_guard
        return
    if lenient == source:  # nothing the lenient steps would quote: exactly strict YAML
        assert loaded == (expected or {})
    else:
        assert len(loaded) <= len(pairs)  # one mapping entry per line at most


key_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\n\r"),
    min_size=1,
    max_size=30,
)
memories = st.dictionaries(
    st.builds(lambda stem, sub: f"{sub}{stem}.md", key_text, st.sampled_from(["", "notes/"])),
    st.builds(
        lambda n, d, t: Memory(n, d, t, "body\n", {}),
        st.one_of(st.none(), line_text),
        st.one_of(st.none(), line_text),
        st.one_of(st.none(), st.sampled_from([*MEMORY_TYPES, "bogus"])),
    ),
    max_size=25,
)


@SETTINGS
@given(memories)
def test_regenerated_index_lists_every_memory_once_and_is_stable(mems: dict[str, Memory]) -> None:
    text = regenerate_index(mems)
    targets = [entry.target for entry in parse_index(text)]
    assert sorted(targets) == sorted(mems)
    assert regenerate_index(mems, text) == text
    assert regenerate_index(dict(reversed(list(mems.items())))) == text
    assert set(left_out(mems, text)) <= set(mems)


@SETTINGS
@given(memories, st.lists(st.tuples(line_text, line_text), max_size=25))
def test_existing_titles_and_hooks_are_kept(
    mems: dict[str, Memory], names: list[tuple[str, str]]
) -> None:
    keys = sorted(mems)
    hand = "".join(
        f"- [{title or 'T'}]({key}) — {hook or 'h'}\n"
        for key, (title, hook) in zip(keys, names, strict=False)
        if all(c not in key for c in " ()[]<>%#\\")
        and not any(c in title + hook for c in "[]\\")
        and title.strip()
        and hook.strip()
    )
    before = {entry.target: (entry.title, entry.hook) for entry in parse_index(hand)}
    text = regenerate_index(mems, hand)
    after = {entry.target: (entry.title, entry.hook) for entry in parse_index(text)}
    for target, pair in before.items():
        if target in mems:  # a live entry: its line is kept byte for byte
            assert after[target] == pair


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=150, max_value=400), st.integers(min_value=0, max_value=300))
def test_regenerated_index_never_drops_and_names_what_would_be_cut(
    count: int, hook_len: int
) -> None:
    mems = {
        f"memory-{n:04d}.md": Memory(f"Memory {n}", "é" * hook_len, MEMORY_TYPES[n % 4], "", {})
        for n in range(count)
    }
    text = regenerate_index(mems)
    assert indexed_keys(text) == set(mems)
    cut = set(left_out(mems, text))
    over = len(text.strip().split("\n")) > MAX_INDEX_LINES
    over = over or len(text.strip().encode("utf-8")) > MAX_INDEX_BYTES
    assert bool(cut) == over
    loaded = load_index(text).text
    for key in mems:
        assert (f"]({key})" in loaded) == (key not in cut)


frontmatter_line = st.sampled_from(
    [
        "name: Deploy freeze",
        "description: No deploys on Friday",
        "type: project",
        "type: bogus",
        "owner: 'bob: the builder'",
        "tags: [a, b]",
        "# a comment",
        "",
        "count: 3",
        "when: 2026-01-02",
        "note: |\n  two\n  lines",
        "empty:",
        "x: &a 1",
        "y: !custom z",
        "  bad indent: 1",
        "description: trailing spaces   ",
    ]
)


@SETTINGS
@given(
    st.lists(frontmatter_line, max_size=8),
    st.sampled_from(["\n", "\r\n"]),
    st.text(max_size=200),
)
def test_frontmatter_shaped_files_round_trip(lines: list[str], newline: str, body: str) -> None:
    text = "---" + newline + "".join(line + newline for line in lines) + "---" + newline + body
    try:
        memory = parse_memory(text)
    except MemoryFormatError:
        return
    assert render_memory(memory) == text
    assert memory.body == body
