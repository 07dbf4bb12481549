"""Lexical recall per script and language: detection, stop words, stems, particles, CJK bigrams."""

from __future__ import annotations

from pathlib import Path

import pytest

from teamsync.recall import langs
from teamsync.recall.lexical import LexicalIndex
from teamsync.recall.tokens import query_terms
from testing.recall import memory, put


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("배포 전에 토큰을 확인한다", "ko"),
        ("デプロイの手順を確認する", "ja"),
        ("模块优先复用的规则", "zh"),
        ("müşteri sitesinde hangi sürüm var", "tr"),
        ("¿Cuál es la política de despliegues?", "es"),
        ("vou precisar de uma migração", "pt"),
        ("Où est la configuration de la base", "fr"),
        ("How do we deploy the parser?", "en"),
        ("pnpm lockfile", "en"),
    ],
)
def test_language_is_detected_by_script_and_stop_word_votes(text: str, lang: str) -> None:
    assert langs.detect(text) == lang


def test_stop_words_are_per_language_acronyms_are_kept_and_one_letter_words_dropped() -> None:
    assert query_terms("¿Cuál es la política de la WHO?") == ["política", "who"]
    assert query_terms("vou precisar de uma migração") == ["precisar", "migração"]
    assert query_terms("what's the chart's owner") == ["chart", "owner"]  # no stray "s"
    assert query_terms("how do we") == ["how", "do", "we"]  # nothing else left: keep all


def test_snowball_stems_turkish_spanish_and_portuguese() -> None:
    assert langs.stem(["sitesinde"], "tr") == ["site"]
    assert langs.stem(["despliegues"], "es") == ["desplieg"]
    assert langs.stem(["migrações"], "pt") == langs.stem(["migração"], "pt")
    assert langs.stem(["deploys"], "en") == ["deploys"]  # English is left to porter


def test_hangul_particles_are_cut_when_two_syllables_remain() -> None:
    assert langs.strip_particle("토큰을") == "토큰"
    assert langs.strip_particle("서버에서") == "서버"
    assert langs.strip_particle("국가") == "국가"  # one syllable would remain: not a particle
    assert query_terms("토큰을 어디에 저장하나요?") == ["토큰", "저장"]


def test_han_runs_become_bigrams_and_katakana_words_stay_whole() -> None:
    assert langs.cjk_units("模块优先复用") == ["模块", "块优", "优先", "先复", "复用"]
    assert langs.cjk_units("复用的规则") == ["复用", "规则"]  # split at the function character
    assert langs.cjk_units("デプロイの手順") == ["デプロイ", "手順"]  # hiragana dropped
    assert langs.split_scripts("API모듈") == ["API", "모듈"]


@pytest.fixture
def polyglot(tmp_path: Path) -> LexicalIndex:
    root = tmp_path / "memory"
    put(root, "team/zh.md", memory("公共模块", "新功能优先复用公共模块", body="模块优先复用。\n"))
    put(
        root,
        "team/ja.md",
        memory("本番デプロイ", "本番デプロイは承認後に実施する", body="承認が必要。\n"),
    )
    put(
        root,
        "team/ko.md",
        memory("라이더 토큰", "라이더 앱 토큰은 Redis에 저장한다", body="만료 30분.\n"),
    )
    put(
        root,
        "team/tr.md",
        memory("Site sürümü", "Müşteri site Next.js 14 ile çalışıyor", body="Geçiş ocakta.\n"),
    )
    put(
        root,
        "team/es.md",
        memory("Despliegue", "Cada despliegue necesita aprobación", body="Sin excepciones.\n"),
    )
    put(
        root,
        "team/pt.md",
        memory("Migração", "A migração do banco é feita em duas etapas", body="Depois remove.\n"),
    )
    put(
        root,
        "team/en.md",
        memory("WHO data", "The WHO growth charts come from the vendor feed", body="x\n"),
    )
    index = LexicalIndex(root)
    index.refresh()
    return index


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("复用", "team/zh.md"),  # inside a run of Han: unicode61 alone never finds it
        ("デプロイの承認", "team/ja.md"),
        ("토큰을 어디에 저장하나요?", "team/ko.md"),  # inflected longer than the memory's word
        ("müşteri sitesinde hangi sürüm var", "team/tr.md"),
        ("¿qué necesitan los despliegues?", "team/es.md"),
        ("como funcionam as migrações do banco?", "team/pt.md"),
        ("where do the WHO charts come from", "team/en.md"),
    ],
)
def test_a_query_in_its_own_language_finds_its_memory(
    polyglot: LexicalIndex, query: str, expected: str
) -> None:
    hits = polyglot.search(query, 5)
    assert hits and hits[0].path == expected, [(h.path, h.coverage) for h in hits]


@pytest.mark.parametrize(
    "query",
    [
        "¿cuál es la cena de empresa?",
        "quando é a festa de fim de ano?",
        "公司年会在哪里举办？",
        "社内勉強会の開催日はいつ？",
        "Kafka 파티션 개수는 몇 개로 하나요?",
        "şirket pikniği hangi tarihte?",
    ],
)
def test_function_words_alone_do_not_lift_a_no_answer_query(
    polyglot: LexicalIndex, query: str
) -> None:
    assert polyglot.search(query, 5) == []
