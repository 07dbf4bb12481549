"""Offline recall: rank memories with SQLite FTS5 and bm25 (standard library only).

The index covers every ``*.md`` memory under the memory directory (``team/``
included, ``MEMORY.md`` excluded) with four columns weighted for bm25: the
path's words, ``name``, ``description`` (what recall is meant to read) and the
body. The tokenizer is FTS5's ``porter unicode61``: snake_case, kebab-case and
path separators already split there; camelCase/PascalCase identifiers are
split here and added as extra tokens, so ``parseMemoryFile`` also matches
``parse memory file``.

A query becomes an OR of its terms with prefix matching, after dropping stop
words and adding the small hand-written expansion table in
:mod:`teamsync.recall.synonyms` (engineering synonyms, documented there).

The index is cached in a SQLite file (under ``Settings.cache_dir``) keyed by
each file's (path, mtime, size, inode), so a query re-reads only files that
changed since the last one. Symlinks and other non-regular files are never
indexed (recall must not follow a link out of the memory directory).
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from teamsync.recall.synonyms import expand_terms

SCHEMA_VERSION = 3
INDEX_NAME = "MEMORY.md"
TEMP_PREFIX = ".teamsync-tmp-"
COLUMN_WEIGHTS = (2.0, 3.0, 4.0, 1.0)  # path words, name, description, body
MAX_FILE_BYTES = 250_000
MAX_QUERY_TERMS = 48
EXPANSION_WEIGHT = 0.4
CANDIDATES = 200

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_HAS_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FIELD = re.compile(r"^(name|description|type)[ \t]*:[ \t]*(.*?)[ \t]*$", re.MULTILINE)

STOP_WORDS = frozenset(
    """a about after again all also am an and any are as at be been before being both but by
    can could did do does doing done for from get got had has have having he her here how i if
    in into is it its just let me more most my no nor not of off on once only or other our out
    over own same she should so some such than that the their them then there these they this
    those through to too under until up very via was we were what when where which while who
    whom why will with would you your""".split()
)


@dataclass(frozen=True)
class Hit:
    """One ranked memory: its key relative to the memory dir and a bm25 score (higher is better)."""

    path: str
    score: float
    matched: tuple[str, ...] = ()


@dataclass(frozen=True)
class Fields:
    """What the index stores for one memory."""

    name: str
    description: str
    body: str


def split_identifiers(text: str) -> str:
    """Return the extra tokens for camelCase/PascalCase words in ``text`` (space separated)."""
    extra: list[str] = []
    for word in _WORD.findall(text):
        if _HAS_CAMEL.search(word):
            extra.extend(part.lower() for part in _CAMEL_PART.findall(word))
    return " ".join(extra)


def _augment(text: str) -> str:
    extra = split_identifiers(text)
    return f"{text}\n{extra}" if extra else text


def path_words(key: str) -> str:
    """The searchable words of a memory key: ``team/deploy-freeze.md`` -> ``deploy-freeze``."""
    stem = key[:-3] if key.endswith(".md") else key
    parts = stem.split("/")
    if parts and parts[0] == "team":
        parts = parts[1:]
    return " ".join(parts)


def extract_fields(text: str) -> Fields:
    """Split a memory into name/description/body without a YAML parser (fast and hang-proof).

    Only flat ``key: value`` lines are read; anything else in the frontmatter
    stays searchable as body text.
    """
    match = _FRONTMATTER.match(text)
    if match is None:
        return Fields("", "", text)
    found = {k: v.strip("'\"") for k, v in _FIELD.findall(match.group(1))}
    rest = _FIELD.sub("", match.group(1))
    body = text[match.end() :]
    return Fields(found.get("name", ""), found.get("description", ""), f"{rest}\n{body}")


def query_terms(query: str) -> list[str]:
    """Lower-cased search terms: words, camelCase parts, minus stop words (unless nothing is left)."""
    words = [w.lower() for w in _WORD.findall(query)]
    words += split_identifiers(query).split()
    kept = [w for w in words if w not in STOP_WORDS] or words
    return list(dict.fromkeys(kept))


_SUFFIXES = ("ments", "ment", "ings", "ing", "ions", "ion", "ers", "er", "ed", "es", "s", "y")


def _root(term: str) -> str:
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= 4:
            return term[: -len(suffix)]
    return term


def match_expression(terms: Sequence[str]) -> str:
    """The FTS5 MATCH expression: an OR of quoted terms, prefix-matched from 3 characters.

    Porter stems inflections inconsistently (``deploy`` -> ``deploi`` but
    ``deployment`` -> ``deploy``), so a crude root prefix is added as well.
    """
    parts: list[str] = []
    for raw in terms:
        term = raw.replace('"', "")
        if not term:
            continue
        quoted = '"' + term + '"'
        parts.append(quoted + "*" if len(term) >= 3 else quoted)
        root = _root(term)
        if root != term:
            parts.append('"' + root + '"*')
    return " OR ".join(dict.fromkeys(parts))


def iter_memory_files(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Yield (posix key, lstat) for every regular ``*.md`` memory below ``root``; never follows links."""
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.startswith(TEMP_PREFIX):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if not name.startswith("."):
                    stack.append((entry.path, f"{prefix}{name}/"))
            elif stat.S_ISREG(st.st_mode) and name.endswith(".md") and name != INDEX_NAME:
                yield f"{prefix}{name}", st


def _read_memory(root: Path, key: str) -> str | None:
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
    return data.decode("utf-8", errors="replace")


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
                "DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS fts;"
                "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL,"
                " mtime_ns INTEGER, size INTEGER, ino INTEGER);"
                "CREATE VIRTUAL TABLE fts USING fts5(path, name, description, body,"
                " tokenize='porter unicode61 remove_diacritics 2', prefix='3');"
                f"PRAGMA user_version = {SCHEMA_VERSION};"
            )
        return db

    def close(self) -> None:
        self._db.close()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM files").fetchone()[0])

    def refresh(self) -> int:
        """Bring the index up to date with the directory; returns how many files were re-read."""
        on_disk = {
            k: (st.st_mtime_ns, st.st_size, st.st_ino) for k, st in iter_memory_files(self.memdir)
        }
        cached = {
            row[0]: (row[1], row[2], row[3], row[4])
            for row in self._db.execute("SELECT path, mtime_ns, size, ino, id FROM files")
        }
        changed = [k for k, sig in on_disk.items() if cached.get(k, (None,))[:3] != sig]
        removed = [cached[k][3] for k in cached.keys() - on_disk.keys()]
        if not changed and not removed:
            return 0
        with self._db:
            for key in changed:
                if key in cached:
                    removed.append(cached[key][3])
            self._db.executemany("DELETE FROM fts WHERE rowid = ?", [(i,) for i in removed])
            self._db.executemany("DELETE FROM files WHERE id = ?", [(i,) for i in removed])
            for key in changed:
                self._insert(key, on_disk[key])
        return len(changed)

    def _insert(self, key: str, sig: tuple[int, int, int]) -> None:
        text = _read_memory(self.memdir, key)
        if text is None:
            return
        fields = extract_fields(text)
        cur = self._db.execute(
            "INSERT INTO files(path, mtime_ns, size, ino) VALUES (?, ?, ?, ?)", (key, *sig)
        )
        self._db.execute(
            "INSERT INTO fts(rowid, path, name, description, body) VALUES (?, ?, ?, ?, ?)",
            (
                cur.lastrowid,
                _augment(path_words(key)),
                _augment(fields.name),
                _augment(fields.description),
                _augment(fields.body),
            ),
        )

    def search(
        self, query: str, limit: int = 5, *, explain: bool = False, expand: bool = True
    ) -> list[Hit]:
        """Rank memories for ``query`` (best first). Call :meth:`refresh` first.

        Expansion words (see :mod:`teamsync.recall.synonyms`) are ranked in a
        second bm25 pass whose score counts :data:`EXPANSION_WEIGHT` times, so
        a memory that shares the user's own words wins over one that only
        shares a synonym.
        """
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        extra = expand_terms(terms)[len(terms) : MAX_QUERY_TERMS] if expand else []
        scores = self._rank(terms, CANDIDATES)
        for rowid, score in self._rank(extra, CANDIDATES).items():
            scores[rowid] = scores.get(rowid, 0.0) + EXPANSION_WEIGHT * score
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
        paths = self._paths([rowid for rowid, _ in best])
        matched = self._matched_terms([r for r, _ in best], [*terms, *extra]) if explain else {}
        return [Hit(paths[r], round(s, 4), matched.get(r, ())) for r, s in best if r in paths]

    def _rank(self, terms: Sequence[str], limit: int) -> dict[int, float]:
        if not terms:
            return {}
        weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
        rows = self._db.execute(
            f"SELECT rowid, bm25(fts, {weights}) AS rank FROM fts WHERE fts MATCH ?"
            " ORDER BY rank LIMIT ?",
            (match_expression(terms), limit),
        )
        return {rowid: -rank for rowid, rank in rows}

    def _paths(self, rowids: list[int]) -> dict[int, str]:
        marks = ",".join("?" * len(rowids))
        sql = f"SELECT id, path FROM files WHERE id IN ({marks})"
        return dict(self._db.execute(sql, rowids).fetchall())

    def _matched_terms(self, rowids: list[int], terms: Sequence[str]) -> dict[int, tuple[str, ...]]:
        found: dict[int, list[str]] = {}
        marks = ",".join("?" * len(rowids))
        for term in terms:
            expr = match_expression([term])
            sql = f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid IN ({marks})"
            for (rowid,) in self._db.execute(sql, (expr, *rowids)):
                found.setdefault(rowid, []).append(term)
        return {k: tuple(v) for k, v in found.items()}


def lexical_search(
    memdir: Path,
    query: str,
    limit: int = 5,
    *,
    cache_path: Path | None = None,
    explain: bool = False,
) -> list[Hit]:
    """Refresh the (cached) index for ``memdir`` and rank ``query``; the one-call entry point."""
    index = LexicalIndex(memdir, cache_path)
    try:
        index.refresh()
        return index.search(query, limit, explain=explain)
    finally:
        index.close()
