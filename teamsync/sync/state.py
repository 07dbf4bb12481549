"""The base store: what was last synced, per key, for one (team dir, remote) pair.

Three-way reconciliation needs, for every key, the checksum both sides last
agreed on (the *base*) and that content itself (the merge base). They live in
one SQLite file under ``Settings.state_dir/sync/``, named by a hash of the real
team directory and the remote's identity, never inside ``team/`` and never
synced. Every update is one SQLite transaction (atomic and durable with
``synchronous=FULL``), and callers advance the base only after the file writes
it describes have been fsynced.

It also records what the remote last held (:class:`RemoteMark`: its version,
and the server's version counter where there is one), so a remote that lost
history is recognised instead of read as a change; and it keeps every content
a sync replaced or removed (the ``past`` table, :data:`KEEP_VERSIONS` per key),
so ``teamsync restore`` can bring a deleted or overwritten memory back.

For the REST backend it caches the remote's last listing
(:class:`RemoteListing`: the store's ETag, per-key hashes and change times,
refused keys, the advertised extensions), so the next run, in another
process, sends ``If-None-Match`` and a no-change sync costs one 304. The
listing is only ever what the server last said under that ETag; the base,
not the listing, decides what is a change.

It remembers which contents (by checksum) the secret scan passed on this
machine, under which scanner (:func:`teamsync.security.guard.scanner_identity`),
so a content is scanned once here, not on every pull, push or retry.

The store also caches ``(size, mtime_ns, inode) -> checksum`` for local files,
so a no-op sync does not re-read unchanged files. An entry whose mtime is not
safely older than the moment it was recorded is not trusted (git's "racily
clean" rule).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from teamsync._walk import walk

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA_VERSION = 2
KEEP_VERSIONS = 20
"""Past versions kept per key (the oldest go first)."""
KEEP_RENAMES = 10_000
"""Recorded renames kept (the oldest go first)."""
RACY_NS = 2_000_000_000
"""A stat entry is trusted only if the file's mtime is this much older than the recording."""
NOOP_META = "noop_version"
"""Meta row of the no-op certificate: withdrawn by every write transaction."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS base (key TEXT PRIMARY KEY, checksum TEXT NOT NULL, content TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS past (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, checksum TEXT NOT NULL,
    content TEXT NOT NULL, at REAL NOT NULL, why TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS past_key ON past (key, id);
CREATE TABLE IF NOT EXISTS listing (
    key TEXT PRIMARY KEY, checksum TEXT NOT NULL, changed_at REAL, rejected TEXT
);
CREATE TABLE IF NOT EXISTS listing_deleted (
    key TEXT PRIMARY KEY, at REAL NOT NULL, checksum TEXT
);
CREATE TABLE IF NOT EXISTS renamed (
    old TEXT NOT NULL, new TEXT NOT NULL, checksum TEXT NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (old, new)
);
CREATE TABLE IF NOT EXISTS vetted (checksum TEXT PRIMARY KEY, identity TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stat (
    key TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL, checksum TEXT NOT NULL, seen_ns INTEGER NOT NULL
);
"""


class FileStat(NamedTuple):
    size: int
    mtime_ns: int
    ino: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileStat:
        return cls(st.st_size, st.st_mtime_ns, st.st_ino)


def store_path(state_dir: Path, team_root: Path, remote_id: str) -> Path:
    """Where the base for (real team dir, remote) lives."""
    import hashlib

    real = os.path.realpath(team_root)
    digest = hashlib.sha256(f"{real}\0{remote_id}".encode()).hexdigest()[:32]
    return state_dir / "sync" / f"{digest}.sqlite3"


class RemoteMark(NamedTuple):
    """What the remote held when this machine last synced with it."""

    version: str | None
    """Snapshot version (REST store checksum, git commit); None: nothing there yet."""
    serial: int | None = None
    """The server's monotonic version counter, when it sends one."""


class RemoteListing(NamedTuple):
    """The remote's last answer under ``etag`` (REST): enough to rebuild its snapshot on a 304."""

    etag: str
    version: str | None
    serial: int | None
    checksums: Mapping[str, str]
    changed_at: Mapping[str, float]
    rejected: Mapping[str, str]
    """key -> why it was refused (listed keys only; content refusals are found at fetch)."""
    extensions: frozenset[str] | None = None
    deleted: Mapping[str, float] = MappingProxyType({})
    """The listing's ``deletedEntries``: key -> when it was deleted (POSIX time)."""
    deleted_sums: Mapping[str, str] = MappingProxyType({})
    """The listing's ``deletedChecksums``: key -> checksum of what was deleted."""


class PastVersion(NamedTuple):
    """A content this machine held for ``key`` before a sync replaced or removed it."""

    id: int
    key: str
    checksum: str
    content: str
    at: float
    """When it was replaced or removed (POSIX time)."""
    why: str
    """``deleted`` (the key went away) or ``replaced`` (a newer content took its place)."""


class BaseStore:
    """Per-key base checksums and contents, plus the local stat cache."""

    def __init__(self, path: Path, *, remote_id: str = "", team: str = "") -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        with self.transaction():
            self._set_meta("schema", str(SCHEMA_VERSION))
            if remote_id:
                self._set_meta("remote", remote_id)
            if team:
                self._set_meta("team", team)
        self._stats: dict[str, tuple[FileStat, str, int]] | None = None

    @classmethod
    def open_readonly(cls, path: Path) -> BaseStore | None:
        """The store at ``path`` for reading only (no schema or meta written), or None.

        Every read sees one snapshot: a read transaction is held until :meth:`close`.
        """
        if not os.path.isfile(path):
            return None
        store = cls.__new__(cls)
        store.path = path
        try:
            store._db = sqlite3.connect(_ro_uri(path), uri=True, isolation_level=None)
            store._db.execute("BEGIN")
        except sqlite3.Error:
            return None
        store._stats = None
        return store

    @classmethod
    def open(cls, state_dir: Path, team_root: Path, remote_id: str) -> BaseStore:
        return cls(
            store_path(state_dir, team_root, remote_id),
            remote_id=remote_id,
            team=os.path.realpath(team_root),
        )

    def close(self) -> None:
        self._db.close()

    def transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _set_meta(self, name: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, value))

    # -- base ---------------------------------------------------------------
    def checksums(self) -> dict[str, str]:
        """key -> base checksum for every key that was ever synced and not deleted."""
        return dict(self._db.execute("SELECT key, checksum FROM base"))

    def content(self, key: str) -> str | None:
        row = self._db.execute("SELECT content FROM base WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def advance(self, entries: Mapping[str, tuple[str, str] | None]) -> None:
        """Set ``key -> (checksum, content)``, or forget the key (``None``), in one transaction.

        The content a key held before is kept among its past versions.
        """
        if not entries:
            return
        now = time.time()
        keys = list(entries)
        with self.transaction():
            before: dict[str, tuple[str, str]] = {}
            for start in range(0, len(keys), 500):  # one query per 500 keys, not one per key
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, checksum, content FROM base WHERE key IN ({marks})", chunk
                )
                before.update((str(k), (str(c), str(t))) for k, c, t in rows)
            for key, value in entries.items():
                old = before.get(key)
                if old is not None and (value is None or value[0] != old[0]):
                    self._keep_past(
                        key, old[0], old[1], now, "deleted" if value is None else "replaced"
                    )
            self._db.executemany(
                "DELETE FROM base WHERE key = ?", [(k,) for k, v in entries.items() if v is None]
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO base VALUES (?, ?, ?)",
                [(k, *v) for k, v in entries.items() if v is not None],
            )

    # -- past versions ----------------------------------------------------------
    def _keep_past(self, key: str, check: str, content: str, at: float, why: str) -> None:
        self._db.execute(
            "INSERT INTO past (key, checksum, content, at, why) VALUES (?, ?, ?, ?, ?)",
            (key, check, content, at, why),
        )
        self._db.execute(
            "DELETE FROM past WHERE key = ? AND id NOT IN "
            "(SELECT id FROM past WHERE key = ? ORDER BY id DESC LIMIT ?)",
            (key, key, KEEP_VERSIONS),
        )

    def keep_past(self, key: str, check: str, content: str, why: str) -> None:
        """Record ``content`` as a past version of ``key`` (e.g. before a restore overwrites it)."""
        with self.transaction():
            self._keep_past(key, check, content, time.time(), why)

    def past(self, key: str | None = None) -> list[PastVersion]:
        """Past versions, newest first (of ``key``, or of every key)."""
        sql = "SELECT id, key, checksum, content, at, why FROM past"
        rows = (
            self._db.execute(sql + " WHERE key = ? ORDER BY id DESC", (key,))
            if key is not None
            else self._db.execute(sql + " ORDER BY id DESC")
        )
        return [PastVersion(int(i), k, c, t, float(a), w) for i, k, c, t, a, w in rows]

    def past_checksums(self, key: str) -> set[str]:
        rows = self._db.execute("SELECT checksum FROM past WHERE key = ?", (key,))
        return {str(r[0]) for r in rows}

    def known_checksums(self) -> set[str]:
        """Every checksum this machine holds or held under any key (base and past)."""
        rows = self._db.execute("SELECT checksum FROM base UNION SELECT checksum FROM past")
        return {str(r[0]) for r in rows}

    # -- renames a sync applied ---------------------------------------------------
    def record_renames(self, moves: Iterable[tuple[str, str, str]]) -> None:
        """Remember ``(old, new, checksum)`` renames that a sync applied here or pushed."""
        rows = [(old, new, check, time.time()) for old, new, check in moves]
        if rows:
            with self.transaction():
                self._db.executemany("INSERT OR REPLACE INTO renamed VALUES (?, ?, ?, ?)", rows)
                self._db.execute(
                    "DELETE FROM renamed WHERE rowid NOT IN "
                    "(SELECT rowid FROM renamed ORDER BY at DESC LIMIT ?)",
                    (KEEP_RENAMES,),
                )

    def renames(self) -> list[tuple[str, str]]:
        """Every recorded ``(old, new)`` rename, oldest first."""
        rows = self._db.execute("SELECT old, new FROM renamed ORDER BY at, old, new")
        return [(str(o), str(n)) for o, n in rows]

    def renamed_keys(self) -> set[str]:
        """Every key a recorded rename came from or went to."""
        rows = self._db.execute("SELECT old FROM renamed UNION SELECT new FROM renamed")
        return {str(r[0]) for r in rows}

    # -- the remote's last known state -------------------------------------------
    def remote_mark(self) -> RemoteMark | None:
        """What the remote held at the last completed sync; None before the first one."""
        rows = dict(
            self._db.execute(
                "SELECT name, value FROM meta WHERE name IN ('remote_version', 'remote_serial')"
            )
        )
        if "remote_version" not in rows:
            return None
        version = rows["remote_version"] or None
        serial = rows.get("remote_serial") or ""
        return RemoteMark(version, int(serial) if serial.isdigit() else None)

    def set_remote_mark(self, mark: RemoteMark) -> None:
        with self.transaction():
            self._set_meta("remote_version", mark.version or "")
            self._set_meta("remote_serial", "" if mark.serial is None else str(mark.serial))

    # -- the remote's last listing (REST conditional reads) ------------------------
    def listing(self) -> RemoteListing | None:
        """The cached listing, or None (never cached, or cleared)."""
        rows = dict(
            self._db.execute(
                "SELECT name, value FROM meta WHERE name IN "
                "('listing_etag', 'listing_version', 'listing_serial', 'listing_exts')"
            )
        )
        etag = rows.get("listing_etag") or ""
        if not etag:
            return None
        sums: dict[str, str] = {}
        times: dict[str, float] = {}
        refused: dict[str, str] = {}
        for key, check, at, why in self._db.execute(
            "SELECT key, checksum, changed_at, rejected FROM listing"
        ):
            if why is not None:
                refused[key] = str(why)
                continue
            sums[key] = str(check)
            if at is not None:
                times[key] = float(at)
        serial = rows.get("listing_serial") or ""
        exts = rows.get("listing_exts")
        gone: dict[str, float] = {}
        gone_sums: dict[str, str] = {}
        for key, at, check in self._db.execute("SELECT key, at, checksum FROM listing_deleted"):
            gone[str(key)] = float(at)
            if check is not None:
                gone_sums[str(key)] = str(check)
        return RemoteListing(
            etag=etag,
            version=rows.get("listing_version") or None,
            serial=int(serial) if serial.isdigit() else None,
            checksums=sums,
            changed_at=times,
            rejected=refused,
            extensions=None if exts is None else frozenset(x for x in exts.split(",") if x),
            deleted=gone,
            deleted_sums=gone_sums,
        )

    def save_listing(self, listing: RemoteListing | None) -> None:
        """Replace the cached listing in one transaction (None: forget it)."""
        with self.transaction():
            self._db.execute("DELETE FROM listing")
            self._db.execute("DELETE FROM listing_deleted")
            self._db.execute("DELETE FROM meta WHERE name LIKE 'listing_%'")
            if listing is None:
                return
            self._db.executemany(
                "INSERT INTO listing_deleted VALUES (?, ?, ?)",
                [(k, at, listing.deleted_sums.get(k)) for k, at in listing.deleted.items()],
            )
            rows: list[tuple[str, str, float | None, str | None]]
            rows = [(k, c, listing.changed_at.get(k), None) for k, c in listing.checksums.items()]
            rows += [(k, "", None, why) for k, why in listing.rejected.items()]
            self._db.executemany("INSERT OR REPLACE INTO listing VALUES (?, ?, ?, ?)", rows)
            self._set_meta("listing_etag", listing.etag)
            self._set_meta("listing_version", listing.version or "")
            self._set_meta("listing_serial", "" if listing.serial is None else str(listing.serial))
            if listing.extensions is not None:
                self._set_meta("listing_exts", ",".join(sorted(listing.extensions)))

    # -- contents the secret scan passed here -------------------------------------
    def vetted(self, checksums: Iterable[str], identity: str) -> set[str]:
        """Those of ``checksums`` that were scanned clean here under ``identity``."""
        wanted = set(checksums)
        if not wanted:
            return set()
        rows = self._db.execute("SELECT checksum FROM vetted WHERE identity = ?", (identity,))
        return wanted & {str(r[0]) for r in rows}

    def remember_vetted(self, checksums: Iterable[str], identity: str) -> None:
        """Record ``checksums`` as scanned clean under ``identity`` (other identities go)."""
        rows = [(c, identity) for c in set(checksums)]
        if not rows:
            return
        with self.transaction():
            self._db.execute("DELETE FROM vetted WHERE identity != ?", (identity,))
            self._db.executemany("INSERT OR REPLACE INTO vetted VALUES (?, ?)", rows)

    # -- stat cache -----------------------------------------------------------
    def _load_stats(self) -> dict[str, tuple[FileStat, str, int]]:
        if self._stats is None:
            rows = self._db.execute("SELECT key, size, mtime_ns, ino, checksum, seen_ns FROM stat")
            self._stats = {k: (FileStat(s, m, i), c, seen) for k, s, m, i, c, seen in rows}
        return self._stats

    def cached_checksum(self, key: str, st: FileStat) -> str | None:
        """The checksum recorded for exactly this stat, if it can be trusted."""
        hit = (self._stats if self._stats is not None else self._load_stats()).get(key)
        if hit is None or hit[0] != st or st.mtime_ns >= hit[2] - RACY_NS:
            return None
        return hit[1]

    def remember_stats(
        self,
        entries: Iterable[tuple[str, FileStat, str]],
        gone: Iterable[str] = (),
        *,
        seen_ns: int | None = None,
    ) -> None:
        """Record ``(key, stat, checksum)`` for files hashed after ``seen_ns``; drop ``gone``."""
        cache = self._load_stats()
        now = time.time_ns() if seen_ns is None else seen_ns
        rows = [(k, st.size, st.mtime_ns, st.ino, c, now) for k, st, c in entries]
        dropped = [k for k in gone if k in cache]
        if not rows and not dropped:
            return
        with self.transaction():
            self._db.executemany("INSERT OR REPLACE INTO stat VALUES (?, ?, ?, ?, ?, ?)", rows)
            self._db.executemany("DELETE FROM stat WHERE key = ?", [(k,) for k in dropped])
        for k, size, mtime, ino, c, seen in rows:
            cache[k] = (FileStat(size, mtime, ino), c, seen)
        for k in dropped:
            cache.pop(k, None)

    def stat_keys(self) -> set[str]:
        return set(self._load_stats())

    def stat_checksums(self) -> dict[str, str]:
        """key -> checksum of every stat-cache entry (trusted or not)."""
        return {key: hit[1] for key, hit in self._load_stats().items()}

    def unchanged(self, root: str | os.PathLike[str]) -> dict[str, str] | None:
        """key -> checksum when every file below ``root`` still matches the stat cache, else None.

        A read-only check with ``lstat`` (never following links): anything
        unexpected (a new, vanished or changed file, a link, a temp file, an odd
        entry, a folder that cannot be listed) returns None, and the caller
        does the full scan (:func:`teamsync.sync.local.scan_local`).
        """
        found: dict[str, str] = {}
        unlisted: list[str] = []
        entries = walk(
            root,
            skip_dir=_never,
            skip_temp=False,
            sort=False,
            onerror=lambda d, _: unlisted.append(d),
        )
        try:
            for key, entry in entries:
                st = entry.stat(follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode):
                    return None
                hit = self.cached_checksum(key, FileStat.of(st))
                if hit is None:
                    return None
                found[key] = hit
        except OSError:
            return None
        if unlisted:
            return None
        return found if found.keys() == self.stat_keys() else None

    # -- the no-op certificate (the CLI's fast path) ------------------------------
    def certify_noop(self, version: str, remote: Mapping[str, str] | None = None) -> bool:
        """Record that, right now, ``team/`` (stat-cached), the base and the remote at
        ``version`` all agree, with nothing refused on either side; True if recorded.

        With ``remote`` (the fetched commit's checksums) the agreement is checked
        again inside the recording transaction, from the database rather than from
        what this run loaded earlier: another run that recorded a user's edit in
        the stat cache meanwhile makes this refuse. Every later write to this store
        withdraws the certificate (see :class:`_Transaction`).
        """
        with self.transaction():
            if remote is not None:
                base = dict(self._db.execute("SELECT key, checksum FROM base"))
                stats = dict(self._db.execute("SELECT key, checksum FROM stat"))
                mark = self._db.execute(
                    "SELECT value FROM meta WHERE name = 'remote_version'"
                ).fetchone()
                if dict(remote) != base or stats != base or mark is None or mark[0] != version:
                    return False
            self._set_meta(NOOP_META, version)
        return True

    def noop_version(self) -> str | None:
        """The remote version :meth:`certify_noop` recorded, if no write came since."""
        row = self._db.execute("SELECT value FROM meta WHERE name = ?", (NOOP_META,)).fetchone()
        return str(row[0]) if row is not None and row[0] else None


def _ro_uri(path: str | os.PathLike[str]) -> str:
    """A read-only SQLite URI for ``path``: ``%``, ``?`` and ``#`` escaped, so a name
    holding them is not read as URI syntax (no pathlib or urllib: the fast path is lean)."""
    raw = os.path.abspath(path)
    for char, code in (("%", "%25"), ("?", "%3F"), ("#", "%23")):
        raw = raw.replace(char, code)
    return f"file:{raw}?mode=ro"


def _never(name: str) -> bool:
    return False


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")
        self._db.execute("DELETE FROM meta WHERE name = ?", (NOOP_META,))

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._db.execute("ROLLBACK" if exc_type is not None else "COMMIT")
