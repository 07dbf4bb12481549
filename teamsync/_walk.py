"""The one path-based directory walker: iterative, sorted, never following a link.

The memdir header scan, recall's index, the scanner's file trees and the
sync engine's stat-cache check all walk with :func:`walk`; only their filters
differ, and they are parameters here:

- ``skip_dir`` names the directories not entered (default: dot directories);
- ``skip_temp`` leaves out teamsync's own temp files (``.teamsync-tmp-*``); the
  secret scanner keeps them, so no file name hides content from a gate;
- ``onerror`` hears about a directory that cannot be listed (default: skip it).

The walk is iterative (a pathologically deep tree cannot exhaust the stack),
lists each directory once with ``scandir`` (file types come from ``readdir``,
no extra ``stat``) and yields the files of a directory before descending, in
name order. ``team/`` itself is walked by
:meth:`teamsync.security.fs.SafeDir.walk`, which holds directory descriptors
so that nothing can be swapped under it between the check and the use.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from teamsync.limits import TEMP_PREFIX

__all__ = ["hidden", "walk"]


def hidden(name: str) -> bool:
    """The default ``skip_dir``: dot directories (``.git``, ``.obsidian``…)."""
    return name.startswith(".")


def walk(
    root: str | os.PathLike[str],
    *,
    prefix: str = "",
    skip_dir: Callable[[str], bool] = hidden,
    skip_temp: bool = True,
    sort: bool = True,
    onerror: Callable[[str, OSError], None] | None = None,
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """``(key, entry)`` for every non-directory entry below ``root``; ``key`` is ``prefix`` +
    the posix path relative to ``root``. Symlinks are yielded, never followed."""
    stack: list[tuple[str, str]] = [(os.fspath(root), prefix)]
    while stack:
        directory, base = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError as exc:
            if onerror is not None:
                onerror(directory, exc)
            continue
        if sort:
            entries.sort(key=lambda e: e.name)
        subdirs: list[tuple[str, str]] = []
        for entry in entries:
            name = entry.name
            if skip_temp and name.startswith(TEMP_PREFIX):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if not skip_dir(name):
                    subdirs.append((entry.path, f"{base}{name}/"))
                continue
            yield base + name, entry
        stack.extend(reversed(subdirs))
