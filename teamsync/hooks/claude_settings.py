"""Merge teamsync's Claude Code hooks into a project's ``.claude/settings.json``.

The entries are the package resource ``claude-code-settings.json`` (shipped
verbatim as ``hooks/claude-code/settings.json``). Merging never clobbers:
every key, event and matcher group already in the file stays as it was, and a
teamsync hook is only added where an identical one (same event, matcher and
command) is missing, so a second run changes nothing. When the file changes, the
previous version is kept as ``settings.json.bak-<UTC timestamp>``. Uninstall
removes exactly the commands teamsync ships (and matcher groups it leaves empty).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from teamsync._files import backup_beside, write_atomic
from teamsync.errors import SettingsFileError
from teamsync.hooks.install import resource_text

SETTINGS_RESOURCE = "claude-code-settings.json"


def _sh_quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def hook_entry() -> str:
    """The absolute path of :mod:`teamsync._hook`, the file a hook command runs."""
    import teamsync

    return os.path.join(os.path.dirname(os.path.abspath(teamsync.__file__)), "_hook.py")


def render_command(command: str, interpreter: str | None) -> str:
    """``teamsync …`` as ``'<interpreter>' -I -S '<package>/_hook.py' …``: the hook runs
    the teamsync of the interpreter that installed it, whatever ``PATH`` Claude Code
    hooks get, isolated from the project's directory and ``PYTHON*`` variables, and
    without ``site``'s start-up work (:mod:`teamsync._hook`)."""
    if interpreter and command.startswith("teamsync "):
        rest = command[len("teamsync ") :]
        return f"{_sh_quote(interpreter)} -I -S {_sh_quote(hook_entry())} {rest}"
    return command


def snippet(interpreter: str | None = None) -> dict[str, Any]:
    """teamsync's hooks, as the ``hooks`` object of a Claude Code settings file.

    With ``interpreter``, every command calls teamsync through that Python by its
    absolute path; the shipped file (no interpreter) calls ``teamsync`` from ``PATH``.
    """
    data: dict[str, Any] = json.loads(resource_text(SETTINGS_RESOURCE))
    for groups in data["hooks"].values():
        for group in groups:
            for hook in group["hooks"]:
                hook["command"] = render_command(hook["command"], interpreter)
    return data


_OURS = re.compile(r"""(?:^|[\s/'"])(?:teamsync|_hook\.py)'?\s+guard\b""")
_EVENT_ARG = re.compile(r"--event[ =]([A-Za-z_-]+)")


def is_ours(command: object) -> bool:
    """Whether a settings hook ``command`` is teamsync's (any interpreter, any version)."""
    return isinstance(command, str) and _OURS.search(command) is not None


def _role(command: str) -> str:
    match = _EVENT_ARG.search(command)
    return match.group(1).lower() if match else "pretooluse"


def load_settings(path: Path) -> dict[str, Any]:
    """Read ``path`` (an absent file is ``{}``); refuse anything but a JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise SettingsFileError.from_args(
            path,
            f"not valid JSON (line {exc.lineno})",
            "fix it and rerun; teamsync will not overwrite it",
        ) from exc
    if not isinstance(data, dict):
        raise SettingsFileError.from_args(path, "does not hold a JSON object")
    return data


def _groups(settings: dict[str, Any], event: str, path: Path) -> list[Any]:
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsFileError.from_args(path, "`hooks` is not an object")
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise SettingsFileError.from_args(path, f"`hooks.{event}` is not a list")
    return groups


OPT_IN_EVENTS = frozenset({"Stop"})
"""Hooks added only on request: the Stop hook calls the Claude API (it costs money)."""

EXTRACT_COST = (
    "The Stop hook runs `teamsync extract` in the background after each Claude Code "
    "response: up to 5 Claude API calls (Messages API, the model in TEAMSYNC_MODEL) per "
    "run, sending the transcript's new messages, billed to the account of ANTHROPIC_API_KEY. "
    "It does nothing without that key; remove it with `teamsync install-hooks --claude-code "
    "--uninstall`."
)

TARGETS = ("project", "local", "user")
"""Which Claude Code settings file: the committed project file, the personal
project file (``.claude/settings.local.json``, not committed), or ``~/.claude/settings.json``."""


def settings_path(target: str, project: Path, home: Path) -> Path:
    if target == "user":
        return home / ".claude" / "settings.json"
    if target == "local":
        return project / ".claude" / "settings.local.json"
    return project / ".claude" / "settings.json"


def _ours_in(groups: list[Any], role: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(group, hook) for each of teamsync's hooks with ``role`` in ``groups``."""
    found = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        for hook in group["hooks"]:
            if isinstance(hook, dict) and is_ours(hook.get("command")):
                if _role(str(hook["command"])) == role:
                    found.append((group, hook))
    return found


def merge(
    settings: dict[str, Any], path: Path, *, extract: bool = False, interpreter: str | None = None
) -> list[str]:
    """Add teamsync's missing hooks to ``settings`` in place; return what changed.

    The opt-in Stop (extraction) hook is added only with ``extract``. A teamsync hook
    already there (any earlier version: ``teamsync`` from ``PATH``, another
    interpreter, an older matcher) is updated in place: its command, and the matcher
    of a group that holds only teamsync's hooks. A group that also holds someone
    else's hook keeps its matcher: teamsync's hook moves to a group of its own.
    """
    changed: list[str] = []
    for event, ours in snippet(interpreter)["hooks"].items():
        if event in OPT_IN_EVENTS and not extract:
            continue
        groups = _groups(settings, event, path)
        for template in ours:
            for hook in template["hooks"]:
                changed += _place(groups, event, template, dict(hook))
    return changed


def _place(
    groups: list[Any], event: str, template: dict[str, Any], hook: dict[str, Any]
) -> list[str]:
    matcher = template.get("matcher")
    existing = _ours_in(groups, _role(hook["command"]))
    for group, current in existing:
        if current == hook and group.get("matcher") == matcher:
            return []
    shown = f"{event}: {hook['command']}" + (f" (matcher {matcher})" if matcher else "")
    for group, current in existing:
        alone = all(isinstance(h, dict) and is_ours(h.get("command")) for h in group["hooks"])
        if alone or group.get("matcher") == matcher:
            current.clear()
            current.update(hook)
            if matcher is not None:
                group["matcher"] = matcher
            _dedupe(groups, group, current)
            return [f"{shown}, updated"]
    for group, current in existing:  # in a group of someone else's: take ours out of it
        group["hooks"].remove(current)
    new_group = {k: v for k, v in template.items() if k != "hooks"}
    groups.append({**new_group, "hooks": [hook]})
    return [shown]


def _dedupe(groups: list[Any], keep_group: dict[str, Any], keep: dict[str, Any]) -> None:
    """Drop other copies of teamsync's hook with ``keep``'s role (and groups left empty)."""
    role = _role(keep["command"])
    for group, hook in _ours_in(groups, role):
        if hook is not keep:
            group["hooks"].remove(hook)
    groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]


def unmerge(settings: dict[str, Any]) -> list[str]:
    """Remove teamsync's hooks from ``settings`` in place; return what was removed."""
    removed: list[str] = []
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return removed
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list):
                kept_groups.append(group)
                continue
            kept = [h for h in entries if not (isinstance(h, dict) and is_ours(h.get("command")))]
            removed += [f"{event}: {h['command']}" for h in entries if h not in kept]
            if kept or not entries:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del settings["hooks"]
    return removed


def _write(path: Path, settings: dict[str, Any]) -> Path | None:
    backup = backup_beside(path) if path.exists() else None
    write_atomic(path, json.dumps(settings, indent=2, ensure_ascii=False) + "\n", new_mode=0o644)
    return backup


def check_hooks(interpreter: str, project: Path) -> None:
    """Run the PreToolUse and PostToolUse commands as Claude Code would (``sh -c``, a
    harmless payload) and refuse to install hooks that do not answer cleanly."""
    import subprocess

    payload = json.dumps(
        {"tool_name": "Read", "tool_input": {"file_path": "x"}, "cwd": str(project)}
    )
    hooks = snippet(interpreter)["hooks"]
    for event in ("PreToolUse", "PostToolUse"):
        command = hooks[event][0]["hooks"][0]["command"]
        try:
            proc = subprocess.run(
                ["/bin/sh", "-c", command],
                input=payload,
                capture_output=True,
                text=True,
                timeout=60,
                cwd=project,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SettingsFileError(
                f"the {event} hook command does not run ({type(exc).__name__}); nothing installed"
            ) from exc
        if proc.returncode != 0 or proc.stdout.strip():
            said = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            raise SettingsFileError(
                f"the {event} hook command `{command.split(' || ')[0]}` does not answer cleanly "
                f"(exit {proc.returncode}: {said}); nothing installed. Install teamsync into "
                "this interpreter and rerun"
            )


def install_claude_code(
    project: Path,
    *,
    uninstall: bool = False,
    target: str = "project",
    home: Path | None = None,
    extract: bool = False,
    interpreter: str | None = None,
) -> tuple[Path, list[str], Path | None]:
    """Merge (or remove) teamsync's hooks in the ``target`` settings file.

    The hooks call teamsync through ``interpreter`` (default: the running Python) by
    its absolute path, and are run once before anything is written
    (:func:`check_hooks`). Returns the settings path, the changes, and the backup
    path (None when the file was absent or nothing changed).
    """
    import sys

    python = interpreter or sys.executable
    path = settings_path(target, project, home if home is not None else Path.home())
    settings = load_settings(path)
    if not uninstall:
        check_hooks(python, project)
    changes = (
        unmerge(settings)
        if uninstall
        else merge(settings, path, extract=extract, interpreter=python)
    )
    if not changes:
        return path, [], None
    return path, changes, _write(path, settings)
