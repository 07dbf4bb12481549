"""``core.hooksPath``: where git looks for the hooks teamsync installed, kept where people put it.

One ``git config core.hooksPath /dev/null`` (or a line added to ``.git/config``,
or ``git config --unset core.hooksPath`` where teamsync's hooks live in a
``core.hooksPath`` directory) and git stops running teamsync's pre-commit gate,
without any hook file changing. So :mod:`teamsync.hooks.verify` keeps, beside
its trusted copies of the guarded files, the ``core.hooksPath`` entries of the
project's git configuration, each with the file that sets it:

* :func:`stamps` is a ``stat`` of every configuration file git reads for the
  project (the repository's ``config`` and ``config.worktree``, ``~/.gitconfig``,
  ``$XDG_CONFIG_HOME/git/config``, the system file, and every file an
  ``include`` pulled in when git was last asked). Only when one of them moved is
  git asked (:func:`read`: one ``git config --list --show-origin``), so a call
  that changes no configuration costs a few ``stat`` calls.
* Before a call the entries are the trusted ones (a person's own change between
  calls is taken as it is); after it, :func:`restore` puts back exactly the
  ``core.hooksPath`` entries of the files whose entries changed, with ``git config
  --file F``: every other key of those files, and every other file, stays as the
  call left it.

``git -c core.hooksPath=… commit`` changes no file; it holds for that one
command, and ``push`` (which scans every file it sends) is the gate then.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from teamsync.hooks.places import Places

KEY = "core.hookspath"
"""git's own spelling of the key in ``--list`` output (section and name lower-cased)."""

Stamp = list[int] | None


def base_files(git_dirs: list[str], home: str, environ: dict[str, str] | Any) -> list[str]:
    """The configuration files git reads for a repository whose git directories
    (its own, then the common one) are ``git_dirs``, existing or not."""
    xdg = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = [os.path.join(d, name) for d in git_dirs for name in ("config", "config.worktree")]
    files += [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")]
    files.append(environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    return list(dict.fromkeys(files))


def _stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def stamps(files: list[str]) -> dict[str, Stamp]:
    return {path: _stamp(path) for path in files}


def read(root: str, environ: dict[str, str] | Any) -> tuple[list[list[str]], list[str]] | None:
    """``([file, value], …)`` of every ``core.hooksPath`` entry in a file, and every file
    git read; None when git cannot say (not a repository, no git)."""
    from teamsync import _git
    from teamsync.errors import ToolMissing

    try:
        result = _git.run(["config", "--show-origin", "--list", "-z"], cwd=root, environ=environ)
    except ToolMissing:
        return None
    if not result.ok:
        return None
    fields = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    entries: list[list[str]] = []
    files: list[str] = []
    for origin, item in zip(fields[0::2], fields[1::2], strict=False):
        if not origin.startswith("file:"):
            continue  # command line, environment, blob: nothing on disk to put back
        path = os.path.normpath(os.path.join(root, origin[5:]))
        if path not in files:
            files.append(path)
        key, _, value = item.partition("\n")
        if key.lower() == KEY:
            entries.append([path, value])
    return entries, files


def _by_file(entries: list[list[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path, value in entries:
        out.setdefault(path, []).append(value)
    return out


def restore(
    root: str, before: list[list[str]], now: list[list[str]], environ: dict[str, str] | Any
) -> list[str]:
    """Put back the ``core.hooksPath`` entries of every file whose entries differ from
    ``before``; the files put back (an entry that cannot be written is said too)."""
    from teamsync import _git

    old, new = _by_file(before), _by_file(now)
    done: list[str] = []
    for path in sorted(set(old) | set(new)):
        if old.get(path, []) == new.get(path, []):
            continue
        args = ["config", "--file", path]
        ok = True
        if new.get(path):
            ok = _git.run([*args, "--unset-all", KEY], cwd=root, environ=environ).ok
        for value in old.get(path, []):
            ok = _git.run([*args, "--add", KEY, value], cwd=root, environ=environ).ok and ok
        done.append(path if ok else f"{path} (could not be written back; a person must check it)")
    return done


def _trusted_path(places: Places) -> str:
    return os.path.join(places.settings.state_dir, "guard", "trusted", "gitconfig.json")


def load_trusted(places: Places) -> dict[str, Any] | None:
    """The trusted state last recorded before a call (no git run)."""
    try:
        with open(_trusted_path(places), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def effective(state: dict[str, Any] | None) -> str | None:
    """The ``core.hooksPath`` git uses in ``state``: the last entry read, else None."""
    entries = state.get("entries") if isinstance(state, dict) else None
    if not isinstance(entries, list) or not entries:
        return None
    last = entries[-1]
    return str(last[1]) if isinstance(last, list) and len(last) == 2 else None


def _root(places: Places) -> str | None:
    from pathlib import Path

    from teamsync.security.allowlist import git_root

    root = git_root(Path(os.path.abspath(places.project)))
    return None if root is None else str(root)


def current(places: Places) -> dict[str, Any] | None:
    """The state now, recorded as the trusted one (before a call): ``root``, ``files``,
    their ``stamps`` and the ``entries``. git runs only when a file's stamp moved."""
    from pathlib import Path

    from teamsync.hooks.policy import git_dirs

    root = _root(places)
    if root is None:
        return None
    stored = load_trusted(places)
    same_root = stored is not None and stored.get("root") == root
    base = base_files([str(d) for d in git_dirs(Path(root))], places.home, places.settings.environ)
    known = list(stored.get("files") or []) if stored is not None and same_root else []
    files = list(dict.fromkeys(base + known))
    if stored is not None and same_root and stored.get("stamps") == stamps(files):
        return stored
    found = read(root, places.settings.environ)
    if found is None:
        return stored if same_root else None
    entries, read_files = found
    files = list(dict.fromkeys(base + read_files))
    state = {"root": root, "files": files, "stamps": stamps(files), "entries": entries}
    from teamsync._files import write_atomic

    write_atomic(Path(_trusted_path(places)), json.dumps(state), new_mode=0o600, durable=False)
    return state


def check(places: Places, before: dict[str, Any]) -> list[str]:
    """After a call: put back the ``core.hooksPath`` entries it changed (see module doc)."""
    root, files = before.get("root"), before.get("files")
    if not isinstance(root, str) or not isinstance(files, list):
        return []
    if stamps([str(f) for f in files]) == before.get("stamps"):
        return []
    found = read(root, places.settings.environ)
    if found is None:
        return []
    entries = found[0]
    trusted = before.get("entries") or []
    if entries == trusted:
        return []
    done = restore(root, trusted, entries, places.settings.environ)
    shown = "unset" if not trusted else f"`{effective(before)}`"
    return [
        "teamsync put back core.hooksPath, where git looks for the hooks teamsync installed "
        f"(kept by people, not written by tools; it is {shown} again), in "
        + ", ".join(f"`{p}`" for p in done)
        + "."
    ]


__all__ = [
    "KEY",
    "base_files",
    "check",
    "current",
    "effective",
    "load_trusted",
    "read",
    "restore",
    "stamps",
]
