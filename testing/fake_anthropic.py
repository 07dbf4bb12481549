"""A scripted fake of the Anthropic Messages API, for driving the real SDK in tests.

Use it in-process as an ``httpx2.MockTransport`` handler::

    fake = FakeAnthropic([json_answer({"selected_memories": ["a.md"]})])
    claude = Claude(key="test", http_client=fake.http_client(), max_retries=0)

or as a loopback HTTP server for subprocess tests (``ANTHROPIC_BASE_URL``)::

    with fake.serve() as base_url: ...

Each request consumes the next scripted step: a Messages API response body
(see :func:`text`, :func:`json_answer`, :func:`tool_use`), an :class:`Status`
error, a :class:`Timeout`, a :class:`Raw` body, or a callable that receives
the parsed request and returns one of those. When the script runs out,
``repeat`` (if given) answers, else HTTP 500. Requests are recorded in
``fake.requests`` (parsed JSON). Like the real API, a request whose tool_use
blocks are not all answered by tool_result blocks gets HTTP 400.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

_ids = itertools.count(1)


@dataclass(frozen=True)
class Status:
    """Answer with an API error: HTTP ``code`` and an error ``type``."""

    code: int
    type: str = "api_error"
    message: str = "scripted failure"


@dataclass(frozen=True)
class Timeout:
    """Raise a read timeout (MockTransport only)."""


@dataclass(frozen=True)
class Raw:
    """Answer with this exact body (e.g. not JSON at all)."""

    body: str
    status: int = 200


Step = dict[str, Any] | Status | Timeout | Raw | Callable[[dict[str, Any]], Any]


def message(content: list[dict[str, Any]], stop_reason: str = "end_turn") -> dict[str, Any]:
    """A complete Messages API response body."""
    return {
        "id": f"msg_fake_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def text(body: str, stop_reason: str = "end_turn") -> dict[str, Any]:
    """A reply holding one text block."""
    return message([{"type": "text", "text": body}], stop_reason)


def json_answer(value: Any) -> dict[str, Any]:
    """A structured-output reply: the JSON text of ``value``."""
    return text(json.dumps(value))


def tool_use(*calls: tuple[str, dict[str, Any]], preamble: str | None = None) -> dict[str, Any]:
    """A reply asking for tool calls: ``tool_use(("read_file", {"path": "a.md"}))``."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": preamble}] if preamble else []
    for name, args in calls:
        blocks.append(
            {"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name, "input": args}
        )
    return message(blocks, "tool_use")


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last (user) message."""
    last = request["messages"][-1]
    content = last.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    """The text of one tool_result block."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def _unanswered_tool_use(body: dict[str, Any]) -> str | None:
    messages = body.get("messages") or []
    for i, msg in enumerate(messages):
        if msg.get("role") != "assistant" or not isinstance(msg.get("content"), list):
            continue
        wanted = {b["id"] for b in msg["content"] if b.get("type") == "tool_use"}
        if not wanted:
            continue
        nxt = messages[i + 1] if i + 1 < len(messages) else {}
        answered = (
            {b.get("tool_use_id") for b in tool_results({"messages": [nxt]})} if nxt else set()
        )
        if wanted - answered:
            return f"tool_use ids without tool_result: {sorted(wanted - answered)}"
    return None


class FakeAnthropic:
    """Scripted Messages API; see the module docstring."""

    def __init__(self, script: Sequence[Step] = (), *, repeat: Step | None = None) -> None:
        self.script: list[Step] = list(script)
        self.repeat = repeat
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def _next(self, body: dict[str, Any]) -> Step | None:
        with self._lock:
            self.requests.append(body)
            step = self.script.pop(0) if self.script else self.repeat
        while callable(step):
            step = step(body)
        return step

    def respond(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, str] | Timeout:
        """Compute (status, body) for one request; shared by both transports."""
        if not path.endswith("/v1/messages"):
            return 404, json.dumps(
                {"type": "error", "error": {"type": "not_found_error", "message": path}}
            )
        body = json.loads(raw or b"{}")
        self.headers.append(headers)
        problem = _unanswered_tool_use(body)
        step = self._next(body)
        if problem is not None:
            return 400, json.dumps(
                {"type": "error", "error": {"type": "invalid_request_error", "message": problem}}
            )
        if step is None:
            return 500, json.dumps(
                {
                    "type": "error",
                    "error": {"type": "api_error", "message": "fake script exhausted"},
                }
            )
        if isinstance(step, Timeout):
            return step
        if isinstance(step, Status):
            return step.code, json.dumps(
                {"type": "error", "error": {"type": step.type, "message": step.message}}
            )
        if isinstance(step, Raw):
            return step.status, step.body
        return 200, json.dumps(step)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        """The ``httpx2.MockTransport`` handler."""
        headers = {k.lower(): v for k, v in request.headers.items()}
        outcome = self.respond(request.url.path, headers, request.read())
        if isinstance(outcome, Timeout):
            raise httpx2.ReadTimeout("scripted timeout", request=request)
        status, body = outcome
        return httpx2.Response(
            status, content=body.encode(), headers={"content-type": "application/json"}
        )

    def http_client(self) -> httpx2.Client:
        """An ``httpx2.Client`` whose every request goes to this fake."""
        return httpx2.Client(transport=httpx2.MockTransport(self.handler))

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        """Run a loopback HTTP server; yields its base URL (for ANTHROPIC_BASE_URL)."""
        fake = self

        class _Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                outcome = fake.respond(self.path.split("?")[0], headers, raw)
                status, body = (504, "{}") if isinstance(outcome, Timeout) else outcome
                data = body.encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
