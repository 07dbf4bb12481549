"""Curated, high-confidence secret rules written from providers' published token formats.

Each :class:`Rule` has an id, a label, a compiled regex (the secret is the named
group ``s`` when present, else the whole match), the literal keywords the
prefilter looks for, and an optional validator that rejects documented example
keys and obvious placeholders. Keywords written in lower case are looked up in
the lower-cased text; a keyword with an upper-case letter is looked up as is.
A rule without keywords starts with a case-sensitive literal, which ``re``
finds as fast as a substring search, so it runs over the whole text.

Literals that would trip our own scanner (the Anthropic key prefix, PEM
markers) are built from parts, so this file never flags itself.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

_DASH5 = "-" * 5
_ANT = "-".join(("sk", "ant", ""))  # the Anthropic key prefix, never written literally
_PRIVATE = "PRIVATE" + " KEY"
_PEM_BEGIN = _DASH5 + "BEGIN"
_PEM_END = _DASH5 + "END"

# Documented example / emulator keys, kept as hashes so the literals never ship.
_KNOWN_EXAMPLES = frozenset(
    {
        "0011cc25eb4320717494d2703e8cba85743e71b500283c21c8b88147992f9059",  # Azurite dev key
    }
)
_PLACEHOLDER_WORDS = (
    "example",
    "xxxx",
    "redacted",
    "placeholder",
    "changeme",
    "change_me",
    "your_",
    "your-",
    "yourtoken",
    "dummy",
    "0123456789",
    "123456789",
    "abcdefghij",
)
_PLACEHOLDER_MARKS = ("<", ">", "${", "{{", "***", "...", "\u2026")
_URL_PASSWORD_PLACEHOLDERS = frozenset(
    {
        "password",
        "pass",
        "passwd",
        "pwd",
        "secret",
        "pw",
        "p",
        "x",
        "token",
        "mypassword",
        "pass123",
    }
)


def looks_like_placeholder(value: str) -> bool:
    """True for documented examples, template references and low-variety filler."""
    lowered = value.lower()
    if any(word in lowered for word in _PLACEHOLDER_WORDS):
        return True
    if any(mark in value for mark in _PLACEHOLDER_MARKS):
        return True
    if hashlib.sha256(value.encode()).hexdigest() in _KNOWN_EXAMPLES:
        return True
    if len(value) >= 16 and len(set(value[-16:])) < 4:
        return True  # a real token's random tail is never this uniform
    return len(value) >= 12 and len(set(value)) < 6


def _token(value: str) -> bool:
    return not looks_like_placeholder(value)


def _url_password(value: str) -> bool:
    if value.lower() in _URL_PASSWORD_PLACEHOLDERS or value[:1] in "$%{<:[*":
        return False
    return not looks_like_placeholder(value) and len(value) >= 3


def _jwt(value: str) -> bool:
    header = value.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    if not isinstance(decoded, dict) or str(decoded.get("alg", "")).lower() in ("", "none"):
        return False
    return not looks_like_placeholder(value.split(".", 1)[1])


_PEM_HEADER = re.compile(r"^[A-Za-z-]+:.*$", re.MULTILINE)
_PEM_NOISE = re.compile(r"\\n|\\r|[\s\"',]")


def _pem_body(value: str) -> bool:
    body = value.split(_DASH5, 2)[-1] if value.count(_DASH5) >= 2 else value
    body = _PEM_NOISE.sub("", _PEM_HEADER.sub("", body.split(_PEM_END, 1)[0]))
    if len(body) < 64 or looks_like_placeholder(body):
        return False
    return re.fullmatch(r"[A-Za-z0-9+/=]+", body) is not None


@dataclass(frozen=True)
class Rule:
    """One secret kind. ``validator(secret) -> bool`` keeps only real-looking secrets."""

    id: str
    label: str
    regex: re.Pattern[str]
    keywords: tuple[str, ...] = ()
    validator: Callable[[str], bool] | None = _token
    context_chars: int = 0
    """Characters after a keyword's line that the regex may also look at (multi-line secrets)."""
    left_boundary: bool = True
    """Refuse a match glued to a preceding letter or digit (``xghp_…``)."""
    requires: tuple[str, ...] = ()
    """Literals that must all be on a candidate span before the regex runs on it."""


def _r(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


_B = r"(?![A-Za-z0-9_\-])"  # right boundary for token alphabets
_ASSIGN = r"""["'\]]{0,2}\s*(?::=|=>|[:=])\s*["']?"""

RULES: tuple[Rule, ...] = (
    Rule(
        "aws-access-token",
        "AWS access key ID",
        _r(r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Z0-9])"),
    ),
    Rule(
        "aws-secret-access-key",
        "AWS secret access key",
        _r(
            r"(?i:aws[_\-.]?secret(?:[_\-.]?access)?(?:[_\-.]?key)?|secret[_\-.]?access[_\-.]?key)"
            + _ASSIGN
            + r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        ("secret",),
        left_boundary=False,
    ),
    Rule("gcp-api-key", "Google / GCP API key", _r(r"AIza[0-9A-Za-z_\-]{35}" + _B)),
    Rule(
        "azure-ad-client-secret",
        "Azure AD client secret",
        _r(
            r"(?:^|[\\'\"`\s>=:(,)])(?P<s>[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.\-]{31,34})"
            r"(?:$|[\\'\"`\s<),])",
            re.MULTILINE,
        ),
        ("q~",),
    ),
    Rule(
        "azure-storage-key",
        "Azure storage / service bus connection string key",
        _r(
            r"(?i:AccountKey=|SharedAccessKey=)(?P<s>[A-Za-z0-9+/]{86}==|[A-Za-z0-9+/]{43}=)"
            r"(?![A-Za-z0-9+/=])"
        ),
        ("accountkey=", "sharedaccesskey="),
        left_boundary=False,
    ),
    Rule("digitalocean-pat", "DigitalOcean personal access token", _r(r"dop_v1_[a-f0-9]{64}" + _B)),
    Rule(
        "digitalocean-access-token",
        "DigitalOcean OAuth access token",
        _r(r"doo_v1_[a-f0-9]{64}" + _B),
    ),
    Rule(
        "digitalocean-refresh-token",
        "DigitalOcean OAuth refresh token",
        _r(r"dor_v1_[a-f0-9]{64}" + _B),
    ),
    Rule(
        "anthropic-api-key",
        "Anthropic API key",
        _r(re.escape(_ANT) + r"api\d\d-[A-Za-z0-9_\-]{80,100}AA" + _B),
    ),
    Rule(
        "anthropic-admin-api-key",
        "Anthropic admin API key",
        _r(re.escape(_ANT) + r"admin\d\d-[A-Za-z0-9_\-]{80,100}AA" + _B),
    ),
    Rule(
        "openai-api-key",
        "OpenAI API key",
        _r(
            # bounded runs: a line of "sk-sk-sk-…" costs each start at most 400 steps
            r"sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_\-]{20,400}T3BlbkFJ[A-Za-z0-9_\-]{20,}"
            r"|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{80,}"
        ),
        ("t3blbkfj", "sk-"),
    ),
    Rule("huggingface-access-token", "Hugging Face access token", _r(r"hf_[a-zA-Z]{34}" + _B)),
    Rule(
        "huggingface-org-token", "Hugging Face organization token", _r(r"api_org_[a-zA-Z]{34}" + _B)
    ),
    Rule("github-pat", "GitHub personal access token", _r(r"ghp_[0-9a-zA-Z]{36}" + _B)),
    Rule(
        "github-fine-grained-pat",
        "GitHub fine-grained personal access token",
        _r(r"github_pat_[0-9a-zA-Z_]{82}" + _B),
    ),
    Rule("github-app-token", "GitHub app token", _r(r"gh[us]_[0-9a-zA-Z]{36}" + _B)),
    Rule("github-oauth", "GitHub OAuth access token", _r(r"gho_[0-9a-zA-Z]{36}" + _B)),
    Rule("github-refresh-token", "GitHub refresh token", _r(r"ghr_[0-9a-zA-Z]{36}" + _B)),
    Rule("gitlab-pat", "GitLab personal access token", _r(r"glpat-[0-9a-zA-Z_\-]{20,}" + _B)),
    Rule("gitlab-deploy-token", "GitLab deploy token", _r(r"gldt-[0-9a-zA-Z_\-]{20,}" + _B)),
    Rule(
        "slack-bot-token",
        "Slack bot token",
        _r(r"xoxb-[0-9]{10,13}-[0-9]{10,13}-?[a-zA-Z0-9]{16,}" + _B),
    ),
    Rule(
        "slack-user-token",
        "Slack user token",
        _r(r"xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9\-]{28,34}" + _B),
    ),
    Rule(
        "slack-app-token",
        "Slack app-level token",
        _r(r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+" + _B, re.IGNORECASE),
        ("xapp-",),
    ),
    Rule(
        "slack-webhook-url",
        "Slack incoming webhook URL",
        _r(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/+\-]{40,80})"),
    ),
    Rule("twilio-api-key", "Twilio API key (SK…)", _r(r"SK[0-9a-fA-F]{32}(?![0-9a-zA-Z])")),
    Rule(
        "twilio-auth-token",
        "Twilio account SID with auth token",
        _r(
            r"(?:(?i:twilio[_\-.]?auth[_\-.]?token|auth[_\-.]?token)"
            + _ASSIGN
            + r"|AC[0-9a-f]{32}[\"']?\s*[,:]\s*[\"']?)(?P<s>[0-9a-f]{32})(?![0-9a-zA-Z])"
        ),
        ("auth", "AC"),
        left_boundary=False,
    ),
    Rule(
        "sendgrid-api-token",
        "SendGrid API key",
        _r(r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _B),
    ),
    Rule("npm-access-token", "npm access token", _r(r"npm_[A-Za-z0-9]{36}" + _B)),
    Rule(
        "pypi-upload-token",
        "PyPI upload token",
        _r(r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{50,}" + _B),
    ),
    Rule("databricks-api-token", "Databricks API token", _r(r"dapi[a-f0-9]{32}(?:-\d)?" + _B)),
    Rule(
        "hashicorp-tf-api-token",
        "HashiCorp Terraform API token",
        _r(r"[a-zA-Z0-9]{14}\.atlasv1\.[a-zA-Z0-9\-_=]{60,70}" + _B),
        (".atlasv1.",),
    ),
    Rule("pulumi-api-token", "Pulumi API token", _r(r"pul-[a-f0-9]{40}" + _B)),
    Rule("postman-api-token", "Postman API key", _r(r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + _B)),
    Rule("grafana-api-key", "Grafana API key", _r(r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}")),
    Rule(
        "grafana-cloud-api-token", "Grafana Cloud API token", _r(r"glc_[A-Za-z0-9+/]{32,400}={0,3}")
    ),
    Rule(
        "grafana-service-account-token",
        "Grafana service account token",
        _r(r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}" + _B),
    ),
    Rule("sentry-user-token", "Sentry user auth token", _r(r"sntryu_[a-f0-9]{64}" + _B)),
    Rule(
        "sentry-org-token", "Sentry organization auth token", _r(r"sntrys_eyJ[A-Za-z0-9+/=_]{60,}")
    ),
    Rule(
        "stripe-access-token",
        "Stripe secret or restricted key",
        _r(r"[sr]k_(?:live|test|prod)_[a-zA-Z0-9]{10,247}" + _B),
        ("k_live_", "k_test_", "k_prod_"),
    ),
    Rule(
        "shopify-access-token", "Shopify access token", _r(r"shp(?:at|ca|pa)_[a-fA-F0-9]{32}" + _B)
    ),
    Rule("shopify-shared-secret", "Shopify shared secret", _r(r"shpss_[a-fA-F0-9]{32}" + _B)),
    Rule(
        "private-key",
        "Private key (PEM / OpenSSH / PGP)",
        _r(
            re.escape(_PEM_BEGIN)
            + r"[ A-Z0-9]{0,40}"
            + _PRIVATE
            + r"(?: BLOCK)?"
            + _DASH5
            # the body never holds another BEGIN: each marker looks ahead only to the next one
            + r"(?:(?!"
            + re.escape(_PEM_BEGIN)
            + r")[\s\S]){0,20000}?(?:"
            + re.escape(_PEM_END)
            + r"[ A-Z0-9]{0,40}"
            + _PRIVATE
            + r"(?: BLOCK)?"
            + _DASH5
            + r"|(?=\n[ \t]*\n|\n[ \t]*```|\Z))"
        ),
        ("private key",),
        _pem_body,
        context_chars=40_000,
    ),
    Rule(
        "jwt",
        "JSON Web Token",
        # not inside a longer token run: each start would rescan the run to its end
        _r(
            r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{16,}"
            + _B
        ),
        (),
        _jwt,
    ),
    Rule(
        "discord-bot-token",
        "Discord bot token",
        _r(
            r"(?<![A-Za-z0-9_\-])[MNO][a-zA-Z0-9_\-]{23,25}\.[a-zA-Z0-9_\-]{6}\.[a-zA-Z0-9_\-]{27,38}"
            + _B
        ),
        ("discord",),
        context_chars=400,
    ),
    Rule(
        "discord-webhook-url",
        "Discord webhook URL",
        _r(r"discord(?:app)?\.com/api/webhooks/\d{17,20}/(?P<s>[A-Za-z0-9_\-]{60,68})" + _B),
        ("discord",),
    ),
    Rule(
        "telegram-bot-token",
        "Telegram bot token",
        _r(r"(?<![0-9])\d{8,10}:AA[0-9A-Za-z_\-]{33}" + _B),
        (":AA",),
    ),
    Rule("mailgun-api-key", "Mailgun API key", _r(r"key-[0-9a-f]{32}(?![0-9a-zA-Z])"), ("key-",)),
    Rule(
        "mailgun-private-api-token",
        "Mailgun private API key",
        _r(r"(?<![0-9a-f])[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}(?![0-9a-zA-Z])"),
        ("mailgun",),
        context_chars=300,
    ),
    Rule(
        "database-url-password",
        "Database URL with a password",
        _r(
            r"(?i:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver"
            r"|cockroachdb|clickhouse|oracle)(?:\+[a-z0-9]+)?://[^\s:@/'\"`<>]*:"
            r"(?P<s>[^\s@/'\"`<>]+)@[^\s/@]+"
        ),
        ("://",),
        _url_password,
        requires=("@",),
    ),
    Rule(
        "basic-auth-url",
        "URL with an embedded password",
        _r(
            r"(?i:https?|ftps?|sftp|ssh|git|smtps?|imaps?|ldaps?|wss?)://[^\s:@/'\"`<>]+:"
            r"(?P<s>[^\s@/'\"`<>]+)@[^\s/@]+"
        ),
        ("://",),
        _url_password,
        requires=("@",),
    ),
)
"""Most specific first: a later rule never reports a span an earlier rule already took."""

RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}

GENERIC_RULES: dict[str, str] = {
    "generic-secret": "Password or secret assigned to a secret-named key (detect-secrets)",
    "generic-high-entropy": "High-entropy string assigned to a secret-named key (detect-secrets)",
}


def rule_label(rule_id: str) -> str:
    """The human label of a rule id (specific or generic)."""
    rule = RULES_BY_ID.get(rule_id)
    return rule.label if rule is not None else GENERIC_RULES.get(rule_id, rule_id)
