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
import shutil
import time
from pathlib import Path
from typing import Any

from teamsync._files import write_atomic
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


def merge(settings: dict[str, Any], path: Path) -> list[str]:
    """Add teamsync's missing hooks to ``settings`` in place; return what was added."""
    added: list[str] = []
    for event, ours in snippet()["hooks"].items():
        groups = _groups(settings, event, path)
        for group in ours:
            for hook in group["hooks"]:
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
    backup = None
    if path.exists():
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        backup = path.with_name(f"{path.name}.bak-{stamp}")
        n = 1
        while backup.exists():
            backup = path.with_name(f"{path.name}.bak-{stamp}-{n}")
            n += 1
        shutil.copy2(path, backup)
    write_atomic(path, json.dumps(settings, indent=2, ensure_ascii=False) + "\n", new_mode=0o644)
    return backup


def install_claude_code(
    project: Path, *, uninstall: bool = False
) -> tuple[Path, list[str], Path | None]:
    """Merge (or remove) teamsync's hooks in ``<project>/.claude/settings.json``.

    Returns the settings path, the changes, and the backup path (None when the file
    was absent or nothing changed).
    """
    path = project / ".claude" / "settings.json"
    settings = load_settings(path)
    changes = unmerge(settings) if uninstall else merge(settings, path)
    if not changes:
        return path, [], None
    return path, changes, _write(path, settings)
