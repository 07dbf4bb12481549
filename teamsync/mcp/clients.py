"""Each assistant's MCP configuration file, and the one change ``install-mcp`` makes to it.

=============  ===========================  ==========================
client         project scope                user scope
=============  ===========================  ==========================
claude-code    ``<project>/.mcp.json``      ``~/.claude.json``
codex          ``<project>/.codex/config.toml`` (trusted projects)  ``~/.codex/config.toml``
cursor         ``<project>/.cursor/mcp.json``  ``~/.cursor/mcp.json``
gemini         ``<project>/.gemini/settings.json``  ``~/.gemini/settings.json``
=============  ===========================  ==========================

JSON files get ``mcpServers.teamsync = {"command", "args"}``; Codex's TOML
gets an ``[mcp_servers.teamsync]`` table. Everything else in the file is kept:
JSON is rewritten with only that key changed, and in TOML only the lines of the
``teamsync`` table (and its sub-tables) are replaced, every other line staying
byte for byte. :func:`plan` is pure: it returns the new text, and the command
writes it after keeping a backup of the old file.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teamsync.errors import ConfigError

CLIENTS = ("claude-code", "codex", "cursor", "gemini")
SCOPES = ("project", "user")
SERVER_NAME = "teamsync"

_FILES: dict[str, tuple[str, str]] = {
    # client -> (project-relative path, home-relative path)
    "claude-code": (".mcp.json", ".claude.json"),
    "codex": (".codex/config.toml", ".codex/config.toml"),
    "cursor": (".cursor/mcp.json", ".cursor/mcp.json"),
    "gemini": (".gemini/settings.json", ".gemini/settings.json"),
}


@dataclass(frozen=True)
class Change:
    path: Path
    before: str | None
    """The file's text, or None when it does not exist yet."""
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def config_file(client: str, scope: str, *, project: Path, home: Path) -> Path:
    if client not in _FILES:
        raise ConfigError(f"unknown client {client!r}; use one of {', '.join(CLIENTS)}")
    if scope not in SCOPES:
        raise ConfigError(f"unknown scope {scope!r}; use project or user")
    rel = _FILES[client][0 if scope == "project" else 1]
    return (project if scope == "project" else home) / rel


def plan(client: str, path: Path, before: str | None, command: str, args: list[str]) -> Change:
    """The file's new text with the teamsync server entry set to ``command args``."""
    if client == "codex":
        return Change(path, before, _toml_with(path, before or "", command, args))
    return Change(path, before, _json_with(path, before, command, args))


def _json_with(path: Path, before: str | None, command: str, args: list[str]) -> str:
    data: Any = {}
    if before is not None and before.strip():
        try:
            data = json.loads(before)
        except ValueError as exc:
            raise ConfigError(
                f"{path} is not valid JSON ({exc}); fix it first — teamsync changes only "
                "files it can read in full"
            ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top; fix it first")
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: `mcpServers` is not an object; fix it first")
    servers[SERVER_NAME] = {"command": command, "args": args}
    indent = _json_indent(before)
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def _json_indent(text: str | None) -> int:
    found = re.search(r"\n( +)\"", text or "")
    return len(found.group(1)) if found else 2


_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _toml_with(path: Path, before: str, command: str, args: list[str]) -> str:
    try:
        tomllib.loads(before)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it first") from exc
    kept: list[str] = []
    skipping = False
    for line in before.splitlines(keepends=True):
        header = _TABLE.match(line)
        if header:
            name = header.group(1).replace('"', "").replace("'", "").replace(" ", "")
            skipping = name == f"mcp_servers.{SERVER_NAME}" or name.startswith(
                f"mcp_servers.{SERVER_NAME}."
            )
        if not skipping:
            kept.append(line)
    text = "".join(kept)
    if text and not text.endswith("\n"):
        text += "\n"
    if text and not text.endswith("\n\n"):
        text += "\n"
    table = (
        f"[mcp_servers.{SERVER_NAME}]\n"
        f"command = {json.dumps(command)}\n"
        f"args = [{', '.join(json.dumps(a) for a in args)}]\n"
    )
    out = text + table
    try:
        parsed = tomllib.loads(out)  # never write what Codex could not read
    except tomllib.TOMLDecodeError:
        parsed = {}
    entry = parsed.get("mcp_servers", {}).get(SERVER_NAME, {})
    if entry.get("command") != command or entry.get("args") != args:
        raise ConfigError(
            f"{path}: an `mcp_servers` entry for {SERVER_NAME} is written in a form teamsync "
            "does not edit (an inline table?); remove it by hand and run install-mcp again"
        )
    return out
