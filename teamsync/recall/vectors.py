"""The embedding cache: one vector per memory content checksum, outside ``team/``.

A SQLite file per memory directory under ``Settings.state_dir/teamsync-recall``
(never synced, never inside the memory directory) maps the SHA-256 of a
memory's bytes, as recorded by the lexical index, to its float32 vector. An
update embeds only checksums it has not seen and forgets those no memory has
any more, so an edit re-embeds one memory and a rename re-embeds none. The
model's name and the text recipe version are part of the schema: a change of
either starts a fresh cache.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from teamsync.recall.embed import MAX_TOKENS, MODEL_NAME, file_sha256

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RECIPE = 1
"""Bump when the text handed to the model changes (see :func:`embed_text`)."""


def default_vectors_path(state_dir: Path, memdir: Path) -> Path:
    digest = hashlib.sha256(str(memdir.resolve()).encode("utf-8")).hexdigest()[:16]
    return state_dir / "recall" / f"vectors-{digest}.sqlite"


def embed_text(name: str, description: str, body: str) -> str:
    """What the model reads for one memory: its title, its description, then its body."""
    head = ". ".join(part.strip() for part in (name, description) if part.strip())
    return f"{head}\n{body.strip()}" if head else body.strip()


class VectorStore:
    """Vectors keyed by content checksum, for one memory directory."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        try:
            self._db = self._init(sqlite3.connect(path, timeout=10))
        except sqlite3.DatabaseError:  # a corrupt cache is only a cache
            path.unlink(missing_ok=True)
            self._db = self._init(sqlite3.connect(path, timeout=10))

    @staticmethod
    def _init(db: sqlite3.Connection) -> sqlite3.Connection:
        tag = f"{MODEL_NAME}/{RECIPE}/{MAX_TOKENS}"
        db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
        row = db.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        if row is None or row[0] != tag:
            with db:
                db.execute("DROP TABLE IF EXISTS vec")
                db.execute("DELETE FROM meta")
                db.execute("CREATE TABLE vec(sha TEXT PRIMARY KEY, v BLOB NOT NULL)")
                db.execute("INSERT INTO meta VALUES ('model', ?)", (tag,))
        return db

    def close(self) -> None:
        self._db.close()

    def verified(self, folder: Path) -> bool:
        """Whether the model files at ``folder`` (same size and mtime) were checksummed already."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'verified'").fetchone()
        return row is not None and row[0] == _stamp(folder)

    def mark_verified(self, folder: Path) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('verified', ?)", (_stamp(folder),)
            )

    def update(
        self,
        wanted: Iterable[tuple[str, str]],
        read: Callable[[str], str | None],
        encode: Callable[[list[str]], npt.NDArray[np.float32]],
    ) -> int:
        """Embed every ``(path, sha)`` not cached yet (``read(path)`` gives its text); prune the rest.

        Returns how many memories were embedded.
        """
        wanted = list(wanted)
        have = {sha for (sha,) in self._db.execute("SELECT sha FROM vec")}
        todo: dict[str, str] = {}
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
        return len(todo)

    def matrix(self, shas: list[str]) -> tuple[Any, list[int]]:
        """The vectors of ``shas`` stacked (float32), and which positions of ``shas`` they are."""
        import numpy as np

        found = dict(self._db.execute("SELECT sha, v FROM vec"))
        rows = [i for i, sha in enumerate(shas) if sha in found]
        if not rows:
            return np.zeros((0, 0), dtype=np.float32), []
        blob = b"".join(found[shas[i]] for i in rows)
        return np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1), rows


def _stamp(folder: Path) -> str:
    parts = []
    for name in ("model.safetensors", "tokenizer.json"):
        st = (folder / name).stat()
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return f"{folder}|" + "|".join(parts)


__all__ = ["VectorStore", "default_vectors_path", "embed_text", "file_sha256"]
