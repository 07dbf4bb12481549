"""Memory files: parse, render, problems, and hostile input that must never crash or hang."""

from __future__ import annotations

import time

import pytest
import yaml

from teamsync.errors import MemoryFormatError
from teamsync.memdir import format as fmt
from teamsync.memdir.format import (
    MAX_MEMORY_BYTES,
    Memory,
    decode_memory,
    load_frontmatter,
    memory_issues,
    memory_problems,
    parse_memory,
    render_memory,
)
from testing.memdir import memory_text

GOOD = memory_text(name="Deploy freeze", description="No deploys Friday afternoon", type="project")


def test_parse_reads_fields_and_body() -> None:
    memory = parse_memory(GOOD, "team/x.md")
    assert (memory.name, memory.description, memory.type) == (
        "Deploy freeze",
        "No deploys Friday afternoon",
        "project",
    )
    assert memory.body.startswith("The fact.")
    assert list(memory.frontmatter) == ["name", "description", "type"]
    assert memory_problems(memory) == []


@pytest.mark.parametrize(
    "text",
    [
        GOOD,
        GOOD.replace("\n", "\r\n"),
        "no frontmatter at all\n",
        "",
        "---\n---\nempty frontmatter\n",
        "---\nname: x\n---",
        "\ufeff---\nname: 'quoted: value'  # comment\ntype: user\n---\nbody\n\n\n",
        "---\ndescription: >\n  folded\n  text\nextra: [1, 2]\n---\n---\nbody with a rule\n",
        "---\nname: x\n---\n   leading spaces and trailing  \n\t",
    ],
)
def test_render_round_trips_byte_for_byte(text: str) -> None:
    assert render_memory(parse_memory(text)) == text


def test_render_after_edit_keeps_other_keys_in_order() -> None:
    text = "---\nname: A\nowner: bob\ndescription: old\ntype: user\n---\nbody\n"
    memory = parse_memory(text)
    edited = Memory(
        name=memory.name,
        description="new line",
        type=memory.type,
        body=memory.body,
        frontmatter=memory.frontmatter,
        head=memory.head,
    )
    rendered = render_memory(edited)
    assert rendered == "---\nname: A\nowner: bob\ndescription: new line\ntype: user\n---\nbody\n"
    assert parse_memory(rendered).description == "new line"


def test_render_new_memory_without_head() -> None:
    memory = Memory(name="N", description="d", type="user", body="b\n", frontmatter={})
    text = render_memory(memory)
    again = parse_memory(text)
    assert (again.name, again.description, again.type, again.body) == ("N", "d", "user", "b\n")


def test_render_body_that_looks_like_frontmatter_stays_body() -> None:
    memory = Memory(None, None, None, "---\nnot: yaml\n---\n", {})
    assert parse_memory(render_memory(memory)).body == "---\nnot: yaml\n---\n"


@pytest.mark.parametrize(
    ("fields", "kinds"),
    [
        ({"type": None}, ["type"]),
        ({"type": "opinion"}, ["type"]),
        ({"description": None}, ["description"]),
        ({"description": "''"}, ["description"]),
        ({"name": None}, []),  # Claude Code never reads name; the file stem stands in
        ({"description": "x" * 300}, ["description"]),
    ],
)
def test_problems_name_the_bad_field(fields: dict[str, str | None], kinds: list[str]) -> None:
    memory = parse_memory(memory_text(**fields))  # type: ignore[arg-type]
    assert [kind for kind, _ in memory_issues(memory)] == kinds


def test_multiline_description_is_a_problem() -> None:
    memory = parse_memory("---\nname: a\ndescription: |\n  one\n  two\ntype: user\n---\n")
    assert memory_problems(memory) == [
        "description spans several lines; recall reads one specific line"
    ]


def test_unknown_type_message_lists_the_allowed_ones() -> None:
    memory = parse_memory(memory_text(type="opinion"))
    assert memory_problems(memory) == [
        "unknown type 'opinion' (one of user, feedback, project, reference)"
    ]


def test_unknown_type_that_is_not_type_like_is_not_echoed() -> None:
    value = (
        "ghp_" + "x9Y8w7V6u5T4s3R2q1P0o9N8m7L6k5J4i3H2"
    )  # built from parts: a token-shaped value
    memory = parse_memory(memory_text(type=value))
    (message,) = memory_problems(memory)
    assert value not in message
    assert message == "unknown type value (one of user, feedback, project, reference)"


def test_no_frontmatter_is_the_milder_legacy_kind() -> None:
    assert [k for k, _ in memory_issues(parse_memory("just text\n"))] == ["legacy"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\nname: x\nno closing line\n", "never closes"),
        ("---\n- a\n- b\n---\n", "must be a mapping"),
        ('---\nname: "word" more text\n---\n', "not valid YAML"),
        ("---\nmeta:\n  name: [unclosed\n---\n", "not valid YAML"),
        ("---\nx: !custom tag\n---\n", "YAML tags"),
        ("---\nx: !!python/object/apply:os.system ['true']\n---\n", "YAML tags"),
        ("---\na: &x one\nb: *x\n---\n", "anchors or aliases"),
        ("---\na: &a [1]\nb: &b [*a, *a]\nc: [*b, *b]\n---\n", "anchors or aliases"),
        ("---\nr: &r [*r]\n---\n", "anchors or aliases"),
        ("---\nd: 2024-13-45\n---\n", "cannot be read"),
        ("---\nx: " + "[" * 500 + "]" * 500 + "\n---\n", "nested too deeply"),
        ("---\n" + "k: v\n" * 10_000 + "---\n", "over 32,000 characters"),
    ],
)
def test_hostile_or_broken_frontmatter_is_an_error(text: str, message: str) -> None:
    with pytest.raises(MemoryFormatError, match=message) as info:
        parse_memory(text, "team/evil.md")
    assert info.value.path == "team/evil.md"


def test_billion_laughs_is_refused_quickly() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    start = time.perf_counter()
    with pytest.raises(MemoryFormatError, match="anchors or aliases"):
        parse_memory("---\n" + "\n".join(lines) + "\n---\nbody\n")
    assert time.perf_counter() - start < 1.0


def test_deep_flow_nesting_does_not_recurse() -> None:
    with pytest.raises(MemoryFormatError):
        load_frontmatter("x: " + "{a: " * 5000 + "1" + "}" * 5000)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"a\x00b", "binary"),
        (b"caf\xe9\n", r"not valid UTF-8 \(byte 3\)"),
        (b"x" * (MAX_MEMORY_BYTES + 1), "over the 250,000-byte limit"),
    ],
)
def test_decode_refuses_binary_invalid_and_huge(data: bytes, message: str) -> None:
    with pytest.raises(MemoryFormatError, match=message):
        decode_memory(data, "m.md")


def test_decode_accepts_utf8() -> None:
    assert decode_memory("café ✓\n".encode(), "m.md") == "café ✓\n"


@pytest.mark.parametrize(
    "source",
    [
        "name: plain words here\ntype: user\n",
        "name: yes\n",
        "on: x\n",
        "n: 12\n",
        "n: 1.5e3\n",
        "n: null\n",
        "n: ~\n",
        "d: 2024-01-02\n",
        "a: b: c\n",
        "a: x # comment\n",
        "a: x\n  continued\n",
        "a: 'q'\n",
        'a: "q\\n"\n',
        "a: -x\n",
        "a: x\n\nb: y\n",
        "a: first\na: second\n",
        "a: \u00e9\u4e2d\U0001f600\n",
        "a: tab\there\n",
        "a: x\x85y\n",
        "key-with_dash: v\n",
        "a:\n",
        "a: 0o17\n",
        "a: .inf\n",
        "a: <<\n",
        "a: =\n",
    ],
)
def test_fast_path_agrees_with_yaml(source: str) -> None:
    lenient = fmt._requote(source, lambda v: fmt._has_comment_mark(v) or fmt._problematic(v))
    try:
        expected = yaml.load(source, Loader=fmt._LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        if lenient == source:  # nothing for the lenient retry to quote
            with pytest.raises(MemoryFormatError):
                load_frontmatter(source)
        return
    if lenient == source:
        assert load_frontmatter(source) == (expected or {})
    fast = fmt._fast_load(source)
    if fast is not None:
        assert fast == expected


def test_c_loader_is_used_when_available() -> None:
    assert fmt._LOADER is getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def test_long_whitespace_runs_do_not_backtrack() -> None:
    start = time.perf_counter()
    assert load_frontmatter("a: b" + " " * 30_000 + "c\n") == {"a": "b" + " " * 30_000 + "c"}
    assert time.perf_counter() - start < 1.0
