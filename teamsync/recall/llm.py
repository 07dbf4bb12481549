"""The one module that talks to Claude (and the only one importing ``anthropic``, lazily).

Everything else in :mod:`teamsync.recall` sees plain data: :class:`Reply`,
:class:`ToolCall`, dicts parsed from structured (JSON-schema) answers, and
:class:`~teamsync.errors.LLMError` for every failure (timeouts, HTTP errors,
connection errors, malformed answers), so callers can fall back.

Configuration: ``ANTHROPIC_API_KEY`` (required), ``ANTHROPIC_BASE_URL``
(optional, e.g. a proxy or a test server) and ``TEAMSYNC_MODEL`` (default
:data:`DEFAULT_MODEL`), all read from ``Settings.environ``. Tests pass an
``httpx2.Client`` with a ``MockTransport`` as ``http_client``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from teamsync.errors import LLMError

if TYPE_CHECKING:
    import anthropic

    from teamsync.config import Settings

DEFAULT_MODEL = "claude-sonnet-5-5"
"""A current Sonnet. (``claude-sonnet-4-5`` reaches end-of-life on 2026-11-30.)"""
MODEL_ENV = "TEAMSYNC_MODEL"
KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"

SELECTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
    "required": ["selected_memories"],
    "additionalProperties": False,
}

SELECT_SYSTEM = (
    "You are selecting memories that will be useful to a coding assistant as it processes "
    "a user's query. You are given the query and a list of available memory files with their "
    "type, path, last-changed time, age and description. Return the paths of the memories that "
    "will clearly be useful (up to {limit}); return an empty list when none clearly is. Do not "
    "select usage docs for tools already in use, but do select warnings and gotchas about "
    "them. Only return paths exactly as they appear in the list."
)


@dataclass(frozen=True)
class ToolCall:
    """One ``tool_use`` block of a reply."""

    id: str
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True)
class Reply:
    """A model reply as plain data; ``content`` can be sent back as the assistant turn."""

    text: str
    tool_calls: list[ToolCall]
    stop_reason: str | None
    content: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0


def resolve_model(option: str | None, environ: Mapping[str, str]) -> str:
    """The model: ``--model`` option, else ``TEAMSYNC_MODEL``, else :data:`DEFAULT_MODEL`."""
    return option or environ.get(MODEL_ENV) or DEFAULT_MODEL


def api_key(environ: Mapping[str, str]) -> str | None:
    """The API key from the environment, or None (then recall stays offline)."""
    return environ.get(KEY_ENV) or None


def parse_json_object(text: str) -> dict[str, Any]:
    """Parse a structured answer; tolerates a Markdown code fence, nothing else."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[-1].rsplit("```", 1)[0]
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise LLMError(f"Claude's answer was not valid JSON ({exc.msg} at char {exc.pos})") from exc
    if not isinstance(value, dict):
        raise LLMError(f"Claude's answer was JSON but not an object ({type(value).__name__})")
    return value


def _translate(exc: Exception, timeout: float, connect: float | None = None) -> LLMError:
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):
        if connect is not None and "ConnectTimeout" in type(exc.__cause__).__name__:
            return LLMError(
                f"could not connect to the Claude API within {connect:g} s; "
                "check the network or ANTHROPIC_BASE_URL"
            )
        return LLMError(f"Claude did not answer within {timeout:g} s; try again later")
    if isinstance(exc, anthropic.APIStatusError):
        kind = f" ({exc.type})" if exc.type else ""
        return LLMError(f"the Claude API answered HTTP {exc.status_code}{kind}")
    if isinstance(exc, anthropic.APIConnectionError):
        return LLMError("could not reach the Claude API; check the network or ANTHROPIC_BASE_URL")
    return LLMError(f"the Claude API call failed: {type(exc).__name__}")


class Claude:
    """A thin, typed wrapper over the Messages API."""

    def __init__(
        self,
        *,
        key: str,
        model: str = DEFAULT_MODEL,
        base_url: str | None = None,
        http_client: Any = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        connect_timeout: float | None = None,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._key = key
        self._base_url = base_url
        self._http_client = http_client
        self._max_retries = max_retries
        self._sdk: anthropic.Anthropic | None = None

    def _client(self) -> anthropic.Anthropic:
        if self._sdk is None:
            import anthropic

            self._sdk = anthropic.Anthropic(
                api_key=self._key,
                base_url=self._base_url,
                http_client=self._http_client,
                timeout=anthropic.Timeout(self.timeout, connect=self.connect_timeout)
                if self.connect_timeout is not None
                else self.timeout,
                max_retries=self._max_retries,
            )
        return self._sdk

    def send(
        self,
        *,
        system: str,
        messages: Sequence[Mapping[str, Any]],
        max_tokens: int,
        tools: Sequence[Mapping[str, Any]] | None = None,
        schema: Mapping[str, Any] | None = None,
    ) -> Reply:
        """One Messages API call; every SDK error becomes :class:`LLMError`."""
        import anthropic

        extra: dict[str, Any] = {}
        if tools:
            extra["tools"] = list(tools)
        if schema is not None:
            extra["output_config"] = {"format": {"type": "json_schema", "schema": dict(schema)}}
        try:
            message = self._client().messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=system,
                messages=list(messages),  # type: ignore[arg-type]
                **extra,
            )
        except anthropic.AnthropicError as exc:
            raise _translate(exc, self.timeout, self.connect_timeout) from exc
        return _reply(message)

    def structured(
        self, *, system: str, prompt: str, schema: Mapping[str, Any], max_tokens: int
    ) -> dict[str, Any]:
        """Ask for a JSON-schema answer and parse it (LLMError when it is not an object)."""
        reply = self.send(
            system=system,
            messages=[{"role": "user", "content": prompt}],
            max_tokens=max_tokens,
            schema=schema,
        )
        if reply.stop_reason == "max_tokens":
            raise LLMError("Claude's answer was cut off at the token limit")
        return parse_json_object(reply.text)

    def select_memories(self, query: str, manifest: str, limit: int) -> list[str]:
        """Claude Code's selector: up to ``limit`` paths from ``manifest`` (unchecked)."""
        prompt = f"Query: {query}\n\nAvailable memories:\n{manifest}"
        answer = self.structured(
            system=SELECT_SYSTEM.format(limit=limit),
            prompt=prompt,
            schema=SELECTION_SCHEMA,
            max_tokens=256,
        )
        selected = answer.get("selected_memories")
        if not isinstance(selected, list) or not all(isinstance(p, str) for p in selected):
            raise LLMError("Claude's answer lacks a selected_memories list of strings")
        return list(selected)


def _reply(message: Any) -> Reply:
    """Convert an SDK message; the SDK does not validate bodies, so shape errors land here."""
    try:
        return _convert(message)
    except (AttributeError, TypeError, ValueError) as exc:
        raise LLMError("the Claude API returned a malformed message") from exc


def _convert(message: Any) -> Reply:
    texts: list[str] = []
    calls: list[ToolCall] = []
    content: list[dict[str, Any]] = []
    for block in message.content:
        if block.type == "text":
            texts.append(block.text)
            content.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            args = block.input if isinstance(block.input, dict) else {}
            calls.append(ToolCall(block.id, block.name, args))
            content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": args})
    usage = message.usage
    return Reply(
        text="".join(texts),
        tool_calls=calls,
        stop_reason=message.stop_reason,
        content=content,
        input_tokens=int(usage.input_tokens),
        output_tokens=int(usage.output_tokens),
    )


def from_settings(
    settings: Settings,
    *,
    model: str | None = None,
    http_client: Any = None,
    timeout: float = 60.0,
    max_retries: int = 2,
    connect_timeout: float | None = None,
) -> Claude | None:
    """A client configured from ``settings.environ``; None when there is no API key."""
    key = api_key(settings.environ)
    if key is None:
        return None
    return Claude(
        key=key,
        model=resolve_model(model, settings.environ),
        base_url=settings.environ.get(BASE_URL_ENV) or None,
        http_client=http_client,
        timeout=timeout,
        max_retries=max_retries,
        connect_timeout=connect_timeout,
    )
