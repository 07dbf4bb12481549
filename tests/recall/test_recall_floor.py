"""The lexical relevance floor, checked against the bench's recall sets.

:data:`teamsync.recall.lexical.FLOOR` was chosen on these sets
(``bench/recall_floor_cv.py``, ``docs/recall.md``) as the lowest floor at which
every set's no-answer queries return at most 0.75 memories. A change to the
tokenizer, the columns' weights or the coverage measure moves every score; this
test says when the floor no longer holds what it was chosen for.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from teamsync.recall.lexical import FLOOR

ROOT = Path(__file__).resolve().parents[2]
BOUND = 0.75
BELOW = round(FLOOR - 0.01, 2)


@pytest.fixture(scope="module")
def measured() -> dict[tuple[str, float], tuple[float, float, float]]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import recall_floor_cv  # type: ignore[import-not-found]
        from recall_eval import SETS  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert len(SETS) >= 6, "the bench recall sets are part of the repository"
    out: dict[tuple[str, float], tuple[float, float, float]] = recall_floor_cv.measure(
        SETS, [BELOW, FLOOR]
    )
    return out


def test_at_the_floor_no_answer_queries_return_little_and_keywords_are_found(
    measured: dict[tuple[str, float], tuple[float, float, float]],
) -> None:
    for (name, floor), (keyword, _answerable, returned) in measured.items():
        if floor != FLOOR:
            continue
        assert returned <= BOUND, name
        # one keyword query of development 1 names a date its memory writes as 2026-03-05..09
        assert keyword >= (0.96 if name == "development 1" else 1.0), name


def test_the_floor_is_the_lowest_that_holds_the_bound(
    measured: dict[tuple[str, float], tuple[float, float, float]],
) -> None:
    assert max(r for (_, f), (_, _, r) in measured.items() if f == BELOW) > BOUND
