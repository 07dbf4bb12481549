"""Install and uninstall teamsync's git hooks, politely (after pre-commit's installer).

* Our scripts are package resources (``teamsync/hooks/resources/``) stamped with
  :data:`MARKER`; a file holding the marker is ours, anything else is foreign.
* A foreign hook is renamed ``<hook>.legacy`` and our script runs it first, with
  the same arguments and stdin; uninstall puts it back.
* ``core.hooksPath`` is honoured when it points inside this repository (its
  work tree or git directory), and refused otherwise: a hooks directory outside
  the repository is usually shared by every repository of the user, and
  teamsync will not rewrite it.
* Every git call runs without inherited ``GIT_*`` variables.
* Installing twice changes nothing; the absolute path of the ``teamsync`` that
  installed the hooks is templated in, with ``PATH`` as the fallback.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from teamsync._files import write_atomic
from teamsync.errors import ConfigError, SettingsFileError
from teamsync.hooks.gitenv import git, git_maybe

HOOK_TYPES: tuple[str, ...] = ("pre-commit", "pre-push", "post-merge", "post-checkout")
MARKER = "# teamsync-managed-hook"
TEMPLATE_START = "# start templated\n"
TEMPLATE_END = "# end templated\n"


@dataclass(frozen=True)
class HookLocation:
    """Where a repository's hooks live."""

    worktree: Path
    hooks_dir: Path
    via_hooks_path: bool


def resource_text(name: str) -> str:
    """The text of a file in ``teamsync/hooks/resources``."""
    return resources.files("teamsync.hooks").joinpath("resources", name).read_text("utf-8")


def is_ours(path: Path) -> bool:
    """True when ``path`` (or the file a symlink there points to) carries teamsync's marker."""
    if not path.is_file():
        return False
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return MARKER.encode() in head


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def locate_hooks(cwd: Path) -> HookLocation:
    """Find the hooks directory for the repository around ``cwd``.

    Raises :class:`TeamsyncError` outside a repository, in a bare repository, or
    when ``core.hooksPath`` points outside the repository.
    """
    top = git_maybe(["rev-parse", "--show-toplevel"], cwd)
    if not top:
        raise ConfigError(f"{cwd} is not inside a git work tree; cd into your repository and retry")
    worktree = Path(top).resolve()
    common = Path(git(["rev-parse", "--path-format=absolute", "--git-common-dir"], worktree))
    common = common.resolve()
    configured = git_maybe(["config", "--get", "core.hooksPath"], worktree)
    if not configured:
        return HookLocation(worktree, common / "hooks", via_hooks_path=False)
    hooks_dir = (worktree / Path(configured).expanduser()).resolve()
    if not (_inside(hooks_dir, worktree) or _inside(hooks_dir, common)):
        raise SettingsFileError(
            f"core.hooksPath is {configured!r}, outside this repository; teamsync will not "
            "rewrite a hooks directory other repositories share. Add `teamsync scan --staged` "
            "to that hook yourself, or `git config --unset core.hooksPath` and rerun"
        )
    return HookLocation(worktree, hooks_dir, via_hooks_path=True)


def teamsync_executable() -> str:
    """The absolute path of the running ``teamsync`` (templated into the hooks)."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "teamsync" and os.path.isfile(argv0):
        return os.path.abspath(argv0)
    sibling = Path(sys.executable).parent / "teamsync"
    if sibling.exists():
        return str(sibling)
    return shutil.which("teamsync") or ""


def _sh_quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def render_hook(hook_type: str, executable: str) -> str:
    """The script for ``hook_type`` with the installing ``teamsync`` templated in."""
    text = resource_text(hook_type)
    before, rest = text.split(TEMPLATE_START)
    _, after = rest.split(TEMPLATE_END)
    return (
        f"{before}{TEMPLATE_START}TEAMSYNC_INSTALLED={_sh_quote(executable)}\n{TEMPLATE_END}{after}"
    )


def _write_executable(path: Path, text: str) -> None:
    write_atomic(path, text, mode=0o755)


def install_hook(hooks_dir: Path, hook_type: str, executable: str) -> str:
    """Install one hook; return a one-line description of what happened."""
    hook = hooks_dir / hook_type
    legacy = hooks_dir / f"{hook_type}.legacy"
    text = render_hook(hook_type, executable)
    if os.path.lexists(hook) and not is_ours(hook):
        if os.path.lexists(legacy):
            raise SettingsFileError(
                f"{hook} and {legacy} both exist and neither is teamsync's; merge them by hand "
                "into one of the two names and rerun"
            )
        os.rename(hook, legacy)
        _write_executable(hook, text)
        return f"{hook_type}: installed; your existing hook now runs first as {legacy.name}"
    if is_ours(hook) and hook.read_text(encoding="utf-8") == text:
        return f"{hook_type}: already installed"
    _write_executable(hook, text)
    chained = f" (chains {legacy.name})" if os.path.lexists(legacy) else ""
    return f"{hook_type}: installed at {hook}{chained}"


def uninstall_hook(hooks_dir: Path, hook_type: str) -> str:
    """Remove one of our hooks and restore ``<hook>.legacy``; leave foreign hooks alone."""
    hook = hooks_dir / hook_type
    legacy = hooks_dir / f"{hook_type}.legacy"
    if not os.path.lexists(hook):
        return f"{hook_type}: not installed"
    if not is_ours(hook):
        return f"{hook_type}: left alone (not teamsync's)"
    hook.unlink()
    if os.path.lexists(legacy):
        os.rename(legacy, hook)
        return f"{hook_type}: removed; restored your previous hook"
    return f"{hook_type}: removed"


def install(cwd: Path, hook_types: tuple[str, ...] = HOOK_TYPES) -> tuple[HookLocation, list[str]]:
    """Install every hook in ``hook_types`` for the repository around ``cwd``."""
    location = locate_hooks(cwd)
    location.hooks_dir.mkdir(parents=True, exist_ok=True)
    executable = teamsync_executable()
    lines = [install_hook(location.hooks_dir, h, executable) for h in hook_types]
    return location, lines


def uninstall(
    cwd: Path, hook_types: tuple[str, ...] = HOOK_TYPES
) -> tuple[HookLocation, list[str]]:
    """Uninstall every hook in ``hook_types`` for the repository around ``cwd``."""
    location = locate_hooks(cwd)
    return location, [uninstall_hook(location.hooks_dir, h) for h in hook_types]
