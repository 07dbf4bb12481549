"""Which frontmatter layout teamsync writes: Claude Code's current one for new memories.

A memory teamsync **creates** (through ``extract`` or ``dream``) gets the layout
Claude Code writes today::

    ---
    name: deploy-freeze
    description: No prod deploys after Friday noon
    metadata:
      node_type: memory
      type: project
      modified: 2026-08-01T09:00:00.000Z
    ---

**Editing** keeps a file's layout: a file that had a ``metadata`` block keeps
one (with ``modified`` set to the time of the edit, changed in place when the
line is there); a file with a top-level ``type`` stays as the writer left it.
A conflict copy is the local file's bytes, unchanged, so it keeps its layout too.
Text that does not parse is returned as it is, for the caller's own checks to
refuse.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from teamsync.errors import MemoryFormatError
from teamsync.memdir.format import (
    LAYOUT_METADATA,
    LAYOUT_TOP,
    Memory,
    dump_frontmatter,
    format_modified,
    parse_memory,
)

_MODIFIED_LINE = re.compile(r"^([ \t]+modified:)[^\r\n]*", re.MULTILINE)
_META_OPEN = re.compile(r"^metadata:[ \t]*\r?$", re.MULTILINE)


def _stamp(now: float) -> datetime:
    moment = datetime.fromtimestamp(now, UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _metadata_block(m: Memory, now: float, previous: Memory | None = None) -> str:
    """``m`` re-rendered with ``type``, ``originSessionId`` and ``modified`` under ``metadata``."""
    data: dict[str, Any] = dict(m.frontmatter)
    meta = data.pop("metadata", None)
    meta = dict(meta) if isinstance(meta, dict) else {}
    top_type = data.pop("type", None)
    origin = data.pop("originSessionId", None) or meta.pop("originSessionId", None)
    if origin is None and previous is not None:
        origin = previous.origin_session_id
    data.pop("modified", None)
    block: dict[str, Any] = {"node_type": meta.pop("node_type", "memory")}
    block["type"] = top_type if top_type is not None else meta.pop("type", None)
    meta.pop("type", None)
    meta.pop("modified", None)
    if origin is not None:
        block["originSessionId"] = origin
    block.update(meta)
    block["modified"] = _stamp(now)
    data["metadata"] = block
    return f"---\n{dump_frontmatter(data)}---\n{m.body}"


def _touch(text: str, m: Memory, now: float) -> str:
    """``metadata.modified`` set to ``now``: the one line changed in place when it is there."""
    head = m.head or ""
    stamp = format_modified(_stamp(now))
    if len(_MODIFIED_LINE.findall(head)) == 1 and len(_META_OPEN.findall(head)) == 1:
        new_head = _MODIFIED_LINE.sub(lambda g: f"{g.group(1)} {stamp}", head)
        try:
            if parse_memory(new_head + m.body).modified == _stamp(now):
                return new_head + m.body
        except MemoryFormatError:
            pass
    return _metadata_block(m, now)


def current_layout(text: str, now: float, path: str = "<memory>") -> str:
    """A new memory's text in the layout Claude Code writes today."""
    try:
        memory = parse_memory(text, path)
    except MemoryFormatError:
        return text
    if memory.layout == LAYOUT_METADATA:
        return _touch(text, memory, now)
    if memory.layout == LAYOUT_TOP:
        return _metadata_block(memory, now)
    return text


def layout_for_write(previous: str | None, text: str, now: float, path: str = "<memory>") -> str:
    """What to write for ``text``: the current layout for a new file, else the old file's layout."""
    if previous is None:
        return current_layout(text, now, path)
    try:
        before = parse_memory(previous, path)
        memory = parse_memory(text, path)
    except MemoryFormatError:
        return text
    if before.layout != LAYOUT_METADATA:
        return text
    if memory.layout == LAYOUT_METADATA:
        return _touch(text, memory, now)
    if memory.layout == LAYOUT_TOP:
        return _metadata_block(memory, now, before)
    return text
