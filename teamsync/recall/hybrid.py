"""Hybrid offline recall: the bm25 index and sentence embeddings, fused linearly.

Used when the ``teamsync[embed]`` extra is installed (:func:`teamsync.recall.embed.available`).
Both rankings see every memory: bm25 through :class:`~teamsync.recall.lexical.LexicalIndex`
(its candidates, with their idf coverage), the embedding through a cosine
against every cached vector (:mod:`teamsync.recall.vectors`) of the directory's
model (:func:`teamsync.recall.models.choose`: all-MiniLM-L6-v2 for an English
directory, the multilingual Universal Sentence Encoder otherwise).

Each model has its :class:`Rule` (:data:`RULES`), applied by :func:`fuse`. The
cosine side is relative to the query's own distribution over the directory: a
memory must stand a number of standard deviations above the mean cosine and/or
lie within a margin of the best one (an absolute number fails across models and
languages: the English model puts any two non-English texts at 0.4-0.8). A
memory that clears the lexical floor ranks ahead of every cosine-only memory, so
embedding noise never displaces a lexical match.

Reciprocal-rank fusion was measured in round 2 and ranked a paraphrase's memory
lower (MRR 0.47 against 0.64), because for a paraphrase the bm25 ranks are noise.
Near-miss no-answer queries (they name something a memory covers and ask what it
does not say) have a best cosine as high as a paraphrase's memory on the English
sets, so no floor on a single similarity tells them apart (``docs/recall.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teamsync.recall import embed, models, use_encoder
from teamsync.recall.lexical import Hit, LexicalIndex, read_memory
from teamsync.recall.tokens import extract_fields
from teamsync.recall.vectors import VectorStore, embed_text


@dataclass(frozen=True)
class Rule:
    """When a memory is eligible, and how eligible memories are ordered (one per model)."""

    z_floor: float
    """the cosine's standard score over the directory (the query's own distribution)"""
    margin: float
    """and within this of the query's best cosine"""
    cosine_floor: float
    """and at least this cosine"""
    lexical_floor: float
    """or the lexical coverage at least this (such a memory ranks ahead of cosine-only ones)"""
    weight: float
    """the order: cosine + weight x coverage"""
    small_floor: float
    """the cosine floor in a directory under :data:`MIN_Z_MEMORIES`, where no standard score is
    used (round 3's 0.26 for the English model; the rule's own floor for the other)"""


MIN_Z_MEMORIES = 8
"""Below this many memories a standard score means little: the absolute floor alone applies."""
RULES: dict[str, Rule] = {
    embed.MODEL_NAME: Rule(
        z_floor=3.0, margin=0.12, cosine_floor=0.0, lexical_floor=0.5, weight=0.1, small_floor=0.26
    ),
    use_encoder.NAME: Rule(
        z_floor=-math.inf,
        margin=0.03,
        cosine_floor=0.2,
        lexical_floor=0.4,
        weight=0.1,
        small_floor=0.2,
    ),
}
"""Chosen by ``bench/recall_fusion_cv.py`` (issue 28): per model, the highest mean answerable
recall@5 over its training sets among the rules of a grid that keep keyword recall 1.00 and at
most 1 memory per no-answer query on every one of them; leave-one-set-out in docs/recall.md.
The English model's sets are the seven English bench sets; the multilingual model's are the six
training sets in other languages the developers wrote, and the six in one directory."""
COSINE_FLOOR = RULES[embed.MODEL_NAME].small_floor
LEXICAL_FLOOR = RULES[embed.MODEL_NAME].lexical_floor
LEXICAL_WEIGHT = RULES[embed.MODEL_NAME].weight


@dataclass(frozen=True)
class HybridHit:
    path: str
    score: float
    cosine: float
    lexical_rank: int | None
    embedding_rank: int
    coverage: float
    matched: tuple[str, ...]
    cleared: tuple[str, ...] = ()
    """which floors this memory cleared: "cosine", "lexical" or both"""
    z: float = 0.0
    """the cosine's standard score over the directory"""
    rule: Rule = RULES[embed.MODEL_NAME]
    small: bool = True
    """the directory was too small for a standard score: the absolute floor applied"""

    @property
    def why(self) -> str:
        """Which side cleared the floor, in words (the JSON ``why``)."""
        rule = self.rule
        if not self.small:
            relative = (
                f"{self.z:.1f} sd above the directory's mean, floor {rule.z_floor:.1f}; "
                if rule.z_floor > -math.inf
                else ""
            )
            floors = (
                f"{relative}within {rule.margin:.2f} of the best; floor {rule.cosine_floor:.2f}"
            )
        else:
            floors = f"floor {rule.small_floor:.2f}"
        parts = [f"embedding similarity {self.cosine:.2f} (rank {self.embedding_rank}; {floors})"]
        if self.lexical_rank is not None:
            words = ", ".join(self.matched[:8])
            parts.append(
                f"bm25 rank {self.lexical_rank} on {words} (covers {self.coverage:.0%} of the "
                f"query; floor {rule.lexical_floor:.0%})"
            )
        if self.cleared:
            parts.append("cleared " + " and ".join(f"the {side} floor" for side in self.cleared))
        return "hybrid: " + "; ".join(parts)


def fuse(
    cosines: Mapping[str, float],
    lexical: Mapping[str, tuple[int, Hit]],
    rule: Rule,
    limit: int,
) -> list[HybridHit]:
    """The eligible memories, best first, at most ``limit`` (see the module docstring).

    ``cosines`` holds every memory's similarity to the query, ``lexical`` the bm25
    candidates with their rank. A memory clears the cosine side when its cosine
    reaches ``rule.cosine_floor``, stands ``rule.z_floor`` standard deviations above
    the directory's mean cosine for this query and lies within ``rule.margin`` of
    the best; it clears the lexical side when its coverage reaches
    ``rule.lexical_floor``. Memories that clear the lexical side come first, so a
    lexical match is never displaced by embedding noise; each group is ordered by
    ``cosine + rule.weight * coverage``.
    """
    values = list(cosines.values())
    mean = sum(values) / len(values) if values else 0.0
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) if values else 0.0
    use_z = len(values) >= MIN_Z_MEMORIES and spread > 0
    best = max(values, default=0.0)
    dense = sorted(cosines, key=lambda p: (-cosines[p], p))
    dense_rank = {p: i + 1 for i, p in enumerate(dense)}
    hits: list[tuple[int, HybridHit]] = []
    for path in set(dense_rank) | set(lexical):
        cosine = cosines.get(path, 0.0)
        z = (cosine - mean) / spread if use_z else 0.0
        rank, hit = lexical.get(path, (None, None))
        coverage = hit.coverage if hit is not None else 0.0
        if use_z:
            by_cosine = (
                path in cosines
                and cosine >= rule.cosine_floor
                and z >= rule.z_floor
                and cosine >= best - rule.margin
            )
        else:
            by_cosine = path in cosines and cosine >= rule.small_floor
        by_lexical = coverage >= rule.lexical_floor
        cleared = tuple(side for side, ok in (("cosine", by_cosine), ("lexical", by_lexical)) if ok)
        if not cleared:
            continue
        found = HybridHit(
            path,
            round(cosine + rule.weight * coverage, 6),
            round(cosine, 4),
            rank,
            dense_rank.get(path, len(dense) + 1),
            coverage,
            hit.matched if hit is not None else (),
            cleared,
            round(z, 2),
            rule,
            not use_z,
        )
        hits.append((0 if by_lexical else 1, found))
    hits.sort(key=lambda item: (item[0], -item[1].score, item[1].path))
    return [hit for _, hit in hits[:limit]]


def _memory_text(memdir: Path, path: str) -> str | None:
    data = read_memory(memdir, path)
    if data is None:
        return None
    fields = extract_fields(data.decode("utf-8", errors="replace"))
    return embed_text(fields.name, fields.description, fields.body)


class HybridIndex:
    """A lexical index plus the vector cache of one memory directory, for one model."""

    def __init__(
        self,
        memdir: Path,
        cache_path: Path | None,
        vectors_path: Path,
        *,
        encoder: models.TextEncoder | None = None,
    ) -> None:
        self.memdir = memdir
        self.lexical = LexicalIndex(memdir, cache_path)
        self.encoder = encoder or models.encoder(embed.MODEL_NAME)
        self.rule = RULES.get(self.encoder.name, RULES[embed.MODEL_NAME])
        self.vectors = VectorStore(vectors_path, self.encoder.name, self.encoder.files)
        if not self.vectors.verified(self.encoder.folder):
            self.encoder.verify()
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
        """Eligible memories (:func:`fuse`), best first, at most ``limit``."""
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
        lexical = {h.path: (i + 1, h) for i, h in enumerate(self.lexical.candidates(query))}
        return fuse(cosines, lexical, self.rule, limit)


def hybrid_search(
    memdir: Path,
    query: str,
    limit: int,
    *,
    cache_path: Path | None,
    vectors_path: Path,
    encoder: models.TextEncoder | None = None,
) -> list[HybridHit]:
    """Refresh both indexes and rank ``query``: the one-call entry point."""
    index = HybridIndex(memdir, cache_path, vectors_path, encoder=encoder)
    try:
        index.refresh()
        return index.search(query, limit)
    finally:
        index.close()
