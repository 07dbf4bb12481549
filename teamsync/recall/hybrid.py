"""Hybrid offline recall: the bm25 index and sentence embeddings, fused linearly.

Used when the ``teamsync[embed]`` extra is installed (:func:`teamsync.recall.embed.available`).
Both rankings see every memory: bm25 through :class:`~teamsync.recall.lexical.LexicalIndex`
(its candidates, with their idf coverage), the embedding through a cosine
against every cached vector (:mod:`teamsync.recall.vectors`). A memory is
*eligible* when it clears the relevance floor on either side — cosine at least
:data:`COSINE_FLOOR`, or lexical coverage at least :data:`LEXICAL_FLOOR` — and
eligible memories are ordered by ``cosine + LEXICAL_WEIGHT * coverage``. Both
terms are calibrated scores in [0, 1], so they add without rank games.

Reciprocal-rank fusion was the first candidate and was measured: on the
development set it ranked a paraphrase's memory lower (MRR 0.47 against 0.64),
because for a paraphrase the bm25 ranks are noise that RRF weighs as much as
the embedding.

The cosine floor is an absolute one. Rules relative to the query's own
similarity distribution were measured on both development sets
(``bench/recall_golden.json`` and ``bench/recall_heldout.json``) and lost: the
z-score of the best relevant memory against all memories separated answerable
paraphrases from no-answer queries with an AUC of 0.69 / 0.66, the raw cosine
with 0.85 / 0.86; a gap rule (only memories within δ of the top) cost keyword
recall and paraphrases found at rank 2; a higher bar for the top memory and a
floor rising with rank did no better than one floor. 0.26 is the floor with
the highest paraphrase recall@5 over both sets together, with keyword recall
1.00 and no more than 0.5 memories a no-answer query on average (see
``docs/recall.md``). Chosen on either set alone it does not carry over to the
other (0.24 on the first lets the second's no-answer queries return 1.17; 0.29
on the second drops the first's paraphrases to 0.61), so both were pooled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teamsync.recall.embed import Encoder, verify
from teamsync.recall.lexical import LexicalIndex, read_memory
from teamsync.recall.tokens import extract_fields
from teamsync.recall.vectors import VectorStore, embed_text

COSINE_FLOOR = 0.26
LEXICAL_FLOOR = 0.5
LEXICAL_WEIGHT = 0.1


@dataclass(frozen=True)
class HybridHit:
    path: str
    score: float
    cosine: float
    lexical_rank: int | None
    embedding_rank: int
    coverage: float
    matched: tuple[str, ...]

    @property
    def why(self) -> str:
        """Which side cleared the floor, in words (the JSON ``why``)."""
        parts = [
            f"embedding similarity {self.cosine:.2f} (rank {self.embedding_rank}; "
            f"floor {COSINE_FLOOR:.2f})"
        ]
        if self.lexical_rank is not None:
            words = ", ".join(self.matched[:8])
            parts.append(
                f"bm25 rank {self.lexical_rank} on {words} (covers {self.coverage:.0%} of the "
                f"query; floor {LEXICAL_FLOOR:.0%})"
            )
        return "hybrid: " + "; ".join(parts)


def _memory_text(memdir: Path, path: str) -> str | None:
    data = read_memory(memdir, path)
    if data is None:
        return None
    fields = extract_fields(data.decode("utf-8", errors="replace"))
    return embed_text(fields.name, fields.description, fields.body)


class HybridIndex:
    """A lexical index plus the vector cache of one memory directory."""

    def __init__(
        self,
        memdir: Path,
        cache_path: Path | None,
        vectors_path: Path,
        *,
        encoder: Encoder | None = None,
    ) -> None:
        self.memdir = memdir
        self.lexical = LexicalIndex(memdir, cache_path)
        self.vectors = VectorStore(vectors_path)
        self.encoder = encoder or Encoder()
        if not self.vectors.verified(self.encoder.folder):
            verify(self.encoder.folder)
            self.vectors.mark_verified(self.encoder.folder)

    def close(self) -> None:
        self.lexical.close()
        self.vectors.close()

    def refresh(self) -> tuple[int, int]:
        """Bring both indexes up to date: (memories re-read, memories embedded)."""
        changed = self.lexical.refresh()
        files = self.lexical.files()
        embedded = self.vectors.update(
            ((path, sha) for _, path, sha in files),
            lambda path: _memory_text(self.memdir, path),
            self.encoder.encode,
        )
        return changed, embedded

    def search(self, query: str, limit: int = 5) -> list[HybridHit]:
        """Eligible memories (see the module docstring), best first, at most ``limit``."""
        if limit <= 0 or not query.strip():
            return []
        files = self.lexical.files()
        shas = [sha for _, _, sha in files]
        matrix, rows = self.vectors.matrix(shas)
        cosines: dict[str, float] = {}
        if rows:
            qv = self.encoder.encode([query])[0]
            sims: Any = matrix @ qv
            cosines = {files[rows[i]][1]: float(sims[i]) for i in range(len(rows))}
        dense = sorted(cosines, key=lambda p: (-cosines[p], p))
        dense_rank = {p: i + 1 for i, p in enumerate(dense)}
        lexical = {h.path: (i + 1, h) for i, h in enumerate(self.lexical.candidates(query))}
        hits: list[HybridHit] = []
        for path in set(dense_rank) | set(lexical):
            cosine = cosines.get(path, 0.0)
            rank, hit = lexical.get(path, (None, None))
            coverage = hit.coverage if hit is not None else 0.0
            if cosine < COSINE_FLOOR and coverage < LEXICAL_FLOOR:
                continue
            erank = dense_rank.get(path, len(dense) + 1)
            fused = cosine + LEXICAL_WEIGHT * coverage
            hits.append(
                HybridHit(
                    path,
                    round(fused, 6),
                    round(cosine, 4),
                    rank,
                    erank,
                    coverage,
                    hit.matched if hit is not None else (),
                )
            )
        hits.sort(key=lambda h: (-h.score, h.path))
        return hits[:limit]


def hybrid_search(
    memdir: Path,
    query: str,
    limit: int,
    *,
    cache_path: Path | None,
    vectors_path: Path,
    encoder: Encoder | None = None,
) -> list[HybridHit]:
    """Refresh both indexes and rank ``query``: the one-call entry point."""
    index = HybridIndex(memdir, cache_path, vectors_path, encoder=encoder)
    try:
        index.refresh()
        return index.search(query, limit)
    finally:
        index.close()
