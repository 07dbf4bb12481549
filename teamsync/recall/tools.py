"""The four tools the extraction model may use, confined to the memory directory.

``list_files``, ``read_file``, ``write_file`` and ``edit_file`` act only
through :class:`~teamsync.security.fs.SafeDir` (validated keys, no symlink is
ever followed). Every write, including the result of an edit, goes through
:func:`~teamsync.security.guard.guard_write`, which scans the *whole* content:
a secret is refused and the model is told which rule fired and on which line,
never the text. ``MEMORY.md`` is off limits (teamsync regenerates it), there
is no delete tool, and new content must be a valid memory (frontmatter with
``name``, a one-line ``description`` and a known ``type``).

Before a write is accepted it must also pass the extraction rules
(:mod:`teamsync.recall.exclusions`: no user memory in ``team/``, no code, repo
paths, git history, fix recipes, transient state or duplicates), have a name
that no other memory shares up to case and Unicode normalisation, and not be in
a dot-folder (recall and the indexes never look there). A refusal goes back to
the model with its reason and is reported to the user.

Accepted writes are *staged* in :attr:`MemoryTools.proposed` (later reads see
them) and reach the disk only in :meth:`MemoryTools.commit`, after the model's
last turn: an API failure mid-run leaves nothing written. ``dry_run`` runs
exactly the same checks and never commits, so it proposes what a real run
writes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from teamsync.errors import (
    KeyRejected,
    MemoryFormatError,
    SecretFound,
    SecurityError,
    TeamsyncError,
)
from teamsync.memdir.format import INDEX_NAME, memory_problems, parse_memory
from teamsync.memdir.headers import scan_headers
from teamsync.memdir.layout import layout_for_write
from teamsync.recall.exclusions import check, fold
from teamsync.recall.llm import ToolCall
from teamsync.security.fs import SafeDir
from teamsync.security.guard import guard_write, safe_write
from teamsync.security.keys import validate_key
from teamsync.security.names import redact_name

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


def check_memory(key: str, content: str) -> str | None:
    """Refuse content that is not a usable memory file (ToolError); returns its ``type``."""
    try:
        memory = parse_memory(content, key)
        problems = memory_problems(memory)
    except MemoryFormatError as exc:
        raise ToolError(f"Refused: {exc}") from exc
    if problems:
        raise ToolError(f"Refused: {key} is not a valid memory: " + "; ".join(problems))
    return memory.type


def load_memories(memdir: Path) -> dict[str, str]:
    """Every readable memory (``*.md`` except the indexes), by key; links are never followed."""
    out: dict[str, str] = {}
    if not memdir.is_dir():
        return out
    with SafeDir(memdir) as root:
        for item in root.walk():
            name = item.key.rsplit("/", 1)[-1]
            if item.problem is None and name.endswith(".md") and name != INDEX_NAME:
                try:
                    out[item.key] = root.read_text(item.key)
                except (OSError, TeamsyncError):
                    continue
    return out


def name_clash(key: str, others: Mapping[str, object]) -> str | None:
    """Another key equal to ``key`` up to case and Unicode normalisation (None when unique)."""
    folded = fold(key)
    return next((o for o in others if o != key and fold(o) == folded), None)


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
    if any(seg.startswith(".") for seg in key.split("/")):
        raise ToolError(
            "Refused: names starting with a dot are hidden from recall and the indexes; "
            "use a plain name such as team/project_x.md"
        )
    return key


class MemoryTools:
    """Executes tool calls for one extraction run."""

    def __init__(
        self, memdir: Path, *, dry_run: bool = False, checkout: Path | None = None
    ) -> None:
        self.memdir = memdir
        self.dry_run = dry_run
        self.checkout = checkout
        self.proposed: dict[str, str] = {}
        self.written: list[str] = []
        self.refused: list[tuple[str, str]] = []
        self.existing = load_memories(memdir)

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
            path = call.input.get("path")
            entry = (path if isinstance(path, str) else "?", str(exc))
            if call.name in ("write_file", "edit_file") and entry not in self.refused:
                self.refused.append(entry)  # key and format refusals are reported too
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

    def _refuse(self, key: str, message: str) -> ToolError:
        self.refused.append((key, message))
        return ToolError(message)

    def _store(self, key: str, content: str) -> str:
        # A new memory gets Claude Code's current layout; an edit keeps the file's layout.
        content = layout_for_write(self._current(key), content, time.time(), key)
        kind = check_memory(key, content)
        clash = name_clash(key, {**self.existing, **self.proposed})
        if clash is not None:
            raise self._refuse(
                key,
                f"Refused: {key} differs from the existing {clash} only by case or Unicode "
                f"normalisation (the same file on many disks); write {clash} instead",
            )
        others = {k: v for k, v in {**self.existing, **self.proposed}.items() if k != key}
        refusal = check(key, content, kind, existing=others, checkout=self.checkout)
        if refusal is not None:
            raise self._refuse(
                key, f"Refused ({refusal.kind}): {key} was not saved because {refusal.reason}"
            )
        try:
            guard_write(key, content)
            with SafeDir(self.memdir, create=True) as root:
                root.stat(key)  # the real write's path checks (links, non-files), done now
        except SecretFound as exc:
            raise self._refuse(key, secret_refusal(key, exc)) from exc
        except (SecurityError, MemoryFormatError) as exc:
            raise self._refuse(
                redact_name(key), f"Refused: {exc}"
            ) from exc  # a name may hold the secret
        self.proposed[key] = content
        return f"{'Proposed' if self.dry_run else 'Wrote'} {key} ({len(content.encode())} bytes)"

    def commit(self) -> list[str]:
        """Write every staged memory; all or nothing (pre-images are restored on a failure)."""
        if self.dry_run:
            return []
        done: list[str] = []
        with SafeDir(self.memdir, create=True) as root:
            try:
                for key, content in self.proposed.items():
                    safe_write(root, key, content)
                    done.append(key)
            except BaseException:
                for key in done:
                    if key in self.existing:
                        root.write_text(key, self.existing[key])
                    else:
                        root.delete(key)
                raise
        self.written = done
        return done
