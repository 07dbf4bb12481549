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

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any

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


_PLACEHOLDER_RUN = re.compile(r"x{4,}")


def looks_like_placeholder(value: str) -> bool:
    """True for documented examples, template references and low-variety filler.

    The test is on the whole value: a dictionary word (``example``, ``changeme``…)
    marks any value, but an ``xxxx`` run, which a long random key holds by chance
    (about 1 RSA-2048 key in 650), marks a long value only when the x's are a
    quarter of it or one run of eight.
    """
    lowered = value.lower()
    if any(mark in value for mark in _PLACEHOLDER_MARKS):
        return True
    import hashlib  # a candidate exists: a clean text never loads OpenSSL

    if hashlib.sha256(value.encode()).hexdigest() in _KNOWN_EXAMPLES:
        return True
    if len(value) >= 16 and len(set(value[-16:])) < 4:
        return True  # a real token's random tail is never this uniform
    if len(value) >= 12 and len(set(value)) < 6:
        return True
    words = [word for word in _PLACEHOLDER_WORDS if word in lowered]
    if not words:
        return False
    if len(value) < 24 or words != ["xxxx"]:
        return True
    runs = [len(run) for run in _PLACEHOLDER_RUN.findall(lowered)]
    return max(runs) >= 8 or 4 * sum(runs) >= len(value)


def _token(value: str) -> bool:
    return not looks_like_placeholder(value)


_DOC_URL_WORDS = frozenset(
    {"foo", "bar", "baz", "qux", "user", "username", "pass", "password", "passwd", "secret",
     "pwd", "name", "login", "example", "test", "demo", "sample", "me", "you"}
)  # fmt: skip


def _url_password(value: str) -> bool:
    """A URL's password that is not a documentation example (``user:pass@``,
    ``username:password@``, ``foo:bar@``, ``a%20secret``, ``[:]][ref``)."""
    lowered = value.lower()
    if lowered in _URL_PASSWORD_PLACEHOLDERS or value[:1] in "$%{<:[*":
        return False
    if "[" in value or "]" in value or "secret" in lowered or "password" in lowered:
        return False
    words = [w for w in re.split(r"[^a-z]+|%[0-9a-f]{2}", lowered) if len(w) >= 3]
    if words and all(w in _DOC_URL_WORDS for w in words) and len(value) <= 24:
        return False
    return not looks_like_placeholder(value) and len(value) >= 3


def _jwt(value: str) -> bool:
    import base64
    import binascii
    import json

    header = value.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    if not isinstance(decoded, dict) or str(decoded.get("alg", "")).lower() in ("", "none"):
        return False
    return not looks_like_placeholder(value.split(".", 1)[1])


def _shannon(value: str) -> float:
    from math import log2

    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    return -sum(k / len(value) * log2(k / len(value)) for k in counts.values())


def _aws_secret(value: str) -> bool:
    """A 40-character base64 run that is random like an AWS secret, not a hash or filler."""
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
        return False
    if not any(c.isdigit() for c in value) or _shannon(value) < 4.2:
        return False
    return not looks_like_placeholder(value)


def _discord_token(value: str) -> bool:
    """The first segment of a Discord token is the base64 of a numeric user id."""
    import base64
    import binascii

    head = value.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)).decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return decoded.isdigit() and 17 <= len(decoded) <= 20 and not looks_like_placeholder(value)


_PEM_HEADER = re.compile(r"^[A-Za-z-]+:.*$", re.MULTILINE)
_PEM_NOISE = re.compile(r"\\n|\\r|[\s\"',]")


_PEM_STOP = (
    r"(?:"
    + re.escape(_PEM_END)
    + r"[ A-Z0-9]{0,40}"
    + _PRIVATE
    + r"(?: BLOCK)?"
    + _DASH5
    + r"|(?=\n[ \t]*\n|\n[ \t]*```|\Z))"
)
"""Where a PEM body ends: its END marker, a blank line, a code fence, or the span's end."""
PEM_MAX_BODY = 20_000
"""A longer body is not a key (the rule's regex reads past it; the validator drops it)."""


def _pem_body(value: str) -> bool:
    header_end = value.find(_DASH5, len(_PEM_BEGIN)) + len(_DASH5)
    end_marker = value.rfind(_PEM_END)
    if (end_marker if end_marker >= header_end else len(value)) - header_end > PEM_MAX_BODY:
        return False
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


class _LazyPattern:
    """A rule's regex, compiled the first time it is matched.

    A hook scans a small text in which the anchors of a rule or two occur at
    most (:mod:`teamsync.security._prefilter`): compiling all the rules at import
    would cost it more than the scan. ``pattern`` and ``flags`` are answered
    without compiling, exactly as the compiled pattern would answer them.
    """

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self.flags = int(flags if flags & re.ASCII else flags | re.UNICODE)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self.flags)
        return getattr(compiled, name)


def _r(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return _LazyPattern(pattern, flags)  # type: ignore[return-value]  # compiled on first use


_B = r"(?![A-Za-z0-9_\-])"  # right boundary for token alphabets
_ASSIGN = r"""["'\]]{0,2}\s*(?::=|=>|[:=])\s*["']?"""
_SAY = (
    r"""["'`\]]{0,2}[ \t]*(?::=|=>|[:=：＝]|[ \t](?i:is|was|are)(?:[ \t]*[:=])?|(?<=[ \t])(?=["'`]))"""
    r"""[ \t]*["'`]?"""
)
"""An assignment or a prose "is": ``key: V``, ``key = "V"``, ``key is V``, ``key：V``."""
_AWS_SECRET_LABEL = (
    r"(?i:aws[ _\-.]?(?:[\w\-]{1,20}[ _\-.]){0,3}?secret(?:[ _\-.]?access)?(?:[ _\-.]?key)?"
    r"|secret[ _\-.]?(?:access[ _\-.]?)?key)"
)
_AWS_KEY_IDS = ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")

# teamsync's own server token (teamsync/server/tokens.py): tsm_<12 hex id>_<43 urlsafe>.
TEAMSYNC_TOKEN_RULE = Rule(
    "teamsync-server-token",
    "teamsync server token",
    _r(r"tsm_[0-9a-f]{12}_[A-Za-z0-9_\-]{43}" + _B),
)

RULES: tuple[Rule, ...] = (
    TEAMSYNC_TOKEN_RULE,
    Rule(
        "aws-access-token",
        "AWS access key ID",
        _r(r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Z0-9])"),
    ),
    Rule(
        "aws-secret-access-key",
        "AWS secret access key",
        _r(_AWS_SECRET_LABEL + _SAY + r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        ("secret",),
        _aws_secret,
        left_boundary=False,
    ),
    Rule(
        "aws-secret-near-key-id",
        "AWS secret access key next to its key ID",
        _r(r"(?<![A-Za-z0-9/+=])(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        _AWS_KEY_IDS,
        _aws_secret,
        context_chars=300,
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
            r"|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}"
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
        "gitlab-runner-token",
        "GitLab runner authentication token",
        _r(r"glrt-(?:t\d_)?[0-9a-zA-Z_\-]{20,}" + _B),
    ),
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
            # the body runs to the first END marker, blank line or fence, and never holds
            # another BEGIN (each marker looks ahead only to the next one); it is taken in
            # possessive runs of characters that cannot start either, not one at a time
            + r"(?:[^\n\-]++|(?!"
            + _PEM_STOP
            + r")(?!"
            + re.escape(_PEM_BEGIN)
            + r")[\n\-])*+"
            + _PEM_STOP
        ),
        ("private key",),
        _pem_body,
        context_chars=40_000,
        # the marker starts with dashes: a letter before it is no word it could be part of,
        # and refusing one let `x-----BEGIN …` (or a body glued to the next key) through
        left_boundary=False,
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
        "Discord bot or user token",
        _r(
            r"(?<![A-Za-z0-9_\-])[MNO][a-zA-Z0-9_\-]{22,26}\.[a-zA-Z0-9_\-]{6,7}\.[a-zA-Z0-9_\-]{27,38}"
            + _B
        ),
        ("MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"),  # base64 of a user id's first digit
        _discord_token,
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
        "docker-hub-pat",
        "Docker Hub personal access token",
        _r(r"dckr_pat_[0-9a-zA-Z_\-]{27,}" + _B),
    ),
    Rule(
        "age-secret-key",
        "age encryption secret key",
        _r(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}" + _B),
    ),
    Rule(
        "tailscale-key",
        "Tailscale auth or API key",
        _r(r"tskey-[a-z]{3,8}-[0-9A-Za-z]{8,}-[0-9A-Za-z]{16,}" + _B),
    ),
    Rule("linear-api-key", "Linear API key", _r(r"lin_api_[0-9a-zA-Z]{40}" + _B)),
    Rule("supabase-access-token", "Supabase access token", _r(r"sbp_[0-9a-f]{40}" + _B)),
    Rule("newrelic-user-api-key", "New Relic user API key", _r(r"NRAK-[0-9A-Z]{27}" + _B)),
    Rule(
        "doppler-token", "Doppler service token", _r(r"dp\.(?:pt|st|sa|ct)\.[0-9a-zA-Z]{40,}" + _B)
    ),
    Rule(
        "airtable-pat",
        "Airtable personal access token",
        _r(r"pat[0-9A-Za-z]{14}\.[0-9a-f]{64}" + _B),
    ),
    Rule(
        "google-oauth-access-token",
        "Google OAuth access token",
        _r(r"ya29\.[0-9A-Za-z_\-]{30,}" + _B),
    ),
    Rule("figma-pat", "Figma personal access token", _r(r"figd_[0-9A-Za-z_\-]{40,}" + _B)),
    Rule(
        "stripe-webhook-secret",
        "Stripe webhook signing secret",
        _r(r"whsec_[0-9a-zA-Z]{32,}" + _B),
    ),
    Rule(
        "gohighlevel-private-integration-token",
        "GoHighLevel private integration token",
        _r(r"pit-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}" + _B),
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
            r"(?i:https?|ftps?|sftp|ssh|git|smtps?|imaps?|ldaps?|wss?)://[^\s:@/'\"`<>\[\]]+:"
            r"(?P<s>[^\s@/'\"`<>]+)@"
            # a documentation host (RFC 2606 / 6761) is an example, not a credential
            r"(?!(?:[\w\-]+\.)*(?:example|invalid|test|localhost)(?:\.[a-z]{2,})?(?![\w\-.]))"
            r"[^\s/@]+"
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


# --- the generic layer: a secret-named label, a separator, a plausible value ---------------
#
# Labels in the languages teams write memory in. Each maps to the key detect-secrets'
# KeywordDetector knows ("password" or "secret"), so its filters judge every language
# the same way. *Strong* labels name a password or secret outright; a *weak* label
# (token, key, credentials) needs a random-looking value (see generic_value_random).

PASSWORD_LABELS: tuple[str, ...] = (
    "비밀번호", "패스워드", "암호",  # Korean
    "密码", "密碼", "口令",  # Chinese
    "パスワード", "暗証番号",  # Japanese
    "senha",  # Portuguese
    "contraseña", "contrasena", "clave",  # Spanish
    "şifre", "şifresi", "parola", "parolası",  # Turkish
    "mật khẩu", "mat khau",  # Vietnamese
    "пароль", "пароля",  # Russian
    "passwort", "kennwort",  # German
    "mot de passe", "mdp",  # French
)  # fmt: skip
SECRET_LABELS: tuple[str, ...] = (
    "비밀 키", "비밀키", "시크릿",
    "密钥", "秘钥", "密鑰",
    "シークレット", "秘密鍵",
    "segredo", "chave secreta",
    "secreto", "clave secreta",
    "gizli anahtar",
    "khóa bí mật", "mã bí mật",
    "секрет", "секретный ключ",
    "geheimnis", "geheimer schlüssel",
    "clé secrète",
)  # fmt: skip
TOKEN_LABELS: tuple[str, ...] = (
    "토큰", "令牌", "トークン", "токен", "jeton",
    "token de acceso", "token de acesso", "token truy cập", "jeton d'accès", "токен доступа",
    "erişim tokenı", "zugriffstoken", "访问令牌", "アクセストークン", "액세스 토큰",
    "api 키", "api키", "api密钥", "apiキー", "chave de api", "chave da api", "clave de api",
    "api anahtarı", "khóa api", "ключ api", "api-schlüssel", "clé api", "clé d'api",
)  # fmt: skip
FOREIGN_LABELS: tuple[str, ...] = PASSWORD_LABELS + SECRET_LABELS + TOKEN_LABELS

GENERIC_KEYWORDS: tuple[str, ...] = (
    "pass", "pwd", "secret", "token", "credential", "auth", "key",
    *sorted({max(label.split(" "), key=len) for label in FOREIGN_LABELS}),
)  # fmt: skip
"""Lower-case literals, one of which is on every line the generic layer looks at (for a
foreign label, its longest word: a label matches only where all its words are)."""


def _alternation(labels: tuple[str, ...]) -> str:
    ordered = sorted(set(labels), key=len, reverse=True)
    return "|".join(r"[ \t]?".join(map(re.escape, label.split(" "))) for label in ordered)


_EN_STRONG = r"pass(?:word|wd|phrase)|pwd|secret(?:[ _.\-]?(?:access[ _.\-]?)?key)?"
_EN_WEAK = (
    r"(?:(?:api|auth|access|refresh|bearer|bot|private|client|account|service|db|database"
    r"|master|signing|encryption|session|app)[ _.\-]?(?:key|token)|pass(?![a-z])|token"
    r"|key(?!word|board|stroke|frame|note|chain|space|map|ring|pad|s?[ \t]+(?:in|of|to|and|or)\b)"
    r"|authorization"
    r"|credentials?)"
)


def _is_cjk(label: str) -> bool:
    """Hangul, kana or Han in ``label`` (such a label has no word boundary before it)."""
    return any(
        "\u3040" <= c <= "\u30ff" or "\u3400" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af"
        for c in label
    )


_KEY = (
    r"(?P<key>(?<![\w.\-/\\])(?P<flag>--)?[\w.\-]{0,100}?(?i:"
    + _EN_STRONG
    + "|"
    + _EN_WEAK
    + r")[\w.\-]{0,100}"  # bounded: a run of labels stays linear
    r"|(?i:" + _alternation(tuple(x for x in FOREIGN_LABELS if _is_cjk(x))) + r")"
    r"|(?<!\w)(?i:"
    + _alternation(tuple(x for x in FOREIGN_LABELS if not _is_cjk(x)))
    + r")(?:[ \t]+(?!(?i:is|es|est|é|là|ist|lautet)\b)[^\W\d_][\w'’\-]{1,24}){0,2})"  # пароль администратора
)
_QUALIFIER_WORDS = r"for|of|on|to|de|du|des|da|do|del|für|vom|der|para|pour|la|el|от|для|cho|của"
_QUALIFIER = (  # "password for staging", "senha do banco", "mot de passe de la base"
    r"(?:[ \t]+(?i:" + _QUALIFIER_WORDS + r")"
    r"(?:[ \t]+la)?[ \t]+[\w.\-]{1,30}){0,2}"
)
_ASSIGNMENT = (
    r"""["'\]]{0,2}[ \t]*(?::=|=>|[:=：＝])(?!=)[ \t]*(?:(?i:bearer|basic|token)[ \t]+)?"""
)
_PROSE_VERBS = (
    r"is|was|are|were|set[ \t]+to|equals|becomes|ist|lautet|war|est|était|es|era"
    r"|é|là|было|—|–"
)
_PROSE_VERB = r"[ \t]+(?i:" + _PROSE_VERBS + r")(?!\w)[ \t]*[:：]?[ \t]*"
_PARTICLE = r"(?P<pt>는|은|이|가|를|是|为|為|は|が|を)?"  # CJK markers glued to a label
_VALUE = (
    r"""(?:(?P<q>["'`“「『])(?P<qv>[^"'`”」』\n]{1,300})["'`”」』]"""
    r"""|(?P<uv>[^\s"'`,;)\]}>\u0080-\U0010ffff]{1,300}))"""
)
_GENERIC_LINE = (
    _KEY
    + r"(?P<sep>"
    + _ASSIGNMENT
    + r"|"
    + _QUALIFIER
    + _PARTICLE
    + r"(?:"
    + _PROSE_VERB
    + r"|[ \t]*[:：＝=][ \t]*"
    + r"|(?(pt)[ \t]*|(?!))"  # 비밀번호는 Ab3…, 密码是Ab3…
    + r"|(?<=[\u3000-\u9fff\uac00-\ud7af])"  # 密码Ab3…: a CJK label glued to the value
    + r"|[ \t]+(?=[\"'`“「『])"  # senha `…`: a quoted value straight after the label
    + r"|(?(flag)[ \t]+|(?!))"  # --password VALUE
    + r"))"
    + _VALUE
)
"""The generic candidate pattern's source (compiled on first use by :func:`generic_line`)."""


@functools.cache
def generic_line() -> re.Pattern[str]:
    """A generic candidate: ``key`` (the label), ``sep`` and the value (``qv`` or ``uv``).

    Compiled on first use (about 8 ms): a text without a secret-named word never pays it.
    """
    return re.compile(_GENERIC_LINE)


@functools.cache
def generic_key_end() -> re.Pattern[str]:
    r"""Matched at an English key's head in an ASCII line: None means no match starts there.

    In ASCII text every separator begins with one of ``"'] \t:=`` (the others are
    CJK), none of them a ``[\w.\-]`` character, so the key ends where its run ends, or
    where the run after one space ends when the label itself has a space (``private
    key``, ``secret access key``). After blanks, a separator goes on with ``:`` or
    ``=``, a quote, a qualifier or a prose verb. (``--flag`` keys are not checked.)
    """
    words = "key|token|access|" + _QUALIFIER_WORDS + "|" + _PROSE_VERBS
    return re.compile(r"""[\w.\-]*(?:["'\]:=]|[ \t]+(?:[:="'`]|(?i:""" + words + ")))")


# --- where a generic match can start (see secrets._generic_matches) ----------------------
#
# The candidate pattern has no literal prefix, so ``finditer`` over a line tries it at
# every position. A match starts either at the head of a ``[\w.\-]`` run holding an
# English label word, or where a foreign label's first word is: finding those words with
# ``str.find`` and trying the pattern only there gives the same matches at a fraction of
# the cost. The words are compared in a caseless fold that agrees with ``re``'s
# IGNORECASE (a test checks every character of every label against ``re``).

EN_LABEL_WORDS: tuple[str, ...] = ("pass", "pwd", "secret", "token", "key", "auth", "credential")
"""One of these is in every English label ``_EN_STRONG``/``_EN_WEAK`` can match (folded)."""
EN_RUN_REACH = 130
r"""How far back from a label word its run's head may be: ``(--)?`` and ``[\w.\-]{0,100}?``
before the label (102), and the label's own head before the word (``encryption_key``)."""

_FOLD_EXTRA = str.maketrans(
    {
        "\u0131": "i",  # dotless i: re's IGNORECASE takes it for i
        "\u017f": "s",  # long s
        "\u1c80": "\u0432",  # Cyrillic rounded/tall/wide variants (в д о с т т ъ ѣ ꙋ)
        "\u1c81": "\u0434",
        "\u1c82": "\u043e",
        "\u1c83": "\u0441",
        "\u1c84": "\u0442",
        "\u1c85": "\u0442",
        "\u1c86": "\u044a",
        "\u1c87": "\u0463",
        "\u1c88": "\ua64b",
    }
)


def caseless_fold(text: str) -> str:
    """``text`` folded as ``re``'s IGNORECASE compares it, one character for one.

    Two characters that IGNORECASE takes for each other fold to the same character
    (simple lower case, plus the few extra pairs ``re`` knows: ``ı``/``i``, ``ſ``/``s``…),
    so offsets in the folded text are offsets in ``text``.
    """
    if text.isascii():
        return text.lower()
    folded = text.replace("\u0130", "i").lower().translate(_FOLD_EXTRA)
    if len(folded) == len(text):
        return folded
    return "".join(  # pragma: no cover - no other character lowers to two today
        (c if len(c.lower()) != 1 else c.lower()).translate(_FOLD_EXTRA) for c in text
    )


@functools.cache
def foreign_label_heads() -> tuple[str, ...]:
    """The folded first word of every foreign label: a foreign match starts on one."""
    return tuple(sorted({caseless_fold(label.split(" ")[0]) for label in FOREIGN_LABELS}))


_ENTRY_POINT = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")  # detect_secrets.main:main
_PROSE_TRAIL = ".,:;!?"


@functools.cache
def _squeezed(labels: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(label.replace(" ", "") for label in labels)


_DIGEST_LABEL = _r(
    r"sha\d*|md5|hash|digest|checksum|etag|integrity|fingerprint|cache[_.\-]?key|nonce|salt"
    r"|(?:key|token|secret)[_.\-]?(?:id|ids|name|path|file|type|node|len|length|size|url|ref)(?![a-z])"
)


@functools.lru_cache(maxsize=4096)
def generic_label(key: str) -> tuple[str, bool]:
    """The KeywordDetector key for a matched label, and whether the label is strong
    (an empty key: a label that names a digest or an identifier, not a secret).

    Strong labels map to ``password`` or ``secret``; weak ones to ``api_key``, which
    KeywordDetector also knows, and for which an entropy finding is preferred.
    (Cached: a corpus repeats a handful of labels many times.)
    """
    lowered = re.sub(r"[ \t]+", "_", key.lower().lstrip("-"))
    squeezed = re.sub(r"[ \t_]+", "", lowered)
    if _DIGEST_LABEL.search(lowered):
        return "", False  # cache_key, etag, checksum, key_sha256: a digest, never a secret
    if any(label in squeezed for label in _squeezed(PASSWORD_LABELS)):
        return "password", True
    if any(label in squeezed for label in _squeezed(SECRET_LABELS)):
        return "secret", True
    if re.search(r"pass(?:word|wd|phrase)|pwd", lowered):
        return "password", True
    if re.fullmatch(r"[\w.\-]*secret(?:[_.\-]?key)?[\w.\-]*", lowered) and not (
        re.search(r"secret[_.\-]?(?:name|ref|id|arn|path|file|manager|store)", lowered)
    ):
        return "secret", True
    return "api_key", False


_WORDISH = re.compile(
    r"[A-Za-z]{1,9}"  # a word
    r"|[A-Z][A-Z0-9_]*_[A-Z0-9_]+"  # an environment variable name
    r"|[a-z]+(?:[_\-]+[a-z]+)+"  # an identifier
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"  # an attribute reference (self._key, settings.API_KEY)
    r"|\d[A-Z]?[a-z]{3,}"  # a product name (1Password)
    # a CamelCase name (OAuthFlowPassword, getPasswordFromEnv): humps of two or more
    # lower-case letters; random mixed-case letters (nHXdyCYaGTwdLjUb) have single ones
    r"|(?:[A-Z]{1,6}[a-z]{2,}|[a-z]{2,})(?:[A-Z]{1,2}[a-z]{2,})+"
)
_PUBLIC_PREFIXES = ("pk_live_", "pk_test_", "ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-")


def generic_value_plausible(value: str) -> bool:
    """Cheap checks before detect-secrets sees a value: drop words, references, templates."""
    if len(value) < 6 or any(c.isspace() for c in value):
        return False
    if value[-1] in "-_" and all(c.isalnum() or c in "-_" for c in value):
        return False  # an identifier cut at a dash, not a password ending in one
    if not value.isascii() or not value.isprintable():
        return False  # generated secrets are ASCII; prose in another script is not a value
    if len(value) < 16 and not any(c.isdigit() for c in value):
        return False  # short, digit-free values are words far more often than passwords
    if (
        value[0] in "$%{<@/~("
        or value.startswith("./")
        or "://" in value
        or "(" in value
        or "[" in value
    ):
        return False
    if value.startswith(_PUBLIC_PREFIXES) or _WORDISH.fullmatch(value):
        return False
    return not looks_like_placeholder(value)


def _entropy(value: str) -> float:
    from math import log2

    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    n = len(value)
    return -sum(k / n * log2(k / n) for k in counts.values())


def generic_value_random(value: str) -> bool:
    """For a weak label (token, key): long enough, mixed and spread like a generated value."""
    if len(value) < 16 or not any(c.isdigit() for c in value):
        return False
    if not any(c.isalpha() for c in value):
        return False
    return _entropy(value) >= 3.3


def clean_generic_value(value: str, quoted: bool) -> str:
    """An unquoted value without the sentence punctuation that follows it."""
    if quoted:
        return value
    while value.endswith(("\\n", "\\r", "\\t")):  # a literal escape closing a code string
        value = value[:-2]
    return value.rstrip(_PROSE_TRAIL)


def is_entry_point(value: str) -> bool:
    """``module.path:function``: a packaging entry point, never a secret."""
    return _ENTRY_POINT.fullmatch(value) is not None
