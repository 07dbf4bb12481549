"""The four tools the extraction model may use, confined to the memory directory.

``list_files``, ``read_file``, ``write_file`` and ``edit_file`` act only
through :class:`~teamsync.security.fs.SafeDir` (validated keys, no symlink is
ever followed). Every write, including the result of an edit, goes through
:func:`~teamsync.security.guard.guard_write`, which scans the *whole* content:
a secret is refused and the model is told which rule fired and on which line,
never the text. ``MEMORY.md`` is off limits (teamsync regenerates it), there
is no delete tool, and new content must be a valid memory (frontmatter with
``name``, a one-line ``description`` and a known ``type``).

With ``dry_run`` nothing is written: writes land in :attr:`MemoryTools.proposed`
and later reads see them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from teamsync.errors import KeyRejected, MemoryFormatError, SecretFound, SecurityError
from teamsync.memdir.format import INDEX_NAME, memory_problems, parse_memory
from teamsync.memdir.headers import scan_headers
from teamsync.memdir.layout import layout_for_write
from teamsync.recall.llm import ToolCall
from teamsync.security.fs import SafeDir
from teamsync.security.guard import guard_write, safe_write
from teamsync.security.keys import validate_key

MAX_READ_CHARS = 50_000
MAX_LISTED = 500

TOOLS: list[dict[str, Any]] = [
    {
        "name": "list_files",
        "description": "List the memory files (path, type, description). Paths are relative "
        "to the memory directory; team/ holds memories shared with the whole team.",
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    {
        "name": "read_file",
        "description": "Read one memory file by its relative path.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
    {
        "name": "write_file",
        "description": "Create or replace one memory file (a .md file with YAML frontmatter: "
        "name, description, type). Relative path, e.g. feedback_testing.md or team/x.md.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
    {
        "name": "edit_file",
        "description": "Replace one exact, unique occurrence of old_string with new_string "
        "in an existing memory file.",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
            },
            "required": ["path", "old_string", "new_string"],
        },
    },
]


class ToolError(Exception):
    """A refused tool call; the message goes back to the model (never secret text)."""


def secret_refusal(path: str, exc: SecretFound) -> str:
    """What the model is told when a write holds a secret: rules and lines, not the text."""
    where = ", ".join(sorted({f"{f.rule} on line {f.line}" for f in exc.findings}))
    return (
        f"Refused: {path} was not written because the content contains what looks like a "
        f"secret ({where}). Memory files are shared with collaborators and must never hold "
        "credentials. Remove the secret entirely (do not restate it) and write the memory "
        "without it, or skip it."
    )


def check_memory(key: str, content: str) -> None:
    """Refuse content that is not a usable memory file (ToolError with the problems)."""
    try:
        problems = memory_problems(parse_memory(content, key))
    except MemoryFormatError as exc:
        raise ToolError(f"Refused: {exc}") from exc
    if problems:
        raise ToolError(f"Refused: {key} is not a valid memory: " + "; ".join(problems))


def memory_key(path: Any) -> str:
    """A validated memory key from the model's ``path`` argument."""
    if not isinstance(path, str) or not path:
        raise ToolError("path must be a non-empty string relative to the memory directory")
    key = path.removeprefix("./")
    try:
        validate_key(key)
    except KeyRejected as exc:
        raise ToolError(f"Refused: {exc.reason}") from exc
    if not key.endswith(".md"):
        raise ToolError("Refused: memory files must end in .md")
    if key.rsplit("/", 1)[-1] == INDEX_NAME:
        raise ToolError("Refused: MEMORY.md is maintained by teamsync; write memory files only")
    return key


class MemoryTools:
    """Executes tool calls for one extraction run."""

    def __init__(self, memdir: Path, *, dry_run: bool = False) -> None:
        self.memdir = memdir
        self.dry_run = dry_run
        self.proposed: dict[str, str] = {}
        self.written: list[str] = []
        self.refused: list[tuple[str, str]] = []

    def run(self, call: ToolCall) -> dict[str, Any]:
        """Execute one call and return its ``tool_result`` block."""
        handlers = {
            "list_files": lambda a: self.list_files(),
            "read_file": lambda a: self.read_file(a.get("path")),
            "write_file": lambda a: self.write_file(a.get("path"), a.get("content")),
            "edit_file": lambda a: self.edit_file(
                a.get("path"), a.get("old_string"), a.get("new_string")
            ),
        }
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id}
        handler = handlers.get(call.name)
        try:
            if handler is None:
                names = ", ".join(t["name"] for t in TOOLS)
                raise ToolError(f"unknown tool {call.name!r}; use one of {names}")
            result["content"] = handler(call.input)
        except ToolError as exc:
            result["content"] = str(exc)
            result["is_error"] = True
        return result

    def list_files(self) -> str:
        headers = {h.path: h for h in scan_headers(self.memdir, MAX_LISTED)}
        lines = [f"- [{h.type or '?'}] {p}: {h.description or ''}" for p, h in headers.items()]
        lines += [f"- [proposed] {p}" for p in self.proposed if p not in headers]
        return "\n".join(lines) if lines else "(no memory files yet)"

    def _current(self, key: str) -> str | None:
        if key in self.proposed:
            return self.proposed[key]
        try:
            with SafeDir(self.memdir) as root:
                return root.read_text(key)
        except FileNotFoundError:
            return None
        except (SecurityError, MemoryFormatError, OSError) as exc:
            raise ToolError(f"cannot read {key}: {exc}") from exc

    def read_file(self, path: Any) -> str:
        key = memory_key(path)
        text = self._current(key)
        if text is None:
            raise ToolError(f"{key} does not exist; call list_files to see the memories")
        return text[:MAX_READ_CHARS]

    def write_file(self, path: Any, content: Any) -> str:
        key = memory_key(path)
        if not isinstance(content, str):
            raise ToolError("content must be a string")
        return self._store(key, content)

    def edit_file(self, path: Any, old: Any, new: Any) -> str:
        key = memory_key(path)
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            raise ToolError("old_string (non-empty) and new_string must be strings")
        text = self._current(key)
        if text is None:
            raise ToolError(f"{key} does not exist; use write_file to create it")
        count = text.count(old)
        if count != 1:
            raise ToolError(f"old_string occurs {count} times in {key}; it must occur exactly once")
        return self._store(key, text.replace(old, new, 1))

    def _store(self, key: str, content: str) -> str:
        # A new memory gets Claude Code's current layout; an edit keeps the file's layout.
        content = layout_for_write(self._current(key), content, time.time(), key)
        check_memory(key, content)
        try:
            if self.dry_run:
                guard_write(key, content)
            else:
                with SafeDir(self.memdir) as root:
                    safe_write(root, key, content)
        except SecretFound as exc:
            message = secret_refusal(key, exc)
            self.refused.append((key, message))
            raise ToolError(message) from exc
        except (SecurityError, MemoryFormatError) as exc:
            self.refused.append((key, str(exc)))
            raise ToolError(f"Refused: {exc}") from exc
        self.proposed[key] = content
        if key not in self.written:
            self.written.append(key)
        return f"{'Proposed' if self.dry_run else 'Wrote'} {key} ({len(content.encode())} bytes)"
