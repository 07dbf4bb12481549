"""Lexical recall: FTS5/bm25 ranking, identifier tokenization, the on-disk cache."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from teamsync.recall.lexical import LexicalIndex, default_cache_path, lexical_search
from teamsync.recall.tokens import extract_fields, match_expression, query_terms, split_identifiers
from testing.recall import memory, put


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    put(root, "feedback_parser.md", memory("parser", "parseMemoryFile must stay pure", "feedback"))
    put(root, "team/project_deploy.md", memory("deploys", "Deployment freeze before the launch"))
    put(
        root,
        "team/reference_grafana.md",
        memory("board", "Grafana board for checkout latency", "reference"),
    )
    put(root, "user_role.md", memory("role", "User is a data scientist", "user", "Knows pandas.\n"))
    put(root, "MEMORY.md", "- [parser](feedback_parser.md) — deployment deployment deployment\n")
    return root


def test_split_identifiers_handles_camel_pascal_and_acronyms() -> None:
    assert split_identifiers("parseMemoryFile") == "parse memory file"
    assert split_identifiers("HTTPServerError and plain words") == "http server error"
    assert split_identifiers("snake_case kebab-case") == ""  # FTS5 already splits these


def test_query_terms_drop_stop_words_but_keep_something() -> None:
    assert query_terms("How do we deploy the parseMemoryFile?") == [
        "deploy",
        "parsememoryfile",
        "parse",
        "memory",
        "file",
    ]
    assert query_terms("how do we") == ["how", "do", "we"]


def test_match_expression_quotes_terms_and_adds_root_prefixes() -> None:
    expr = match_expression(['dep"loying', "db"])
    assert expr == '"deploying"* OR "deploy"* OR "db"'


def test_frontmatter_fields_are_split_without_yaml() -> None:
    fields = extract_fields(memory("Title", "One line: with a colon", "user", "Body text\n"))
    assert fields.name == "Title"
    assert fields.description == "One line: with a colon"
    assert "Body text" in fields.body and "type" not in fields.body
    assert extract_fields("no frontmatter").body == "no frontmatter"


def test_identifier_query_finds_camel_case_memory(memdir: Path) -> None:
    hits = lexical_search(memdir, "memory file parsing")
    assert hits[0].path == "feedback_parser.md"
    assert lexical_search(memdir, "parseMemoryFile")[0].path == "feedback_parser.md"


def test_stemming_and_prefix_bridge_inflections(memdir: Path) -> None:
    # porter stems "deploying" -> "deploi" but "deployment" -> "deploy"; the root prefix bridges them
    assert lexical_search(memdir, "deploying")[0].path == "team/project_deploy.md"
    assert lexical_search(memdir, "freezes")[0].path == "team/project_deploy.md"


def test_index_is_not_a_memory_and_description_outweighs_body(memdir: Path) -> None:
    hits = lexical_search(memdir, "deployment", limit=10)
    assert [h.path for h in hits] == ["team/project_deploy.md"]
    assert all(h.score > 0 for h in hits)


def test_relevance_floor_returns_nothing_when_no_distinctive_word_matches(memdir: Path) -> None:
    index = LexicalIndex(memdir)
    index.refresh()
    query = "how do I renew the kubernetes certificate for the checkout"
    plain = index.search(query, floor=None, explain=True)
    assert [h.path for h in plain] == ["team/reference_grafana.md"]  # only "checkout" matches
    assert plain[0].coverage < 0.3
    assert index.search(query) == []  # below the floor: nothing, not the least bad memory
    strong = index.search("checkout latency", explain=True)
    assert [h.path for h in strong] == ["team/reference_grafana.md"]
    assert strong[0].coverage == 1.0


def test_explain_reports_the_matched_terms(memdir: Path) -> None:
    hit = lexical_search(memdir, "checkout latency board", explain=True)[0]
    assert hit.path == "team/reference_grafana.md"
    assert {"checkout", "latency", "board"} <= set(hit.matched)


def test_limit_and_empty_queries(memdir: Path) -> None:
    assert lexical_search(memdir, "", limit=5) == []
    assert lexical_search(memdir, "deployment", limit=0) == []
    query = "the a board latency scientist freeze"
    assert len(lexical_search(memdir, query, limit=2, floor=None)) == 2
    assert len(lexical_search(memdir, query, limit=1, floor=None)) == 1


def test_symlinks_are_never_indexed(memdir: Path, tmp_path: Path) -> None:
    outside = put(tmp_path, "outside/secret.md", memory("stolen", "zebra unicorn credentials"))
    os.symlink(outside, memdir / "link.md")
    os.symlink(outside.parent, memdir / "linkdir")
    assert lexical_search(memdir, "zebra unicorn") == []


def _age_files(root: Path, seconds: float = 60.0) -> None:
    old = time.time() - seconds
    for path in root.rglob("*.md"):
        os.utime(path, (old, old))


def test_cache_rereads_only_changed_files(memdir: Path, tmp_path: Path) -> None:
    _age_files(memdir)
    cache = default_cache_path(tmp_path / "cache", memdir)
    first = LexicalIndex(memdir, cache)
    assert first.refresh() == 4
    first.close()
    again = LexicalIndex(memdir, cache)
    assert again.refresh() == 0 and len(again) == 4
    put(memdir, "team/project_deploy.md", memory("deploys", "Giraffe migration window"))
    (memdir / "user_role.md").unlink()
    assert again.refresh() == 1
    assert len(again) == 3
    assert again.search("giraffe")[0].path == "team/project_deploy.md"
    assert again.search("freeze") == []
    assert again.search("scientist") == []
    assert again.refresh() == 1  # just modified: re-read once more, in case of a same-tick edit
    old = time.time() - 60
    os.utime(memdir / "team/project_deploy.md", (old, old))
    assert again.refresh() == 1 and again.refresh() == 0
    again.close()


def test_a_same_size_edit_within_the_same_second_is_not_missed(
    memdir: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "c.sqlite"
    path = put(memdir, "zoo.md", memory("zoo", "zebra enclosure rota"))
    stamp = path.stat().st_mtime_ns
    assert lexical_search(memdir, "zebra", cache_path=cache)[0].path == "zoo.md"
    put(memdir, "zoo.md", memory("zoo", "okapi enclosure rota"))
    os.utime(path, ns=(stamp, stamp))  # same size, same mtime: only the racy rule catches it
    assert lexical_search(memdir, "okapi", cache_path=cache)[0].path == "zoo.md"


def test_corrupt_cache_is_rebuilt(memdir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"this is not a database" * 100)
    assert (
        lexical_search(memdir, "grafana", cache_path=cache)[0].path == "team/reference_grafana.md"
    )
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT count(*) FROM files").fetchone()[0] == 4


def test_unreadable_and_oversized_files_are_skipped(memdir: Path) -> None:
    put(memdir, "huge.md", memory("huge", "walrus " * 10, body="x" * 300_000))
    assert all(h.path != "huge.md" for h in lexical_search(memdir, "walrus"))


def test_cached_search_sees_edits_made_since_the_last_query(memdir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    put(memdir, "zoo.md", memory("zoo", "zebra enclosure rota"))
    assert lexical_search(memdir, "zebra", cache_path=cache)[0].path == "zoo.md"
    assert (
        lexical_search(memdir, "okapi", cache_path=cache) == []
    )  # speculative path, nothing changed
    put(memdir, "zoo.md", memory("zoo", "okapi enclosure rota"))
    assert lexical_search(memdir, "okapi", cache_path=cache)[0].path == "zoo.md"
    assert lexical_search(memdir, "zebra", cache_path=cache) == []
