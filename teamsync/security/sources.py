"""Where ``teamsync scan`` reads content from: files, the git index, or a commit range.

Every source yields :class:`Chunk` objects (a display path, the text and the
line number of its first line) or :class:`Skipped` notes (unreadable files
only). Binary content is scanned too, as text decoded with replacement: a NUL
byte must not hide the token after it. There is no size past which content goes unscanned: content up to
``WINDOW + OVERLAP`` bytes is one chunk; larger content is read in windows of
``WINDOW`` bytes that overlap by ``OVERLAP`` (longer than any secret a rule
matches, a PEM block included), each with ``keep_until`` so a finding in the
overlap is reported once, by the window that holds it whole. Memory stays
bounded by the window, whatever the file's size; the git index and ``git log``
are read as streams. Git is driven through plain ``git`` subprocesses via
:func:`git` over :mod:`teamsync._git` (no GitPython: the pre-commit hook must
start instantly), keeping ``GIT_INDEX_FILE`` (a hook for a partial commit
points it at the index being committed).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from teamsync import _git
from teamsync._walk import walk
from teamsync.errors import UsageError
from teamsync.security.keys import is_memory_path as is_memory_path

WINDOW = 8 * 1024 * 1024
OVERLAP = 256 * 1024
SKIP_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True)
class Chunk:
    path: str
    text: str
    first_line: int = 1
    commit: str | None = None
    """For ``--git-range``: the commit that added these lines."""
    keep_until: int | None = None
    """In a window of a large file: report only what starts before this offset."""


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


class _Reader:
    """``read(n)`` over a binary stream, stopping after ``limit`` bytes when given."""

    def __init__(self, stream: BinaryIO, limit: int | None = None) -> None:
        self.stream = stream
        self.left = limit

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes; fewer only at the end (a pipe may hand over less at a time)."""
        parts: list[bytes] = []
        wanted = n if self.left is None else min(n, self.left)
        while wanted > 0:
            data = self.stream.read(wanted)
            if not data:
                break
            parts.append(data)
            wanted -= len(data)
            if self.left is not None:
                self.left -= len(data)
        return b"".join(parts)

    def drain(self) -> None:
        while self.left and self.read(1 << 20):
            pass


def _cut(buf: bytes) -> int:
    """Where the next window starts: a line start near WINDOW, else a UTF-8 boundary."""
    newline = buf.rfind(b"\n", WINDOW // 2, WINDOW)
    if newline >= 0:
        return newline + 1
    cut = WINDOW
    while cut > WINDOW - 4 and (buf[cut] & 0xC0) == 0x80:
        cut -= 1
    return cut


def windows(reader: _Reader, path: str) -> Iterator[Item]:
    """The content of one file or blob as chunks (one, or overlapping windows)."""
    buf = reader.read(WINDOW + OVERLAP)
    first_line = 1
    while True:
        extra = reader.read(WINDOW) if len(buf) >= WINDOW + OVERLAP else b""
        if not extra:
            yield Chunk(path, buf.decode("utf-8", "replace"), first_line)
            return
        cut = _cut(buf)
        keep = len(buf[:cut].decode("utf-8", "replace"))
        yield Chunk(path, buf.decode("utf-8", "replace"), first_line, keep_until=keep)
        first_line += buf.count(b"\n", 0, cut)
        buf = buf[cut:] + extra


def _read(path: str, shown: str) -> Iterator[Item]:
    try:
        with open(path, "rb") as handle:
            yield from windows(_Reader(handle), shown)
    except OSError as exc:
        yield Skipped(shown, f"unreadable ({exc.strerror})")


def _walk(top: str, shown: str) -> Iterator[tuple[str, str]]:
    """(full path, display path) of the regular files under ``top``, sorted, no symlinks.

    Only ``.git``, ``.hg`` and ``.svn`` are left out: every other file is content a
    gate must see, teamsync's own temp-file names included.
    """
    for key, entry in walk(top, skip_dir=SKIP_DIRS.__contains__, skip_temp=False):
        try:
            if entry.is_file(follow_symlinks=False):
                yield entry.path, os.path.normpath(os.path.join(shown, key))
        except OSError:
            continue


def list_files(paths: Iterable[str], cwd: Path) -> Iterator[tuple[str, str]]:
    """(full path, display path) for files and directories given on the command line."""
    for raw in paths:
        full = raw if os.path.isabs(raw) else os.path.join(cwd, raw)
        if os.path.isdir(full) and not os.path.islink(full):
            yield from _walk(full, raw)
        elif os.path.isfile(full):
            yield full, raw
        elif not os.path.exists(full):
            raise UsageError(f"{raw}: no such file or directory; check the path")


def read_file(full: str, shown: str) -> Iterator[Item]:
    """One file's chunks (see :func:`windows`), or a Skipped note."""
    return _read(full, shown)


def iter_files(paths: Iterable[str], cwd: Path) -> Iterator[Item]:
    """Files and directories (recursive; ``.git`` and symlinked directories are not entered)."""
    for full, shown in list_files(paths, cwd):
        yield from _read(full, shown)


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
    yield from _cat_blobs(entries, cwd, env)


def _popen(args: list[str], cwd: Path, env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    return _git.popen(["-c", "core.quotepath=off", *args], cwd=cwd, env=env)


def _finish(proc: subprocess.Popen[bytes], what: str) -> None:
    if proc.stdin is not None and not proc.stdin.closed:
        proc.stdin.close()
    if proc.stdout is not None:
        while proc.stdout.read(1 << 20):  # left unread after an error: let git finish
            pass
    stderr = proc.stderr.read() if proc.stderr is not None else b""
    if proc.wait() != 0:
        detail = stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {what} failed: {detail[0] if detail else f'exit {proc.returncode}'}")


def _cat_blobs(entries: list[tuple[str, str]], cwd: Path, env: Mapping[str, str]) -> Iterator[Item]:
    """Each staged blob streamed through one ``git cat-file --batch`` (one blob at a time)."""
    proc = _popen(["cat-file", "--batch"], cwd, env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for sha, name in entries:
            proc.stdin.write(f"{sha}\n".encode())
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) != 3:
                raise UsageError(f"git cat-file failed on {name}: unexpected reply; rerun the scan")
            reader = _Reader(proc.stdout, int(header[2]))  # type: ignore[arg-type]
            yield from windows(reader, name)
            reader.drain()
            proc.stdout.read(1)  # the newline after each blob
    finally:
        _finish(proc, "cat-file")


_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class _Run:
    """Consecutive added lines of one file, given out as chunks of bounded size.

    A run longer than a window is cut as files are (see :func:`windows`): each
    chunk but the last reports only what starts before its last ``OVERLAP``
    characters, which open the next chunk, so memory stays bounded and a secret
    across the cut is still seen whole.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.first = self.prev = self.size = 0

    def add(self, number: int, text: str) -> Iterator[tuple[int, str, int | None]]:
        if self.lines and number != self.prev + 1:
            yield from self.flush()
        if not self.lines:
            self.first = number
        self.lines.append(text)
        self.prev, self.size = number, self.size + len(text) + 1
        if self.size >= WINDOW + OVERLAP:
            yield from self._cut()

    def _cut(self) -> Iterator[tuple[int, str, int | None]]:
        tail, tail_size = len(self.lines), 0
        while tail > 1 and tail_size < OVERLAP:
            tail -= 1
            tail_size += len(self.lines[tail]) + 1
        text = "\n".join(self.lines)
        yield self.first, text, len(text) - tail_size + 1
        self.first += tail
        self.lines = self.lines[tail:]
        self.size = tail_size

    def flush(self) -> Iterator[tuple[int, str, int | None]]:
        if self.lines:
            yield self.first, "\n".join(self.lines), None
        self.lines, self.size = [], 0


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
    proc = _popen(["log", "-p", "-U0", "--no-color", "--no-ext-diff", "--no-renames",
                   "--format=%x00commit %H", git_range, "--"], cwd, git_env(environ))  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    try:
        yield from _added_lines(proc.stdout)  # type: ignore[arg-type]
    finally:
        _finish(proc, "log")


ZERO_SHA = frozenset({"0" * 40, "0" * 64})


def iter_pushed(old: str, new: str, cwd: Path, env: Mapping[str, str]) -> Iterator[Item]:
    """What a push of ``old`` → ``new`` brings (a server-side hook: ``env`` as git gave it).

    Every line the new commits add (``old..new``; for a new branch ``new --not
    --all``, the commits no ref has yet), each with its commit, so a secret added and removed again in the push is
    still found; and every file the push changes, whole, at ``new``, so a secret
    split across two edits is seen joined. ``old`` all zeros: a new branch, whose
    whole tree is read.
    """
    commits = [new, "--not", "--all"] if old in ZERO_SHA else [f"{old}..{new}"]
    proc = _popen(["log", "-p", "-U0", "--no-color", "--no-ext-diff", "--no-renames",
                   "--format=%x00commit %H", *commits, "--"], cwd, env)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    try:
        yield from _added_lines(proc.stdout)  # type: ignore[arg-type]
    finally:
        _finish(proc, "log")
    if old in ZERO_SHA:
        listing = git(["ls-tree", "-r", "-z", "--full-tree", new], cwd, env)
        rows = [r.split(b"\t", 1) for r in listing.split(b"\0") if r]
        entries = [(m.split()[2].decode(), p.decode("utf-8", "replace")) for m, p in rows
                   if m.split()[1] == b"blob"]  # fmt: skip
    else:
        diff = git(["diff-tree", "-r", "-z", "--no-renames", old, new], cwd, env).split(b"\0")
        entries = []
        for meta, name in zip(diff[0::2], diff[1::2], strict=False):
            fields = meta.split()
            if len(fields) >= 5 and fields[4] != b"D" and fields[1] != b"160000":
                entries.append((fields[3].decode(), name.decode("utf-8", "replace")))
    if entries:
        yield from _cat_blobs(entries, cwd, env)


def _added_lines(stream: BinaryIO) -> Iterator[Item]:
    """Chunks of the lines each commit adds, from a ``git log -p -U0`` stream."""
    path: str | None = None
    commit: str | None = None
    run = _Run()
    number, in_header = 0, False

    def chunks(parts: Iterator[tuple[int, str, int | None]]) -> Iterator[Item]:
        assert path is not None
        for first, text, keep in parts:
            yield Chunk(path, text, first, commit, keep_until=keep)

    for raw in stream:
        line = raw[:-1] if raw.endswith(b"\n") else raw
        if line.startswith((b"\x00commit ", b"diff --git ")):
            if path is not None:
                yield from chunks(run.flush())
            path, run, in_header = None, _Run(), line.startswith(b"diff")
            if line.startswith(b"\x00commit "):
                commit = line[len(b"\x00commit ") :].decode("ascii", "replace").strip()
        elif in_header and line.startswith(b"+++ "):
            path = _diff_path(line[4:].decode("utf-8", "replace"))
        elif (hunk := _HUNK.match(line)) is not None:
            number, in_header = int(hunk.group(1)), False
        elif line.startswith(b"+") and path is not None and not in_header:
            yield from chunks(run.add(number, line[1:].decode("utf-8", "replace")))
            number += 1
    if path is not None:
        yield from chunks(run.flush())
