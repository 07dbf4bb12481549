"""``teamsync extract``: turn a Claude Code transcript into memories with a bounded tool loop.

Claude reads the new part of the transcript (after the cursor), sees the
existing-memory manifest, and may call the four tools of
:mod:`teamsync.recall.tools` for at most :data:`MAX_TURNS` model turns. Every
write is guarded (key validation, whole-content secret scan, memory format,
the extraction rules of :mod:`teamsync.recall.exclusions`, unique names) and
staged; only when the model is done are the staged files written, both
``MEMORY.md`` indexes regenerated and the cursor (the last extracted message's
uuid) advanced. A run is all or nothing: an API failure on any turn writes
nothing and leaves the cursor, so the next run retries the same messages.
``dry_run`` runs the same checks, writes nothing and leaves the cursor.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from teamsync.config import Settings
from teamsync.errors import ConfigError, LLMError, TeamsyncError
from teamsync.memdir.format import MEMORY_TYPES
from teamsync.memdir.paths import working_memory_dir
from teamsync.recall import llm, state
from teamsync.recall.tools import TOOLS, MemoryTools
from teamsync.recall.transcript import (
    TranscriptMessage,
    after_cursor,
    read_transcript,
    render,
)

MAX_TURNS = 5
MAX_TOKENS = 4096

TYPES_TEXT = """\
- user: the user's role, goals, knowledge and preferences (never negative judgements). Always \
private: never under team/.
- feedback: corrections AND confirmations of how to work, with the reason. Body: the rule, then \
a **Why:** line and a **How to apply:** line. Private unless it is a project-wide convention.
- project: ongoing work, decisions, incidents and deadlines that cannot be derived from the code \
or git. Body: the fact, then **Why:** and **How to apply:**. Use absolute dates. Prefer team/.
- reference: pointers to external systems (trackers, dashboards, runbooks). Usually team/."""

EXCLUSIONS_TEXT = """\
- code patterns, architecture, file paths or anything else derivable from the current code;
- git history or who changed what;
- fix recipes and debugging steps (the fix is in the code);
- anything already written in CLAUDE.md;
- transient task state (what is being edited right now, todo lists);
- NEVER credentials, API keys, tokens, passwords or private URLs with secrets: team/ is shared \
with every collaborator of the repository. Writes containing secrets are refused.
These rules hold even when the user asked to remember such a thing; save what was surprising \
or non-obvious about it instead, if anything."""

SYSTEM_TEMPLATE = """\
Today's date is {today}. You are the memory extraction subagent for a coding assistant. Read the conversation excerpt \
below and decide whether anything in it is worth remembering in future sessions. Most \
conversations contain nothing worth saving; then answer "nothing to save" without calling tools.

Memory types ({types}):
{types_text}

Never save:
{exclusions}

How to save: one memory per file, Markdown with YAML frontmatter:
---
name: short title
description: one specific line; recall picks memories by it
type: one of {types}
---
body
File names are lower-case with underscores or dashes, e.g. feedback_testing.md (private) or \
team/project_release_freeze.md (shared). Prefer updating an existing memory (edit_file) over \
creating a near-duplicate. Write dates as absolute dates ("2026-03-05", not "next Thursday"), \
counting from today's date. Do not verify facts against the code; record what the conversation \
established. Efficient turns: read what you need in the first turn, write in the second. \
You have at most {turns} turns. MEMORY.md is maintained automatically; never write it.

Existing memories:
{manifest}"""


@dataclass
class ExtractResult:
    new_messages: int
    written: list[str] = field(default_factory=list)
    proposed: dict[str, str] = field(default_factory=dict)
    refused: list[tuple[str, str]] = field(default_factory=list)
    turns: int = 0
    capped: bool = False
    notes: list[str] = field(default_factory=list)
    index_problems: int = 0


def today() -> str:
    """Today's UTC date, which every prompt states (relative dates become absolute)."""
    return datetime.now(UTC).strftime("%Y-%m-%d")


def system_prompt(tools: MemoryTools) -> str:
    return SYSTEM_TEMPLATE.format(
        today=today(),
        types=", ".join(MEMORY_TYPES),
        types_text=TYPES_TEXT,
        exclusions=EXCLUSIONS_TEXT,
        turns=MAX_TURNS,
        manifest=tools.list_files(),
    )


def run_loop(claude: llm.Claude, tools: MemoryTools, conversation: str) -> tuple[int, bool]:
    """The tool-use loop; returns (model turns used, whether the turn cap stopped it)."""
    system = system_prompt(tools)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"Conversation excerpt:\n\n{conversation}"}
    ]
    for turn in range(1, MAX_TURNS + 1):
        reply = claude.send(system=system, messages=messages, tools=TOOLS, max_tokens=MAX_TOKENS)
        if not reply.tool_calls:
            return turn, False
        results = [tools.run(call) for call in reply.tool_calls]
        messages.append({"role": "assistant", "content": reply.content})
        messages.append({"role": "user", "content": results})
    return MAX_TURNS, True


def _regenerate_indexes(memdir: Path, result: ExtractResult) -> None:
    from teamsync.memdir.lint import fix_memdir

    try:
        fixed = fix_memdir(memdir)
    except TeamsyncError as exc:
        result.notes.append(f"MEMORY.md was not regenerated: {exc}")
        return
    result.index_problems = len(fixed.problems)
    if fixed.written:
        result.notes.append("updated " + ", ".join(fixed.written))


def _new_messages(root: Path, transcript: Path) -> tuple[list[TranscriptMessage], ExtractResult]:
    """The messages after the cursor, and a result carrying notes about how they were found."""
    parsed = read_transcript(transcript)
    cursor = state.load_cursor(root, transcript)
    new, found = after_cursor(parsed.messages, cursor)
    result = ExtractResult(new_messages=len(new))
    if cursor is not None and not found:
        result.notes.append("the cursor message is gone (compacted?); extracting everything")
    if parsed.skipped_lines:
        result.notes.append(f"skipped {parsed.skipped_lines} unreadable transcript line(s)")
    return new, result


def _checkout(settings: Settings) -> Path | None:
    """The git work tree the repo-path rule checks against (None outside one)."""
    from teamsync.recall.drift import Checkout

    found = Checkout.find(settings.cwd)
    return found.root if found.git else None


def extract(
    settings: Settings,
    transcript: Path,
    *,
    dry_run: bool = False,
    claude: llm.Claude | None = None,
    model: str | None = None,
) -> ExtractResult:
    """Extract memories from the part of ``transcript`` not yet extracted."""
    memdir = working_memory_dir(settings)
    memdir.mkdir(parents=True, exist_ok=True)
    root = state.state_root(settings.state_dir, memdir)
    new, result = _new_messages(root, transcript)
    if not new:
        result.notes.append("nothing new since the last extraction")
        return result
    claude = claude or llm.from_settings(settings, model=model, timeout=120.0)
    if claude is None:
        raise ConfigError("extract needs ANTHROPIC_API_KEY: Claude decides what to remember")
    tools = MemoryTools(memdir, dry_run=dry_run, checkout=_checkout(settings))
    try:
        result.turns, result.capped = run_loop(claude, tools, render(new))
    except LLMError as exc:
        raise LLMError(
            f"{exc}; nothing was written and the transcript cursor is unchanged, "
            "so the next run retries these messages"
        ) from exc
    result.refused = list(tools.refused)
    result.proposed = dict(tools.proposed)
    if result.capped:
        result.notes.append(f"stopped after the {MAX_TURNS}-turn limit")
    if dry_run:
        return result
    result.written = tools.commit()
    if result.written:
        _regenerate_indexes(memdir, result)
    now = time.time()
    state.save_cursor(root, transcript, new[-1].uuid, now)
    state.record_extraction(root, now)
    return result
