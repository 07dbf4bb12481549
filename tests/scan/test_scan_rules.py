"""Per-rule payload tables: every rule has positives it must report and negatives it must not."""

from __future__ import annotations

import random

import pytest

from teamsync.security.rules import GENERIC_RULES, RULES, looks_like_placeholder, rule_label
from teamsync.security.secrets import Finding, fingerprint, scan_text
from testing.scan import DASH5, NEGATIVES, PLANT_RULES, PLANTS, RULE_NEGATIVES, pem_block

ALL_RULES = [rule.id for rule in RULES] + list(GENERIC_RULES)
POSITIVES = [(kind, seed) for kind in PLANTS for seed in range(3)]
RULE_NEGATIVE_CASES = [(rule, text) for rule, texts in RULE_NEGATIVES.items() for text in texts]


def test_every_rule_has_positive_and_negative_payloads() -> None:
    assert set(PLANT_RULES.values()) == set(ALL_RULES)
    assert all(RULE_NEGATIVES.get(rule) for rule in ALL_RULES)
    assert len(RULES) >= 36 + 10
    claude_code = {
        "aws-access-token", "gcp-api-key", "azure-ad-client-secret", "digitalocean-pat",
        "digitalocean-access-token", "anthropic-api-key", "anthropic-admin-api-key",
        "openai-api-key", "huggingface-access-token", "github-pat", "github-fine-grained-pat",
        "github-app-token", "github-oauth", "github-refresh-token", "gitlab-pat",
        "gitlab-deploy-token", "slack-bot-token", "slack-user-token", "slack-app-token",
        "twilio-api-key", "sendgrid-api-token", "npm-access-token", "pypi-upload-token",
        "databricks-api-token", "hashicorp-tf-api-token", "pulumi-api-token",
        "postman-api-token", "grafana-api-key", "grafana-cloud-api-token",
        "grafana-service-account-token", "sentry-user-token", "sentry-org-token",
        "stripe-access-token", "shopify-access-token", "shopify-shared-secret", "private-key",
    }  # fmt: skip
    assert len(claude_code) == 36 and claude_code <= set(ALL_RULES)


@pytest.mark.parametrize(("kind", "seed"), POSITIVES)
def test_positive_payload_is_reported_by_its_rule(kind: str, seed: int) -> None:
    plant = PLANTS[kind](random.Random(seed))
    text = "# Notes\n\nSome context.\n" + plant + "\nmore text\n"
    findings = scan_text(text, "team/notes.md")
    assert [f.rule for f in findings] == [PLANT_RULES[kind]]
    assert findings[0].line == 4 + plant[: max(0, plant.find(DASH5))].count("\n")
    assert findings[0].path == "team/notes.md"
    assert len(findings[0].fingerprint) == 32


@pytest.mark.parametrize(("rule", "text"), RULE_NEGATIVE_CASES)
def test_rule_negative_is_not_reported_by_that_rule(rule: str, text: str) -> None:
    assert rule not in {f.rule for f in scan_text(text, "n.md")}


@pytest.mark.parametrize("kind", sorted(NEGATIVES))
def test_hard_negatives_are_clean(kind: str) -> None:
    for seed in range(5):
        assert scan_text(NEGATIVES[kind](random.Random(seed)), "n.md") == []


@pytest.mark.parametrize(
    "line",
    [
        "{secret} <!-- teamsync: allow -->",
        "{secret}  # pragma: allowlist secret",
    ],
)
def test_inline_allowlist_skips_the_line_only_in_a_code_scan(line: str) -> None:
    secret = PLANTS["github-pat"](random.Random(1))
    assert scan_text(line.format(secret=secret), inline_allow=True) == []
    assert len(scan_text(secret, inline_allow=True)) == 1
    # every team-memory gate scans with the default: the writer's own pragma does not count
    assert [f.rule for f in scan_text(line.format(secret=secret))] == ["github-pat"]


def test_allow_next_line_pragma() -> None:
    secret = PLANTS["npm-access-token"](random.Random(2))
    assert scan_text("<!-- teamsync: allow-next-line -->\n" + secret, inline_allow=True) == []
    assert scan_text("# pragma: allowlist nextline secret\n" + secret, inline_allow=True) == []
    assert len(scan_text("unrelated\n" + secret, inline_allow=True)) == 1
    assert len(scan_text("<!-- teamsync: allow-next-line -->\n" + secret)) == 1


def test_inline_pragma_does_not_hide_a_generic_password_by_default() -> None:
    rng = random.Random(3)
    value = "Qz7" + "".join(rng.choice("abcdefghkmnpqrstuvwxyz23456789") for _ in range(11))
    line = f"db_password: {value}  # pragma: allowlist secret"
    assert [f.rule for f in scan_text(line)] == ["generic-secret"]
    assert scan_text(line, inline_allow=True) == []


def test_baseline_fingerprints_are_skipped() -> None:
    text = (
        PLANTS["github-pat"](random.Random(3))
        + "\n"
        + PLANTS["stripe-access-token"](random.Random(3))
    )
    findings = scan_text(text)
    assert len(findings) == 2
    left = scan_text(text, baseline=frozenset({findings[0].fingerprint}))
    assert left == [findings[1]]


def test_fingerprint_is_stable_and_rule_scoped() -> None:
    assert fingerprint("a", "x") == fingerprint("a", "x")
    assert fingerprint("a", "x") != fingerprint("b", "x")
    text = PLANTS["gitlab-pat"](random.Random(4))
    assert scan_text(text, "a.md")[0].fingerprint == scan_text("\n\n" + text, "b.md")[0].fingerprint


def test_multiline_private_key_reports_begin_line() -> None:
    block = pem_block(random.Random(5))
    findings = scan_text("intro\n\n" + block + "\n")
    assert [(f.rule, f.line) for f in findings] == [("private-key", 3)]


def test_json_escaped_private_key_in_one_line() -> None:
    block = pem_block(random.Random(6), "").replace("\n", "\\n")
    assert [f.rule for f in scan_text('{"private_key": "' + block + '\\n"}')] == ["private-key"]


def test_first_line_offset_and_unicode_case_folding_keep_lines_right() -> None:
    secret = PLANTS["github-pat"](random.Random(7))
    text = "İİİ ﬁ straße\n" * 3 + secret
    assert [f.line for f in scan_text(text, first_line=10)] == [13]


def test_several_secrets_on_one_line_and_overlaps_reported_once() -> None:
    g = random.Random(8)
    token = PLANTS["github-app-token"](g).split(": ")[1]
    url = f"https://x-access-token:{token}@github.com/org/repo.git"
    assert [f.rule for f in scan_text(url)] == ["github-app-token"]
    two = PLANTS["npm-access-token"](g) + " and " + PLANTS["pulumi-api-token"](g)
    assert sorted(f.rule for f in scan_text(two)) == ["npm-access-token", "pulumi-api-token"]


def test_generic_can_be_disabled() -> None:
    line = PLANTS["generic-secret"](random.Random(9))
    assert [f.rule for f in scan_text(line)] == ["generic-secret"]
    assert scan_text(line, generic=False) == []


@pytest.mark.parametrize(
    ("value", "placeholder"),
    [("AK" + "IAIOSFODNN7" + "EXAMPLE", True), ("${TOKEN}", True), ("<redacted>", True),
     ("xxxxxxxxxxxxxxxx", True), ("aaaaaaaaaaaaaaaaaaaa", True), ("Zq8vN2kLp4Rt7Wx1", False)],
)  # fmt: skip
def test_placeholder_detection(value: str, placeholder: bool) -> None:
    assert looks_like_placeholder(value) is placeholder


def test_finding_holds_no_secret_and_labels_exist() -> None:
    assert set(Finding.__dataclass_fields__) == {"path", "line", "rule", "fingerprint", "commit"}
    assert all(rule_label(rule) != rule for rule in ALL_RULES)


def test_every_rule_is_documented() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "scanning.md").read_text()
    assert [rule for rule in ALL_RULES if f"`{rule}`" not in doc] == []
