"""Fake secrets and hard negatives for the scanner's tests and benchmark.

Every fake is generated at run time from a seeded ``random.Random`` and built
from parts, so no literal in this repository matches a rule and the repo's own
scan stays clean. ``PLANTS[kind](rng)`` returns a memory-like line (or block)
holding one fake secret that rule ``PLANT_RULES[kind]`` must report;
``NEGATIVES[kind](rng)`` returns a line that looks secret-ish but must not be.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
DASH5 = "-" * 5
PRIV = "PRIVATE" + " KEY"


def r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def digits(rng: random.Random, n: int) -> str:
    return str(rng.randint(1, 9)) + r(rng, string.digits, n - 1)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def pem_block(rng: random.Random, kind: str = "RSA ", lines: int = 12) -> str:
    body = "\n".join(r(rng, B64, 64) for _ in range(lines))
    return f"{DASH5}BEGIN {kind}{PRIV}{DASH5}\n{body}\n{DASH5}END {kind}{PRIV}{DASH5}"


def jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": r(rng, ALNUM, 12), "iat": rng.randint(1, 10**9)}).encode())
    return f"{header}.{payload}.{_b64url(rng.randbytes(32))}"


def discord_token(g: random.Random) -> str:
    """A Discord token shape: base64 of a numeric user id, a timestamp part, an HMAC part."""
    user_id = digits(g, g.choice([17, 18, 19]))
    head = base64.urlsafe_b64encode(user_id.encode()).decode().rstrip("=")
    return head + "." + r(g, URLSAFE, 6) + "." + r(g, URLSAFE, g.choice([27, 38]))


def aws_secret(g: random.Random) -> str:
    """40 random base64 characters with every class present (an AWS secret access key)."""
    while True:
        value = r(g, B64, 40)
        if (
            any(c.isupper() for c in value)
            and any(c.islower() for c in value)
            and any(c.isdigit() for c in value)
        ):
            return value


def _ant(kind: str) -> str:
    return "-".join(("sk", "ant", kind)) + "-"


Maker = Callable[[random.Random], str]

PLANTS: dict[str, Maker] = {
    "aws-access-token": lambda g: (
        "- deploy user key id: AK" + "IA" + r(g, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    ),
    "aws-secret-access-key": lambda g: "aws_secret_access_key = " + r(g, B64, 40),
    "aws-secret-near-key-id": lambda g: (
        "- key id AK"
        + "IAIOSFODNN7"
        + "EXAMPLE (the documented one; ours is in the vault)"
        + ", and the pair of ours: "
        + aws_secret(g)
    ),
    "gcp-api-key": lambda g: "Maps key for staging: AI" + "za" + r(g, URLSAFE, 35),
    "azure-ad-client-secret": lambda g: (
        "client_secret: " + r(g, ALNUM, 3) + str(g.randint(0, 9)) + "Q~" + r(g, ALNUM + "_~", 34)
    ),
    "azure-storage-key": lambda g: (
        "DefaultEndpointsProtocol=https;AccountName=acme;Account"
        + "Key="
        + r(g, B64, 86)
        + "==;EndpointSuffix=core.windows.net"
    ),
    "digitalocean-pat": lambda g: "DO token `" + "dop" + "_v1_" + r(g, HEX, 64) + "`",
    "digitalocean-access-token": lambda g: "oauth: " + "doo" + "_v1_" + r(g, HEX, 64),
    "digitalocean-refresh-token": lambda g: "refresh " + "dor" + "_v1_" + r(g, HEX, 64),
    "anthropic-api-key": lambda g: "ANTHROPIC_API_KEY=" + _ant("api03") + r(g, URLSAFE, 93) + "AA",
    "anthropic-admin-api-key": lambda g: "admin key " + _ant("admin01") + r(g, URLSAFE, 93) + "AA",
    "openai-api-key": lambda g: (
        "OPENAI_API_KEY=sk-proj-" + r(g, URLSAFE, 74) + "T3Blbk" + "FJ" + r(g, URLSAFE, 74)
    ),
    "huggingface-access-token": lambda g: "HF token: h" + "f_" + r(g, string.ascii_letters, 34),
    "huggingface-org-token": lambda g: "org token api" + "_org_" + r(g, string.ascii_letters, 34),
    "github-pat": lambda g: "Use gh" + "p_" + r(g, ALNUM, 36) + " for the release bot.",
    "github-fine-grained-pat": lambda g: (
        "token: github" + "_pat_" + r(g, ALNUM, 22) + "_" + r(g, ALNUM, 59)
    ),
    "github-app-token": lambda g: "x-access: gh" + "s_" + r(g, ALNUM, 36),
    "github-oauth": lambda g: "oauth gh" + "o_" + r(g, ALNUM, 36),
    "github-refresh-token": lambda g: "refresh gh" + "r_" + r(g, ALNUM, 36),
    "gitlab-pat": lambda g: "GITLAB=gl" + "pat-" + r(g, URLSAFE, 20),
    "gitlab-deploy-token": lambda g: "deploy gl" + "dt-" + r(g, URLSAFE, 20),
    "docker-hub-pat": lambda g: "docker login -u ci -p dc" + "kr_pat_" + r(g, URLSAFE, 27),
    "age-secret-key": lambda g: (
        "AGE-SECRET" + "-KEY-1" + r(g, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
    ),
    "tailscale-key": lambda g: (
        "TS_AUTHKEY=ts" + "key-auth-" + r(g, ALNUM, 12) + "-" + r(g, ALNUM, 30)
    ),
    "linear-api-key": lambda g: "linear: lin" + "_api_" + r(g, ALNUM, 40),
    "supabase-access-token": lambda g: "supabase login --token sb" + "p_" + r(g, HEX, 40),
    "newrelic-user-api-key": lambda g: "New Relic key NR" + "AK-" + r(g, UPPER + string.digits, 27),
    "doppler-token": lambda g: "DOPPLER_TOKEN=dp" + ".pt." + r(g, ALNUM, 43),
    "airtable-pat": lambda g: "airtable pa" + "t" + r(g, ALNUM, 14) + "." + r(g, HEX, 64),
    "google-oauth-access-token": lambda g: "Authorization: Bearer ya" + "29." + r(g, URLSAFE, 60),
    "figma-pat": lambda g: "FIGMA_TOKEN=fi" + "gd_" + r(g, URLSAFE, 40),
    "gitlab-runner-token": lambda g: "runner reg token gl" + "rt-" + r(g, URLSAFE, 20),
    "stripe-webhook-secret": lambda g: "Stripe signing secret `wh" + "sec_" + r(g, ALNUM, 32) + "`",
    "slack-bot-token": lambda g: (
        "bot: xo" + "xb-" + digits(g, 12) + "-" + digits(g, 13) + "-" + r(g, ALNUM, 24)
    ),
    "slack-user-token": lambda g: (
        "user: xo"
        + "xp-"
        + digits(g, 12)
        + "-"
        + digits(g, 12)
        + "-"
        + digits(g, 13)
        + "-"
        + r(g, HEX, 32)
    ),
    "slack-app-token": lambda g: (
        "socket mode xa" + "pp-1-A" + r(g, UPPER, 10) + "-" + digits(g, 13) + "-" + r(g, HEX, 64)
    ),
    "slack-webhook-url": lambda g: (
        "alerts go to https://hooks.slack."
        + "com/services/T"
        + r(g, UPPER, 8)
        + "/B"
        + r(g, UPPER, 10)
        + "/"
        + r(g, ALNUM, 24)
    ),
    "twilio-api-key": lambda g: "twilio key S" + "K" + r(g, HEX, 32),
    "twilio-auth-token": lambda g: "TWILIO_AUTH" + "_TOKEN=" + r(g, HEX, 32),
    "sendgrid-api-token": lambda g: "mail: S" + "G." + r(g, URLSAFE, 22) + "." + r(g, URLSAFE, 43),
    "npm-access-token": lambda g: "//registry.npmjs.org/:_authToken=np" + "m_" + r(g, ALNUM, 36),
    "pypi-upload-token": lambda g: "password = py" + "pi-AgEIcHlwaS5vcmc" + r(g, URLSAFE, 70),
    "databricks-api-token": lambda g: "databricks da" + "pi" + r(g, HEX, 32),
    "hashicorp-tf-api-token": lambda g: (
        "TFE token " + r(g, ALNUM, 14) + ".atlas" + "v1." + r(g, URLSAFE, 64)
    ),
    "pulumi-api-token": lambda g: "PULUMI_ACCESS_TOKEN=pu" + "l-" + r(g, HEX, 40),
    "gohighlevel-private-integration-token": lambda g: (
        "GHL private integration: pi" + "t-" + "-".join(r(g, HEX, n) for n in (8, 4, 4, 4, 12))
    ),
    "postman-api-token": lambda g: "postman PM" + "AK-" + r(g, HEX, 24) + "-" + r(g, HEX, 34),
    "grafana-api-key": lambda g: "grafana eyJr" + "Ijoi" + r(g, ALNUM, 100),
    "grafana-cloud-api-token": lambda g: "grafana cloud gl" + "c_" + r(g, ALNUM, 60),
    "grafana-service-account-token": lambda g: (
        "sa gl" + "sa_" + r(g, ALNUM, 32) + "_" + r(g, HEX, 8)
    ),
    "sentry-user-token": lambda g: "sentry sn" + "tryu_" + r(g, HEX, 64),
    "sentry-org-token": lambda g: (
        "sentry org sn" + "trys_eyJpYXQiO" + r(g, B64, 120) + "_" + r(g, B64, 43)
    ),
    "stripe-access-token": lambda g: "STRIPE_SECRET=s" + "k_live_" + r(g, ALNUM, 32),
    "shopify-access-token": lambda g: "shopify sh" + "pat_" + r(g, HEX, 32),
    "shopify-shared-secret": lambda g: "shopify secret sh" + "pss_" + r(g, HEX, 32),
    "private-key": lambda g: (
        "Deploy key:\n\n```\n" + pem_block(g, g.choice(["RSA ", "EC ", "OPENSSH ", ""])) + "\n```"
    ),
    "jwt": lambda g: "session cookie: " + jwt(g),
    "discord-bot-token": lambda g: "Authorization: Bot " + discord_token(g),
    "discord-webhook-url": lambda g: (
        "https://discord.com/api/web" + "hooks/" + digits(g, 18) + "/" + r(g, URLSAFE, 68)
    ),
    "telegram-bot-token": lambda g: (
        "Telegram bot: " + digits(g, 10) + ":A" + "A" + r(g, URLSAFE, 33)
    ),
    "mailgun-api-key": lambda g: "mailgun ke" + "y-" + r(g, HEX, 32),
    "mailgun-private-api-token": lambda g: (
        "Mailgun private key: " + r(g, HEX, 32) + "-" + r(g, HEX, 8) + "-" + r(g, HEX, 8)
    ),
    "database-url-password": lambda g: (
        g.choice(["postgres", "mysql", "mongodb+srv", "redis", "amqp"])
        + "://app:"
        + r(g, ALNUM, 16)
        + "@db.internal.acme:5432/app"
    ),
    "basic-auth-url": lambda g: (
        "Mirror: https://deploy:" + r(g, ALNUM, 18) + "@registry.acme.internal/simple"
    ),
    "generic-secret": lambda g: (
        "db_pass" + "word: " + r(g, string.ascii_letters, 1) + r(g, ALNUM + "!#%&+=?^", 15)
    ),
    "generic-high-entropy": lambda g: 'session_token = "' + r(g, ALNUM, 40) + '"',
    "teamsync-server-token": lambda g: (
        "CI reads the memory with " + "ts" + "m_" + r(g, HEX, 12) + "_" + r(g, URLSAFE, 43)
    ),
}

PLANT_RULES: dict[str, str] = {kind: kind for kind in PLANTS}


def _aws_example_id(g: random.Random) -> str:
    return "aws_access_key_id = AK" + "IAIOSFODNN7" + "EXAMPLE"


def _aws_example_secret(g: random.Random) -> str:
    value = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCY" + "EXAMPLEKEY"
    return "aws_secret_access_key = " + value


NEGATIVES: dict[str, Maker] = {
    "git-sha": lambda g: "Fixed in commit " + r(g, HEX, 40) + " (see the PR).",
    "uuid": lambda g: "request id " + str(uuid.UUID(int=g.getrandbits(128))),
    "sha256-digest": lambda g: "image digest: sha256:" + r(g, HEX, 64),
    "npm-integrity": lambda g: '"integrity": "sha512-' + r(g, B64, 86) + '=="',
    "aws-example-id": _aws_example_id,
    "aws-example-secret": _aws_example_secret,
    "token-reference": lambda g: g.choice(
        [
            "GITHUB_TOKEN=${GITHUB_TOKEN}",
            "api_key: ${API_KEY}",
            "token: ${{ secrets.DEPLOY_TOKEN }}",
        ]
    ),
    "redacted-password": lambda g: g.choice(
        ["password: <redacted>", "db_password: <REDACTED>", "secret: ********"]
    ),
    "placeholder-password": lambda g: g.choice(
        ["password: changeme", "password = your_password_here", "passwd: xxxxxxxx"]
    ),
    "stripe-publishable": lambda g: "STRIPE_PUBLISHABLE=p" + "k_live_" + r(g, ALNUM, 32),
    "pem-placeholder": lambda g: f"{DASH5}BEGIN {PRIV}{DASH5}\n...\n{DASH5}END {PRIV}{DASH5}",
    "url-placeholder": lambda g: g.choice(
        [
            "postgres://user:password@localhost/db",
            "https://user:${PASS}@host.internal/",
            "redis://:<password>@cache:6379",
        ]
    ),
    "slack-example-webhook": lambda g: (
        "https://hooks.slack." + "com/services/T00000000/B00000000/" + "X" * 24
    ),
    "trace-id": lambda g: "trace_id: " + r(g, HEX, 32),
    "digest-under-label": lambda g: g.choice(
        [
            "cache_key: " + r(g, HEX, 32),
            "cache_key: " + r(g, HEX, 40),
            'ETag: "' + r(g, HEX, 32) + '"',
            "etag = " + r(g, HEX, 40),
            "checksum: " + r(g, HEX, 64),
            "sha: " + r(g, HEX, 40),
            '{"key_sha256": "' + r(g, HEX, 64) + '"}',
            # the same labels in other languages, and SSH key fingerprints
            "Clave de caché: `pricing:v3:" + r(g, HEX, 32) + "`",
            "캐시 키 예: `pricing:v3:" + r(g, HEX, 32) + "`",
            "कैश की का उदाहरण: `pricing:v3:" + r(g, HEX, 32) + "`",
            "مثال مفتاح التخزين المؤقت: `pricing:v3:" + r(g, HEX, 32) + "`",
            "Huella de la clave pública: SHA256:" + r(g, ALNUM + "+/", 43),
            "Impronta della chiave pubblica: SHA256:" + r(g, ALNUM + "+/", 43),
            "La requête " + r(g, HEX, 32) + " a renvoyé jeton expiré (401).",
            "Kiracı kimliği " + str(uuid.UUID(int=g.getrandbits(128))) + ", gizli değil.",
        ]
    ),
    "documentation-url": lambda g: g.choice(
        [
            "git clone https://user:pass@example.com/org/repo.git",
            "URL form: https://username:password@host/path",
            "MultiHostUrl('https://foo.com:123,foo:bar@bar.com/path')",
            'URL("https://jo%40email.com:a%20secret@m\u00fcller.de:1234/")',
            "e.g. ftp://anonymous:guest@ftp.example.org/pub",
            '"git://[path-to-repo[:]][ref@]path/to/file"',
            "Docs example only: `curl -u username:password https://api.example.com/v1/status`",
            "Das Doku-Beispiel `curl -u benutzer:passwort https://api.example.com` ist kein Konto.",
            'export DATABASE_URL="postgresql://<user>:<password>@<host>:5432/<db>"',
            "mongodb+srv://USERNAME:PASSWORD@cluster0.example.mongodb.net/test",
        ]
    ),
    "key-file-path": lambda g: g.choice(
        [
            "ssh key: ~/.ssh/id_ed25519",
            "private key file: /etc/ssl/private/server.key",
            "service account key: ./secrets/gcp-sa.json",
            "key path = keys/deploy_rsa.pem",
        ]
    ),  # fmt: skip
    "credential-id": lambda g: g.choice(
        [
            "n8n credential ID: " + r(g, ALNUM, 16),
            "credential id: " + r(g, ALNUM, 16),
            "secret name: prod/db/" + r(g, "abcdefgh", 6),
        ]
    ),  # fmt: skip
    "public-address": lambda g: "contract address: 0x" + r(g, HEX, 40),
    "example-line": lambda g: g.choice(
        ["example: password=hunter2", "e.g. `pw: hunter2`", "Example: token = abc123"]
    ),
    "short-prefix": lambda g: (
        "the gh" + "p_ prefix marks a classic PAT; sk" + "_live_ marks Stripe"
    ),
    "prose-password": lambda g: g.choice(
        ["Password: ask Bob in #infra", "The secret: keep memories short.", "token: rotated weekly"]
    ),
}


# --- negatives per rule: near misses that rule must not report ---------------------------

RULE_NEGATIVES: dict[str, list[str]] = {
    "aws-access-token": [
        "AK" + "IA" + "ABC",
        "AK" + "IAIOSFODNN7" + "EXAMPLE",
        "xAK" + "IA" + "B" * 8 + "CDEFGHIJ",
    ],
    "aws-secret-access-key": [
        "aws_secret_access_key = ${AWS_SECRET}",
        "aws_secret_access_key = short",
    ],
    "gcp-api-key": ["AI" + "za" + "tooShort", "AI" + "za" + "X" * 35],
    "azure-ad-client-secret": ["value abc1Q~short", "x" + "abc1Q~" + "A1b2C3d4" * 5],
    "azure-storage-key": ["Account" + "Key=" + "a" * 86 + "==", "Account" + "Key=<your key>"],
    "digitalocean-pat": ["dop" + "_v1_" + "0" * 64, "dop" + "_v1_" + "zz" * 32],
    "digitalocean-access-token": ["doo" + "_v1_" + "abc"],
    "digitalocean-refresh-token": ["dor" + "_v1_" + "abc"],
    "anthropic-api-key": [
        "-".join(("sk", "ant", "api03")) + "-xxxx",
        "-".join(("sk", "ant", "api03")) + "-...",
    ],
    "anthropic-admin-api-key": ["-".join(("sk", "ant", "admin01")) + "-" + "x" * 95],
    "openai-api-key": ["sk-proj-abc", "sk-" + "A" * 20 + "T3Blbk" + "FJ"],
    "huggingface-access-token": ["h" + "f_" + "a" * 10, "h" + "f_" + "abcdefghij" * 4],
    "huggingface-org-token": ["api" + "_org_" + "x" * 34],
    "github-pat": ["gh" + "p_" + "a" * 36, "gh" + "p_" + "short", "xgh" + "p_" + "Ab1" * 12],
    "github-fine-grained-pat": ["github" + "_pat_" + "abc"],
    "github-app-token": ["gh" + "s_" + "x" * 36],
    "github-oauth": ["gh" + "o_" + "abc"],
    "github-refresh-token": ["gh" + "r_" + "0123456789" * 4],
    "gitlab-pat": ["gl" + "pat-" + "short", "gl" + "pat-" + "x" * 20],
    "gitlab-deploy-token": ["gl" + "dt-" + "short"],
    "gitlab-runner-token": ["gl" + "rt-" + "short", "gl" + "rt-" + "x" * 20],
    "docker-hub-pat": ["dc" + "kr_pat_" + "short"],
    "age-secret-key": ["AGE-SECRET" + "-KEY-1" + "short", "AGE-SECRET" + "-KEY-1" + "b" * 58],
    "tailscale-key": ["ts" + "key-auth-short", "ts" + "key-auth-" + "x" * 12 + "-short"],
    "linear-api-key": ["lin" + "_api_" + "short"],
    "supabase-access-token": ["sb" + "p_" + "g" * 40, "sb" + "p_" + "short"],
    "newrelic-user-api-key": ["NR" + "AK-" + "short", "NR" + "AK-" + "a" * 27],
    "doppler-token": ["dp" + ".pt." + "short"],
    "airtable-pat": ["pa" + "t" + "x" * 14 + ".short"],
    "google-oauth-access-token": ["ya" + "29.short"],
    "figma-pat": ["fi" + "gd_" + "short"],
    "stripe-webhook-secret": ["wh" + "sec_" + "short", "wh" + "sec_" + "0" * 32],
    "slack-bot-token": ["xo" + "xb-" + "not-a-token", "xo" + "xb-123-456-abc"],
    "slack-user-token": ["xo" + "xp-" + "1-2-3-4"],
    "slack-app-token": ["xa" + "pp-1-short"],
    "slack-webhook-url": ["https://hooks.slack." + "com/services/T00000000/B00000000/" + "X" * 24],
    "twilio-api-key": ["S" + "K" + "g" * 32, "S" + "K" + "0123456789abcdef" * 2],
    "twilio-auth-token": ["TWILIO_AUTH" + "_TOKEN=${TWILIO_AUTH_TOKEN}", "auth_token = 1234"],
    "sendgrid-api-token": ["S" + "G.short.short"],
    "npm-access-token": ["np" + "m_" + "short", "np" + "m_" + "x" * 36],
    "pypi-upload-token": ["py" + "pi-AgEIcHlwaS5vcmc" + "short"],
    "databricks-api-token": ["da" + "pi" + "z" * 32, "da" + "pi" + "0" * 32],
    "hashicorp-tf-api-token": ["abc.atlas" + "v1.short"],
    "pulumi-api-token": ["pu" + "l-" + "short", "pu" + "l-" + "0" * 40],
    "gohighlevel-private-integration-token": [
        "pi" + "t-" + "1234",
        "pi" + "t-" + "-".join("0" * n for n in (8, 4, 4, 4, 12)),
        "sp" + "it-" + "-".join("a1b2c3d4e5f6"[:n] for n in (8, 4, 4, 4, 12)),
    ],
    "postman-api-token": ["PM" + "AK-" + "short"],
    "grafana-api-key": ["eyJr" + "Ijoi" + "short"],
    "grafana-cloud-api-token": ["gl" + "c_" + "short"],
    "grafana-service-account-token": ["gl" + "sa_" + "short_1234"],
    "sentry-user-token": ["sn" + "tryu_" + "short"],
    "sentry-org-token": ["sn" + "trys_" + "short"],
    "stripe-access-token": ["p" + "k_live_" + "A1b2C3d4E5f6G7h8", "s" + "k_live_" + "x" * 24],
    "shopify-access-token": ["sh" + "pat_" + "short"],
    "shopify-shared-secret": ["sh" + "pss_" + "0" * 32],
    "private-key": [
        f"{DASH5}BEGIN {PRIV}{DASH5}\n...\n{DASH5}END {PRIV}{DASH5}",
        f"{DASH5}BEGIN RSA {PRIV}{DASH5}\n<redacted>\n{DASH5}END RSA {PRIV}{DASH5}",
        f"{DASH5}BEGIN PUBLIC KEY{DASH5}\n" + "A1b2" * 40 + f"\n{DASH5}END PUBLIC KEY{DASH5}",
    ],
    "jwt": [
        "eyJ" + "hbGciOi.eyJ" + "zdWIi.sig",
        "eyJub3QiOiJqd3QifQ.eyJ" + "zdWIiOiIxMjMifQ." + "a" * 20,
    ],
    "discord-bot-token": [
        "discord: M" + "a" * 23 + ".abc.def",
        "no context M" + "A1b2C3d4" * 3 + ".Ab1Cd2." + "Ab1Cd2Ef3" * 3,
        "MT" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7O" + ".Ab1Cd2." + "Ab1Cd2Ef3" * 3,  # head is not an id
    ],
    "aws-secret-near-key-id": [
        "AK" + "IA" + "B" * 8 + "CDEFGHIJ commit " + "0123456789abcdef" * 2 + "01234567",
        "AK" + "IA" + "QWERTYUIOPASDFGH sha " + "ab12" * 10,
    ],
    "discord-webhook-url": ["https://discord.com/api/web" + "hooks/123/abc"],
    "telegram-bot-token": ["12345:A" + "Ashort", "ratio 1:AA"],
    "mailgun-api-key": ["ke" + "y-" + "short", "ke" + "y-" + "0" * 32],
    "mailgun-private-api-token": ["no context " + "ab12" * 8 + "-" + "cd34" * 2 + "-" + "ef56" * 2],
    "database-url-password": [
        "postgres://user:password@localhost/db",
        "postgres://user:${DB_PASS}@db/x",
        "postgres://db.internal:5432/app",
    ],
    "basic-auth-url": [
        "https://user:<password>@host.internal/",
        "https://host.internal:8443/path",
        "https://x:$TOKEN@host/",
    ],
    "generic-secret": [
        "password: changeme",
        "password: <redacted>",
        "password = os.environ['DB_PASSWORD']",
        "password: DB_PASSWORD",
    ],
    "generic-high-entropy": [
        'session_token = "${SESSION_TOKEN}"',
        'session_token = "short"',
        'request_id = "' + "Ab1Cd2Ef3Gh4" * 3 + '"',
    ],
    "teamsync-server-token": [
        "export TEAMSYNC_TOKEN=" + "ts" + "m_…",
        "A token reads `" + "ts" + "m_<id>_<secret>`.",
        "ts" + "m_" + "0" * 12 + "_" + "x" * 43,
        "ts" + "m_" + "ABCDEF012345" + "_" + "Ab1-" * 10 + "Ab1",
    ],
}


def git(cwd: object, *args: str, stdin: bytes | None = None) -> str:
    """Run git in ``cwd`` (tests only); return stdout text."""
    import os

    from teamsync import _git as gitrun

    result = gitrun.run(args, cwd=str(cwd), env=os.environ, stdin=stdin)
    if not result.ok:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout.decode()


def fake_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The current environment with the project venv first on PATH."""
    import os
    import sys
    from pathlib import Path

    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(extra or {})
    return env
