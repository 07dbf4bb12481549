"""``teamsync guard``: Claude Code's PreToolUse hook for writes into team memory.

Claude Code sends one JSON object on stdin (``tool_name``, ``tool_input``,
``cwd``, ``transcript_path``…). For ``Write``, ``Edit`` and ``MultiEdit`` whose
``file_path`` lands in the team directory (``<memory dir>/team``, from
``--dir``/``TEAMSYNC_DIR`` or Claude Code's layout for the payload's ``cwd``):

1. the path must reach the team directory plainly: no ``..``, no symlink on the
   way in or below it, and a valid key (:func:`teamsync.security.keys.key_problem`);
2. the content the file would have *after* the tool runs is computed (Write:
   ``content``; Edit: ``old_string`` → ``new_string`` applied to the current file,
   honouring ``replace_all``; MultiEdit: every edit in order), and the *whole*
   result gets the checks of :func:`teamsync.security.guard.guard_write` (``*.md``
   only, size limit, secret scan), without importing yaml. Claude Code itself checks only the new
   fragment, so a secret split across an edit boundary gets past it.

A refusal is printed as the hook's JSON decision (``permissionDecision:
"deny"``) with a reason naming the rule and line, never the secret. Anything
else is allowed at once: no output, exit 0 (an explicit "allow" would skip the
user's permission prompt). A payload that is not JSON is refused when it
mentions the team directory (fail closed) and otherwise let through, with the
error on stderr either way. Only the standard library is imported until a
payload is known to target team memory.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from teamsync.config import Settings

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})
EVENTS = ("PreToolUse", "PostToolUse", "SessionStart", "Stop", "post-merge", "post-checkout")
MAX_MEMORY_BYTES = 250_000
"""Same as :data:`teamsync.memdir.format.MAX_MEMORY_BYTES` (not imported: it loads yaml)."""


def normalize_event(name: str) -> str | None:
    """Map ``pre-tool-use``/``PreToolUse``/``pretooluse`` to the canonical event name."""
    folded = name.replace("-", "").replace("_", "").lower()
    for event in EVENTS:
        if event.replace("-", "").lower() == folded:
            return event
    return None


@dataclass(frozen=True)
class Target:
    """A tool call aimed at team memory: the key, or why the path itself is refused."""

    team: Path
    key: str
    problem: str | None = None


def deny_json(reason: str) -> str:
    """The PreToolUse JSON output that blocks the tool call and tells Claude why."""
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    )


def _team_dir(settings: Settings, cwd: str | None) -> Path:
    from teamsync.memdir.paths import team_dir

    if cwd and os.path.isabs(cwd) and settings.dir is None:
        settings = replace(settings, cwd=Path(cwd))
    return team_dir(settings)


_FOLD_CASE = sys.platform in ("darwin", "win32")  # default file systems ignore case there


def _within(path: str, root: str) -> bool:
    if _FOLD_CASE:
        path, root = path.casefold(), root.casefold()
    return path == root or path.startswith(root.rstrip("/") + "/")


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def classify(file_path: str, cwd: str, team: Path) -> Target | None:
    """``None`` when ``file_path`` does not touch the team directory, else a :class:`Target`."""
    raw = file_path if os.path.isabs(file_path) else os.path.join(cwd, file_path)
    team_s = os.path.abspath(team)
    team_real = _real(team_s)
    lexical = _within(raw, team_s) or _within(raw, team_real)
    normal = os.path.normpath(raw)
    in_normal = _within(normal, team_s) or _within(normal, team_real)
    real = _real(raw)
    in_real = _within(real, team_real)
    if not (lexical or in_normal or in_real):
        return None
    if "\x00" in raw:
        return Target(team, raw, "the path holds a NUL character")
    if lexical:
        root = team_s if _within(raw, team_s) else team_real
        key = raw[len(root.rstrip("/")) + 1 :]
    else:
        return Target(team, normal, "the path reaches team memory only through `..` or a symlink")
    if not in_real:
        return Target(team, key, "the path leaves the team directory (`..` or a symlink)")
    from teamsync.security.keys import key_problem

    problem = key_problem(key) if key else "the team directory itself is not a memory file"
    return Target(team, key, problem)


def _current(team: Path, key: str) -> str | None:
    """The file's current text (None when absent); UnsafePath/KeyRejected propagate."""
    from teamsync.security.fs import SafeDir

    try:
        with SafeDir(team) as d:
            return d.read_bytes(key).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None


def _apply(current: str | None, old: Any, new: Any, replace_all: Any) -> str:
    if not isinstance(old, str) or not isinstance(new, str):
        raise ValueError("old_string and new_string must be strings")
    if current is None or current == "":
        return new
    if old == "" or old not in current:
        return f"{current}\n{new}"  # the tool will fail; scan both anyway
    return current.replace(old, new) if replace_all is True else current.replace(old, new, 1)


def resulting_content(tool: str, tool_input: Mapping[str, Any], team: Path, key: str) -> str:
    """The text the file would hold after ``tool`` runs with ``tool_input``.

    The current file is read even for Write, through no-follow opens, so a
    symlink planted at (or above) the key is refused rather than written through.
    """
    current = _current(team, key)
    if tool == "Write":
        content = tool_input.get("content")
        if not isinstance(content, str):
            raise ValueError("Write needs a string `content`")
        return content
    if tool == "Edit":
        edits: Any = [tool_input]
    else:
        edits = tool_input.get("edits")
        if not isinstance(edits, list) or not all(isinstance(e, dict) for e in edits):
            raise ValueError("MultiEdit needs a list of `edits`")
    text = current
    for edit in edits:
        text = _apply(text, edit.get("old_string"), edit.get("new_string"), edit.get("replace_all"))
    return text if text is not None else ""


def _verdict(tool: str, tool_input: Mapping[str, Any], target: Target) -> str | None:
    """The deny reason, or None to allow."""
    from teamsync.errors import TeamsyncError

    where = f"team memory `{target.key}`"
    if target.problem is not None:
        return (
            f"teamsync refused this write to {where}: {target.problem}. Use a plain relative path."
        )
    try:
        content = resulting_content(tool, tool_input, target.team, target.key)
        problem = _content_problem(target.key, content)
    except TeamsyncError as exc:
        problem = str(exc).rstrip(".")
    except (ValueError, OSError) as exc:
        problem = f"{exc} (failing closed)"
    return None if problem is None else f"teamsync refused this write to {where}: {problem}."


def _content_problem(key: str, content: str) -> str | None:
    """What :func:`teamsync.security.guard.guard_write` checks, without importing yaml."""
    from teamsync.security.secrets import scan_text

    if not key.endswith(".md"):
        return "team memory holds only *.md files (sync would refuse this one)"
    size = len(content.encode("utf-8", "surrogatepass"))
    if size > MAX_MEMORY_BYTES:
        return (
            f"the file would be {size:,} bytes, over the {MAX_MEMORY_BYTES:,}-byte limit; split it"
        )
    findings = scan_text(content, key)
    if not findings:
        return None
    found = ", ".join(sorted({f"{f.rule} (line {f.line})" for f in findings}))
    return (
        f"the file would hold a likely secret: {found}. Team memory is shared with every "
        "collaborator of this repository: remove the secret (say where it is stored instead), "
        "or mark a false positive with a `teamsync: allow` comment on that line"
    )


def _malformed(settings: Settings, raw: str, err: TextIO, problem: str) -> str | None:
    """Deny reason for an unreadable payload that mentions the team directory, else None."""
    err.write(f"teamsync guard: {problem}; expected Claude Code's PreToolUse JSON on stdin\n")
    try:
        team = str(_team_dir(settings, None))
    except Exception:  # noqa: BLE001 - fail closed below on the generic markers
        team = "/memory/team"
    suspicious = team in raw or team.replace("/", "\\/") in raw or "/memory/team/" in raw
    if suspicious:
        return f"teamsync guard could not read the hook payload ({problem}); refusing a write that may target team memory."
    return None


def evaluate(settings: Settings, raw: str, err: TextIO) -> str | None:
    """The deny reason for the PreToolUse payload ``raw``, or None to allow."""
    try:
        payload = json.loads(raw)
    except json.JSONDecodeError as exc:
        return _malformed(settings, raw, err, f"the payload is not valid JSON ({exc.msg})")
    except ValueError:
        return _malformed(settings, raw, err, "the payload is not valid JSON")
    except RecursionError:
        return _malformed(settings, raw, err, "the payload nests JSON too deeply")
    if not isinstance(payload, dict):
        return _malformed(settings, raw, err, "the payload is not a JSON object")
    tool = payload.get("tool_name")
    if tool not in EDIT_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    file_path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(tool_input, dict) or not isinstance(file_path, str) or not file_path:
        return _malformed(settings, raw, err, f"{tool} without a string `tool_input.file_path`")
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    team = _team_dir(settings, cwd)
    target = classify(file_path, cwd or str(settings.cwd), team)
    if target is None:
        return None
    return _verdict(str(tool), tool_input, target)


def run_guard(settings: Settings, stdin: TextIO, out: TextIO, err: TextIO) -> int:
    """Read the payload, answer with a deny decision or nothing; always exit 0."""
    raw = stdin.read()
    try:
        reason = evaluate(settings, raw, err)
    except Exception as exc:  # noqa: BLE001 - a bug must not let a secret through
        reason = _malformed(settings, raw, err, f"internal error ({type(exc).__name__})")
    if reason is not None:
        out.write(deny_json(reason) + "\n")
        out.flush()
    return 0
