"""recall(): Claude selection with fallbacks, content caps, freshness from history."""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from teamsync.errors import ConfigError, UsageError
from teamsync.memdir.freshness import checksum_bytes, record_change
from teamsync.recall.recall import MAX_BYTES, MAX_LINES, build_manifest, cap_content, recall
from testing.fake_anthropic import FakeAnthropic, Raw, Status, Timeout, json_answer, text
from testing.recall import claude_for, memory, put, settings_for

DAY = 86_400.0


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    now = time.time()
    put(
        root,
        "team/project_freeze.md",
        memory("freeze", "Merge freeze before the March release"),
        mtime=now - 100,
    )
    put(
        root,
        "feedback_tests.md",
        memory("tests", "Integration tests hit a real Postgres", "feedback"),
        mtime=now - 50,
    )
    put(
        root,
        "reference_board.md",
        memory("board", "Grafana board for checkout latency", "reference"),
        mtime=now,
    )
    return root


def test_manifest_lists_newest_first_in_claude_code_format(memdir: Path) -> None:
    settings = settings_for(memdir)
    manifest, offered = build_manifest(memdir, settings.state_dir)
    lines = manifest.splitlines()
    assert lines[0].startswith("- [reference] reference_board.md (20")
    assert lines[0].endswith("Z, today): Grafana board for checkout latency")
    assert lines[2].startswith("- [project] team/project_freeze.md (")
    assert offered == {"reference_board.md", "feedback_tests.md", "team/project_freeze.md"}


def test_claude_selection_is_used_and_unknown_paths_are_dropped(memdir: Path) -> None:
    answer = {
        "selected_memories": [
            "team/project_freeze.md",
            "invented.md",
            "../../etc/passwd",
            "team/project_freeze.md",
        ]
    }
    fake = FakeAnthropic([json_answer(answer)])
    result = recall(settings_for(memdir), "can I merge on Friday", claude=claude_for(fake))
    assert result.selector == "claude"
    assert [m.path for m in result.memories] == ["team/project_freeze.md"]
    assert result.memories[0].why.startswith("chosen by claude-sonnet-5-5 from 3 memory headers")
    assert result.notes == ["ignored 2 path(s) Claude named that were not in its list"]
    manifest = fake.requests[0]["messages"][0]["content"]
    assert "team/project_freeze.md" in manifest and "Merge freeze" in manifest


def test_claude_may_choose_nothing(memdir: Path) -> None:
    fake = FakeAnthropic([json_answer({"selected_memories": []})])
    result = recall(settings_for(memdir), "unrelated question", claude=claude_for(fake))
    assert (result.selector, result.memories, result.notes) == ("claude", [], [])


@pytest.mark.parametrize(
    ("step", "reason"),
    [
        (text("I think team/project_freeze.md"), "not valid JSON"),
        (Raw('{"selected_memories": "team/project_freeze.md"}'), "malformed message"),
        (Timeout(), "did not answer"),
        (Status(500), "HTTP 500"),
        (Status(503, "overloaded_error"), "HTTP 503"),
    ],
)
def test_failures_fall_back_to_lexical_and_say_so(memdir: Path, step: object, reason: str) -> None:
    fake = FakeAnthropic([step])  # type: ignore[list-item]
    result = recall(settings_for(memdir), "merge freeze", claude=claude_for(fake), mode="lexical")
    assert result.selector == "lexical"
    assert result.memories[0].path == "team/project_freeze.md"
    assert len(result.notes) == 1
    assert result.notes[0].startswith("Claude recall failed:") and reason in result.notes[0]
    assert result.notes[0].endswith("fell back to offline ranking")


def test_offline_or_no_key_never_calls_claude(memdir: Path) -> None:
    fake = FakeAnthropic([json_answer({"selected_memories": ["feedback_tests.md"]})])
    result = recall(
        settings_for(memdir),
        "postgres tests",
        offline=True,
        claude=claude_for(fake),
        mode="lexical",
    )
    assert result.selector == "lexical" and fake.requests == []
    result = recall(settings_for(memdir), "postgres tests", mode="lexical")
    assert result.selector == "lexical"
    assert result.memories[0].path == "feedback_tests.md"
    assert "postgres" in result.memories[0].why


def test_missing_directory_and_empty_query_are_errors(tmp_path: Path, memdir: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        recall(settings_for(tmp_path / "nowhere"), "x")
    with pytest.raises(UsageError):
        recall(settings_for(memdir), "   ")


def test_content_is_capped_by_lines_and_bytes() -> None:
    long = "".join(f"line {i}\n" for i in range(300))
    capped, note = cap_content(long, "a.md")
    assert capped.count("\n") == MAX_LINES
    assert note is not None and "showing 200 of 300 lines" in note and "read a.md" in note
    wide = "é" * 3000 + "\n" + "x\n"
    capped, note = cap_content(wide, "b.md")
    assert len(capped.encode("utf-8")) <= MAX_BYTES and capped.startswith("é")
    assert note is not None and "of 6,003 bytes" in note
    assert cap_content("short\n", "c.md") == ("short\n", None)


def test_recalled_content_is_capped_with_a_note(memdir: Path) -> None:
    body = "".join(f"walrus fact {i}\n" for i in range(400))
    put(memdir, "big.md", memory("big", "walrus facts", body=body))
    (hit,) = recall(settings_for(memdir), "walrus", limit=1).memories
    assert hit.truncated is not None and len(hit.content.encode()) <= MAX_BYTES
    assert hit.type == "project" and hit.description == "walrus facts"


def test_freshness_note_from_two_days(memdir: Path) -> None:
    now = time.time()
    os.utime(memdir / "feedback_tests.md", (now - 1.5 * DAY, now - 1.5 * DAY))
    (fresh,) = recall(settings_for(memdir), "postgres", limit=1).memories
    assert fresh.age_days == 1 and fresh.freshness is None
    os.utime(memdir / "feedback_tests.md", (now - 9 * DAY, now - 9 * DAY))
    (old,) = recall(settings_for(memdir), "postgres", limit=1).memories
    assert old.age_days == 9
    assert old.freshness is not None and old.freshness.startswith("This memory is 9 days old")


def test_age_comes_from_recorded_history_not_mtime(memdir: Path) -> None:
    settings = settings_for(memdir)
    path = memdir / "team/project_freeze.md"
    record_change(
        settings.state_dir, path, checksum_bytes(path.read_bytes()), time.time() - 30 * DAY
    )
    (hit,) = recall(settings, "merge freeze", limit=1).memories  # the file's mtime is "now"
    assert hit.age_days == 30 and hit.freshness is not None
    path.write_text(path.read_text() + "edited locally\n")  # content no longer matches the record
    (hit,) = recall(settings, "merge freeze", limit=1).memories
    assert hit.age_days == 0


def test_a_symlinked_memory_is_never_read(memdir: Path, tmp_path: Path) -> None:
    outside = put(tmp_path, "private/key.md", memory("walrus", "walrus secrets outside"))
    fake = FakeAnthropic([json_answer({"selected_memories": ["feedback_tests.md"]})])
    os.symlink(outside, memdir / "walrus.md")
    result = recall(settings_for(memdir), "walrus", claude=claude_for(fake))
    assert "walrus.md" not in fake.requests[0]["messages"][0]["content"]
    assert all("walrus secrets" not in m.content for m in result.memories)


@pytest.fixture
def black_hole() -> Iterator[str]:
    """A loopback port whose listen backlog is full: a new TCP connect hangs, as to a dead host."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    for sock in [*fillers, server]:
        sock.close()


def test_an_unreachable_api_falls_back_in_about_a_second(memdir: Path, black_hole: str) -> None:
    import anthropic  # noqa: F401 - import time is not what is measured

    settings = settings_for(memdir, ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=black_hole)
    start = time.monotonic()
    result = recall(settings, "merge freeze", mode="lexical")
    elapsed = time.monotonic() - start
    assert result.selector == "lexical"
    assert result.notes[0].startswith(
        "Claude recall failed: could not connect to the Claude API within 1 s"
    )
    assert result.memories[0].path == "team/project_freeze.md"
    assert elapsed < 3.0, f"fallback took {elapsed:.1f} s"


def test_past_200_memories_the_manifest_offers_the_query_candidates(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    now = time.time()
    for i in range(230):
        put(
            root, f"team/project_{i:03d}.md", memory(f"fact {i}", f"Filler fact {i}"), mtime=now - i
        )
    put(
        root,
        "team/project_old.md",
        memory("okapi", "The okapi migration runbook"),
        mtime=now - 10**6,
    )
    fake = FakeAnthropic([json_answer({"selected_memories": ["team/project_old.md"]})])
    result = recall(settings_for(root), "okapi migration", claude=claude_for(fake))
    manifest = fake.requests[0]["messages"][0]["content"]
    assert "team/project_old.md" in manifest and manifest.count("\n- [") == 200
    assert [m.path for m in result.memories] == ["team/project_old.md"] and result.notes == []
