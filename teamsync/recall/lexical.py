"""Offline recall: rank memories with SQLite FTS5 and bm25 (standard library only).

The index covers every ``*.md`` memory under the memory directory (``team/``
included, ``MEMORY.md`` excluded) with four columns weighted for bm25: the
path's words, ``name``, ``description`` (what recall is meant to read) and the
body. The tokenizer is FTS5's ``porter unicode61``: snake_case, kebab-case and
path separators already split there; camelCase/PascalCase identifiers are
split by :mod:`teamsync.recall.tokens` and added as extra tokens, so
``parseMemoryFile`` also matches ``parse memory file``.

A query becomes an OR of its terms with prefix matching, after dropping stop
words. A relevance floor keeps only memories whose matched terms carry at
least :data:`FLOOR` of the query's idf weight (:meth:`LexicalIndex.coverage`):
a query about something no memory mentions returns nothing. (The hand-written
synonym table that used to expand queries was retired: its matches never
clear the floor, and the embedding extra handles paraphrases; see
``docs/recall.md``.)

The index is cached in a SQLite file (under ``Settings.cache_dir``) keyed by
each file's (path, mtime, size, inode), so a query re-reads only files that
changed since the last one. Symlinks and other non-regular files are never
indexed (recall must not follow a link out of the memory directory).
"""

from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from teamsync import _walk
from teamsync.limits import INDEX_NAME, MAX_MEMORY_BYTES
from teamsync.recall import langs
from teamsync.recall.tokens import (
    Unit,
    augment,
    extract_fields,
    path_words,
    query_units,
)

SCHEMA_VERSION = 6
COLUMN_WEIGHTS = (2.0, 3.0, 4.0, 1.0, 1.0)  # path words, name, description, body, norm
MAX_FILE_BYTES = MAX_MEMORY_BYTES
MAX_QUERY_TERMS = 48
CANDIDATES = 200
RACY_NS = 2_000_000_000
FLOOR_DEPTH = 50
FLOOR = 0.39
"""A memory is returned only when the terms it matches carry at least this share of the
query's idf weight (see :meth:`LexicalIndex.coverage`). Chosen on the six bench sets
(``docs/recall.md``): the lowest floor at which every set's no-answer queries return at
most 0.75 memories, a quarter below the target of 1, because a floor chosen at exactly 1
returned 1.00-1.24 on sets written blind after it; leave-one-set-out, every held-out set
stays at most 1 (0.00-0.80)."""


@dataclass(frozen=True)
class Hit:
    """One ranked memory: its key relative to the memory dir and a bm25 score (higher is better)."""

    path: str
    score: float
    matched: tuple[str, ...] = ()
    coverage: float = 1.0
    """share of the query's idf weight carried by the terms this memory matches"""


def iter_memory_files(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Yield (posix key, lstat) for every regular ``*.md`` memory below ``root``; never follows links.

    File types come from ``readdir`` (no syscall); only memory files are stat'ed.
    """
    for key, entry in _walk.walk(root, sort=False):
        name = entry.name
        if not name.endswith(".md") or name == INDEX_NAME:
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode):
                    yield key, st
        except OSError:
            continue


def read_memory(root: Path, key: str) -> bytes | None:
    """Read one memory without following a symlink at its last component."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(root / key, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        return None
    return data


def _digest(signatures: list[tuple[str, int, int, int]]) -> str:
    """An order-independent digest of the directory's file signatures."""
    lines = sorted(f"{k}\0{m}\0{s}\0{i}" for k, m, s, i in signatures)
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def default_cache_path(cache_dir: Path, memdir: Path) -> Path:
    """Where the FTS cache for ``memdir`` lives under ``cache_dir``."""
    digest = hashlib.sha256(str(memdir.resolve()).encode("utf-8")).hexdigest()[:16]
    return cache_dir / "recall" / f"fts-{digest}.sqlite"


class LexicalIndex:
    """An FTS5 index over one memory directory, cached on disk or held in memory."""

    def __init__(self, memdir: Path, cache_path: Path | None = None) -> None:
        self.memdir = memdir
        self.cache_path = cache_path
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        if self.cache_path is None:
            return self._init(sqlite3.connect(":memory:"))
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._init(sqlite3.connect(self.cache_path, timeout=10))
        except sqlite3.DatabaseError:  # a corrupt cache is only a cache: rebuild it
            self.cache_path.unlink(missing_ok=True)
            return self._init(sqlite3.connect(self.cache_path, timeout=10))

    @staticmethod
    def _init(db: sqlite3.Connection) -> sqlite3.Connection:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            db.executescript(
                "DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS fts; DROP TABLE IF EXISTS meta;"
                "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL,"
                " mtime_ns INTEGER, size INTEGER, ino INTEGER, sha TEXT, lang TEXT);"
                "CREATE VIRTUAL TABLE fts USING fts5(path, name, description, body, norm,"
                " tokenize='porter unicode61 remove_diacritics 2', prefix='3');"
                f"PRAGMA user_version = {SCHEMA_VERSION};"
            )
        return db

    def close(self) -> None:
        self._db.close()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM files").fetchone()[0])

    def refresh(self) -> int:
        """Bring the index up to date with the directory; returns how many files were re-read.

        Every memory file is stat'ed (an in-place edit changes no directory), and
        a digest of all ``(path, mtime_ns, size, inode)`` signatures is compared
        with the one stored at the last refresh: equal means nothing to do. A file
        modified less than two seconds before it was indexed is re-read next time
        (an edit within the same timestamp tick could keep mtime and size).
        """
        on_disk = [
            (key, st.st_mtime_ns, st.st_size, st.st_ino)
            for key, st in iter_memory_files(self.memdir)
        ]
        digest = _digest(on_disk)
        if digest == self._meta("digest"):
            return 0
        current = set(on_disk)
        cached = set(self._db.execute("SELECT path, mtime_ns, size, ino FROM files"))
        changed = current - cached
        stale_paths = {row[0] for row in cached - current} | {row[0] for row in changed}
        racy = time.time_ns() - RACY_NS
        with self._db:
            for path in stale_paths:
                row = self._db.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
                if row is not None:
                    self._db.execute("DELETE FROM fts WHERE rowid = ?", row)
                    self._db.execute("DELETE FROM files WHERE id = ?", row)
            for key, mtime_ns, size, ino in changed:
                # a file modified within the timestamp granularity may change again with the
                # same (mtime, size): record it as unknown so the next refresh re-reads it
                self._insert(key, (mtime_ns if mtime_ns < racy else -1, size, ino))
            trusted = all(mtime_ns < racy for _, mtime_ns, _, _ in changed)
            self._set_meta("digest", digest if trusted else "")
        return len(changed)

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def _insert(self, key: str, sig: tuple[int, int, int]) -> None:
        data = read_memory(self.memdir, key)
        if data is None:
            return
        fields = extract_fields(data.decode("utf-8", errors="replace"))
        sha = hashlib.sha256(data).hexdigest()
        words = path_words(key)
        text = "\n".join((words, fields.name, fields.description, fields.body))
        lang = langs.detect(text)
        cur = self._db.execute(
            "INSERT INTO files(path, mtime_ns, size, ino, sha, lang) VALUES (?, ?, ?, ?, ?, ?)",
            (key, *sig, sha, lang),
        )
        self._db.execute(
            "INSERT INTO fts(rowid, path, name, description, body, norm) VALUES (?, ?, ?, ?, ?, ?)",
            (
                cur.lastrowid,
                augment(words),
                augment(fields.name),
                augment(fields.description),
                augment(fields.body),
                langs.normalized(text, lang),
            ),
        )

    def languages(self) -> dict[str, int]:
        """How many indexed memories are in each language (:func:`teamsync.recall.langs.detect`)."""
        rows = self._db.execute("SELECT lang, count(*) FROM files GROUP BY lang")
        return {str(lang): int(n) for lang, n in rows}

    def files(self) -> list[tuple[int, str, str]]:
        """Every indexed memory as ``(rowid, path, content sha256)``."""
        return self._db.execute("SELECT id, path, sha FROM files").fetchall()

    def search(
        self,
        query: str,
        limit: int = 5,
        *,
        explain: bool = False,
        floor: float | None = FLOOR,
    ) -> list[Hit]:
        """Rank memories for ``query`` (best first, at most ``limit``). Call :meth:`refresh` first.

        With ``floor`` (the default) a memory is kept only when its
        :meth:`coverage` reaches it: a query none of whose distinctive words a
        memory shares returns nothing rather than the five least bad memories;
        ``floor=None`` is plain bm25 (the bench's baseline).
        """
        terms = query_units(query)
        if not terms or limit <= 0:
            return []
        terms = terms[:MAX_QUERY_TERMS]
        scores = self._rank(terms, CANDIDATES)
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        if floor is None:
            best = best[:limit]
        else:  # a memory that clears the floor ranks high in bm25: look no deeper than this
            best = best[: max(limit, FLOOR_DEPTH)]
        need_terms = explain or floor is not None
        matched = self._matched_terms([r for r, _ in best], terms) if need_terms else {}
        cover = self.coverage(terms, matched) if need_terms else {}
        kept = [(r, s) for r, s in best if floor is None or cover.get(r, 0.0) >= floor][:limit]
        paths = self._paths([rowid for rowid, _ in kept])
        return [
            Hit(
                paths[r],
                round(s, 4),
                tuple(u.text for u in matched.get(r, ())) if explain else (),
                round(cover.get(r, 1.0), 4),
            )
            for r, s in kept
            if r in paths
        ]

    def candidates(self, query: str, depth: int = CANDIDATES) -> list[Hit]:
        """The bm25 candidates for hybrid fusion: every match up to ``depth``, with coverage."""
        terms = query_units(query)[:MAX_QUERY_TERMS]
        if not terms:
            return []
        best = sorted(self._rank(terms, depth).items(), key=lambda item: (-item[1], item[0]))
        matched = self._matched_terms([r for r, _ in best], terms)
        cover = self.coverage(terms, matched)
        paths = self._paths([r for r, _ in best])
        return [
            Hit(
                paths[r],
                round(s, 4),
                tuple(u.text for u in matched.get(r, ())),
                round(cover.get(r, 0.0), 4),
            )
            for r, s in best
            if r in paths
        ]

    def coverage(
        self, terms: Sequence[Unit], matched: dict[int, tuple[Unit, ...]]
    ) -> dict[int, float]:
        """Per memory: the idf weight of the query terms it matches over the query's total.

        idf is bm25's, ``ln(1 + (N - df + 0.5) / (df + 0.5))``; a word no memory
        holds has the highest weight, so a query about something the directory
        never mentions covers little of any memory.
        """
        total_docs = len(self)
        weights = {t: self._idf(t, total_docs) for t in terms}
        whole = sum(weights.values()) or 1.0
        return {r: sum(weights.get(t, 0.0) for t in found) / whole for r, found in matched.items()}

    def _idf(self, term: Unit, total_docs: int) -> float:
        expression = term.expression
        if not expression:
            return 0.0
        row = self._db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (expression,))
        df = int(row.fetchone()[0])
        return math.log(1.0 + (total_docs - df + 0.5) / (df + 0.5))

    def _rank(self, terms: Sequence[Unit], limit: int) -> dict[int, float]:
        expression = " OR ".join(f"({t.expression})" for t in terms if t.expression)
        if not expression:
            return {}
        weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
        rows = self._db.execute(
            f"SELECT rowid, bm25(fts, {weights}) AS rank FROM fts WHERE fts MATCH ?"
            " ORDER BY rank LIMIT ?",
            (expression, limit),
        )
        return {rowid: -rank for rowid, rank in rows}

    def _paths(self, rowids: list[int]) -> dict[int, str]:
        marks = ",".join("?" * len(rowids))
        sql = f"SELECT id, path FROM files WHERE id IN ({marks})"
        return dict(self._db.execute(sql, rowids).fetchall())

    def _matched_terms(
        self, rowids: list[int], terms: Sequence[Unit]
    ) -> dict[int, tuple[Unit, ...]]:
        """Which of ``terms`` each of ``rowids`` matches (in the order of ``terms``).

        Each term's matches are read whole and intersected here: at 10,000
        memories that is 26 times faster than filtering the match with
        ``rowid IN (...)`` over 200 candidates, and the same answer.
        """
        wanted = set(rowids)
        found: dict[int, list[Unit]] = {}
        if not wanted:
            return {}
        for term in terms:
            expr = term.expression
            if not expr:
                continue
            for (rowid,) in self._db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (expr,)):
                if rowid in wanted:
                    found.setdefault(rowid, []).append(term)
        return {k: tuple(v) for k, v in found.items()}


def _speculate(
    memdir: Path,
    cache_path: Path,
    query: str,
    limit: int,
    explain: bool,
    floor: float | None,
    out: list[list[Hit]],
) -> None:
    """Rank against the cache as it is (run in a thread: SQLite releases the GIL)."""
    try:
        index = LexicalIndex(memdir, cache_path)
        try:
            out.append(index.search(query, limit, explain=explain, floor=floor))
        finally:
            index.close()
    except sqlite3.Error:
        return


def lexical_search(
    memdir: Path,
    query: str,
    limit: int = 5,
    *,
    cache_path: Path | None = None,
    explain: bool = False,
    floor: float | None = FLOOR,
) -> list[Hit]:
    """Refresh the (cached) index for ``memdir`` and rank ``query``; the one-call entry point.

    With an on-disk cache the query runs speculatively against the cache in a
    thread while this thread stat-walks the directory; when nothing changed
    (the common case) that answer is used, otherwise the query runs again on
    the refreshed index.
    """
    index = LexicalIndex(memdir, cache_path)
    try:
        if cache_path is None or len(index) == 0:
            index.refresh()
            return index.search(query, limit, explain=explain, floor=floor)
        found: list[list[Hit]] = []
        worker = threading.Thread(
            target=_speculate, args=(memdir, cache_path, query, limit, explain, floor, found)
        )
        worker.start()
        changed = index.refresh()
        worker.join()
        if changed or not found:
            return index.search(query, limit, explain=explain, floor=floor)
        return found[0]
    finally:
        index.close()
