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
from pathlib import Path
from typing import Any

from teamsync._files import backup_beside, write_atomic
from teamsync.errors import SettingsFileError
from teamsync.hooks.install import resource_text

SETTINGS_RESOURCE = "claude-code-settings.json"


def snippet() -> dict[str, Any]:
    """teamsync's hooks, as the ``hooks`` object of a Claude Code settings file."""
    data: dict[str, Any] = json.loads(resource_text(SETTINGS_RESOURCE))
    return data


def _our_commands() -> set[str]:
    return {
        hook["command"]
        for groups in snippet()["hooks"].values()
        for group in groups
        for hook in group["hooks"]
    }


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


def _has_hook(groups: list[Any], matcher: str | None, command: str) -> bool:
    for group in groups:
        if not isinstance(group, dict) or group.get("matcher") != matcher:
            continue
        for hook in group.get("hooks") or []:
            if isinstance(hook, dict) and hook.get("command") == command:
                return True
    return False


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


_PREVIOUS_MATCHERS: dict[str, tuple[str, ...]] = {"PreToolUse": ("Write|Edit|MultiEdit",)}
"""Matchers earlier teamsync versions shipped; a group of ours with one is upgraded in place."""


def _upgrade(groups: list[Any], event: str, matcher: str | None, command: str) -> bool:
    """Widen a group that holds only our ``command`` under an older teamsync matcher."""
    for group in groups:
        if not isinstance(group, dict) or group.get("matcher") not in _PREVIOUS_MATCHERS.get(
            event, ()
        ):
            continue
        entries = group.get("hooks")
        if (
            isinstance(entries, list)
            and entries
            and all(isinstance(h, dict) and h.get("command") == command for h in entries)
        ):
            group["matcher"] = matcher
            return True
    return False


def merge(settings: dict[str, Any], path: Path, *, extract: bool = False) -> list[str]:
    """Add teamsync's missing hooks to ``settings`` in place; return what was added.

    The opt-in Stop (extraction) hook is added only with ``extract``.

    A group that holds only our hook under a matcher an earlier teamsync shipped
    (``Write|Edit|MultiEdit``) gets the current matcher instead of a second group.
    """
    added: list[str] = []
    for event, ours in snippet()["hooks"].items():
        if event in OPT_IN_EVENTS and not extract:
            continue
        groups = _groups(settings, event, path)
        for group in ours:
            for hook in group["hooks"]:
                if _upgrade(groups, event, group.get("matcher"), hook["command"]):
                    added.append(f"{event}: {hook['command']} (matcher {group.get('matcher')})")
                    continue
                if not _has_hook(groups, group.get("matcher"), hook["command"]):
                    new_group = {k: v for k, v in group.items() if k != "hooks"}
                    groups.append({**new_group, "hooks": [dict(hook)]})
                    added.append(f"{event}: {hook['command']}")
    return added


def unmerge(settings: dict[str, Any]) -> list[str]:
    """Remove teamsync's hooks from ``settings`` in place; return what was removed."""
    ours = _our_commands()
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
            kept = [h for h in entries if not (isinstance(h, dict) and h.get("command") in ours)]
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


def install_claude_code(
    project: Path,
    *,
    uninstall: bool = False,
    target: str = "project",
    home: Path | None = None,
    extract: bool = False,
) -> tuple[Path, list[str], Path | None]:
    """Merge (or remove) teamsync's hooks in the ``target`` settings file.

    Returns the settings path, the changes, and the backup path (None when the file
    was absent or nothing changed).
    """
    path = settings_path(target, project, home if home is not None else Path.home())
    settings = load_settings(path)
    changes = unmerge(settings) if uninstall else merge(settings, path, extract=extract)
    if not changes:
        return path, [], None
    return path, changes, _write(path, settings)
