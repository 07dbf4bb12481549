"""The Claude wrapper, driven through the real anthropic SDK against the fake Messages API."""

from __future__ import annotations

import re

import pytest

from teamsync.errors import LLMError
from teamsync.recall import llm
from testing.fake_anthropic import FakeAnthropic, Raw, Status, Timeout, json_answer, text, tool_use
from testing.recall import claude_for, settings_for


def _sent_key(headers: dict[str, str]) -> str:
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def test_selection_sends_a_json_schema_request_and_parses_the_answer() -> None:
    fake = FakeAnthropic([json_answer({"selected_memories": ["a.md", "team/b.md"]})])
    claude = claude_for(fake)
    chosen = claude.select_memories(
        "deploy freeze", "- [project] a.md (2026-01-01T00:00:00Z): x", 3
    )
    assert chosen == ["a.md", "team/b.md"]
    (request,) = fake.requests
    assert request["model"] == "claude-sonnet-5-5"
    assert request["max_tokens"] == 256
    assert request["output_config"]["format"]["type"] == "json_schema"
    assert request["output_config"]["format"]["schema"] == llm.SELECTION_SCHEMA
    assert "up to 3" in request["system"]
    prompt = request["messages"][0]["content"]
    assert prompt.startswith("Query: deploy freeze\n\nAvailable memories:\n- [project] a.md")
    assert _sent_key(fake.headers[0]) == "test-key"


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (text("here you go: a.md"), "not valid JSON"),
        (text("[1, 2]"), "not an object"),
        (json_answer({"selected": ["a.md"]}), "lacks a selected_memories list"),
        (json_answer({"selected_memories": [1]}), "lacks a selected_memories list"),
        (Timeout(), "did not answer within 5 s"),
        (Status(500, "api_error"), "HTTP 500 (api_error)"),
        (Status(529, "overloaded_error"), "HTTP 529 (overloaded_error)"),
        (Status(401, "authentication_error"), "HTTP 401"),
        (Raw("<html>bad gateway</html>", 502), "HTTP 502"),
    ],
)
def test_every_failure_becomes_an_llm_error(step: object, message: str) -> None:
    fake = FakeAnthropic([step])  # type: ignore[list-item]
    with pytest.raises(LLMError, match=re.escape(message)) as caught:
        claude_for(fake).select_memories("q", "- [user] a.md (t): d", 5)
    assert "test-key" not in str(caught.value)


def test_a_fenced_json_answer_is_accepted() -> None:
    fake = FakeAnthropic([text('```json\n{"selected_memories": ["a.md"]}\n```')])
    assert claude_for(fake).select_memories("q", "m", 5) == ["a.md"]


def test_a_truncated_structured_answer_is_an_error() -> None:
    fake = FakeAnthropic([text('{"selected_memories": ["a', stop_reason="max_tokens")])
    with pytest.raises(LLMError, match="cut off"):
        claude_for(fake).structured(system="s", prompt="p", schema={}, max_tokens=5)


def test_send_returns_tool_calls_as_plain_data() -> None:
    fake = FakeAnthropic([tool_use(("read_file", {"path": "a.md"}), preamble="Let me look.")])
    reply = claude_for(fake).send(
        system="s",
        messages=[{"role": "user", "content": "hi"}],
        max_tokens=10,
        tools=[{"name": "read_file", "input_schema": {"type": "object"}}],
    )
    assert reply.stop_reason == "tool_use"
    assert reply.text == "Let me look."
    assert [(c.name, dict(c.input)) for c in reply.tool_calls] == [("read_file", {"path": "a.md"})]
    assert (
        reply.content[1]["type"] == "tool_use" and reply.content[1]["id"] == reply.tool_calls[0].id
    )
    assert (reply.input_tokens, reply.output_tokens) == (100, 20)
    assert fake.requests[0]["tools"][0]["name"] == "read_file"


def test_settings_pick_key_base_url_and_model(tmp_path: object) -> None:
    from pathlib import Path

    memdir = Path(str(tmp_path)) / "m"
    assert llm.from_settings(settings_for(memdir)) is None
    claude = llm.from_settings(
        settings_for(memdir, ANTHROPIC_API_KEY="k", TEAMSYNC_MODEL="claude-opus-5")
    )
    assert claude is not None and claude.model == "claude-opus-5"
    assert llm.resolve_model("claude-haiku-5-5", {"TEAMSYNC_MODEL": "x"}) == "claude-haiku-5-5"
    assert llm.resolve_model(None, {}) == llm.DEFAULT_MODEL


def test_loopback_server_through_base_url(tmp_path: object) -> None:
    from pathlib import Path

    fake = FakeAnthropic([json_answer({"selected_memories": []})])
    with fake.serve() as base_url:
        settings = settings_for(
            Path(str(tmp_path)), ANTHROPIC_API_KEY="k2", ANTHROPIC_BASE_URL=base_url
        )
        claude = llm.from_settings(settings, max_retries=0)
        assert claude is not None
        assert claude.select_memories("q", "m", 5) == []
    assert _sent_key(fake.headers[0]) == "k2"
