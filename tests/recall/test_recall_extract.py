"""extract(): transcript parsing, the guarded tool loop, the turn cap, the cursor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from teamsync.errors import ConfigError, LLMError
from teamsync.recall import state
from teamsync.recall.extract import MAX_TURNS, extract
from teamsync.recall.transcript import parse_transcript
from testing.fake_anthropic import FakeAnthropic, Status, result_text, text, tool_results, tool_use
from testing.memdir import assert_current_layout
from testing.recall import claude_for, memory, put, settings_for, transcript_line, write_transcript

NEW_MEMORY = memory(
    "release freeze",
    "No merges to main from 2026-03-05 to 2026-03-09 (mobile branch cut)",
    "project",
    "No merges.\n\n**Why:** branch cut.\n**How to apply:** hold PRs.\n",
)


def fake_token() -> str:
    return "gh" + "p_" + "Zq8rT2vLm9XwB4nK7pS1dF6gH3jY0uEcA5iO"


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    put(
        root,
        "feedback_tests.md",
        memory("tests", "Integration tests hit a real Postgres", "feedback"),
    )
    return root


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    return write_transcript(
        tmp_path / "session.jsonl",
        [
            ("u1", "user", "We freeze merges from March 5 to March 9 for the mobile cut."),
            (
                "a1",
                "assistant",
                [
                    {"type": "text", "text": "Noted."},
                    {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}},
                ],
            ),
            ("u2", "user", [{"type": "tool_result", "tool_use_id": "t", "content": "a b c"}]),
            ("a2", "assistant", "Anything else?"),
        ],
    )


def _results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return tool_results(request)


def test_transcript_parsing_keeps_conversation_and_skips_the_rest() -> None:
    lines = [
        transcript_line("m1", "user", "hello"),
        transcript_line("m2", "user", "<caveat>", isMeta=True),
        transcript_line("m3", "assistant", "side", isSidechain=True),
        json.dumps({"type": "summary", "summary": "s", "leafUuid": "m1"}),
        "{not json",
        transcript_line(
            "m4",
            "assistant",
            [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "tool_use", "id": "x", "name": "Read", "input": {"file_path": "a.py"}},
            ],
        ),
        "",
    ]
    parsed = parse_transcript(lines)
    assert [(m.uuid, m.role) for m in parsed.messages] == [("m1", "user"), ("m4", "assistant")]
    assert parsed.messages[1].text == '[used tool Read: {"file_path": "a.py"}]'
    assert parsed.skipped_lines == 1


def test_tool_loop_writes_a_memory_and_regenerates_the_index(
    memdir: Path, transcript: Path
) -> None:
    def second(request: dict[str, Any]) -> dict[str, Any]:
        (listing,) = _results(request)
        assert "feedback_tests.md: Integration tests hit a real Postgres" in result_text(listing)
        return tool_use(("write_file", {"path": "team/project_freeze.md", "content": NEW_MEMORY}))

    fake = FakeAnthropic([tool_use(("list_files", {})), second, text("Saved one memory.")])
    settings = settings_for(memdir)
    result = extract(settings, transcript, claude=claude_for(fake))
    assert result.written == ["team/project_freeze.md"] and result.turns == 3 and not result.capped
    # written in the layout Claude Code writes today (metadata block, modified = now)
    assert_current_layout((memdir / "team/project_freeze.md").read_text(), NEW_MEMORY)
    assert "(project_freeze.md)" in (memdir / "team/MEMORY.md").read_text()
    assert result.index_problems == 0
    first = fake.requests[0]
    for needle in (
        "user:",
        "feedback:",
        "project:",
        "reference:",
        "NEVER credentials",
        "CLAUDE.md",
        "- [feedback] feedback_tests.md: Integration tests hit a real Postgres",
    ):
        assert needle in first["system"]
    assert {t["name"] for t in first["tools"]} == {
        "list_files",
        "read_file",
        "write_file",
        "edit_file",
    }
    assert "We freeze merges from March 5" in first["messages"][0]["content"]
    assert "[used tool Bash" in first["messages"][0]["content"]
    assert "Wrote team/project_freeze.md" in result_text(_results(fake.requests[2])[0])
    root = state.state_root(settings.state_dir, memdir)
    assert state.load_cursor(root, transcript) == "a2"
    assert state.extractions_since(root, 0) == 1


def test_a_secret_write_is_refused_and_the_model_is_told_why(
    memdir: Path, transcript: Path
) -> None:
    secret = fake_token()
    leaky = NEW_MEMORY + f"Deploy token: {secret}\n"

    def after_refusal(request: dict[str, Any]) -> dict[str, Any]:
        (result,) = _results(request)
        message = result_text(result)
        assert result["is_error"] is True
        assert "github-pat on line" in message and "Remove the secret" in message
        assert secret not in message
        return tool_use(("write_file", {"path": "team/project_freeze.md", "content": NEW_MEMORY}))

    fake = FakeAnthropic(
        [
            tool_use(("write_file", {"path": "team/project_freeze.md", "content": leaky})),
            after_refusal,
            text("done"),
        ]
    )
    result = extract(settings_for(memdir), transcript, claude=claude_for(fake))
    assert result.written == ["team/project_freeze.md"]
    assert [path for path, _ in result.refused] == ["team/project_freeze.md"]
    assert all(secret not in reason for _, reason in result.refused)
    assert secret not in (memdir / "team/project_freeze.md").read_text()


def test_the_loop_stops_after_five_turns(memdir: Path, transcript: Path) -> None:
    fake = FakeAnthropic(repeat=lambda req: tool_use(("read_file", {"path": "feedback_tests.md"})))
    result = extract(settings_for(memdir), transcript, claude=claude_for(fake))
    assert len(fake.requests) == MAX_TURNS == 5
    assert result.capped and result.turns == 5
    assert "stopped after the 5-turn limit" in result.notes


def test_the_cursor_makes_a_second_run_extract_only_new_messages(
    memdir: Path, transcript: Path
) -> None:
    settings = settings_for(memdir)
    fake = FakeAnthropic([text("nothing to save"), text("nothing to save")])
    first = extract(settings, transcript, claude=claude_for(fake))
    assert first.new_messages == 4 and len(fake.requests) == 1
    again = extract(settings, transcript, claude=claude_for(fake))
    assert again.new_messages == 0 and "nothing new since the last extraction" in again.notes
    assert len(fake.requests) == 1  # no model call at all
    write_transcript(
        transcript,
        [("u3", "user", "Also: the staging DB resets nightly."), ("a3", "assistant", "OK.")],
        append=True,
    )
    third = extract(settings, transcript, claude=claude_for(fake))
    prompt = fake.requests[1]["messages"][0]["content"]
    assert third.new_messages == 2
    assert "staging DB resets nightly" in prompt and "We freeze merges" not in prompt
    assert state.load_cursor(state.state_root(settings.state_dir, memdir), transcript) == "a3"


def test_a_lost_cursor_reads_the_whole_transcript(memdir: Path, transcript: Path) -> None:
    settings = settings_for(memdir)
    state.save_cursor(
        state.state_root(settings.state_dir, memdir), transcript, "compacted-away", 0.0
    )
    fake = FakeAnthropic([text("nothing to save")])
    result = extract(settings, transcript, claude=claude_for(fake))
    assert result.new_messages == 4
    assert any("cursor message is gone" in note for note in result.notes)


def test_dry_run_writes_nothing_and_keeps_the_cursor(memdir: Path, transcript: Path) -> None:
    def reread(request: dict[str, Any]) -> dict[str, Any]:
        assert "Proposed team/project_freeze.md" in result_text(_results(request)[0])
        return tool_use(
            (
                "edit_file",
                {
                    "path": "team/project_freeze.md",
                    "old_string": "hold PRs",
                    "new_string": "hold all PRs",
                },
            )
        )

    fake = FakeAnthropic(
        [
            tool_use(("write_file", {"path": "team/project_freeze.md", "content": NEW_MEMORY})),
            reread,
            text("done"),
        ]
    )
    settings = settings_for(memdir)
    result = extract(settings, transcript, dry_run=True, claude=claude_for(fake))
    assert "hold all PRs" in result.proposed["team/project_freeze.md"]
    assert not (memdir / "team").exists() and not (memdir / "MEMORY.md").exists()
    assert state.load_cursor(state.state_root(settings.state_dir, memdir), transcript) is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (("write_file", {"path": "../escape.md", "content": NEW_MEMORY}), "Refused"),
        (("write_file", {"path": "/etc/evil.md", "content": NEW_MEMORY}), "Refused"),
        (
            ("write_file", {"path": "team/MEMORY.md", "content": "- [x](y.md)"}),
            "MEMORY.md is maintained",
        ),
        (("write_file", {"path": "notes.txt", "content": NEW_MEMORY}), "must end in .md"),
        (("write_file", {"path": "bad.md", "content": "no frontmatter"}), "not a valid memory"),
        (
            ("write_file", {"path": "bad.md", "content": memory("n", "d", "opinion")}),
            "unknown type",
        ),
        (
            ("edit_file", {"path": "feedback_tests.md", "old_string": "-", "new_string": "+"}),
            "occurs",
        ),
        (
            ("edit_file", {"path": "absent.md", "old_string": "a", "new_string": "b"}),
            "does not exist",
        ),
        (("read_file", {"path": "absent.md"}), "does not exist"),
        (("delete_file", {"path": "feedback_tests.md"}), "unknown tool"),
    ],
)
def test_refused_tool_calls_tell_the_model(
    memdir: Path, transcript: Path, tmp_path: Path, call: tuple[str, dict[str, Any]], message: str
) -> None:
    fake = FakeAnthropic([tool_use(call), text("ok")])
    result = extract(settings_for(memdir), transcript, claude=claude_for(fake))
    (answer,) = _results(fake.requests[1])
    assert answer.get("is_error") is True and message in result_text(answer)
    assert result.written == []
    assert not (tmp_path / "escape.md").exists()
    assert (memdir / "feedback_tests.md").exists()


def test_api_errors_propagate_and_leave_the_cursor(memdir: Path, transcript: Path) -> None:
    settings = settings_for(memdir)
    with pytest.raises(LLMError, match="HTTP 500"):
        extract(settings, transcript, claude=claude_for(FakeAnthropic([Status(500)])))
    assert state.load_cursor(state.state_root(settings.state_dir, memdir), transcript) is None
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        extract(settings, transcript)


def test_a_secret_in_a_proposed_file_name_is_refused_and_never_repeated(
    memdir: Path, transcript: Path
) -> None:
    from teamsync.security.names import printable

    secret = fake_token()

    def after_refusal(request: dict[str, Any]) -> dict[str, Any]:
        (result,) = _results(request)
        message = result_text(result)
        assert result["is_error"] is True and "github-pat" in message
        assert secret not in message
        return text("done")

    fake = FakeAnthropic(
        [
            tool_use(("write_file", {"path": f"team/{secret}.md", "content": NEW_MEMORY})),
            after_refusal,
        ]
    )
    result = extract(settings_for(memdir), transcript, claude=claude_for(fake))
    assert result.written == []
    assert [path for path, _ in result.refused] == ["team/<github-pat>.md"]
    assert not (memdir / "team" / f"{secret}.md").exists()
    assert secret not in printable(f"team/{secret}.md")
