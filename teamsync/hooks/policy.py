"""The files a model must not change: the reviewed allowlist and teamsync's policy files.

* the reviewed allowlist: ``<git root>/.teamsync/allowlist.json`` and
  ``<memory dir>/allowlist.json``;
* ``<memory dir>/teamsync.yaml`` (the sync configuration, with its guards);
* the Claude Code settings files of the project and the user
  (``.claude/settings.json``, ``.claude/settings.local.json``,
  ``~/.claude/settings.json``) when any of them holds teamsync's hooks: one of them
  can switch every hook off (``disableAllHooks``) without touching the others;
* the git hooks teamsync installed (a hook carrying the marker, and the
  ``<hook>.legacy`` it chains).

The guard denies a model's Write, Edit or Bash aimed at one of them before it
runs (:func:`guarded_target`), and :mod:`teamsync.hooks.verify` puts back any of
them that changed anyway. A file is matched by its real path after links, and by
its inode (a hard link to it elsewhere is the same file). Stdlib only.
"""

from __future__ import annotations

import os
from pathlib import Path

from teamsync.hooks.places import Places
from teamsync.limits import CONFIG_NAME

ALLOWLIST = "the reviewed allowlist"
CONFIG = "teamsync's sync configuration"
SETTINGS = "the Claude Code settings that hold teamsync's hooks"
GIT_HOOK = "a git hook teamsync installed"
GIT_HOOKS = ("pre-commit", "pre-push", "post-merge", "post-checkout")
HOOK_MARKER = b"# teamsync-managed-hook"
SETTINGS_MARKER = b"teamsync"


class Guarded:
    """A file kept by people: its real path (after links; existing or not) and its kind.

    A plain class with value equality (no dataclass to build on the hook path)."""

    __slots__ = ("kind", "path")

    def __init__(self, path: str, kind: str) -> None:
        self.path, self.kind = path, kind

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Guarded) and (self.path, self.kind) == (other.path, other.kind)

    def __hash__(self) -> int:
        return hash((self.path, self.kind))

    def __repr__(self) -> str:
        return f"Guarded(path={self.path!r}, kind={self.kind!r})"


def git_dirs(root: Path) -> list[Path]:
    """The git directory of the work tree ``root``, then its common directory (a linked
    work tree's ``.git`` file names the first; its ``commondir`` the second)."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return [dot_git]
    try:
        line = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return []
    if not line.startswith("gitdir:"):
        return []
    gitdir = Path(line[7:].strip())
    gitdir = gitdir if gitdir.is_absolute() else root / gitdir
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return [gitdir]
    return [gitdir, Path(common) if os.path.isabs(common) else gitdir / common]


def _hooks_dirs(root: Path, hooks_path: str | None) -> list[Path]:
    """Where git looks for hooks (``core.hooksPath`` as last read, relative to the work
    tree), and the default ``hooks`` of the common git directory."""
    dirs = git_dirs(root)
    out = [dirs[-1] / "hooks"] if dirs else []
    if hooks_path:
        out.insert(0, root / os.path.expanduser(hooks_path))
    return out


def _head(path: Path, size: int = 65536) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def settings_files(places: Places, root: Path | None) -> list[Path]:
    """The Claude Code settings files that may hold teamsync's hooks (existing or not)."""
    bases = [places.project] + ([root] if root is not None and root != places.project else [])
    found = [b / ".claude" / n for b in bases for n in ("settings.json", "settings.local.json")]
    found.append(Path(places.home) / ".claude" / "settings.json")
    return found


def hooks_dirs(places: Places, root: Path | None) -> list[Path]:
    """The directories git hooks teamsync installed may be in."""
    return _hooks_dirs(root, hooks_path(places)) if root is not None else []


def guarded_files(places: Places) -> list[Guarded]:
    """Every allowlist and policy file of this call's project and memory directories."""
    from teamsync.security.allowlist import ALLOWLIST_DIR, ALLOWLIST_NAME, git_root

    found: list[tuple[Path, str]] = []
    root = git_root(Path(os.path.abspath(places.project)))
    if root is not None:
        found.append((root / ALLOWLIST_DIR / ALLOWLIST_NAME, ALLOWLIST))
    for team in places.teams:
        found.append((team.parent / ALLOWLIST_NAME, ALLOWLIST))
        found.append((team.parent / CONFIG_NAME, CONFIG))
    settings = settings_files(places, root)
    if any(SETTINGS_MARKER in _head(p) for p in settings):
        found.extend((p, SETTINGS) for p in settings)
    for hooks in hooks_dirs(places, root):
        for name in GIT_HOOKS:
            if HOOK_MARKER in _head(hooks / name, 4096):
                found.append((hooks / name, GIT_HOOK))
                found.append((hooks / f"{name}.legacy", GIT_HOOK))
    out: list[Guarded] = []
    seen: set[str] = set()
    for path, kind in found:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            out.append(Guarded(real, kind))
    return out


def hooks_path(places: Places) -> str | None:
    """The effective ``core.hooksPath`` as the guard last read it (no git run here)."""
    from teamsync.hooks.gitconf import effective, load_trusted

    return effective(load_trusted(places))


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def guarded_target(path: str, guarded: list[Guarded]) -> Guarded | None:
    """The guarded file ``path`` (absolute) would change, by real path or by inode; else None."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        real = path
    for item in guarded:
        if item.path == real:
            return item
    ident = _identity(path)
    if ident is None:
        return None
    for item in guarded:
        if _identity(item.path) == ident:
            return item
    return None


def refusal(item: Guarded) -> str:
    """The deny reason for a write aimed at ``item`` (no way past it is described)."""
    return (
        f"teamsync refused this write: {item.kind} (`{os.path.basename(item.path)}`) is kept "
        "by people, not written by tools."
    )


__all__ = ["Guarded", "guarded_files", "guarded_target", "refusal"]
