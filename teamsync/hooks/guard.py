"""``teamsync guard``: Claude Code's PreToolUse hook for writes into team memory.

Claude Code sends one JSON object on stdin (``tool_name``, ``tool_input``,
``cwd``, ``transcript_path``…). For ``Write``, ``Edit``, ``MultiEdit`` and
``NotebookEdit`` whose path lands in the team directory (``<memory dir>/team``,
from ``--dir``/``TEAMSYNC_DIR`` or Claude Code's layout for the session's project):

1. the path must reach the team directory plainly: no ``..``, no symlink on the
   way in or below it, and a valid key;
2. the content the file would have *after* the tool runs is computed (Write:
   ``content``; Edit: ``old_string`` → ``new_string`` applied to the current file,
   honouring ``replace_all``; MultiEdit: every edit in order), and the key and the
   *whole* result go through the one write policy,
   :func:`teamsync.security.guard.write_problem`, which sync, ``SafeDir`` writers
   and the server also use. Claude Code itself checks only the new fragment, so a
   secret split across an edit boundary gets past it.

A ``Bash`` call that writes into team memory is judged first by
:mod:`teamsync.hooks.bash` from its text (a fast filter: what it would write is
checked like a Write, a write whose content the text does not show is refused).
The guarantee is the check after: before every Bash call (and any tool the guard
cannot model) it lets through, the guard records a snapshot
(:mod:`teamsync.hooks.verify`), and the PostToolUse hook quarantines whatever
landed in ``team/`` holding a secret. The session's memory directories come
from :mod:`teamsync.hooks.places` (not the payload's ``cwd``); the files kept by
people (:mod:`teamsync.hooks.policy`) are refused to every tool.

Fail closed: an internal error, a payload that cannot be read, or running past
:data:`DEFAULT_BUDGET_S` (Claude Code lets a tool call through when its hook
times out) is a deny whenever the call may touch a memory directory. The
reviewed allowlist (:mod:`teamsync.security.allowlist`) is the only thing that
lets a finding through; inline ``teamsync: allow`` comments do not count, and
the model cannot write the allowlist or run ``teamsync allow``; the allowlist
read is the committed one (``HEAD``).

A refusal is printed as the hook's JSON decision (``permissionDecision:
"deny"``) with a one-line reason naming the rule and line, never the secret, and
never how to get past the gate. Anything else is allowed at once: no output,
exit 0 (an explicit "allow" would skip the user's permission prompt). Only the
standard library is imported until a payload is known to target team memory.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from teamsync.config import Settings
from teamsync.security.guard import MAX_MEMORY_BYTES

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any, TextIO

if TYPE_CHECKING:
    from teamsync.hooks.places import Places

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
READ_ONLY_TOOLS = frozenset(
    {"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "Task", "ExitPlanMode"}
)
"""Tools that write no file; any other tool the hook sees is checked after it ran."""
PATH_FIELDS = ("file_path", "notebook_path")
EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "SessionStart",
    "Stop",
    "post-merge",
    "post-checkout",
)
DEFAULT_BUDGET_S = 8.0
"""Seconds the guard may take before it denies (the shipped hook timeout is 10 s)."""
__all__ = ["MAX_MEMORY_BYTES", "evaluate", "run_guard"]


def normalize_event(name: str) -> str | None:
    """Map ``pre-tool-use``/``PreToolUse``/``pretooluse`` to the canonical event name."""
    folded = name.replace("-", "").replace("_", "").lower()
    for event in EVENTS:
        if event.replace("-", "").lower() == folded:
            return event
    return None


class Target:
    """A tool call aimed at team memory: the key, or why the path itself is refused.

    A plain class with value equality (no dataclass to build on the hook path)."""

    __slots__ = ("key", "problem", "team")

    def __init__(self, team: Path, key: str, problem: str | None = None) -> None:
        self.team, self.key, self.problem = team, key, problem

    def _fields(self) -> tuple[Path, str, str | None]:
        return (self.team, self.key, self.problem)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Target) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Target(team={self.team!r}, key={self.key!r}, problem={self.problem!r})"


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


class _EditUnapplied(ValueError):
    """The edit would not apply (``old_string`` not found): its result is unknown."""


_CURLY = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}
_CURLY_TABLE = str.maketrans(_CURLY)


def _straight(text: str) -> str:
    return text.translate(_CURLY_TABLE)


def _curl(new: str, singles: bool, doubles: bool) -> str:
    """``new`` with straight quotes curled the way Claude Code does when ``old_string``
    matched only after quote normalisation: each kind only when the file's match uses
    it; opening after a space, the start or an opening bracket, else closing."""
    out: list[str] = []
    for i, ch in enumerate(new):
        opening = i == 0 or new[i - 1] in " \t\n\r([{\u2014\u2013"
        if ch == "'" and singles:
            out.append("\u2018" if opening else "\u2019")
        elif ch == '"' and doubles:
            out.append("\u201c" if opening else "\u201d")
        else:
            out.append(ch)
    return "".join(out)


def _variants(new: str, actual: str) -> list[str]:
    singles = "\u2018" in actual or "\u2019" in actual
    doubles = "\u201c" in actual or "\u201d" in actual
    return list(
        dict.fromkeys(
            [
                new,
                _curl(new, singles, False),
                _curl(new, False, doubles),
                _curl(new, singles, doubles),
            ]
        )
    )


def apply_edit(current: str | None, old: Any, new: Any, replace_all: Any) -> list[str]:
    """The file's possible texts after one Edit, as Claude Code applies it.

    Claude Code matches ``old_string`` exactly, else with curly quotes in the file
    and ``old_string`` read as straight ones; it then writes the file's own
    spelling of the match away and curls ``new_string``'s quotes to the file's
    style. Both the plain and the curled result are returned (the guard judges
    every one). An edit that cannot apply raises :class:`_EditUnapplied`.
    """
    if not isinstance(old, str) or not isinstance(new, str):
        raise ValueError("old_string and new_string must be strings")
    if current is None or current == "":
        if old == "":
            return [new]
        raise _EditUnapplied("the text to replace is not in the file")
    if old == "":
        raise _EditUnapplied("an empty text to replace in a file that is not empty")
    every = replace_all is True
    if old in current:
        return [current.replace(old, new) if every else current.replace(old, new, 1)]
    folded, wanted = _straight(current), _straight(old)
    start = folded.find(wanted)
    if start == -1:
        raise _EditUnapplied("the text to replace is not in the file")
    results: list[str] = []
    for replacement in _variants(new, current[start : start + len(old)]):
        text, at = current, start
        while at != -1:  # lengths agree: curly and straight quotes are one character each
            text = text[:at] + replacement + text[at + len(old) :]
            if not every:
                break
            at = _straight(text).find(wanted, at + len(replacement))
        results.append(text)
    return results


def resulting_contents(tool: str, tool_input: Mapping[str, Any], team: Path, key: str) -> list[str]:
    """Every text the file could hold after ``tool`` runs with ``tool_input``.

    The current file is read even for Write, through no-follow opens, so a
    symlink planted at (or above) the key is refused rather than written through.
    """
    current = _current(team, key)
    if tool == "Write":
        content = tool_input.get("content")
        if not isinstance(content, str):
            raise ValueError("Write needs a string `content`")
        return [content]
    if tool == "Edit":
        edits: Any = [tool_input]
    else:
        edits = tool_input.get("edits")
        if not isinstance(edits, list) or not all(isinstance(e, dict) for e in edits):
            raise ValueError("MultiEdit needs a list of `edits`")
    texts: list[str | None] = [current]
    for edit in edits:
        texts = list[str | None](
            dict.fromkeys(
                out
                for text in texts
                for out in apply_edit(
                    text, edit.get("old_string"), edit.get("new_string"), edit.get("replace_all")
                )
            )
        )[:16]
    return [t if t is not None else "" for t in texts]


def committed_allowlist(places: Places) -> frozenset[str]:
    """The reviewed allowlist as committed (the project's ``HEAD``)."""
    from teamsync.security.allowlist import load_committed

    return load_committed(places.project, places.memdir, places.settings.environ)


ALLOWLIST_REASON = (
    "teamsync refused this write: the reviewed allowlist of the team-memory gates "
    "is kept by people, not written by tools."
)


def check_content(target: Target, content: str, places: Places) -> str | None:
    """The deny reason for ``content`` at ``target`` (the one write policy), or None.

    The committed allowlist is read (one ``git show``) only when there is a finding.
    """
    from teamsync.security.guard import write_problem

    problem = write_problem(target.key, content)
    if problem is not None and "likely secret" in problem:
        allowlist = committed_allowlist(places)
        if allowlist:
            problem = write_problem(target.key, content, allowlist=allowlist)
    return None if problem is None else f"teamsync refused this write to team memory: {problem}."


def _verdict(
    tool: str, tool_input: Mapping[str, Any], target: Target, places: Places
) -> str | None:
    """The deny reason, or None to allow."""
    from teamsync.errors import TeamsyncError

    if target.problem is not None:
        from teamsync.security.names import redact_name

        return (
            f"teamsync refused this write to team memory `{redact_name(target.key)}`: "
            f"{target.problem}. Use a plain relative path."
        )
    if tool == "NotebookEdit":
        return check_content(target, "", places) or (
            "teamsync refused this write to team memory: team memory holds only *.md files."
        )
    try:
        contents = resulting_contents(tool, tool_input, target.team, target.key)
    except _EditUnapplied as exc:
        return (
            f"teamsync refused this edit of team memory: {exc}, so what the file would hold "
            "is unknown (failing closed). Read the file, then edit it."
        )
    except TeamsyncError as exc:
        return f"teamsync refused this write to team memory: {str(exc).rstrip('.')}."
    except (ValueError, OSError) as exc:
        return f"teamsync refused this write to team memory: {exc} (failing closed)."
    for content in contents:
        reason = check_content(target, content, places)
        if reason is not None:
            return reason
    return None


def locate(path: str, places: Places) -> Target | None:
    """The team-memory target of absolute ``path`` in any of the call's team directories.

    A path is judged by its real target: besides what :func:`classify` finds, a
    regular file elsewhere that is a hard link to a team file is that team file.
    """
    for team in places.teams:
        target = classify(path, places.cwd, team)
        if target is not None:
            return target
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if st.st_nlink < 2 or not stat.S_ISREG(st.st_mode):
        return None
    from teamsync.hooks.verify import walk

    for team in places.teams:
        try:
            if os.stat(team).st_dev != st.st_dev:
                continue
        except OSError:
            continue
        for key, stamp in walk(str(team)).items():
            if stamp[0] == st.st_ino:
                return Target(team, key, "the path is a hard link to a team memory file")
    return None


_MEMORY_HINTS = ("/memory/", "/memory\\", "\\memory\\", "allowlist.json")


def _may_touch_memory(settings: Settings, raw: str) -> bool:
    """Whether an unreadable payload or a failed evaluation may concern a memory directory.

    Errs towards yes: the team directory's path, any ``memory`` directory, a
    relative path under ``team/``, a payload ``cwd`` inside a memory directory.
    """
    try:
        team = str(_team_dir(settings, None))
    except Exception:  # noqa: BLE001 - fail closed on the generic markers
        team = "/memory/team"
    if team in raw or team.replace("/", "\\/") in raw:
        return True
    if any(hint in raw for hint in _MEMORY_HINTS):
        return True
    try:
        payload = json.loads(raw)
    except ValueError:
        return "team/" in raw or "team\\/" in raw or "memory" in raw
    if not isinstance(payload, dict):
        return "team" in raw or "memory" in raw
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return "team" in raw or "memory" in raw
    fields = tool_input
    texts = [str(fields.get(name, "")) for name in (*PATH_FIELDS, "command")]
    cwd = str(payload.get("cwd") or "")
    return "memory" in cwd or any("team" in t or "memory" in t for t in texts)


def _failed(settings: Settings, raw: str, err: TextIO, problem: str) -> str | None:
    """Deny reason for a payload the guard could not judge that may touch memory, else None."""
    err.write(f"teamsync guard: {problem}\n")
    if _may_touch_memory(settings, raw):
        return (
            f"teamsync guard could not check this call ({problem}); refusing a write that "
            "may target team memory."
        )
    return None


def _tool_path(tool_input: Mapping[str, Any]) -> str | None:
    for name in PATH_FIELDS:
        value = tool_input.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def evaluate(settings: Settings, raw: str, err: TextIO) -> str | None:
    """The deny reason for the PreToolUse payload ``raw``, or None to allow."""
    try:
        payload = json.loads(raw)
    except json.JSONDecodeError as exc:
        return _failed(settings, raw, err, f"the payload is not valid JSON ({exc.msg})")
    except ValueError:
        return _failed(settings, raw, err, "the payload is not valid JSON")
    except RecursionError:
        return _failed(settings, raw, err, "the payload nests JSON too deeply")
    if not isinstance(payload, dict):
        return _failed(settings, raw, err, "the payload is not a JSON object")
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or tool in READ_ONLY_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return _failed(settings, raw, err, f"{tool} without a `tool_input` object")
    from teamsync.hooks.places import resolve

    places = resolve(settings, payload)
    if tool == "Bash":
        from teamsync.hooks.bash import judge_bash

        command = tool_input.get("command")
        if not isinstance(command, str):
            return _failed(settings, raw, err, "Bash without a string `tool_input.command`")
        reason = judge_bash(places, command)
    elif tool in EDIT_TOOLS:
        return _judge_file_tool(tool, tool_input, places, settings, raw, err)
    else:
        reason = None  # a tool the guard cannot model: only the check after it can judge
    if reason is None:
        from teamsync.hooks.verify import take

        take(places, payload)
    return reason


def _judge_file_tool(
    tool: str,
    tool_input: Mapping[str, Any],
    places: Places,
    settings: Settings,
    raw: str,
    err: TextIO,
) -> str | None:
    file_path = _tool_path(tool_input)
    if file_path is None:
        return _failed(settings, raw, err, f"{tool} without a string path in `tool_input`")
    from teamsync.hooks.places import expand
    from teamsync.hooks.policy import guarded_files, guarded_target, refusal

    path = expand(file_path, places.cwd, places.home)
    item = guarded_target(path, guarded_files(places))
    if item is not None:
        return refusal(item)
    target = locate(path, places)
    if target is None:
        return None
    return _verdict(tool, tool_input, target, places)


class GuardTimeout(BaseException):
    """The guard ran past its budget (a BaseException: no ``except Exception`` swallows it)."""


def _budget(settings: Settings) -> float:
    try:
        value = float(settings.environ.get("TEAMSYNC_GUARD_BUDGET", DEFAULT_BUDGET_S))
    except ValueError:
        return DEFAULT_BUDGET_S
    return value if value > 0 else DEFAULT_BUDGET_S


def _on_alarm(signum: int, frame: object) -> None:
    raise GuardTimeout


def run_guard(settings: Settings, stdin: TextIO, out: TextIO, err: TextIO) -> int:
    """Read the payload, answer with a deny decision or nothing; always exit 0."""
    import signal

    raw = ""
    timer = hasattr(signal, "setitimer")
    previous: Any = None
    try:
        if timer:
            try:
                previous = signal.signal(signal.SIGALRM, _on_alarm)
            except ValueError:  # not the main thread (tests call from others): no timer
                timer = False
        if timer:
            signal.setitimer(signal.ITIMER_REAL, _budget(settings))
        try:
            raw = stdin.read()
            reason = evaluate(settings, raw, err)
        finally:
            if timer:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except GuardTimeout:
        problem = f"it ran past its {_budget(settings):g} s budget"
        reason = (
            _failed(settings, raw, err, problem)
            if raw
            else f"teamsync guard could not read the hook payload ({problem}); refusing."
        )
    except Exception as exc:  # noqa: BLE001 - a bug must not let a secret through
        reason = _failed(settings, raw, err, f"internal error ({type(exc).__name__})")
    finally:
        if timer and previous is not None:
            signal.signal(signal.SIGALRM, previous)
    if reason is not None:
        out.write(deny_json(reason) + "\n")
        out.flush()
    return 0
