"""Issue 27, round 4: the causes read off blind set 3 (``bench/secrets_ml_blind3/``, opened
and a development set now), each as a shape with fresh values, not as the set's lines.

- A key named for idempotency, a request or a correlation holds an id (a UUID or hex), in
  any language; a cache key is known by its shape (``v4-deps-<sha256>``), with or without
  a word for cache beside it.
- A ``user / password`` pair beside an account's word, or just before a login word
  (Japanese, Korean and Chinese order).
- Under a password label, near or far: a numbered passphrase (``fjord-comet-sierra-60``)
  and a password as people make one, lower case allowed (``pepper*32``). Slugs, tickets,
  settings and algorithms with a number (``fix-reset-email-41``, ``issue-4821``,
  ``bcrypt-12``) are not passwords.

Values are built at run time (random), so no file in the suite holds a literal secret.
"""

from __future__ import annotations

import random
import string
import uuid

import pytest

from teamsync.security import _labels
from teamsync.security.secrets import scan_text

_WORDS = ("fjord", "comet", "sierra", "marble", "cobalt", "quartz", "raven", "nebula", "thistle",
          "falcon", "tundra", "maple", "harbor", "violet", "saffron", "granite", "pixel")  # fmt: skip


def _g(text: str) -> random.Random:
    return random.Random(sum(map(ord, text)) % 9973)


def _values(g: random.Random) -> dict[str, str]:
    alnum = string.ascii_letters + string.digits
    sep = g.choice("-_.")
    words = g.sample(_WORDS, 3)
    return {
        "uuid": str(uuid.UUID(int=g.getrandbits(128))),
        "h32": "".join(g.choice("0123456789abcdef") for _ in range(32)),
        "h64": "".join(g.choice("0123456789abcdef") for _ in range(64)),
        "pw": "".join(g.choice(alnum) for _ in range(13)) + g.choice("!#%=^~") + "Q7",
        "phrase": sep.join(words) + sep + str(g.randrange(10, 99)),
        "human": g.choice(_WORDS) + g.choice("*#!@%?") + str(g.randrange(10, 999)),
    }


POSITIVES = [
    "Shared QA account qa@acme.test / {pw} (the E2E suite uses it, do not change)",
    "Gemeinsamer QA-Account qa@acme.test / {pw} (nicht ändern)",
    "Wspólne konto QA qa@acme.test / {pw}",
    "Общий QA-аккаунт qa@acme.test / {pw} (не менять)",
    "QA 共用アカウント qa@acme.test / {pw}（変更しないこと）",
    "- ルーターの管理画面に svc_ci / {pw} でログインして確認だけした",
    "- 用 dev01 / {pw} 登入路由器管理頁，只看沒改",
    "- Master password for the team's KeePass file was changed to {phrase} on Monday.",
    "- Das Master-Passwort der Team-KeePass-Datei wurde am Montag auf {phrase} geändert",
    "- 팀 KeePass 마스터 비밀번호를 월요일에 {phrase} 로 변경함",
    "- The password for the reporting DB, reset after the outage, is still {human}",
    "- Пароль от БД отчётов, сброшенный после аварии, по-прежнему {human}",
    "- 障害のあとアナさんが再設定したレポートDBのパスワードは今も {human}",
]


@pytest.mark.parametrize("shape", POSITIVES)
def test_pairs_passphrases_and_human_passwords_are_found(shape: str) -> None:
    text = shape.format(**_values(_g(shape)))
    assert [f.rule for f in scan_text(text, "team/notes.md")], text


NEGATIVES = [
    "- Send `Idempotency-Key: {uuid}` again when retrying the charge",
    "- Beim Retry denselben `Idempotency-Key: {uuid}` schicken",
    "- Idempotenz-Schlüssel: {uuid} beim Retry mitschicken",
    "- 冪等キー `{uuid}` を再送する",
    "- 멱등 키 {uuid} 재사용",
    "- The correlation key is {h32}, log it with every span",
    "Release notes: `key: v4-deps-{h64}` (actions/cache)",
    "- restore: `key: Linux-node-{h64}`",
    "- مفتاح الكاش الخاص بـ node_modules هو v4-deps-{h64}",
    "- node_modules önbellek anahtarı: v5-deps-{h64}",
    "- branch for the password reset fix: fix-reset-email-41",
    "- password rotation runbook: ops.runbooks.rotation.2",
    "- 密码已轮换，记录在 change-log-entry-17",
    "- the password reset bug is tracked as issue-4821",
    "- Contraseña cambiada, ver el ticket soporte-8812",
    "- Password hashing: bcrypt-12 rounds, never lower",
    "- the password column is varchar-255 in the users table",
    "- password expiry set to days-90 in the IdP",
    "- Keine `changeme`- oder `hunter2`-Defaults in Helm-Charts",
    "- Account / Settings / Billing is where the invoices live",
    "- qa@acme.test / staging-docs (the QA account's home page)",
]


@pytest.mark.parametrize("line", NEGATIVES)
@pytest.mark.parametrize("path", ["team/notes.md", "lib/module.py"])
def test_ids_cache_keys_slugs_and_settings_are_not_findings(line: str, path: str) -> None:
    text = line.format(**_values(_g(line)))
    assert [f.rule for f in scan_text(text, path)] == [], text


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        ("v4-deps-" + "0a1b2c3d" * 8, "token", False),  # a cache key: parts, then a sha256
        ("pul-" + "0a1b2c3d" * 5, "token", True),  # one part, then hex: a token's prefix
        ("fix-reset-email-41", "password", False),  # a slug
        ("fjord-comet-sierra-60", "phrase", True),  # a numbered passphrase
        ("bcrypt-12", "password", False),  # a setting
        ("-Defaults", "password", False),  # a compound's tail
        ("marble=566", "password", False),  # name=number: a setting (a keyword argument)
    ],
)
def test_the_value_model_round_4(value: str, kind: str, expected: bool) -> None:
    assert _labels.credential_value(value, kind) is expected
