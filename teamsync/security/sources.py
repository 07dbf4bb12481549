"""Where ``teamsync scan`` reads content from: files, the git index, or a commit range.

Every source yields :class:`Chunk` objects (a display path, the text and the
line number of its first line) or :class:`Skipped` notes. Git is driven through
plain ``git`` subprocesses via :func:`git` over :mod:`teamsync._git` (no
GitPython: the pre-commit hook must start instantly), keeping
``GIT_INDEX_FILE`` (a hook for a partial commit points it at the index being
committed).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from teamsync import _git
from teamsync.errors import UsageError

MAX_SCAN_BYTES = 10 * 1024 * 1024
SKIP_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True)
class Chunk:
    path: str
    text: str
    first_line: int = 1
    commit: str | None = None
    """For ``--git-range``: the commit that added these lines."""


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


Item = Chunk | Skipped


def git_env(environ: Mapping[str, str], *, keep_index: bool = False) -> dict[str, str]:
    """``environ`` without the ``GIT_*`` variables that pin another repository."""
    return _git.clean_env(environ, keep_index=keep_index)


def git(args: list[str], cwd: Path, env: Mapping[str, str], stdin: bytes | None = None) -> bytes:
    """Run ``git args``; return stdout. A failure raises a one-line TeamsyncError."""
    result = _git.run(["-c", "core.quotepath=off", *args], cwd=cwd, env=env, stdin=stdin)
    if not result.ok:
        raise UsageError(f"git {args[0]} failed: {result.reason()}")
    return result.stdout


def _decode(data: bytes, path: str) -> Item:
    if len(data) > MAX_SCAN_BYTES:
        return Skipped(path, f"larger than {MAX_SCAN_BYTES // (1024 * 1024)} MB")
    if b"\x00" in data[:8192]:
        return Skipped(path, "binary")
    return Chunk(path, data.decode("utf-8", "replace"))


def _read(path: Path, shown: str) -> Item:
    try:
        if path.stat().st_size > MAX_SCAN_BYTES:
            return Skipped(shown, f"larger than {MAX_SCAN_BYTES // (1024 * 1024)} MB")
        return _decode(path.read_bytes(), shown)
    except OSError as exc:
        return Skipped(shown, f"unreadable ({exc.strerror})")


def iter_files(paths: Iterable[str], cwd: Path) -> Iterator[Item]:
    """Files and directories (recursive; ``.git`` and symlinked directories are not entered)."""
    for raw in paths:
        path = Path(raw) if os.path.isabs(raw) else cwd / raw
        if path.is_dir() and not path.is_symlink():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
                for name in sorted(files):
                    full = Path(root) / name
                    shown = os.path.normpath(os.path.join(raw, os.path.relpath(full, path)))
                    if full.is_file() and not full.is_symlink():
                        yield _read(full, shown)
        elif path.is_file():
            yield _read(path, raw)
        elif not path.exists():
            raise UsageError(f"{raw}: no such file or directory; check the path")


def iter_staged(cwd: Path, environ: Mapping[str, str]) -> Iterator[Item]:
    """The staged content (the index) of added, copied and modified files."""
    env = git_env(environ, keep_index=True)
    raw = git(["diff", "--cached", "--raw", "-z", "--no-abbrev", "--no-renames",
               "--diff-filter=ACM"], cwd, env)  # fmt: skip
    fields = raw.split(b"\x00")
    entries: list[tuple[str, str]] = []
    for meta, raw_name in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.decode().split()
        if len(parts) >= 4 and parts[1] in ("100644", "100755"):
            entries.append((parts[3], raw_name.decode("utf-8", "replace")))
    if not entries:
        return
    out = git(["cat-file", "--batch"], cwd, env, "".join(f"{sha}\n" for sha, _ in entries).encode())
    pos = 0
    for _, name in entries:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        yield _decode(out[header_end + 1 : header_end + 1 + size], name)
        pos = header_end + 1 + size + 1


_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _blocks(added: dict[int, str]) -> Iterator[tuple[int, str]]:
    """Runs of consecutive added lines as (first line number, text)."""
    run: list[str] = []
    first = prev = 0
    for number in sorted(added):
        if run and number != prev + 1:
            yield first, "\n".join(run)
            run = []
        if not run:
            first = number
        run.append(added[number])
        prev = number
    if run:
        yield first, "\n".join(run)


def _diff_path(target: str) -> str | None:
    if target.startswith('"') and target.endswith('"'):
        raw = target[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        target = raw.encode("latin-1", "replace").decode("utf-8", "replace")
    return target[2:] if target.startswith("b/") else None


def iter_range(git_range: str, cwd: Path, environ: Mapping[str, str]) -> Iterator[Item]:
    """The lines that the commits in ``A..B`` add, each with its line number in that commit.

    Every chunk carries the commit that added it, so a secret added and removed
    again inside the range still points at a commit (provenance for CI).
    """
    if ".." not in git_range or git_range.startswith("-"):
        raise UsageError(f"--git-range {git_range!r}: expected A..B (two commits)")
    out = git(["log", "-p", "-U0", "--no-color", "--no-ext-diff", "--no-renames",
               "--format=%x00commit %H", git_range, "--"], cwd, git_env(environ))  # fmt: skip
    path: str | None = None
    commit: str | None = None
    added: dict[int, str] = {}
    number, in_header = 0, False
    for line in out.split(b"\n"):
        if line.startswith((b"\x00commit ", b"diff --git ")):
            if path is not None:
                yield from (Chunk(path, text, first, commit) for first, text in _blocks(added))
            path, added, in_header = None, {}, line.startswith(b"diff")
            if line.startswith(b"\x00commit "):
                commit = line[len(b"\x00commit ") :].decode("ascii", "replace").strip()
        elif in_header and line.startswith(b"+++ "):
            path = _diff_path(line[4:].decode("utf-8", "replace"))
        elif (hunk := _HUNK.match(line)) is not None:
            number, in_header = int(hunk.group(1)), False
        elif line.startswith(b"+") and path is not None and not in_header:
            added[number] = line[1:].decode("utf-8", "replace")
            number += 1
    if path is not None:
        yield from (Chunk(path, text, first, commit) for first, text in _blocks(added))
