"""The label model's cheap gates never change what it finds (issue 27, speed).

Each gate runs before a dearer test and may only refuse what that test would
refuse: ``_may_judge`` before ``_judge``, the digest words' literal heads before
their search, ``_VALUE_RUN`` before the runs ``_judge`` reads.
"""

from __future__ import annotations

import random
import re
import string

import pytest

from teamsync.security import _labels
from teamsync.security._prefilter import literal_heads
from teamsync.security.rules import caseless_fold

ALPHABET = string.ascii_letters + string.digits + "!#$%&*+-./:=?@^_~"


def _values(seed: int, n: int) -> list[str]:
    g = random.Random(seed)
    out = []
    for _ in range(n):
        size = g.choice([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 16, 17, 24, 32, 36, 40, 64])
        pool = g.choice([ALPHABET, string.digits, string.ascii_lowercase, string.hexdigits,
                         string.ascii_uppercase + string.digits, string.ascii_letters,
                         string.ascii_lowercase + "-", string.digits + "-#*"])  # fmt: skip
        out.append("".join(g.choice(pool) for _ in range(size)))
    out += [
        "20240105",
        "123456",
        "4821",
        "Qz7DNxril3RavG",
        "3f2b9c1e-8d4a-4f6b-9e2a-1c3d5e7f9a0b",
        "coryar-teknox-tortek46",
        "abc-def-ghi",
        "433678#",
        "5939*",
        "3266-6486-8135",
        "123-456",
        "dulvenhus.Fiqjexpim87",
        "~iITLSZ~k_lpa9B",
        "Argon2id",
    ]
    return out


@pytest.mark.parametrize("kind", sorted(_labels.STRONG | {"token"}))
@pytest.mark.parametrize("digest", [False, True])
@pytest.mark.parametrize("after_label", [False, True])
def test_may_judge_refuses_only_what_judge_refuses(
    kind: str, digest: bool, after_label: bool
) -> None:
    taken = 0
    for value in _values(7, 1500):
        for example in (False, True):
            judged = _labels._judge(
                value, kind, digest=digest, example=example, after_label=after_label
            )
            if judged is not None:
                taken += 1
                assert _labels._may_judge(value, kind), (value, kind)
                assert _labels._may_judge(value, None), value  # the kind-free gate
    if not (digest and (kind == "token" or not after_label)):
        # (a token on a digest line, or any value before its label there: _judge takes nothing)
        assert taken > 20  # the values include credentials, so the check has teeth


def test_value_runs_are_the_runs_may_judge_can_take() -> None:
    g = random.Random(3)
    words = [
        "deploy",
        "**Passw0rd!**",
        "1234.",
        "Abc12345!,",
        "x" * 20,
        "a,b;c",
        "(Zz9zzzzz)",
        "coryar-teknox-tortek46.",
        "abc-def-ghi",
        "lockfile",
        "433678#",
    ]
    for _ in range(300):
        line = " ".join(g.choice(words + _values(g.randint(0, 99), 3)) for _ in range(12))
        every = re.finditer(r"(?:(?![\"'`,;()\[\]{}<>|])[!-~])+", line)
        wanted = [m.span() for m in every
                  if _labels._may_judge(m.group().strip("*").rstrip(".,:;"), None)]  # fmt: skip
        got = [m.span() for m in _labels._VALUE_RUN.finditer(line)
               if _labels._may_judge(m.group().strip("*").rstrip(".,:;"), None)]  # fmt: skip
        assert got == wanted, line


def test_digest_heads_are_in_every_line_the_digest_words_match() -> None:
    lines = ["cache_key: 9f86d081884c7d659a2feaa0c55ad015", "La requête 3f2b9c1e", "캐시 키: abc",
             "SHA256 of the build", "Kimliği: x", "ПУБЛИЧНЫЙ ключ", "ÉTAG", "the CACHÉ key",
             "checksum", "no such word here", "Identificador del inquilino"]  # fmt: skip
    matched = 0
    for line in lines:
        if _labels._DIGEST_WORDS.search(line):
            matched += 1
            assert _labels._digest_heads_in(caseless_fold(line)), line
    assert matched >= 9
    assert not _labels._digest_heads_in(caseless_fold("no such word here"))


def test_literal_heads_reads_alternations_and_refuses_what_it_cannot() -> None:
    assert literal_heads(r"(?i)(?<![a-z])(?:sha\d*|md5)(?![a-z])|(?i:cach[eé]|x)", 0) == {
        "sha", "md5", "cach", "x"
    }  # fmt: skip
    assert literal_heads(r"[ab]c|d", 0) is None  # a class first: no literal head
    assert literal_heads(r"a*b", 0) is None


def test_a_line_the_gate_refuses_gives_the_label_model_nothing() -> None:
    """``may_hold_value`` before the readings: every line it refuses, read in full, yields
    nothing (labels of every language, every separator, pairs, command lines, quotes)."""
    labels = sorted({label for table in _labels.LABELS.values() for ls in table.values()
                     for label in ls})  # fmt: skip
    words = ["deploy", "rollout", "hunter", "abcdef", "admin", "the", "is", "ist", "é", "là",
             "=", ":", "：", "-", "—", "is:", "u:", "p:", "login:", "user:", "mysql", "-pabcdef",
             "curl", "-u", "bob:hunter", "sshpass", "-p", '"quoted word"', "`tick`", "(x)",
             "Latency", "Redis", "abc-def", "admin/hunter", "pin", "code", "*", "#", "a_b",
             "비번", "パスワード", "というパスワード", "là", "mật khẩu", "hunter#", "Ab!"]  # fmt: skip
    g = random.Random(17)
    refused = 0
    for _ in range(1500):
        parts = [g.choice(labels if g.random() < 0.35 else words) for _ in range(g.randint(2, 9))]
        line = (" " if g.random() < 0.8 else "").join(parts)
        if _labels.may_hold_value(line):
            continue
        refused += 1
        assert list(_labels._candidates(line)) == [], line
    assert refused > 500
    # and lines it lets through do reach the readings
    assert _labels.may_hold_value("password: Hunter!x")
    assert _labels.may_hold_value("pin 4821")
    assert _labels.may_hold_value("passphrase coryar-teknox-tortek")
    assert _labels.may_hold_value("app password abcd efgh ijkl mnop")
    assert not _labels.may_hold_value("Pin budget always until the rollout.")
