"""The generic layer tries its pattern only where a label can start: same matches as finditer.

The candidate pattern (``rules.generic_line``) has no literal prefix, so the
engine finds the English label words and the heads of foreign labels first
(the anchor pass on ASCII lines, ``str.find`` in a caseless fold elsewhere) and
matches the pattern only there. These tests hold that to ``finditer`` over
every candidate line, on fuzzed lines in every script the labels use, with
both engines; and they hold the fold to ``re``'s IGNORECASE for every
character a label or label word holds.
"""

from __future__ import annotations

import importlib.util
import random
import re

import pytest

from teamsync.security._prefilter import guard_after_prefix, literal_prefixes
from teamsync.security.rules import (
    EN_LABEL_WORDS,
    FOREIGN_LABELS,
    PEM_MAX_BODY,
    RULES,
    caseless_fold,
    foreign_label_heads,
    generic_line,
)
from teamsync.security.secrets import _generic_line_matches, _Text, plan, scan_text

HAS_HYPERSCAN = importlib.util.find_spec("hyperscan") is not None
ENGINES = ["python", *(["hyperscan"] if HAS_HYPERSCAN else [])]


def _every_character() -> str:
    """Planes 0-2 (every character ``re`` folds to a label character is in the first)."""
    return "".join(chr(c) for c in range(0x30000) if not 0xD800 <= c <= 0xDFFF)


def test_caseless_fold_agrees_with_re_ignorecase_for_every_label_character() -> None:
    everything = _every_character()
    folded = caseless_fold(everything)
    assert len(folded) == len(everything)
    label_chars = {c for label in FOREIGN_LABELS + EN_LABEL_WORDS for c in label if c != " "}
    for char in sorted(label_chars):
        by_re = {m.start() for m in re.finditer("(?i)" + re.escape(char), everything)}
        target = caseless_fold(char)
        by_fold = {i for i, c in enumerate(folded) if c == target}
        assert by_re == by_fold, (char, sorted(everything[i] for i in by_re ^ by_fold)[:10])


def test_foreign_label_heads_start_every_foreign_label() -> None:
    heads = foreign_label_heads()
    for label in FOREIGN_LABELS:
        assert caseless_fold(label).startswith(heads), label


_LABEL_BITS = [
    *EN_LABEL_WORDS,
    *FOREIGN_LABELS,
    "password", "PASSWORD", "Pa\u017f\u017fword", "api\u212aey", "private key", "Private Key",
    "secret access key", "SECRET_ACCESS_KEY", "db_password", "x.senha", "my-token", "oauth",
    "access token", "auth_token", "credentials", "AUTHORIZATION", "--password", "monkey",
    "PAROLASI", "parolas\u0131", "\u0130", "\u0131", "ПАРОЛЬ", "МОТ", "Mot De Passe", "密码是",
    "비밀번호는", "パスワードは", "khóa bí mật", "Clé API",
]  # fmt: skip
_GLUE = [
    " ", "  ", "\t", ": ", "=", " = ", ":=", " => ", "：", "＝", " is ", " was ", " set to ",
    " for prod ", " de la base ", "\"", "'", "`", "] = ", "\": \"", " — ", "(", ")", "/", "\\",
    ".", "-", "_", "|", " | ", "}}", "는 ", "是", "", "\\n",
]  # fmt: skip
_VALUES = [
    "Xk9#mQ2$vL7pR4tZ", "hunter2", "a1B2c3D4e5F6g7H8", "${TOKEN}", "<redacted>", "ghp_x", "ok",
    "s3cr3t-Value_99", "!Qa8Zk2Lm5", "Ab3Cd5Ef7Gh9Jk1L", "os.environ[\"X\"]", "ЁжикЁжик1",
    "val\u017fue12345", "0123456789abcdef",
]  # fmt: skip
_NOISE = ["the", "key", "pass", "deploy", "cold", "α", "日本", "x", "42", "--", "a.b", "é"]


def _fuzz_lines(seed: int, count: int, ascii_only: bool) -> list[str]:
    rng = random.Random(seed)
    pools = tuple(
        [bit for bit in pool if bit.isascii() or not ascii_only]
        for pool in (_LABEL_BITS, _GLUE, _VALUES, _NOISE, _GLUE)
    )
    lines = []
    for _ in range(count):
        parts = [rng.choice(rng.choice(pools)) for _ in range(rng.randint(1, 9))]
        lines.append("".join(parts))
    return lines


def _reference(doc: _Text, ids: tuple[int, ...]) -> list[tuple[tuple[int, int], dict[str, object]]]:
    pattern = generic_line()
    return [
        (m.span(), m.groupdict())
        for start, end in doc.anchor_spans(ids, 0)
        for m in pattern.finditer(doc.text, start, end)
    ]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("ascii_only", [True, False])
def test_generic_starts_give_finditer_s_matches_on_fuzzed_lines(
    engine: str, ascii_only: bool
) -> None:
    compiled = plan(engine)
    lines = _fuzz_lines(14 + ascii_only, 6000, ascii_only)
    matched = 0
    for chunk in range(0, len(lines), 200):
        text = "\n".join(lines[chunk : chunk + 200]) + "\n"
        doc = _Text(text, "fuzz.md", 1, compiled)
        expected = _reference(doc, compiled.generic_anchors)
        got = [
            (m.span(), m.groupdict())
            for m in _generic_line_matches(doc, compiled.generic_anchors, compiled)
        ]
        assert got == expected
        matched += len(expected)
    assert matched > 500  # the fuzz reaches the pattern, not only its misses


@pytest.mark.parametrize("engine", ENGINES)
def test_label_words_are_reported_at_every_occurrence_by_both_engines(engine: str) -> None:
    text = "key key monkey KEY\nsenha SENHA token-token\nnothing here\n"
    compiled = plan(engine)
    positions = compiled.finder(text)
    key = compiled.english_starts[EN_LABEL_WORDS.index("key")]
    assert positions[key] == [m.start() for m in re.finditer("(?i)key", text)]
    assert positions == plan("python").finder(text)


def test_rule_guard_after_the_prefix_matches_like_a_leading_lookbehind() -> None:
    rng = random.Random(3)
    glue = ["", "x", "_", "-", " ", "é", "9", "\n", "=", "eyJ"]
    rewritten = 0
    for rule in RULES:
        pattern, flags = rule.regex.pattern, rule.regex.flags
        guarded = guard_after_prefix(pattern, flags, r"[^\W_]")
        if guarded is None:
            continue
        rewritten += 1
        leading = re.compile(r"(?<![^\W_])(?:" + pattern + ")", flags)
        after = re.compile(guarded, flags)
        (literal,) = literal_prefixes(pattern, flags) or ("",)
        for _ in range(200):
            body = "".join(rng.choice("aZ09_-+/=.") for _ in range(rng.randint(0, 120)))
            text = rng.choice(glue) + literal + body + rng.choice(glue)
            text = text * rng.randint(1, 3)
            assert [m.span() for m in after.finditer(text)] == [
                m.span() for m in leading.finditer(text)
            ], rule.id
    assert rewritten >= 30
    pem = next(r for r in RULES if r.id == "private-key")
    assert guard_after_prefix(pem.regex.pattern, pem.regex.flags, r"[^\W_]") is not None


def _pem(body_chars: int, end: bool) -> str:
    rng = random.Random(body_chars)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    body = "".join(rng.choice(alphabet) for _ in range(body_chars))
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    head = "-" * 5 + "BEGIN RSA " + "PRIVATE" + " KEY" + "-" * 5
    tail = ["-" * 5 + "END RSA " + "PRIVATE" + " KEY" + "-" * 5] if end else []
    return "\n".join([head, *lines, *tail]) + "\n"


def test_pem_body_up_to_the_limit_is_found_and_past_it_is_not() -> None:
    assert [f.rule for f in scan_text(_pem(4000, end=True), "k.md")] == ["private-key"]
    assert [f.rule for f in scan_text(_pem(4000, end=False), "k.md")] == ["private-key"]
    inside = PEM_MAX_BODY - PEM_MAX_BODY // 65 - 64  # newlines count as body characters
    assert [f.rule for f in scan_text(_pem(inside, end=True), "k.md")] == ["private-key"]
    assert scan_text(_pem(PEM_MAX_BODY + 500, end=True), "k.md") == []
