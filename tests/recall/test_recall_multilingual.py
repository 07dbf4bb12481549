"""Hybrid recall across languages: the model choice, the fusion rule, the multilingual encoder."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from teamsync.errors import EmbedUnavailable
from teamsync.recall import embed, models, use_encoder
from teamsync.recall.hybrid import RULES, HybridIndex, Rule, fuse
from teamsync.recall.lexical import Hit
from teamsync.recall.recall import recall
from testing.recall import memory, put, settings_for

needs_use = pytest.mark.skipif(not use_encoder.available(), reason="the embed extra is missing")


def test_the_model_follows_the_languages_of_the_directory() -> None:
    english = embed.MODEL_NAME if embed.minilm_available() else use_encoder.NAME
    assert models.choose({"en": 40}) == english
    assert models.choose({"en": 37, "ko": 3}) == english  # 7.5%: under the 10% share
    if use_encoder.available():
        assert models.choose({"en": 36, "ko": 4}) == use_encoder.NAME
        assert models.choose({"tr": 12}) == use_encoder.NAME


RULE = Rule(
    z_floor=1.0, margin=0.1, cosine_floor=0.0, lexical_floor=0.5, weight=0.1, small_floor=0.3
)


def _cosines(best: float, n: int = 20) -> dict[str, float]:
    out = {f"m{i}.md": 0.1 + 0.001 * i for i in range(n)}
    out["answer.md"] = best
    return out


def test_the_cosine_floor_is_relative_to_the_querys_own_distribution() -> None:
    # the same absolute cosine clears the floor when it stands out, and not when all are alike
    assert [h.path for h in fuse(_cosines(0.45), {}, RULE, 5)] == ["answer.md"]
    outdone = {f"m{i}.md": 0.1 for i in range(10)} | {f"n{i}.md": 0.6 for i in range(10)}
    hits = fuse(outdone | {"answer.md": 0.45}, {}, RULE, 5)
    assert hits and "answer.md" not in [h.path for h in hits]  # 0.15 below the best
    hits = fuse(_cosines(0.45), {}, RULE, 5)
    assert hits[0].why.startswith("hybrid: embedding similarity")
    assert "sd above the directory's mean" in hits[0].why


def test_a_small_directory_uses_the_absolute_floor() -> None:
    small = {"a.md": 0.31, "b.md": 0.29}
    hits = fuse(small, {}, RULE, 5)
    assert [h.path for h in hits] == ["a.md"] and hits[0].small
    assert "floor 0.30" in hits[0].why


def test_a_lexical_match_is_never_displaced_by_embedding_noise() -> None:
    cosines = _cosines(0.9) | {"lexical.md": 0.05}
    lexical = {"lexical.md": (1, Hit("lexical.md", 3.0, ("token",), 1.0))}
    noisy = {p: 0.9 - 0.001 * i for i, p in enumerate(list(cosines)[:8])} | {"lexical.md": 0.05}
    for sims in (cosines, noisy | {f"x{i}.md": 0.0 for i in range(20)}):
        hits = fuse(sims, lexical, RULE, 5)
        assert hits[0].path == "lexical.md" and hits[0].cleared == ("lexical",)


def test_cosine_only_memories_are_capped_and_a_lexical_match_needs_the_cosine_to_agree() -> None:
    near = {f"m{i}.md": 0.1 for i in range(20)} | {f"top{i}.md": 0.8 - 0.01 * i for i in range(4)}
    capped = Rule(-math.inf, 1.0, 0.5, 0.5, 0.1, 0.5, alone=2)
    assert [h.path for h in fuse(near, {}, capped, 5)] == ["top0.md", "top1.md"]
    lexical = {"m3.md": (1, Hit("m3.md", 3.0, ("token",), 1.0))}  # words match, cosine is noise
    agreeing = Rule(-math.inf, 1.0, 0.5, 0.5, 0.1, 0.5, lexical_z=0.0, alone=2)
    assert "m3.md" not in [h.path for h in fuse(near, lexical, agreeing, 5)]
    assert [h.path for h in fuse(near, lexical, capped, 5)][0] == "m3.md"
    lifted = near | {"m3.md": 0.5}  # the cosine now agrees: the lexical match leads again
    assert [h.path for h in fuse(lifted, lexical, agreeing, 5)][0] == "m3.md"


def test_a_shared_cap_counts_the_lexical_matches_against_the_cosine_only_ones() -> None:
    near = {f"m{i}.md": 0.1 for i in range(20)} | {f"top{i}.md": 0.8 - 0.01 * i for i in range(4)}
    stray = {"m3.md": (1, Hit("m3.md", 3.0, ("token",), 1.0))}  # a word match, nothing else
    apart = Rule(-math.inf, 1.0, 0.5, 0.5, 0.1, 0.5, alone=1)
    shared = Rule(-math.inf, 1.0, 0.5, 0.5, 0.1, 0.5, alone=1, shared=True)
    assert [h.path for h in fuse(near, stray, apart, 5)] == ["m3.md", "top0.md"]
    assert [h.path for h in fuse(near, stray, shared, 5)] == ["m3.md"]
    assert [h.path for h in fuse(near, {}, shared, 5)] == ["top0.md"]  # no match: the cosine's
    two = Rule(-math.inf, 1.0, 0.5, 0.5, 0.1, 0.5, alone=2, shared=True)
    assert [h.path for h in fuse(near, stray, two, 5)] == ["m3.md", "top0.md"]
    assert "(lexical matches included)" in fuse(near, {}, shared, 5)[0].why


def test_a_confident_query_lifts_the_cap_and_widens_the_margin() -> None:
    rule = Rule(-math.inf, 0.03, 0.2, 0.5, 0.1, 0.2, alone=1, open_z=3.0, open_margin=0.12)
    flat = {f"m{i}.md": 0.1 + 0.002 * i for i in range(30)}
    confident = flat | {"a.md": 0.8, "b.md": 0.72, "c.md": 0.6}  # a stands > 3 sd above the mean
    assert [h.path for h in fuse(confident, {}, rule, 5)] == ["a.md", "b.md"]
    unsure = {f"m{i}.md": 0.1 + 0.02 * i for i in range(30)} | {"a.md": 0.71, "b.md": 0.7}
    assert [h.path for h in fuse(unsure, {}, rule, 5)] == ["a.md"]  # capped at one
    assert "at most 1 on the cosine alone" in fuse(unsure, {}, rule, 5)[0].why


def test_every_model_has_a_rule_and_the_english_one_keeps_round_3_for_small_dirs() -> None:
    assert set(RULES) == set(models.MODELS)
    assert RULES[embed.MODEL_NAME].small_floor == 0.26
    assert RULES[use_encoder.NAME].z_floor == -math.inf  # its relative side is the margin


@needs_use
def test_the_multilingual_files_are_checksummed_and_a_changed_file_is_refused(
    tmp_path: Path,
) -> None:
    folder = use_encoder.model_dir()
    assert folder is not None
    use_encoder.verify(folder)
    copy = tmp_path / "resources"
    copy.mkdir()
    (copy / "weights.npz").symlink_to(folder / "weights.npz")
    shutil.copy(folder / "sp.model", copy / "sp.model")
    with (copy / "sp.model").open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(EmbedUnavailable, match="does not match the pinned use-multilingual-v3"):
        use_encoder.verify(copy)


@pytest.fixture
def korean(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    facts = [
        ("배포 금지", "금요일 15시 이후에는 운영 배포를 하지 않는다."),
        ("토큰 만료", "라이더 앱 액세스 토큰은 30분 후 만료되고 리프레시 토큰은 14일 유효하다."),
        ("쿠폰 락", "쿠폰 적용 전에 Redis 분산 락을 5초간 잡는다."),
        ("정산 배치", "가게 정산 배치는 매일 새벽 4시에 돈다."),
        ("리뷰 규칙", "결제 코드 PR은 두 명의 승인이 필요하다."),
        ("검색 분석기", "메뉴 검색은 nori 형태소 분석기를 쓴다."),
        ("대시보드", "주문 지연은 Grafana order-latency 보드에서 본다."),
        ("마이그레이션", "컬럼 삭제는 다음 릴리스에서 한다."),
        ("로그", "전화번호는 로그에 마스킹해서 남긴다."),
    ]
    for i, (name, description) in enumerate(facts):
        put(root, f"team/m{i}.md", memory(name, description))
    return root


@needs_use
def test_an_english_question_finds_a_korean_memory_and_a_korean_keyword_stays_first(
    korean: Path, tmp_path: Path
) -> None:
    settings = settings_for(korean)
    found = recall(settings, "How long is the rider app refresh token valid?", offline=True)
    assert found.selector == "hybrid"
    assert [m.path for m in found.memories][:1] == ["team/m1.md"]
    keyword = recall(settings, "nori 형태소 분석기", offline=True)
    assert [m.path for m in keyword.memories][:1] == ["team/m5.md"]
    assert keyword.memories[0].why.endswith("the lexical floor")
    index = HybridIndex(
        korean, None, tmp_path / "v.sqlite", encoder=models.encoder(use_encoder.NAME)
    )
    try:
        assert index.refresh()[1] == 9  # the multilingual model embedded the directory
        assert index.vectors.path == tmp_path / "v.sqlite"
    finally:
        index.close()


@needs_use
def test_warm_builds_both_caches_incrementally_and_the_cli_says_what_it_did(
    korean: Path, tmp_path: Path
) -> None:
    import json
    import os
    import subprocess
    import sys

    from teamsync.commands.recall import warm_in_background
    from teamsync.recall.recall import warm

    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    settings = settings_for(korean, **env)
    assert not warm_in_background(settings)  # no vector cache yet: nobody uses hybrid here
    first = warm(settings)
    assert (first.model, first.memories, first.embedded) == (use_encoder.NAME, 9, 9)
    assert warm(settings).embedded == 0  # nothing changed: nothing embedded
    put(korean, "team/new.md", memory("새 규칙", "스테이징 DB 비밀번호는 Vault에 둔다."))
    proc = subprocess.run(
        [sys.executable, "-m", "teamsync", "--dir", str(korean), "--json", "recall", "--warm"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert (payload["memories"], payload["embedded"]) == (10, 1)  # only the new memory
    assert warm_in_background(settings)  # the vector cache exists: a pull refreshes it
    nothing = subprocess.run(
        [sys.executable, "-m", "teamsync", "--dir", str(korean), "recall", "--warm", "x"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    assert nothing.returncode == 2 and "--warm takes no QUERY" in nothing.stderr


@needs_use
def test_a_head_rule_keeps_two_vectors_per_memory_and_takes_the_larger_cosine(
    korean: Path, tmp_path: Path
) -> None:
    import dataclasses

    import numpy as np

    from teamsync.recall.hybrid import _memory_texts

    encoder = models.encoder(use_encoder.NAME)
    rule = dataclasses.replace(RULES[use_encoder.NAME], head=True)
    path = tmp_path / "v.sqlite"
    index = HybridIndex(korean, None, path, encoder=encoder, rule=rule)
    try:
        assert index.refresh()[1] == 9
        query = "How long is the rider app refresh token valid?"
        hits = index.search(query)
        files = index.lexical.files()
        matrix, rows = index.vectors.matrix([sha for _, _, sha in files])
        assert matrix.shape == (9, 1024)  # the recipe's vector, then the name and description's
        texts = [_memory_texts(korean, files[r][1]) for r in rows]
        assert all(t is not None for t in texts)
        q = encoder.encode([query])[0]
        recipe = encoder.encode([t[0] for t in texts if t]) @ q
        head = encoder.encode([t[1] for t in texts if t]) @ q
        by_path = {
            files[r][1]: float(max(a, b)) for r, a, b in zip(rows, recipe, head, strict=True)
        }
        assert hits and all(np.isclose(h.cosine, by_path[h.path], atol=1e-4) for h in hits)
        assert hits[0].path == "team/m1.md"
        put(korean, "team/m1.md", memory("토큰 만료", "액세스 토큰은 30분 후 만료된다."))
        assert index.refresh()[1] == 1  # an edit re-embeds that memory alone, both its vectors
    finally:
        index.close()
    one = dataclasses.replace(rule, head=False)
    plain = HybridIndex(korean, None, path, encoder=encoder, rule=one)
    try:  # the same file under a rule without the second vector starts afresh
        assert plain.refresh()[1] == 9
        assert plain.vectors.matrix([sha for _, _, sha in plain.lexical.files()])[0].shape[1] == 512
    finally:
        plain.close()
