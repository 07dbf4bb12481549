"""``teamsync mcp`` and ``teamsync install-mcp``.

``mcp`` serves the memory directory (resolved as every command resolves it) as
an MCP server over stdio. ``memory_remember`` is offered only when writing is
turned on, by ``--remember`` or by the directory's ``teamsync.yaml``::

    mcp:
      remember: true   # offer memory_remember (default: false, read-only)
      push: true       # push each remembered memory at once (default: false)

and never when the directory syncs through a ``teamsync serve`` token that is
read-only (the server is asked at start-up; when it cannot say, writing stays
off). Standard output belongs to the protocol: notes go to standard error.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teamsync.config import Settings
from teamsync.errors import ConfigError, TeamsyncError
from teamsync.output import Output


@dataclass(frozen=True)
class McpOptions:
    remember: bool = False
    push: bool = False


def mcp_options(memdir: Path) -> McpOptions:
    """The ``mcp:`` block of ``<memdir>/teamsync.yaml`` (defaults when absent)."""
    import yaml

    from teamsync.sync.config import config_path

    path = config_path(memdir)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return McpOptions()
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.__class__.__name__}); fix it") from exc
    block = data.get("mcp") if isinstance(data, dict) else None
    if block is None:
        return McpOptions()
    if not isinstance(block, dict) or not set(block) <= {"remember", "push"}:
        raise ConfigError(
            f"{path}: `mcp:` takes only `remember: true|false` and `push: true|false`"
        )
    values = {k: block.get(k, False) for k in ("remember", "push")}
    if not all(isinstance(v, bool) for v in values.values()):
        raise ConfigError(f"{path}: `mcp.remember` and `mcp.push` must be true or false")
    return McpOptions(**values)


def _token_read_only(memdir: Path, environ: Mapping[str, str]) -> str | None:
    """Why writing must stay off for this directory's remote (None: it may be on)."""
    from teamsync.sync.config import config_path, load_config

    if not config_path(memdir).is_file():
        return None
    try:
        config = load_config(memdir)
    except TeamsyncError as exc:
        return f"teamsync.yaml cannot be read ({exc})"
    if config.backend != "rest":
        return None
    from teamsync.sync.rest_scope import token_read_only

    try:
        read_only = token_read_only(config, environ)
    except TeamsyncError as exc:
        return f"the server could not say whether the token may write ({exc})"
    if read_only is None:
        return "the server does not say whether the token may write"
    return "the server token is read-only" if read_only else None


def _pusher(settings: Settings) -> Any:
    def push(key: str) -> str | None:
        from teamsync.commands.sync import sync_once

        try:
            report = sync_once(settings, mode="push")
        except TeamsyncError as exc:
            return f"written, but the push failed ({exc}); `teamsync push` retries"
        if report.stop is not None or any(r.key == key for r in report.held_back):
            return "written, but not pushed: `teamsync status` says why"
        return "pushed to the team" if key in report.pushed else "written; nothing to push"

    return push


def run_mcp(settings: Settings, output: Output, *, remember: bool | None, offline: bool) -> int:
    """Serve the memory directory over stdio until the client hangs up."""
    from teamsync._extras import require
    from teamsync.memdir.paths import working_memory_dir

    require("mcp")
    from teamsync.mcp.memories import MemoryService
    from teamsync.mcp.server import serve_stdio

    memdir = working_memory_dir(settings)
    options = mcp_options(memdir) if memdir.is_dir() else McpOptions()
    wants = options.remember if remember is None else remember
    if wants:
        refusal = _token_read_only(memdir, settings.environ)
        if refusal is not None:
            print(f"teamsync mcp: memory_remember is off: {refusal}", file=sys.stderr)
            wants = False
    service = MemoryService(
        settings,
        memdir,
        remember_enabled=wants,
        after_remember=_pusher(settings) if wants and options.push else None,
        offline=offline,
    )
    mode = "read-write" if wants else "read-only"
    print(f"teamsync mcp: serving {memdir} ({mode}) on stdio", file=sys.stderr)
    serve_stdio(service, quick_start=settings.environ.get("TEAMSYNC_MCP_QUICK_START") != "0")
    return 0


def _project_root(settings: Settings) -> Path:
    from teamsync.memdir.paths import canonical_git_root

    return canonical_git_root(settings.cwd) or settings.cwd


def server_command(settings: Settings, scope: str, remember: bool) -> tuple[str, list[str]]:
    """The interpreter that runs this teamsync, and the arguments that start its MCP server.

    Project scope pins the memory directory this project resolves to; user scope
    pins one only when ``--dir``/``TEAMSYNC_DIR`` chose it (each project resolves
    its own otherwise).
    """
    from teamsync.memdir.paths import working_memory_dir

    args = ["-m", "teamsync"]
    if scope == "project" or settings.dir is not None:
        args += ["--dir", str(working_memory_dir(settings).resolve())]
    args.append("mcp")
    if remember:
        args.append("--remember")
    return str(Path(sys.executable).absolute()), args


def run_install_mcp(
    settings: Settings,
    output: Output,
    *,
    client: str,
    scope: str,
    dry_run: bool,
    remember: bool,
) -> int:
    """Write ``client``'s MCP configuration for ``teamsync mcp`` (a backup first)."""
    import difflib

    from teamsync._files import backup_beside, write_atomic
    from teamsync.mcp.clients import config_file, plan

    home = Path(settings.environ.get("HOME") or Path.home())
    path = config_file(client, scope, project=_project_root(settings), home=home)
    try:
        before: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    command, args = server_command(settings, scope, remember)
    change = plan(client, path, before, command, args)
    diff = "".join(
        difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            change.after.splitlines(keepends=True),
            fromfile=str(path) if before is not None else "/dev/null",
            tofile=str(path),
        )
    )
    backup = None
    if change.changed and not dry_run:
        path.parent.mkdir(parents=True, exist_ok=True)
        backup = backup_beside(path) if before is not None else None
        write_atomic(path, change.after, new_mode=0o600 if scope == "user" else 0o644)
    if settings.json:
        output.emit(
            {
                "client": client,
                "scope": scope,
                "path": str(path),
                "changed": change.changed,
                "dry_run": dry_run,
                "backup": str(backup) if backup else None,
                "command": [command, *args],
                "diff": diff,
            }
        )
        return 0
    if not change.changed:
        output.info(f"{path}: already serves teamsync mcp; nothing to change")
    elif dry_run:
        output.info(diff.rstrip("\n"))
        output.info(f"(dry run: {path} not changed)")
    else:
        output.info(f"{client}: {path} now starts `{command} {' '.join(args)}`")
        if backup is not None:
            output.info(f"backup of the previous file: {backup}")
        if client == "codex" and scope == "project":
            output.info(
                "Codex reads a project's .codex/config.toml only once the project is trusted"
            )
    return 0
