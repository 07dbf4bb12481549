"""Install and uninstall teamsync's git hooks, politely (after pre-commit's installer).

* Our scripts are package resources (``teamsync/hooks/resources/``) stamped with
  :data:`MARKER`; a file holding the marker is ours, anything else is foreign.
* A foreign hook is renamed ``<hook>.legacy`` and our script runs it first, with
  the same arguments and stdin; uninstall puts it back.
* ``core.hooksPath`` is honoured when it points inside this repository (its
  work tree or git directory), and refused otherwise: a hooks directory outside
  the repository is usually shared by every repository of the user, and
  teamsync will not rewrite it.
* Beside the pre-commit framework's own hook (its script carries one of its ID
  hashes), teamsync does not displace it: pre-commit's hook stays, and ours is
  ``<hook>.legacy``, which pre-commit runs first (its own chaining); a hook
  pre-commit had moved to ``<hook>.legacy`` moves on to ``<hook>.legacy.legacy``
  and ours runs it first. (Renaming pre-commit's script to ``.legacy`` made it
  run itself and print "bug: pre-commit's script is installed in migration
  mode".) An install that had displaced it is put right.
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
PURPOSE = {
    "pre-commit": "refuses a commit whose staged changes hold a likely secret",
    "pre-push": "refuses a push whose new commits hold a likely secret",
    "post-merge": "pulls team memory in the background after a merge, when set up for sync",
    "post-checkout": "pulls team memory in the background after a branch checkout, when set up",
}
"""What each hook does, said when it is installed."""
MARKER = "# teamsync-managed-hook"
PRE_COMMIT_IDS = (
    b"138fd403232d2ddd5efb44317e38bf03",
    b"4d9958c90bc262f47553e2c073f14cfe",
    b"d8ee923c46731b42cd95cc869add4062",
    b"49fd668cb42069aa1b6048464be5d395",
    b"79f09a650522a87b0da915d0d983b2de",
    b"e358c9dae00eac5d06b38dfdb1e33a8c",
)
"""The ID hashes pre-commit stamps its hook scripts with (how pre-commit itself knows them)."""
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


def _head(path: Path) -> bytes:
    if not path.is_file():
        return b""
    try:
        with path.open("rb") as fh:
            return fh.read(4096)
    except OSError:
        return b""


def is_ours(path: Path) -> bool:
    """True when ``path`` (or the file a symlink there points to) carries teamsync's marker."""
    return MARKER.encode() in _head(path)


def is_pre_commit_framework(path: Path) -> bool:
    """True when ``path`` is the pre-commit framework's hook script."""
    head = _head(path)
    return any(marker in head for marker in PRE_COMMIT_IDS)


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
    if is_pre_commit_framework(hook):
        return _beside_pre_commit(hooks_dir, hook_type, text, "")
    if is_ours(hook) and is_pre_commit_framework(legacy):
        os.rename(legacy, hook)  # an earlier install displaced pre-commit's hook: put it back
        note = "; pre-commit's hook, displaced by an earlier install, is back in its place"
        return _beside_pre_commit(hooks_dir, hook_type, text, note)
    if os.path.lexists(hook) and not is_ours(hook):
        _move_aside(hook, legacy)
        _write_executable(hook, text)
        return f"{hook_type}: installed; your existing hook now runs first as {legacy.name}"
    if is_ours(hook) and hook.read_text(encoding="utf-8") == text:
        return f"{hook_type}: already installed"
    _write_executable(hook, text)
    chained = f" (chains {legacy.name})" if os.path.lexists(legacy) else ""
    return f"{hook_type}: installed at {hook}{chained}"


def _move_aside(hook: Path, to: Path) -> None:
    """Rename a foreign ``hook`` to ``to``, which our script runs first; never over a file."""
    if os.path.lexists(to):
        raise SettingsFileError(
            f"{hook} and {to} both exist and neither is teamsync's; merge them by hand "
            "into one of the two names and rerun"
        )
    os.rename(hook, to)


def _beside_pre_commit(hooks_dir: Path, hook_type: str, text: str, note: str) -> str:
    """Ours as ``<hook>.legacy``, which pre-commit's hook runs first; a foreign hook there
    moves on to ``<hook>.legacy.legacy``, which ours runs first."""
    ours = hooks_dir / f"{hook_type}.legacy"
    prior = hooks_dir / f"{hook_type}.legacy.legacy"
    where = f"the pre-commit framework's {hook_type} hook runs it first as {ours.name}"
    if os.path.lexists(ours) and not is_ours(ours):
        _move_aside(ours, prior)
        note += f"; your earlier hook now runs first as {prior.name}"
    elif is_ours(ours) and ours.read_text(encoding="utf-8") == text and not note:
        return f"{hook_type}: already installed ({where})"
    _write_executable(ours, text)
    return f"{hook_type}: installed; {where}{note}"


def uninstall_hook(hooks_dir: Path, hook_type: str) -> str:
    """Remove one of our hooks and restore ``<hook>.legacy``; leave foreign hooks alone."""
    hook = hooks_dir / hook_type
    legacy = hooks_dir / f"{hook_type}.legacy"
    if is_pre_commit_framework(hook):
        if not is_ours(legacy):
            return f"{hook_type}: not installed (the pre-commit framework's hook left alone)"
        legacy.unlink()
        prior = hooks_dir / f"{hook_type}.legacy.legacy"
        if os.path.lexists(prior):
            os.rename(prior, legacy)
            return f"{hook_type}: removed; pre-commit's hook stays and runs your earlier one again"
        return f"{hook_type}: removed; the pre-commit framework's hook stays"
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
