"""Property tests: any query is valid FTS5 syntax; content caps always hold."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from teamsync.recall.lexical import LexicalIndex
from teamsync.recall.recall import MAX_BYTES, MAX_LINES, cap_content
from testing.recall import memory, put


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LexicalIndex]:
    root = tmp_path_factory.mktemp("props")
    put(
        root,
        "a.md",
        memory("alpha", "Deploy freeze: NEAR AND NOT OR", body='"quoted" *star* ^caret\n'),
    )
    put(root, "team/b.md", memory("beta", "parseMemoryFile column:weights"))
    built = LexicalIndex(root)
    built.refresh()
    yield built
    built.close()


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=80))
def test_any_query_is_safe_fts5_syntax(index: LexicalIndex, query: str) -> None:
    hits = index.search(query, 5, explain=True)
    assert len(hits) <= 5
    assert all(h.path in {"a.md", "team/b.md"} and h.score >= 0 for h in hits)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12_000))
def test_caps_always_hold_and_keep_a_prefix(text: str) -> None:
    capped, note = cap_content(text, "x.md")
    assert text.startswith(capped)
    assert len(capped.encode("utf-8")) <= MAX_BYTES
    assert len(capped.splitlines()) <= MAX_LINES
    assert (note is None) == (capped == text)
