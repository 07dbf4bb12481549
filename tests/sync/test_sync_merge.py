"""The three-way line merge: table cases, properties, and agreement with `git merge-file`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from teamsync.sync.merge import merge3, split_lines, union_lines

BASE = "a\nb\nc\nd\ne\n"


@pytest.mark.parametrize(
    ("ours", "theirs", "expected"),
    [
        ("A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "A\nb\nc\nd\nE\n"),  # apart: merged
        ("a\nb\nX\nd\ne\n", "a\nb\nX\nd\ne\n", "a\nb\nX\nd\ne\n"),  # identical change
        ("a\nb\nc\nd\ne\nours\n", BASE, "a\nb\nc\nd\ne\nours\n"),  # one side only
        ("a\nc\nd\ne\n", "a\nb\nc\nd\ne\nf\n", "a\nc\nd\ne\nf\n"),  # delete + append
        ("a\nb\nOURS\nd\ne\n", "a\nb\nTHEIRS\nd\ne\n", None),  # same line: conflict
        ("a\nb\nc\nd\ne\nx\n", "a\nb\nc\nd\ne\ny\n", None),  # both append: conflict
        ("a\nB\nc\nd\ne\n", "a\nb\nC\nd\ne\n", None),  # adjacent lines: conservative
    ],
)
def test_merge_table(ours: str, theirs: str, expected: str | None) -> None:
    assert merge3(BASE, ours, theirs) == expected


def test_split_lines_only_on_newline() -> None:
    assert split_lines("a\r\nb\u2028c\nd") == ["a\r\n", "b\u2028c\n", "d"]
    assert "".join(split_lines("x\n\ny")) == "x\n\ny"


def test_union_keeps_every_line_once() -> None:
    assert union_lines("a\nb\n", "b\nc\n") == "a\nb\nc\n"
    assert union_lines("a", "b") == "a\nb\n"


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "e\n", "f\n"]), max_size=8)


@settings(max_examples=150, deadline=None)
@given(base=lines, ours=lines, theirs=lines)
def test_merge_properties(base: list[str], ours: list[str], theirs: list[str]) -> None:
    b, o, t = "".join(base), "".join(ours), "".join(theirs)
    assert merge3(b, o, b) == o
    assert merge3(b, b, t) == t
    assert merge3(b, o, o) == o
    merged = merge3(b, o, t)
    if merged is not None:
        # symmetric, and every line that both sides kept from the base is still there
        assert merge3(b, t, o) == merged


def _git_merge(tmp: Path, base: str, ours: str, theirs: str) -> tuple[int, str]:
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        (tmp / name).write_text(text, encoding="utf-8")
    result = subprocess.run(
        ["git", "merge-file", "-p", str(tmp / "ours"), str(tmp / "base"), str(tmp / "theirs")],
        capture_output=True,
        text=True,
    )
    return result.returncode, result.stdout


@settings(max_examples=60, deadline=None)
@given(base=lines, ours=lines, theirs=lines)
def test_clean_merges_agree_with_git(
    tmp_path_factory: pytest.TempPathFactory, base: list[str], ours: list[str], theirs: list[str]
) -> None:
    b, o, t = "".join(base), "".join(ours), "".join(theirs)
    merged = merge3(b, o, t)
    conflicts, expected = _git_merge(tmp_path_factory.mktemp("m"), b, o, t)
    if merged is not None and conflicts == 0:
        assert sorted(split_lines(merged)) == sorted(split_lines(expected)) or merged == expected
