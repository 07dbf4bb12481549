"""``teamsync install-hooks [--claude-code] [--no-git] [--uninstall]``.

Installs (or removes) teamsync's git hooks in the repository around the current
directory and, with ``--claude-code``, merges teamsync's Claude Code hooks into
the project's ``.claude/settings.json`` (the project is the git work tree, or
the current directory outside git).
"""

from __future__ import annotations

from pathlib import Path

from teamsync.config import Settings
from teamsync.errors import UsageError
from teamsync.hooks.claude_settings import EXTRACT_COST, TARGETS, install_claude_code
from teamsync.hooks.gitenv import git_maybe
from teamsync.hooks.install import PURPOSE, install, uninstall
from teamsync.output import Output


def _project_root(cwd: Path) -> Path:
    top = git_maybe(["rev-parse", "--show-toplevel"], cwd)
    return Path(top) if top else cwd


def _git_hooks(settings: Settings, output: Output, *, remove: bool) -> dict[str, object]:
    location, lines = (uninstall if remove else install)(settings.cwd)
    for line in lines:
        hook_type = line.partition(":")[0]
        does = "" if remove or hook_type not in PURPOSE else f" — it {PURPOSE[hook_type]}"
        output.info(f"{line}{does}")
    where = "core.hooksPath " if location.via_hooks_path else ""
    output.info(f"git hooks directory: {where}{location.hooks_dir}")
    return {"hooks_dir": str(location.hooks_dir), "git": lines}


def _claude(
    settings: Settings, output: Output, *, remove: bool, target: str, extract: bool
) -> dict[str, object]:
    path, changes, backup = install_claude_code(
        _project_root(settings.cwd),
        uninstall=remove,
        target=target,
        home=settings.home,
        extract=extract,
    )
    verb = "removed from" if remove else "added to"
    for change in changes:
        output.info(f"Claude Code {change} ({verb} {path})")
    if not changes:
        output.info(f"Claude Code hooks: nothing to change in {path}")
    if backup is not None:
        output.info(f"previous settings kept as {backup}")
    if not remove and target == "project" and changes:
        output.info(
            "This file is usually committed: every teammate then runs these hooks and needs "
            "teamsync installed. For yourself only, use --settings local (or user)."
        )
    if extract and not remove:
        output.warn(EXTRACT_COST)
    return {
        "claude_settings": str(path),
        "claude_changes": changes,
        "backup": str(backup) if backup else None,
    }


def install_hooks(
    settings: Settings,
    output: Output,
    *,
    claude_code: bool,
    git: bool,
    remove: bool,
    target: str | None = None,
    extract: bool = False,
) -> int:
    """Install or uninstall the requested hooks; return the exit code.

    ``target`` (``--settings``) without ``claude_code`` is refused: it names a
    Claude Code settings file, and without ``--claude-code`` none is written.
    """
    if not git and not claude_code:
        raise UsageError("nothing to do: --no-git without --claude-code; drop one of them")
    if extract and not claude_code:
        raise UsageError("--with-extract adds a Claude Code hook: give --claude-code too")
    if target is not None and not claude_code:
        raise UsageError(
            f"--settings {target} chooses the Claude Code settings file, but without "
            "--claude-code only the git hooks are installed: give --claude-code too"
        )
    target = target or "project"
    if target not in TARGETS:
        raise UsageError(f"--settings {target!r}: choose one of {', '.join(TARGETS)}")
    report: dict[str, object] = {"uninstall": remove}
    if git:
        report.update(_git_hooks(settings, output, remove=remove))
    if claude_code:
        report.update(_claude(settings, output, remove=remove, target=target, extract=extract))
    elif not remove:
        output.info(
            "Claude Code hooks: not installed (the guard that keeps secrets and unsafe names "
            "out of team memory as Claude writes it); add them with --claude-code"
        )
    output.emit(report)
    return 0
