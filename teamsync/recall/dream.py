"""``teamsync dream``: consolidate memories (merge duplicates, resolve contradictions).

Gates, cheapest first (skipped with ``force``): at least :data:`MIN_HOURS`
since the last consolidation and at least :data:`MIN_EXTRACTIONS` extractions
since then. Then the PID lock (:mod:`teamsync.recall.lock`). Claude answers a
structured plan ``{"summary", "writes": [{path, content, reason}],
"deletions": [{path, reason}]}``, which is validated as a whole before
anything is touched; the rewrite is refused when it would

* change more than its cap, :data:`MAX_CHANGE` (25%) of the memories (at
  least :data:`MIN_CAP`), counting writes as well as deletions,
* remove a memory without a recorded reason, or one that does not exist,
* move a memory across the private/``team/`` boundary: a new file whose
  content copies a memory on the other side, or a deletion "merged into" a
  file on the other side,
* delete a memory "merged into" a file that does not exist after the plan, or
  that does not hold the merged memory's content (its words),
* write anything that is not a valid memory, touches ``MEMORY.md`` or a
  dot-folder, puts a ``user`` memory in ``team/``, has a name that differs
  from another memory's only by case or Unicode normalisation, or holds a
  secret (the guard's whole-content scan).

Pre-images of every touched file (and both indexes) are copied to
``dream-backups/<stamp>/`` in the state folder first, with the plan's reasons
in ``plan.json``; then the writes go through the guard, deletions through
:class:`~teamsync.security.fs.SafeDir`, and the indexes are regenerated and
linted. A failure part-way restores every pre-image (all or nothing).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from teamsync.config import Settings
from teamsync.errors import ConfigError, LLMError, PlanRefused, SecretFound
from teamsync.memdir.format import INDEX_NAME, MEMORY_TYPES
from teamsync.memdir.paths import working_memory_dir
from teamsync.recall import llm, lock, state
from teamsync.recall.exclusions import containment
from teamsync.recall.extract import today
from teamsync.recall.tools import ToolError, check_memory, load_memories, memory_key, name_clash

MIN_HOURS = 24
MIN_EXTRACTIONS = 5
MAX_CHANGE = 0.25
MIN_CAP = 2
"""A merge of two memories (one write, one deletion) is always within the cap."""
MERGED_HOLDS = 0.5
"""A "merged into" target must hold at least this share of the merged memory's words."""
COPY_ACROSS = 0.6
"""A new file holding this share of a memory's words on the other side of team/ is a move."""
_MERGED_INTO = re.compile(r"merged into\s+[`'\"]?([^\s`'\",;]+\.md)", re.I)
MAX_PROMPT_CHARS = 300_000
MAX_TOKENS = 16_000

_ENTRY = {"path": {"type": "string"}, "reason": {"type": "string"}}
PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "writes": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {**_ENTRY, "content": {"type": "string"}},
                "required": ["path", "content", "reason"],
                "additionalProperties": False,
            },
        },
        "deletions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": _ENTRY,
                "required": ["path", "reason"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["summary", "writes", "deletions"],
    "additionalProperties": False,
}

SYSTEM = f"""\
Today's date is {{today}}. You consolidate a coding assistant's memory directory. Each memory is a Markdown file with \
YAML frontmatter (name, description, type: {", ".join(MEMORY_TYPES)}). Paths under team/ are \
shared with the whole team; never move a memory between team/ and the private part.
1. Orient: read every memory below.
2. Consolidate: merge memories that say the same thing into one file (write the merged file, \
delete the others); when two contradict, keep the newer fact and delete or fix the older; turn \
relative dates into absolute ones, counting from today's date.
3. Prune: delete memories that are obsolete or derivable from code.
Be conservative: an empty plan is fine. Every deletion needs a specific reason (e.g. "merged \
into team/x.md", naming a file that exists or that the plan writes, on the same side of team/, \
and that holds the merged content). Never change (write or delete) more than a quarter of the \
memories. Written content must be a \
complete memory file with frontmatter. Never include credentials. Do not touch MEMORY.md.
Answer with the JSON plan only."""


@dataclass(frozen=True)
class Plan:
    summary: str
    writes: dict[str, tuple[str, str]]
    """path -> (content, reason)"""
    deletions: dict[str, str]
    """path -> reason"""


@dataclass
class DreamResult:
    ran: bool
    skipped: str | None = None
    plan: Plan | None = None
    backup: Path | None = None
    problems: list[str] = field(default_factory=list)


def gate(root: Path, now: float) -> str | None:
    """Why a consolidation should not run yet (None when it should)."""
    last = state.last_dream(root)
    if last is not None and now - last < MIN_HOURS * 3600:
        return f"the last consolidation was {(now - last) / 3600:.1f} h ago (needs {MIN_HOURS} h)"
    count = state.extractions_since(root, last or 0.0)
    if count < MIN_EXTRACTIONS:
        return f"{count} extraction(s) since the last consolidation (needs {MIN_EXTRACTIONS})"
    return None


def render_prompt(memories: Mapping[str, str]) -> str:
    parts, size = [], 0
    for key in sorted(memories):
        block = f"=== {key} ===\n{memories[key].rstrip()}\n"
        if size + len(block) > MAX_PROMPT_CHARS:
            parts.append("[… further memories omitted: do not change files not shown …]\n")
            break
        parts.append(block)
        size += len(block)
    return f"{len(memories)} memories:\n\n" + "\n".join(parts)


def _reason(entry: Mapping[str, Any], what: str) -> str:
    reason = entry.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise PlanRefused(f"refused: the plan would {what} without a recorded reason")
    return reason.strip()


def _side(key: str) -> str:
    return "team/" if key.startswith("team/") else "the private part"


def _writes(raw: Any, existing: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    writes: dict[str, tuple[str, str]] = {}
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise LLMError("the plan's writes are malformed")
        try:
            key = memory_key(entry.get("path"))
            kind = check_memory(key, entry["content"])
        except ToolError as exc:
            raise PlanRefused(f"refused: {exc}") from exc
        if kind == "user" and key.startswith("team/"):
            raise PlanRefused(f"refused: the plan writes a user memory into team/ ({key})")
        clash = name_clash(key, {**existing, **writes})
        if clash is not None:
            raise PlanRefused(
                f"refused: the plan writes {key}, which differs from {clash} only by case or "
                "Unicode normalisation"
            )
        writes[key] = (entry["content"], _reason(entry, f"rewrite {key}"))
    return writes


def _check_boundary(writes: Mapping[str, tuple[str, str]], existing: Mapping[str, str]) -> None:
    """A new file may not copy a memory that lives on the other side of ``team/``."""
    for key, (content, _) in writes.items():
        if key in existing:
            continue
        for other, text in existing.items():
            if _side(other) != _side(key) and containment(text, content) >= COPY_ACROSS:
                raise PlanRefused(
                    f"refused: the plan would move {other} across the private/team boundary "
                    f"(new file {key} in {_side(key)}); dream never does that"
                )


def _check_merges(
    deletions: Mapping[str, str],
    writes: Mapping[str, tuple[str, str]],
    existing: Mapping[str, str],
) -> None:
    """Every "merged into" target exists after the plan, is on the same side and holds the content."""
    for key, reason in deletions.items():
        match = _MERGED_INTO.search(reason)
        if match is None:
            continue
        target = match.group(1).removeprefix("./")
        after = writes[target][0] if target in writes else existing.get(target)
        if after is None or target in deletions:
            raise PlanRefused(
                f"refused: {key} is deleted as merged into {target}, which does not exist "
                "after the plan"
            )
        if _side(target) != _side(key):
            raise PlanRefused(
                f"refused: {key} would be merged into {target}, across the private/team boundary"
            )
        held = containment(existing[key], after)
        if held < MERGED_HOLDS:
            raise PlanRefused(
                f"refused: {key} is deleted as merged into {target}, but {target} holds only "
                f"{held:.0%} of its words"
            )


def cap(count: int) -> int:
    """How many files (writes plus deletions) one consolidation may change."""
    return max(MIN_CAP, int(MAX_CHANGE * count))


def validate_plan(answer: Mapping[str, Any], existing: Mapping[str, str]) -> Plan:
    """Check a plan against every guard rail; raises PlanRefused (or LLMError when malformed)."""
    from teamsync.security.guard import guard_write

    raw_writes, raw_deletions = answer.get("writes"), answer.get("deletions")
    if not isinstance(raw_writes, list) or not isinstance(raw_deletions, list):
        raise LLMError("the plan lacks writes/deletions lists")
    writes = _writes(raw_writes, existing)
    deletions: dict[str, str] = {}
    for entry in raw_deletions:
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str) or path not in existing:
            raise PlanRefused(f"refused: the plan deletes {path!r}, which is not a memory")
        if path in writes:
            raise PlanRefused(f"refused: the plan both rewrites and deletes {path}")
        deletions[path] = _reason(entry, f"remove {path}")
    changes, allowed = len(writes) + len(deletions), cap(len(existing))
    if changes > allowed:
        raise PlanRefused(
            f"refused: the plan would change {changes} of {len(existing)} memories "
            f"({len(writes)} write(s), {len(deletions)} deletion(s)), more than the cap of "
            f"{allowed} ({MAX_CHANGE:.0%}, at least {MIN_CAP}); nothing was changed"
        )
    _check_boundary(writes, existing)
    _check_merges(deletions, writes, existing)
    for key, (content, _) in writes.items():
        try:
            guard_write(key, content)
        except SecretFound as exc:
            rules = ", ".join(sorted({f.rule for f in exc.findings}))
            raise PlanRefused(
                f"refused: the rewrite of {key} holds a likely secret ({rules})"
            ) from exc
    summary = answer.get("summary")
    plan = Plan(summary if isinstance(summary, str) else "", writes, deletions)
    _refuse_secret_prose(plan)
    return plan


def _refuse_secret_prose(plan: Plan) -> None:
    """The summary and reasons are printed, emitted as JSON and kept in ``plan.json``: scan them."""
    from teamsync.security.secrets import scan_text

    prose = {"the summary": plan.summary}
    prose.update({f"the reason for {k}": r for k, (_, r) in plan.writes.items()})
    prose.update({f"the reason for deleting {k}": r for k, r in plan.deletions.items()})
    for what, text in prose.items():
        findings = scan_text(text, "plan")
        if findings:
            rules = ", ".join(sorted({f.rule for f in findings}))
            raise PlanRefused(f"refused: {what} holds a likely secret ({rules})")


def backup(memdir: Path, memories: Mapping[str, str], plan: Plan, folder: Path) -> Path:
    """Copy the pre-image of every file the plan touches, both indexes and the plan itself."""
    folder.mkdir(parents=True, mode=0o700)
    touched = [k for k in [*plan.writes, *plan.deletions] if k in memories]
    for key in touched:
        target = folder / key
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(memories[key], encoding="utf-8")
    for index in (INDEX_NAME, f"team/{INDEX_NAME}"):
        source = memdir / index
        if source.is_file() and not source.is_symlink():
            (folder / index).parent.mkdir(parents=True, exist_ok=True)
            (folder / index).write_bytes(source.read_bytes())
    record = {
        "summary": plan.summary,
        "writes": {k: reason for k, (_, reason) in plan.writes.items()},
        "deletions": plan.deletions,
        "existed_before": touched,
    }
    (folder / "plan.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
    return folder


def apply_plan(memdir: Path, plan: Plan, before: Mapping[str, str]) -> list[str]:
    """Write, delete, regenerate both indexes; returns the lint problems left.

    All or nothing: when a write or deletion fails, every file already touched
    gets its pre-image back (``before``) and the error propagates. New memories
    get Claude Code's current layout; rewrites keep the file's layout.
    """
    from teamsync.memdir.layout import layout_for_write
    from teamsync.memdir.lint import fix_memdir
    from teamsync.security.fs import SafeDir
    from teamsync.security.guard import safe_write

    touched: list[str] = []
    with SafeDir(memdir) as root:
        try:
            for key, (content, _) in plan.writes.items():
                touched.append(key)
                safe_write(root, key, layout_for_write(before.get(key), content, time.time(), key))
            for key in plan.deletions:
                touched.append(key)
                root.delete(key)
        except BaseException:
            for key in touched:
                if key in before:
                    root.write_text(key, before[key])
                else:
                    root.delete(key)
            fix_memdir(memdir)
            raise
    fixed = fix_memdir(memdir)
    return [f"{p.path}: {p.message}" for p in fixed.problems]


def dream(
    settings: Settings,
    *,
    force: bool = False,
    dry_run: bool = False,
    claude: llm.Claude | None = None,
    model: str | None = None,
) -> DreamResult:
    """Run one gated, locked, guarded consolidation."""
    memdir = working_memory_dir(settings)
    if not memdir.is_dir():
        raise ConfigError(
            f"memory directory {memdir} does not exist; pass --dir or set TEAMSYNC_DIR"
        )
    root = state.state_root(settings.state_dir, memdir)
    now = time.time()
    reason = None if force else gate(root, now)
    if reason is not None:
        return DreamResult(ran=False, skipped=reason + "; use --force to run anyway")
    claude = claude or llm.from_settings(settings, model=model, timeout=300.0)
    if claude is None:
        raise ConfigError("dream needs ANTHROPIC_API_KEY: Claude proposes the consolidation")
    with lock.held(root / "dream.lock"):
        memories = load_memories(memdir)
        if not memories:
            return DreamResult(ran=False, skipped="there are no memories to consolidate")
        answer = claude.structured(
            system=SYSTEM.format(today=today()),
            prompt=render_prompt(memories),
            schema=PLAN_SCHEMA,
            max_tokens=MAX_TOKENS,
        )
        plan = validate_plan(answer, memories)
        if dry_run:
            return DreamResult(ran=False, skipped="dry run: nothing changed", plan=plan)
        folder = None
        if plan.writes or plan.deletions:
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now)) + f"-{os.getpid()}"
            folder = backup(memdir, memories, plan, root / "dream-backups" / stamp)
            problems = apply_plan(memdir, plan, memories)
        state.set_last_dream(root, now)
    return DreamResult(ran=True, plan=plan, backup=folder, problems=problems if folder else [])
