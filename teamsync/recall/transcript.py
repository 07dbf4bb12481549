"""Read a Claude Code session transcript (JSONL) into plain messages for extraction.

Each line of a transcript is a JSON object; the ones that matter have
``type`` ``user`` or ``assistant``, a ``uuid`` and a ``message`` whose
``content`` is a string or a list of blocks (text, tool_use, tool_result,
thinking). Meta lines (``isMeta``), sidechains (subagents), summaries and
unreadable lines are skipped. Tool activity is kept as short one-line notes so
the model sees what happened without the full output.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teamsync.errors import ConfigError

MAX_TOOL_NOTE = 300
MAX_RENDERED_CHARS = 120_000


@dataclass(frozen=True)
class TranscriptMessage:
    uuid: str
    role: str
    text: str


@dataclass(frozen=True)
class Transcript:
    messages: list[TranscriptMessage]
    skipped_lines: int


def _short(value: Any, limit: int = MAX_TOOL_NOTE) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return f"[used tool {block.get('name', '?')}: {_short(block.get('input', {}))}]"
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
        return f"[tool result: {_short(content)}]"
    return ""


def message_text(content: Any) -> str:
    """The readable text of a message's ``content`` (string or list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (_block_text(b) for b in content) if t)
    return ""


def _parse_line(line: str) -> TranscriptMessage | None:
    record = json.loads(line)
    if not isinstance(record, dict) or record.get("type") not in ("user", "assistant"):
        return None
    if record.get("isMeta") or record.get("isSidechain"):
        return None
    message = record.get("message")
    uuid = record.get("uuid")
    if not isinstance(message, dict) or not isinstance(uuid, str):
        return None
    text = message_text(message.get("content")).strip()
    if not text:
        return None
    return TranscriptMessage(uuid, str(message.get("role") or record["type"]), text)


def parse_transcript(lines: Iterable[str]) -> Transcript:
    """Parse JSONL lines; lines that are not JSON or not messages are skipped (and counted)."""
    messages: list[TranscriptMessage] = []
    skipped = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            parsed = _parse_line(line)
        except (ValueError, TypeError, KeyError):
            skipped += 1
            continue
        if parsed is not None:
            messages.append(parsed)
    return Transcript(messages, skipped)


def read_transcript(path: Path) -> Transcript:
    """Read a transcript file (ConfigError when it cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return parse_transcript(handle)
    except OSError as exc:
        raise ConfigError(
            f"cannot read transcript {path}: {exc.strerror}; pass a .jsonl file"
        ) from exc


def after_cursor(
    messages: Sequence[TranscriptMessage], cursor: str | None
) -> tuple[list[TranscriptMessage], bool]:
    """Messages after the one with uuid ``cursor``; (all, False) when the cursor is not found."""
    if cursor is None:
        return list(messages), True
    for i, msg in enumerate(messages):
        if msg.uuid == cursor:
            return list(messages[i + 1 :]), True
    return list(messages), False


def render(messages: Sequence[TranscriptMessage], limit: int = MAX_RENDERED_CHARS) -> str:
    """The conversation as text for the prompt, keeping the newest part when too long."""
    parts = [f"{m.role.capitalize()}: {m.text}" for m in messages]
    text = "\n\n".join(parts)
    if len(text) <= limit:
        return text
    return "[… earlier messages omitted …]\n\n" + text[-limit:]
