"""Recall where the scanner was weakest (issue 14 §4), with values built at run time."""

from __future__ import annotations

import random
import string

import pytest

from teamsync.security.rules import looks_like_placeholder
from teamsync.security.secrets import scan_text
from testing.scan import B64, DASH5, PRIV, aws_secret, discord_token, r

ALNUM = string.ascii_letters + string.digits


def rules(text: str) -> list[str]:
    return [f.rule for f in scan_text(text, "team/n.md")]


def random_value(seed: int, n: int) -> str:
    g = random.Random(seed)
    while True:
        value = r(g, ALNUM, n)
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


@pytest.mark.parametrize(
    "template",
    [
        "- AWS secret access key: {v}",
        "The AWS prod secret key is {v}",
        "aws secret access key = {v}",
        "AWS_SECRET_ACCESS_KEY：{v}",
        "secret access key `{v}`",
    ],
)
def test_aws_secret_in_prose(template: str) -> None:
    value = aws_secret(random.Random(len(template)))
    assert rules(template.format(v=value)) == ["aws-secret-access-key"]


def test_aws_secret_away_from_its_label_next_to_the_key_id() -> None:
    g = random.Random(3)
    key_id = "AK" + "IA" + r(g, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    text = f"| deploy | {key_id} | {aws_secret(g)} |\n"
    assert sorted(rules(text)) == ["aws-access-token", "aws-secret-near-key-id"]
    csv = f"user,key,value\nci,{key_id},\n{aws_secret(g)}\n"
    assert "aws-secret-near-key-id" in rules(csv)


def test_aws_pair_rule_ignores_hashes_and_placeholders() -> None:
    key_id = "AK" + "IA" + "QWERTYUIOPASDFGH"
    assert rules(f"{key_id} commit {r(random.Random(1), '0123456789abcdef', 40)}") == [
        "aws-access-token"
    ]
    assert rules(f"{key_id} secret {'x' * 40}") == ["aws-access-token"]


@pytest.mark.parametrize(
    "template",
    [
        "Authorization: Bot {t}",
        "Authorization: Bearer {t}",
        "curl -H 'authorization: {t}' https://api.example.invalid/users/@me",
        'token = "{t}"',
        "{t}",
    ],
)
def test_discord_token_in_every_shape_without_the_word(template: str) -> None:
    token = discord_token(random.Random(len(template)))
    assert "discord-bot-token" in rules(template.format(t=token))


@pytest.mark.parametrize(
    "key", ["token", "api_token", "access_token", "auth_token", "credentials", "key", "KEY"]
)
@pytest.mark.parametrize("length", [16, 18, 20])
def test_weak_labels_with_random_values(key: str, length: int) -> None:
    value = random_value(length + len(key), length)
    found = rules(f"{key}: {value}\n") + rules(f'{key} = "{value}"\n')
    assert len(found) == 2 and set(found) <= {"generic-secret", "generic-high-entropy"}


def test_weak_labels_with_words_are_not_reported() -> None:
    assert rules("key: value_name\ntoken: rotated weekly\nkey = user_id\n") == []
    assert rules("credentials: stored in the team vault\n") == []


def test_bare_key_with_32_random_characters() -> None:
    assert len(rules(f'key="{random_value(9, 32)}"')) == 1


@pytest.mark.parametrize("first", ["!", "#", ".", "^"])
def test_values_starting_with_punctuation(first: str) -> None:
    value = first + random_value(ord(first), 13)
    assert rules(f"password: {value}\n") == ["generic-secret"]
    assert rules(f'db_password = "{value}"\n') == ["generic-secret"]


@pytest.mark.parametrize(
    "template",
    [
        "password: {v}",  # YAML
        'password = "{v}"',  # TOML
        "password={v}",  # INI / .env
        "DB_PASSWORD={v}",  # .env
        "export DB_PASSWORD={v}",  # shell
        "export DB_PASSWORD='{v}'",
        '{{"password": "{v}"}}',  # JSON
        'connect(host="db", password="{v}")',  # Python kwargs
        "connect({{ password: '{v}' }})",  # JS object
        "mysql --password={v} -h db",  # CLI flags
        "psql --password {v}",
        "The staging database password is {v}.",  # prose
        "# the admin password is {v}",  # a code comment
        "// password: {v}",
        "secret key: {v}",
    ],
)
def test_generic_passwords_in_every_syntax(template: str) -> None:
    value = random_value(len(template), 14)
    assert len(rules(template.format(v=value))) == 1, template


def test_entry_point_with_secrets_in_the_name_is_not_a_secret() -> None:
    assert rules("detect-secrets = detect_secrets.main:main\n") == []
    assert rules("[project.scripts]\nsecrets-cli = secrets_cli.app:run\n") == []


def test_placeholder_test_looks_at_the_whole_value() -> None:
    g = random.Random(5)
    assert looks_like_placeholder("sk_live_" + "x" * 24)
    assert looks_like_placeholder("your_password_here")
    assert looks_like_placeholder("xxxx-xxxx-xxxx")
    real = r(g, ALNUM, 30) + "xxxx" + r(g, ALNUM, 30)
    assert not looks_like_placeholder(real)


def test_real_keys_holding_xxxx_are_still_found() -> None:
    g = random.Random(6)
    body = [r(g, B64, 64) for _ in range(12)]
    body[5] = body[5][:20] + "xXxx" + body[5][24:]
    pem = f"{DASH5}BEGIN RSA {PRIV}{DASH5}\n" + "\n".join(body) + f"\n{DASH5}END RSA {PRIV}{DASH5}"
    assert rules(pem) == ["private-key"]
    stripe = "s" + "k_live_" + r(g, ALNUM, 20) + "xxxx" + r(g, ALNUM, 20)
    assert rules(f"STRIPE={stripe}") == ["stripe-access-token"]
    gcp = "AI" + "za" + r(g, ALNUM, 12) + "xxxx" + r(g, ALNUM, 19)
    assert rules(f"maps: {gcp}") == ["gcp-api-key"]


def test_a_letters_only_random_password_is_not_taken_for_a_camelcase_name() -> None:
    from teamsync.security.rules import generic_value_plausible

    value = "nHXdy" + "CYaGTwdLjUb"  # seen missed on bench/scan.py's corpus: it fit the old pattern
    assert scan_text(f"db_password: {value}\n", "x.md")
    for name in ("OAuthFlowPassword", "getPasswordFromEnv", "HTTPBasicAuthPassword"):
        assert not generic_value_plausible(name)  # real identifiers stay out
