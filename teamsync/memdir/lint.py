"""``teamsync check``: lint a memory directory; ``--fix`` regenerates its indexes.

A memory directory has two scopes, each with its own index: the private root
(``MEMORY.md`` and every ``*.md`` outside ``team/``) and the shared ``team/``
(``team/MEMORY.md``). Problem kinds:

============== ==============================================================
missing-index  memory files exist but the scope has no ``MEMORY.md``
dead-link      an index entry links to a file that does not exist
bad-link       an index entry links outside the memory directory
duplicate      a file is listed on more than one bullet line of one index
orphan         a memory file no entry, prose link or backtick mention lists
index-limit    the index is over 200 lines or 25,000 UTF-8 bytes (names the
               entries a loader would not load)
long-line      an index line is over 200 characters
index-version  the index was written by a newer teamsync
unreadable     binary, not UTF-8, too big, or cannot be opened
frontmatter    frontmatter not parseable, even leniently (hostile YAML included)
type           the type is missing, or not one of the four (top level or metadata)
description    the description is missing, several lines, or too long
not-markdown   a file in ``team/`` that is not ``*.md`` (sync refuses it)
unsafe-file    a symlink, FIFO or device in ``team/`` (never followed)
bad-name       a ``team/`` path sync would refuse, or two that collide on case
============== ==============================================================

Notes (milder: reported, but ``check`` still passes; Claude Code reads these fine):

============== ==============================================================
legacy         a topic file without frontmatter
wiki-link      a ``[[wiki link]]`` that names no memory (by file stem or name)
============== ==============================================================

:func:`fix_memdir` changes only the entry lines it owns in the two
``MEMORY.md`` files (:mod:`teamsync.memdir.indexfix`), keeps a backup of each
index under the state directory first, and writes atomically through
:func:`teamsync.security.guard.safe_write`; it never deletes or rewrites a
memory file. This is the one memdir module that depends on
:mod:`teamsync.security` (key rules for ``team/`` names, the guarded writer).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from teamsync.errors import ConfigError, MemoryFormatError
from teamsync.memdir.format import (
    INDEX_NAME,
    MAX_MEMORY_BYTES,
    Memory,
    memory_issues,
    parse_memory,
)
from teamsync.memdir.headers import WalkEntry, is_memory_name, load_text, walk
from teamsync.memdir.index import (
    INDEX_VERSION,
    LONG_LINE_CHARS,
    MAX_INDEX_BYTES,
    MAX_INDEX_LINES,
    index_limit_problems,
    index_version,
    normalize_target,
    past_limit,
    scan_index,
)
from teamsync.memdir.indexfix import fix_index_text, resolve
from teamsync.security.fs import SafeDir
from teamsync.security.guard import safe_write
from teamsync.security.keys import find_collisions, key_problem
from teamsync.wire import MANIFEST_NAME

TEAM = "team/"
MAX_INDEX_READ = 4 * MAX_MEMORY_BYTES
NOTE_KINDS = frozenset({"legacy", "wiki-link"})
"""Reported, but milder: Claude Code reads such files fine, so ``check`` still passes."""


@dataclass(frozen=True)
class Problem:
    path: str
    """posix path relative to the memory directory"""
    kind: str
    message: str

    @property
    def is_note(self) -> bool:
        return self.kind in NOTE_KINDS


@dataclass(frozen=True)
class LintReport:
    problems: list[Problem]
    memories: int
    """memory files found (readable or not)"""
    notes: list[Problem] = field(default_factory=list)
    """milder findings (:data:`NOTE_KINDS`) that do not fail ``check``"""


@dataclass(frozen=True)
class FixResult:
    written: list[str]
    """indexes rewritten (relative paths)"""
    unchanged: list[str]
    left_out: list[str]
    """memory files whose entries a loader would not load (past 200 lines / 25,000 bytes)"""
    problems: list[Problem]
    """what ``check`` still reports after the fix"""
    memories: int = 0
    notes: list[Problem] = field(default_factory=list)
    backups: list[Path] = field(default_factory=list)
    """where the pre-fix copy of each rewritten index was kept"""
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    """``index:line`` of each dead entry line removed"""
    collapsed: list[str] = field(default_factory=list)
    """``index:line`` of each byte-identical repeat of an entry line removed"""


@dataclass
class _Scan:
    entries: dict[str, WalkEntry] = field(default_factory=dict)
    memories: dict[str, Memory] = field(default_factory=dict)
    """readable memory files; unparseable frontmatter gives an empty Memory"""
    texts: dict[str, str] = field(default_factory=dict)
    count: int = 0
    problems: list[Problem] = field(default_factory=list)


def _scan_memory(scan: _Scan, entry: WalkEntry) -> None:
    scan.count += 1
    try:
        text = load_text(entry, MAX_MEMORY_BYTES)
    except MemoryFormatError as exc:
        scan.problems.append(Problem(entry.path, "unreadable", exc.message))
        return
    try:
        memory = parse_memory(text, entry.path)
    except MemoryFormatError as exc:
        scan.problems.append(Problem(entry.path, "frontmatter", exc.message))
        stem = entry.path.rsplit("/", 1)[-1].removesuffix(".md")
        scan.memories[entry.path] = Memory(stem, None, None, text, {})
        scan.texts[entry.path] = text
        return
    scan.memories[entry.path] = memory
    scan.texts[entry.path] = text
    scan.problems.extend(Problem(entry.path, k, m) for k, m in memory_issues(memory))


def _team_file_problems(entry: WalkEntry) -> Iterable[Problem]:
    if entry.path == TEAM + MANIFEST_NAME and entry.kind == "file":
        return  # Claude Code's mount manifest: bookkeeping, never a memory
    if entry.kind != "file":
        kind = "a symbolic link" if entry.kind == "symlink" else "not a regular file"
        yield Problem(entry.path, "unsafe-file", f"{kind}; sync never follows it, remove it")
        return
    if not entry.path.endswith(".md"):
        yield Problem(entry.path, "not-markdown", "not a Markdown file; team/ holds only *.md")
    reason = key_problem(entry.path.removeprefix(TEAM))
    if reason is not None:
        yield Problem(entry.path, "bad-name", f"sync would refuse this name: {reason}; rename it")


def _scan(memdir: Path) -> _Scan:
    scan = _Scan()
    for entry in walk(memdir):
        scan.entries[entry.path] = entry
        if entry.path.startswith(TEAM):
            scan.problems.extend(_team_file_problems(entry))
        if entry.kind == "file" and is_memory_name(entry.path):
            _scan_memory(scan, entry)
    scan.problems.extend(_collisions(scan.entries))
    return scan


def _collisions(entries: dict[str, WalkEntry]) -> Iterable[Problem]:
    team_keys = [p.removeprefix(TEAM) for p in entries if p.startswith(TEAM)]
    for group in find_collisions(team_keys):
        others = ", ".join(TEAM + key for key in group[1:])
        yield Problem(
            TEAM + group[0], "bad-name", f"collides with {others} on case-insensitive disks"
        )


def _in_scope(rel: str, prefix: str) -> bool:
    return rel.startswith(TEAM) if prefix else not rel.startswith(TEAM)


def _resolve(prefix: str, target: str) -> str | None:
    """The memdir-relative path a link points at, or None when it leaves the memory dir."""
    inner = resolve(target)
    if inner is None:
        rel = os.path.normpath(prefix + normalize_target(target)).replace(os.sep, "/")
        return None if target.startswith("/") or rel.startswith("..") else rel
    return prefix + inner if inner != "." else None


def _link_problem(
    scan: _Scan, index_rel: str, line: int, target: str, rel: str | None
) -> Problem | None:
    where = f"line {line}: {target}"
    if rel is None:
        return Problem(index_rel, "bad-link", f"{where} points outside the memory directory")
    if rel not in scan.entries:
        return Problem(index_rel, "dead-link", f"{where} does not exist; fix or remove the line")
    return None


def _index_link_problems(scan: _Scan, prefix: str, text: str) -> tuple[list[Problem], set[str]]:
    index_rel = prefix + INDEX_NAME
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    listed: set[str] = set()
    for line in scan_index(text):
        for mention in line.mentions:
            rel = _resolve(prefix, mention)
            if rel is not None:
                listed.add(rel)
        for entry in line.entries:
            rel = _resolve(prefix, entry.target)
            problem = _link_problem(scan, index_rel, entry.line, entry.target, rel)
            if problem is not None:
                problems.append(problem)
                continue
            listed.add(str(rel))
            if entry.style != "bullet":
                continue
            if rel in first_line and first_line[str(rel)] != entry.line:
                problems.append(
                    Problem(
                        index_rel,
                        "duplicate",
                        f"line {entry.line}: {entry.target} is already listed on line "
                        f"{first_line[str(rel)]}",
                    )
                )
            else:
                first_line.setdefault(str(rel), entry.line)
    return problems, listed


def _limit_problems(index_rel: str, text: str) -> list[Problem]:
    messages = index_limit_problems(text)
    if not messages:
        return []
    cut = [e.target for e in past_limit(text)]
    message = "; ".join(messages)
    if cut:
        shown = ", ".join(cut[:10]) + (f" and {len(cut) - 10} more" if len(cut) > 10 else "")
        message += f"; Claude Code would not load {len(cut)} entries: {shown}"
    return [Problem(index_rel, "index-limit", message)]


def _index_problems(scan: _Scan, prefix: str, text: str) -> tuple[list[Problem], set[str]]:
    index_rel = prefix + INDEX_NAME
    problems = _limit_problems(index_rel, text)
    if index_version(text) > INDEX_VERSION:
        problems.append(
            Problem(index_rel, "index-version", "written by a newer teamsync; upgrade teamsync")
        )
    for number, line in enumerate(text.split("\n"), start=1):
        if len(line) > LONG_LINE_CHARS:
            problems.append(
                Problem(
                    index_rel,
                    "long-line",
                    f"line {number} is {len(line)} characters; keep entries under ~150",
                )
            )
    links, listed = _index_link_problems(scan, prefix, text)
    return problems + links, listed


def _wiki_names(scan: _Scan) -> set[str]:
    names = {rel.rsplit("/", 1)[-1].removesuffix(".md").casefold() for rel in scan.memories}
    names |= {(m.name or "").strip().casefold() for m in scan.memories.values()}
    return names - {""}


def _wiki_notes(scan: _Scan, texts: dict[str, str]) -> list[Problem]:
    """A ``[[name]]`` matching no memory's file stem or name (outside code)."""
    known = _wiki_names(scan)
    notes = []
    for rel, text in sorted(texts.items()):
        if "[[" not in text:
            continue
        for line in scan_index(text):
            for name in line.wiki:
                stem = name.removesuffix(".md").rsplit("/", 1)[-1].casefold()
                if stem not in known and name.casefold() not in known:
                    notes.append(
                        Problem(
                            rel,
                            "wiki-link",
                            f"line {line.number}: [[{name}]] names no memory (by file stem or "
                            "name); fix the link or write that memory",
                        )
                    )
    return notes


def _read_index(scan: _Scan, prefix: str) -> tuple[str | None, list[Problem]]:
    """The scope's index text (None when absent or unreadable) and problems reading it."""
    entry = scan.entries.get(prefix + INDEX_NAME)
    if entry is None:
        return None, []
    if entry.kind != "file":
        return None, [] if prefix else [Problem(entry.path, "unsafe-file", "not a regular file")]
    try:
        return load_text(entry, MAX_INDEX_READ), []
    except MemoryFormatError as exc:
        return None, [Problem(entry.path, "unreadable", exc.message)]


def _scope_problems(scan: _Scan, prefix: str, indexes: dict[str, str]) -> list[Problem]:
    members = sorted(rel for rel in scan.memories if _in_scope(rel, prefix))
    text, problems = _read_index(scan, prefix)
    if text is None:
        if members and not problems and (prefix + INDEX_NAME) not in scan.entries:
            problems.append(
                Problem(
                    prefix + INDEX_NAME,
                    "missing-index",
                    f"missing, but {len(members)} memory files exist; "
                    "run `teamsync check --fix` to create it",
                )
            )
        return problems
    indexes[prefix + INDEX_NAME] = text
    index_problems, listed = _index_problems(scan, prefix, text)
    problems.extend(index_problems)
    index_rel = prefix + INDEX_NAME
    problems.extend(
        Problem(rel, "orphan", f"not listed in {index_rel}; run `teamsync check --fix`")
        for rel in members
        if rel not in listed
    )
    return problems


def _report(scan: _Scan) -> LintReport:
    found = list(scan.problems)
    indexes: dict[str, str] = {}
    for prefix in ("", TEAM):
        found.extend(_scope_problems(scan, prefix, indexes))
    found.extend(_wiki_notes(scan, {**scan.texts, **indexes}))
    found.sort(key=lambda p: p.path)
    problems = [p for p in found if not p.is_note]
    return LintReport(problems, scan.count, [p for p in found if p.is_note])


def _require_dir(memdir: Path) -> None:
    if not memdir.is_dir():
        what = "is not a directory" if memdir.exists() else "does not exist"
        raise ConfigError(
            f"memory directory {memdir} {what}; "
            "pass --dir or set TEAMSYNC_DIR to the directory that holds MEMORY.md and team/"
        )


def check_memdir(memdir: Path) -> LintReport:
    """Lint ``memdir``: every problem (and note), sorted by path, plus the number of memory files."""
    _require_dir(memdir)
    return _report(_scan(memdir))


def lint_memdir(memdir: Path) -> list[Problem]:
    """Every problem in ``memdir`` (both indexes and every memory file), sorted by path."""
    return check_memdir(memdir).problems


def default_backup_dir() -> Path:
    """``$XDG_STATE_HOME/teamsync/index-backups`` (``~/.local/state/...``): never under team/."""
    from teamsync.config import Settings

    return Settings.build().state_dir / "index-backups"


def backup_index(backup_dir: Path, index_rel: str, data: bytes, now: float) -> Path:
    """Keep ``data`` as ``<backup_dir>/<UTC stamp>-<pid>/<index_rel>`` (created 0700)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now)) + f"-{os.getpid()}"
    target = backup_dir / stamp / index_rel
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return target


def _fix_scope(memdir: Path, scan: _Scan, prefix: str, backup_dir: Path, out: FixResult) -> None:
    """Apply the lossless fix to one index (backup first)."""
    index_rel = prefix + INDEX_NAME
    members = {
        rel.removeprefix(prefix): memory
        for rel, memory in scan.memories.items()
        if _in_scope(rel, prefix)
    }
    existing, _ = _read_index(scan, prefix)
    entry = scan.entries.get(index_rel)
    if entry is not None and (existing is None or entry.kind != "file"):
        return  # unreadable or not a regular file: reported, never replaced
    if not members and existing is None:
        return
    if existing is not None and index_version(existing) > INDEX_VERSION:
        raise MemoryFormatError(index_rel, "written by a newer teamsync; upgrade teamsync first")
    present = {rel.removeprefix(prefix) for rel in scan.entries if rel.startswith(prefix)}
    fix = fix_index_text(existing or "", members, present=present)
    out.left_out.extend(prefix + key for key in fix.past_limit)
    if fix.text == (existing or ""):
        if existing is not None:
            out.unchanged.append(index_rel)
        return
    if existing is not None:
        out.backups.append(
            backup_index(backup_dir, index_rel, existing.encode("utf-8"), time.time())
        )
    size = len(fix.text.encode("utf-8"))
    if size > MAX_INDEX_READ:
        raise MemoryFormatError(
            index_rel,
            f"the fixed index would be {size:,} bytes, more than teamsync reads back "
            f"({MAX_INDEX_READ:,}); Claude Code loads only the first {MAX_INDEX_LINES} lines or "
            f"{MAX_INDEX_BYTES:,} bytes of it: consolidate memories into fewer files",
        )
    with SafeDir(memdir / prefix if prefix else memdir) as target:
        # An index is held to the loader's limits (reported as index-limit), not to the
        # size rule for one memory file: the key rules and the secret scan still apply.
        safe_write(target, INDEX_NAME, fix.text, memory=False)
    out.written.append(index_rel)
    out.added.extend(prefix + key for key in fix.added)
    out.removed.extend(f"{index_rel}:{number}" for number in fix.removed)
    out.collapsed.extend(f"{index_rel}:{number}" for number in fix.collapsed)


def fix_memdir(memdir: Path, *, backup_dir: Path | None = None) -> FixResult:
    """Add missing entries to both indexes and drop dead ones, keeping every other line; lint again.

    Before an index is rewritten its old bytes are kept under ``backup_dir``
    (default: :func:`default_backup_dir`), which must lie outside ``team/`` so a
    backup never syncs.
    """
    _require_dir(memdir)
    backups = backup_dir if backup_dir is not None else default_backup_dir()
    team = os.path.realpath(memdir / "team")
    if os.path.realpath(backups) == team or os.path.realpath(backups).startswith(team + os.sep):
        raise ConfigError(f"index backups must not go under {memdir / 'team'}: they would sync")
    scan = _scan(memdir)
    out = FixResult([], [], [], [])
    for prefix in ("", TEAM):
        if prefix and not (memdir / "team").is_dir():
            continue
        _fix_scope(memdir, scan, prefix, backups, out)
    report = check_memdir(memdir)
    return replace(out, problems=report.problems, memories=report.memories, notes=report.notes)
