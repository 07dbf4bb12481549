"""The embedding cache: one vector per memory content checksum, outside ``team/``.

A SQLite file per memory directory under ``Settings.state_dir/teamsync-recall``
(never synced, never inside the memory directory) maps the SHA-256 of a
memory's bytes, as recorded by the lexical index, to its float32 vector. An
update embeds only checksums it has not seen and forgets those no memory has
any more, so an edit re-embeds one memory and a rename re-embeds none. The
model's name and the text recipe version are part of the schema: a change of
either starts a fresh cache.

Beside the per-checksum rows the store keeps the *packed matrix*: every
wanted vector stacked in the order asked for, keyed by a digest of that
ordered checksum list. Its rows and digest live in the SQLite file; the
float32 matrix itself in a file beside it named for the digest
(``<cache>.<digest>.f32``), which a warm recall memory-maps instead of reading
10,000 rows or a 20 MB BLOB (and skips the pruning scan); any change of the
list rebuilds it from the rows on the next update.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from teamsync.recall.embed import MAX_TOKENS, MODEL_NAME, file_sha256

MINILM_FILES = ("model.safetensors", "tokenizer.json")

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RECIPE = 1
"""Bump when the text handed to the model changes (see :func:`embed_text`)."""


def default_vectors_path(state_dir: Path, memdir: Path, model: str = MODEL_NAME) -> Path:
    """The vector cache of ``memdir`` for ``model`` (one file per model: switching is free)."""
    digest = hashlib.sha256(str(memdir.resolve()).encode("utf-8")).hexdigest()[:16]
    suffix = "" if model == MODEL_NAME else f"-{model}"
    return state_dir / "recall" / f"vectors-{digest}{suffix}.sqlite"


def embed_text(name: str, description: str, body: str) -> str:
    """What the model reads for one memory: its title, its description, then its body."""
    head = ". ".join(part.strip() for part in (name, description) if part.strip())
    return f"{head}\n{body.strip()}" if head else body.strip()


class VectorStore:
    """Vectors keyed by content checksum, for one memory directory."""

    def __init__(
        self,
        path: Path,
        model: str = MODEL_NAME,
        files: tuple[str, ...] = MINILM_FILES,
        variant: str = "",
    ) -> None:
        """``variant`` names anything else that changes the vectors (the text's length, a second
        vector per memory): part of the schema like the model and the recipe."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.files = files
        tag = f"{MODEL_NAME}/{RECIPE}/{MAX_TOKENS}" if model == MODEL_NAME else f"{model}/{RECIPE}"
        if variant:
            tag = f"{tag}/{variant}"
        try:
            self._db = self._init(sqlite3.connect(path, timeout=10), tag)
        except sqlite3.DatabaseError:  # a corrupt cache is only a cache
            path.unlink(missing_ok=True)
            self._db = self._init(sqlite3.connect(path, timeout=10), tag)

    @staticmethod
    def _init(db: sqlite3.Connection, tag: str) -> sqlite3.Connection:
        db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
        row = db.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        if row is None or row[0] != tag:
            with db:
                db.execute("DROP TABLE IF EXISTS vec")
                db.execute("DELETE FROM meta")
                db.execute("CREATE TABLE vec(sha TEXT PRIMARY KEY, v BLOB NOT NULL)")
                db.execute("DROP TABLE IF EXISTS packed")
                db.execute("INSERT INTO meta VALUES ('model', ?)", (tag,))
        with db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS packed(id INTEGER PRIMARY KEY CHECK (id = 0),"
                " digest TEXT NOT NULL, rows BLOB NOT NULL, m BLOB NOT NULL)"
            )
        return db

    def close(self) -> None:
        self._db.close()

    def verified(self, folder: Path) -> bool:
        """Whether the model files at ``folder`` (same size and mtime) were checksummed already."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'verified'").fetchone()
        return row is not None and row[0] == _stamp(folder, self.files)

    def mark_verified(self, folder: Path) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('verified', ?)", (_stamp(folder, self.files),)
            )

    def update(
        self,
        wanted: Iterable[tuple[str, str]],
        read: Callable[[str], Any],
        encode: Callable[[list[Any]], npt.NDArray[np.float32]],
    ) -> int:
        """Embed every ``(path, sha)`` not cached yet (``read(path)`` gives what ``encode`` takes
        for it, None when unreadable); prune the rest.

        Afterwards the packed matrix holds the vectors of ``wanted`` in its order.
        Returns how many memories were embedded.
        """
        wanted = list(wanted)
        digest = _list_digest([sha for _, sha in wanted])
        if self._packed_digest() == digest:
            return 0  # the same checksums in the same order as when it was packed
        have = {sha for (sha,) in self._db.execute("SELECT sha FROM vec")}
        todo: dict[str, Any] = {}
        for path, sha in wanted:
            if sha and sha not in have and sha not in todo:
                text = read(path)
                if text is not None:
                    todo[sha] = text
        keep = {sha for _, sha in wanted}
        with self._db:
            gone = [(sha,) for sha in have - keep]
            self._db.executemany("DELETE FROM vec WHERE sha = ?", gone)
            if todo:
                vectors = encode(list(todo.values()))
                rows = [(sha, vectors[i].tobytes()) for i, sha in enumerate(todo)]
                self._db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)", rows)
            self._pack([sha for _, sha in wanted], digest)
        return len(todo)

    def _packed_digest(self) -> str | None:
        row = self._db.execute("SELECT digest FROM packed WHERE id = 0").fetchone()
        return None if row is None else str(row[0])

    def _sidecar(self, digest: str) -> Path:
        return self.path.with_name(f"{self.path.name}.{digest[:32]}.f32")

    def _pack(self, shas: list[str], digest: str) -> None:
        import numpy as np

        from teamsync._files import write_atomic

        matrix, rows = self._from_rows(shas)
        if len(rows) < len(shas):  # a memory could not be read: try it again next time
            digest = ""
        blob = matrix.tobytes()
        if digest and rows:
            write_atomic(self._sidecar(digest), blob, durable=False)  # only a cache
            blob = b""
        import glob

        for old in self.path.parent.glob(f"{glob.escape(self.path.name)}.*.f32"):
            if not digest or old != self._sidecar(digest):
                old.unlink(missing_ok=True)
        self._db.execute(
            "INSERT OR REPLACE INTO packed VALUES (0, ?, ?, ?)",
            (digest, np.asarray(rows, dtype=np.int64).tobytes(), blob),
        )

    def matrix(self, shas: list[str]) -> tuple[Any, list[int]]:
        """The vectors of ``shas`` stacked (float32), and which positions of ``shas`` they are."""
        import numpy as np

        digest = _list_digest(shas)
        row = self._db.execute("SELECT digest, rows, m FROM packed WHERE id = 0").fetchone()
        if row is not None and row[0] == digest:
            positions = np.frombuffer(row[1], dtype=np.int64).tolist()
            if not positions:
                return np.zeros((0, 0), dtype=np.float32), []
            if row[2]:
                packed = np.frombuffer(row[2], dtype=np.float32).reshape(len(positions), -1)
                return packed, positions
            sidecar = self._sidecar(digest)
            try:
                size = sidecar.stat().st_size
            except OSError:
                size = 0
            if size and size % (4 * len(positions)) == 0:
                dim = size // (4 * len(positions))
                mapped = np.memmap(sidecar, dtype=np.float32, mode="r", shape=(len(positions), dim))
                return mapped, positions
        return self._from_rows(shas)

    def _from_rows(self, shas: list[str]) -> tuple[Any, list[int]]:
        import numpy as np

        found = dict(self._db.execute("SELECT sha, v FROM vec"))
        rows = [i for i, sha in enumerate(shas) if sha in found]
        if not rows:
            return np.zeros((0, 0), dtype=np.float32), []
        blob = b"".join(found[shas[i]] for i in rows)
        return np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1), rows


def _list_digest(shas: list[str]) -> str:
    return hashlib.sha256("\n".join(shas).encode("ascii", errors="replace")).hexdigest()


def _stamp(folder: Path, files: tuple[str, ...]) -> str:
    parts = []
    for name in files:
        st = (folder / name).stat()
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return f"{folder}|" + "|".join(parts)


__all__ = ["VectorStore", "default_vectors_path", "embed_text", "file_sha256"]
