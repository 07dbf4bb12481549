"""The cache the hook's fast path (:mod:`teamsync._fastpath`) reads: a call's places, and
what they were derived from.

After every full PreToolUse snapshot (:func:`teamsync.hooks.verify.take`), the
guard records, under the cache key of the call (:func:`teamsync._fastpath.cache_key`:
the environment variables the places come from, the start-up directory, the
payload's ``cwd`` and ``transcript_path``, real paths of the directories searched
for a git root):

* ``teams``: the team directories the call could reach (as :func:`teamsync.hooks.
  places.resolve` gives them); ``guarded``: every guarded file with its stamp at
  the snapshot (each of which has a trusted copy); ``gitconfig``: the git
  configuration state (:func:`teamsync.hooks.gitconf.current`);
* ``deps``: each thing these were derived from, with its value then:

  - ``G``: every ``.git`` entry the git-root searches looked at (absent, a
    directory's inode, or a regular file's stamp); a ``.git`` that is a link or
    anything else: no entry is written;
  - ``S``: the stamp (inode, size, mtime, ctime, kind, mode) of every file whose
    content was read: a ``.git`` file and the worktree files it leads to, the
    Claude Code settings files (does one hold teamsync's hooks?), the git hooks
    (do they carry teamsync's marker?), the trusted git configuration state and
    the trusted copies' index;
  - ``R``: the real path of every path whose links were resolved (each team
    directory candidate, each guarded file, each worktree path).

The entry is only written when a second resolution, after the stamps were taken,
gives the same places: a change in between leaves the stamps older than the
places, so the entry is never used. The fast path uses an entry only when the
key matches and every dependency has its recorded value; the ctime in each stamp
moves on every write, rename or link and cannot be set back by a program.

The cache lives beside the trusted copies in the state directory: it is no
weaker than they are (a program running as the user can rewrite both; docs/
security.md says which gate holds then).
"""

from __future__ import annotations

import os
from pathlib import Path

from teamsync import _fastpath
from teamsync.hooks.places import Places, candidates, resolve
from teamsync.hooks.policy import Guarded, git_dirs, guarded_files, hooks_dirs, settings_files

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any

MAX_ENTRIES = 8


class _Unsupported(ValueError):
    """A layout the fast path does not model: no entry."""


def _git_search(start: str, deps: list[list[Any]]) -> tuple[str, list[Any]] | None:
    """Record every ``.git`` the search from ``start`` upwards looks at; the root found."""
    here = start
    while True:
        dot = os.path.join(here, ".git")
        value = _fastpath.git_entry(dot)
        deps.append(["G", dot, value])
        if value is not None:
            return here, value
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _read_line(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read(4096).strip()
    except (OSError, UnicodeDecodeError):
        return None


def _worktree(root: str, deps: list[list[Any]]) -> None:
    """What :func:`teamsync.memdir.paths._main_checkout` and :func:`teamsync.hooks.
    policy.git_dirs` read of a ``.git`` file, and every path they resolve."""
    dot = os.path.join(root, ".git")
    deps.append(["S", dot, _fastpath.file_stamp(dot)])
    deps.append(["R", dot, os.path.realpath(dot)])
    line = _read_line(dot)
    if line is None or not line.startswith("gitdir:"):
        return
    gitdir = line[7:].strip()
    for raw in {
        os.path.join(root, gitdir),
        os.path.join(root, line.removeprefix("gitdir:").strip()),
    }:
        deps.append(["R", raw, os.path.realpath(raw)])
        for name in ("commondir", "gitdir"):
            path = os.path.join(raw, name)
            deps.append(["S", path, _fastpath.file_stamp(path)])
            value = _read_line(path)
            if value:
                for target in {os.path.join(raw, value), value}:
                    deps.append(["R", target, os.path.realpath(target)])


def dependencies(
    places: Places, payload: dict[str, Any], guarded: list[Guarded]
) -> list[list[Any]]:
    """What the call's places and guarded files were derived from (see module doc)."""
    settings = places.settings
    deps: list[list[Any]] = []
    project, cwd, found = candidates(settings, payload)
    roots: list[str] = []
    starts = [os.path.realpath(project), os.path.realpath(cwd), os.path.abspath(project)]
    for start in dict.fromkeys(starts):
        hit = _git_search(start, deps)
        if hit is not None:
            roots.append(hit[0])
            if hit[1][0] == "f":
                _worktree(hit[0], deps)
    for memdir in found:
        team = str(memdir / "team")
        deps.append(["R", team, os.path.realpath(team)])
    from teamsync.security.allowlist import git_root

    root = git_root(Path(os.path.abspath(places.project)))
    for path in settings_files(places, root):
        deps.append(["S", str(path), _fastpath.file_stamp(str(path))])
    if root is not None:
        for gitdir in git_dirs(root):
            deps.append(["R", str(gitdir), os.path.realpath(gitdir)])
    from teamsync.hooks.gitconf import _trusted_path

    trusted = _trusted_path(places)
    deps.append(["S", trusted, _fastpath.file_stamp(trusted)])
    for hooks in hooks_dirs(places, root):
        for name in ("pre-commit", "pre-push", "post-merge", "post-checkout"):
            hook = str(hooks / name)
            deps.append(["S", hook, _fastpath.file_stamp(hook)])
    index_file = os.path.join(settings.state_dir, "guard", "trusted", "index.json")
    deps.append(["S", index_file, _fastpath.file_stamp(index_file)])
    return deps


def _raw_guarded(places: Places) -> list[str]:
    """The guarded paths before links are resolved (each gets an ``R`` dependency)."""
    from teamsync.limits import CONFIG_NAME
    from teamsync.security.allowlist import ALLOWLIST_DIR, ALLOWLIST_NAME, git_root

    root = git_root(Path(os.path.abspath(places.project)))
    out = [str(root / ALLOWLIST_DIR / ALLOWLIST_NAME)] if root is not None else []
    for team in places.teams:
        out += [str(team.parent / ALLOWLIST_NAME), str(team.parent / CONFIG_NAME)]
    out += [str(p) for p in settings_files(places, root)]
    for hooks in hooks_dirs(places, root):
        for name in ("pre-commit", "pre-push", "post-merge", "post-checkout"):
            out += [str(hooks / name), str(hooks / f"{name}.legacy")]
    return out


def _versions_hold(places: Places, stamps: dict[str, Any]) -> bool:
    """Every guarded file that exists has a trusted copy of its current state."""
    import json

    index_path = os.path.join(places.settings.state_dir, "guard", "trusted", "index.json")
    try:
        with open(index_path, encoding="utf-8") as handle:
            index = json.load(handle)
    except (OSError, ValueError):
        index = {}
    for path, (stamp, _kind) in stamps.items():
        if stamp is None:
            continue
        entry = index.get(path) if isinstance(index, dict) else None
        versions = entry.get("versions") if isinstance(entry, dict) else None
        if not isinstance(versions, list) or not any(
            isinstance(v, dict) and v.get("stamp") == stamp for v in versions
        ):
            return False
    return True


def record(
    places: Places, payload: dict[str, Any], guarded: list[Guarded], snap: dict[str, Any]
) -> bool:
    """Write the cache entry for this call (after :func:`teamsync.hooks.verify.take`);
    False when the layout is not one the fast path models or it moved meanwhile."""
    settings = places.settings
    environ = dict(settings.environ)
    state = _fastpath.state_dir(environ)
    if state is None or state != str(settings.state_dir):
        return False
    try:
        deps = dependencies(places, payload, guarded)
        deps += [["R", p, os.path.realpath(p)] for p in _raw_guarded(places)]
    except (_Unsupported, ValueError, OSError):
        return False
    # after the stamps: the same places again, or no entry
    again = resolve(settings, payload)
    if again != places or guarded_files(again) != guarded:
        return False
    stamps = snap.get("guarded")
    if not isinstance(stamps, dict) or not stamps:
        return False
    if any(_fastpath.file_stamp(p) != item[0] for p, item in stamps.items()):
        return False
    gitconfig = snap.get("gitconfig")
    if isinstance(gitconfig, dict):
        from teamsync.hooks.gitconf import stamps as config_stamps

        if config_stamps([str(f) for f in gitconfig.get("files") or []]) != gitconfig.get("stamps"):
            return False
    elif gitconfig is not None:
        return False
    if not _versions_hold(places, stamps):
        return False
    key = _fastpath.cache_key(environ, payload, str(settings.cwd))
    entry = {
        "key": key,
        "deps": deps,
        "teams": [str(t) for t in places.teams],
        "guarded": stamps,
        "gitconfig": gitconfig,
    }
    path = os.path.join(state, "guard", _fastpath.CACHE_NAME)
    try:
        with open(path, encoding="utf-8") as handle:
            old = _fastpath.loads(handle.read())
    except (OSError, ValueError):
        old = None
    kept = []
    if isinstance(old, dict) and old.get("v") == _fastpath.CACHE_VERSION:
        listed = old.get("entries")
        if isinstance(listed, list):
            kept = [e for e in listed if isinstance(e, dict) and e.get("key") != key]
    from teamsync._files import write_atomic

    data = {"v": _fastpath.CACHE_VERSION, "entries": [entry, *kept][:MAX_ENTRIES]}
    write_atomic(Path(path), _fastpath.dumps(data), new_mode=0o600, durable=False)
    return True


__all__ = ["dependencies", "record"]
