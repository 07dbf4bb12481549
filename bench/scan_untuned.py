"""An untuned corpus for ``bench/scan.py``: other contexts, other makers, another seed.

Written on 2026-12-01 before the engine work of issue 14 was tuned, and not
changed to suit the scanner afterwards. It shares no generator code with
``testing.scan`` (the corpus the rules were tuned on): the secret values are
made here from the providers' published formats, and they are placed in
contexts the tuned corpus never uses: ``.env`` files, YAML and TOML config,
JSON settings, Python and shell sources, CI logs, Markdown tables, HTML
comments and curl command lines. Hard negatives are the things such files
really hold: lockfile hashes, commit SHAs, UUIDs, base64 images, CSS colours,
``${{ secrets.X }}`` references and documentation placeholders.

Every value is built at run time from a seeded ``random.Random``, and every
provider prefix is split, so this file never trips a scanner itself.

``generate(root, size, seed)`` writes the tree and returns
``(plants, negatives, bytes written)`` with the same ``Spot`` tuples as
``bench/scan.py`` (path, first line, last line, kind).
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from pathlib import Path

SEED = 20261201
Spot = tuple[str, int, int, str]
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
D5 = "-" * 5


def _r(g: random.Random, alphabet: str, n: int) -> str:
    return "".join(g.choice(alphabet) for _ in range(n))


def _num(g: random.Random, n: int) -> str:
    return str(g.randint(1, 9)) + _r(g, string.digits, n - 1)


def _jwt(g: random.Random) -> str:
    def enc(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    head = enc({"typ": "JWT", "alg": g.choice(["RS256", "HS512", "ES256"])})
    body = enc({"iss": "acme", "uid": g.randint(1, 10**6), "exp": g.randint(10**9, 2 * 10**9)})
    sig = base64.urlsafe_b64encode(g.randbytes(48)).decode().rstrip("=")
    return f"{head}.{body}.{sig}"


def _pem(g: random.Random) -> str:
    kind = g.choice(["RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", ""])
    width = 70 if kind == "OPENSSH " else 64
    body = [_r(g, B64, width) for _ in range(g.randint(6, 20))]
    tag = "PRIVATE" + " KEY"
    return "\n".join([f"{D5}BEGIN {kind}{tag}{D5}", *body, f"{D5}END {kind}{tag}{D5}"])


# kind -> (variable name, value maker). Kinds are the scanner's rule ids, so recall per
# kind reads as recall per rule; the generic kinds are secrets no provider format marks.
Maker = Callable[[random.Random], str]
SECRETS: dict[str, tuple[str, Maker]] = {
    "aws-access-token": ("AWS_ACCESS_KEY_ID", lambda g: "AK" + "IA" + _r(g, B32, 16)),
    "aws-secret-access-key": ("AWS_SECRET_ACCESS_KEY", lambda g: _r(g, B64, 40)),
    "gcp-api-key": ("GOOGLE_MAPS_KEY", lambda g: "AI" + "za" + _r(g, URLSAFE, 35)),
    "github-pat": ("GH_TOKEN", lambda g: "gh" + "p_" + _r(g, ALNUM, 36)),
    "github-oauth": ("GITHUB_OAUTH", lambda g: "gh" + "o_" + _r(g, ALNUM, 36)),
    "github-app-token": (
        "GITHUB_APP_TOKEN",
        lambda g: "gh" + g.choice("us") + "_" + _r(g, ALNUM, 36),
    ),
    "github-fine-grained-pat": (
        "GITHUB_PAT",
        lambda g: "github" + "_pat_" + _r(g, ALNUM, 22) + "_" + _r(g, ALNUM, 59),
    ),
    "gitlab-pat": ("GITLAB_TOKEN", lambda g: "gl" + "pat-" + _r(g, URLSAFE, 20)),
    "slack-bot-token": (
        "SLACK_BOT_TOKEN",
        lambda g: "xo" + "xb-" + _num(g, 11) + "-" + _num(g, 12) + "-" + _r(g, ALNUM, 24),
    ),
    "slack-webhook-url": (
        "SLACK_WEBHOOK",
        lambda g: (
            "https://hooks.slack."
            + "com/services/T"
            + _r(g, B32, 10)
            + "/B"
            + _r(g, B32, 10)
            + "/"
            + _r(g, ALNUM, 24)
        ),
    ),
    "stripe-access-token": (
        "STRIPE_API_KEY",
        lambda g: g.choice("sr") + "k_" + g.choice(["live", "test"]) + "_" + _r(g, ALNUM, 40),
    ),
    "sendgrid-api-token": (
        "SENDGRID_API_KEY",
        lambda g: "S" + "G." + _r(g, URLSAFE, 22) + "." + _r(g, URLSAFE, 43),
    ),
    "npm-access-token": ("NPM_TOKEN", lambda g: "np" + "m_" + _r(g, ALNUM, 36)),
    "anthropic-api-key": (
        "ANTHROPIC_KEY",
        lambda g: "-".join(("sk", "ant", "api03")) + "-" + _r(g, URLSAFE, 93) + "AA",
    ),
    "openai-api-key": (
        "OPENAI_KEY",
        lambda g: "sk-" + _r(g, URLSAFE, 20) + "T3Blbk" + "FJ" + _r(g, URLSAFE, 20),
    ),
    "huggingface-access-token": (
        "HF_TOKEN",
        lambda g: "h" + "f_" + _r(g, string.ascii_letters, 34),
    ),
    "twilio-api-key": ("TWILIO_API_KEY", lambda g: "S" + "K" + _r(g, HEX, 32)),
    "digitalocean-pat": ("DIGITALOCEAN_TOKEN", lambda g: "dop" + "_v1_" + _r(g, HEX, 64)),
    "telegram-bot-token": (
        "TELEGRAM_TOKEN",
        lambda g: _num(g, 9) + ":A" + "A" + _r(g, URLSAFE, 33),
    ),
    "discord-webhook-url": (
        "DISCORD_HOOK",
        lambda g: "https://discord.com/api/web" + "hooks/" + _num(g, 19) + "/" + _r(g, URLSAFE, 68),
    ),
    "shopify-access-token": ("SHOPIFY_TOKEN", lambda g: "sh" + "pat_" + _r(g, HEX, 32)),
    "databricks-api-token": ("DATABRICKS_TOKEN", lambda g: "da" + "pi" + _r(g, HEX, 32)),
    "sentry-user-token": ("SENTRY_AUTH_TOKEN", lambda g: "sn" + "tryu_" + _r(g, HEX, 64)),
    "pulumi-api-token": ("PULUMI_TOKEN", lambda g: "pu" + "l-" + _r(g, HEX, 40)),
    "postman-api-token": (
        "POSTMAN_KEY",
        lambda g: "PM" + "AK-" + _r(g, HEX, 24) + "-" + _r(g, HEX, 34),
    ),
    "jwt": ("SESSION_JWT", _jwt),
    "database-url-password": (
        "DATABASE_URL",
        lambda g: (
            g.choice(["postgresql", "mysql", "mongodb", "rediss"])
            + "://svc_"
            + _r(g, string.ascii_lowercase, 5)
            + ":"
            + _r(g, ALNUM, 20)
            + "@"
            + g.choice(["10.0.3.7", "db-primary.prod", "cluster0.mongo.internal"])
            + "/main"
        ),
    ),
    "basic-auth-url": (
        "PIP_INDEX_URL",
        lambda g: "https://ci:" + _r(g, ALNUM, 22) + "@pkgs.acme-corp.net/simple/",
    ),
    "generic-secret": (
        "DB_PASSWORD",
        lambda g: _r(g, string.ascii_letters, 2) + _r(g, ALNUM + "@%+=", 14),
    ),
    "generic-high-entropy": ("CLIENT_SECRET", lambda g: _r(g, ALNUM, 48)),
}


def _snake(var: str) -> str:
    return var.lower()


def _camel(var: str) -> str:
    head, *rest = var.lower().split("_")
    return head + "".join(part.capitalize() for part in rest)


# A context turns (variable name, value) into a line in some file type.
CONTEXTS: dict[str, Callable[[random.Random, str, str], str]] = {
    "env": lambda g, k, v: f"{k}={v}",
    "env-quoted": lambda g, k, v: f'{k}="{v}"',
    "shell-export": lambda g, k, v: f"export {k}='{v}'",
    "yaml": lambda g, k, v: f"    {_snake(k)}: {v}",
    "yaml-quoted": lambda g, k, v: f'  {_snake(k)}: "{v}"',
    "toml": lambda g, k, v: f'{_snake(k)} = "{v}"',
    "json": lambda g, k, v: f'    "{_camel(k)}": "{v}",',
    "python-kwarg": lambda g, k, v: f'client = Client({_snake(k)}="{v}", timeout=30)',
    "js-const": lambda g, k, v: f"const {_camel(k)} = '{v}';",
    "curl-header": lambda g, k, v: (
        f'curl -sS -H "X-{k.title().replace("_", "-")}: {v}" https://api.acme.io/v2/ping'
    ),
    "log-line": lambda g, k, v: (
        f"2026-0{g.randint(1, 9)}-1{g.randint(0, 9)}T0{g.randint(0, 9)}:1{g.randint(0, 9)}:00Z "
        f"INFO loaded {_snake(k)}={v} from vault"
    ),
    "md-table": lambda g, k, v: (
        f"| {g.choice(['prod', 'staging', 'dev'])} | `{_snake(k)}` | `{v}` |"
    ),
    "html-comment": lambda g, k, v: f"<!-- {_snake(k)}: {v} -->",
    "cli-flag": lambda g, k, v: f"deployctl push --{_snake(k).replace('_', '-')}={v} --wait",
}
# URLs and multi-line keys are placed as they come, without an assignment around them.
BARE_KINDS = frozenset(
    {"slack-webhook-url", "discord-webhook-url", "database-url-password", "basic-auth-url"}
)

NEGATIVE_MAKERS: dict[str, Maker] = {
    "yarn-lock-hash": lambda g: f"  integrity sha512-{_r(g, B64, 86)}==",
    "poetry-lock-hash": lambda g: (
        f'    {{file = "pkg-{g.randint(1, 9)}.0.tar.gz", hash = "sha256:{_r(g, HEX, 64)}"}},'
    ),
    "commit-sha": lambda g: f"merged {_r(g, HEX, 40)} into main",
    "short-sha-list": lambda g: "cherry-pick " + " ".join(_r(g, HEX, 12) for _ in range(4)),
    "uuid-id": lambda g: f'  "id": "{uuid.UUID(int=g.getrandbits(128))}",',
    "base64-image": lambda g: f"![logo](data:image/png;base64,{_r(g, B64, 120)})",
    "css-colour": lambda g: f"  --accent: #{_r(g, HEX, 6)}; --shade: #{_r(g, HEX, 6)};",
    "actions-secret-ref": lambda g: (
        "          token: ${{ secrets."
        + g.choice(["NPM_TOKEN", "PYPI_TOKEN", "DEPLOY_KEY"])
        + " }}"
    ),
    "env-reference": lambda g: g.choice(
        [
            'password = os.environ["DB_PASSWORD"]',
            "API_KEY=${API_KEY:-}",
            'token: "{{ vault_token }}"',
        ]
    ),
    "doc-placeholder": lambda g: g.choice(
        [
            "STRIPE_API_KEY=<your stripe key>",
            "api_key: YOUR_API_KEY_HERE",
            "password: ********",
            "GH_TOKEN=ghp_...",
        ]
    ),
    "public-key": lambda g: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_r(g, B64, 43)} ops@bastion",
    "version-pins": lambda g: (
        f"requests=={g.randint(1, 3)}.{g.randint(0, 32)}.{g.randint(0, 9)}  # pinned"
    ),
}

_WORDS = (
    "service replica ingress config tenant shard backup rotate vault secret store reader writer "
    "timeout cron job nightly export import pipeline stage artifact image tag mirror proxy "
    "cache warm cold region zone failover primary standby quota limit owner oncall page"
).split()


def _filler(g: random.Random) -> list[str]:
    pick = g.random()
    words = lambda n: " ".join(g.choice(_WORDS) for _ in range(n))  # noqa: E731
    if pick < 0.3:
        return [
            f"{g.choice(_WORDS)}_{g.choice(_WORDS)}: {g.randint(1, 5000)}"
            for _ in range(g.randint(2, 6))
        ]
    if pick < 0.55:
        return [
            f"# {words(g.randint(6, 14))}",
            f"{g.choice(_WORDS).upper()}_{g.choice(_WORDS).upper()}={g.choice(_WORDS)}",
        ]
    if pick < 0.75:
        return [
            f"def {g.choice(_WORDS)}_{g.choice(_WORDS)}(x):",
            f"    return x.{g.choice(_WORDS)}({g.randint(0, 99)})",
            "",
        ]
    if pick < 0.9:
        return [f"| {g.choice(_WORDS)} | {g.randint(1, 99)} | {words(4)} |" for _ in range(3)]
    return [f"2026-11-2{g.randint(0, 9)}T12:00:0{g.randint(0, 9)}Z WARN {words(g.randint(5, 12))}"]


def generate(root: Path, size: int, seed: int = SEED) -> tuple[list[Spot], list[Spot], int]:
    """Write the corpus under ``root``; return (plants, hard negatives, bytes written)."""
    g = random.Random(seed)
    kinds, contexts, negs = sorted(SECRETS), sorted(CONTEXTS), sorted(NEGATIVE_MAKERS)
    exts = ["env", "yaml", "toml", "json", "py", "sh", "log", "md"]
    plants: list[Spot] = []
    negatives: list[Spot] = []
    written = index = 0
    while written < size:
        name = f"cfg/{g.choice(_WORDS)}/{index:05d}-{g.choice(_WORDS)}.{g.choice(exts)}"
        lines: list[str] = []
        target = g.randint(3_000, 30_000)
        used = 0
        while used < target:
            roll = g.random()
            if roll < 0.04:
                kind = kinds[len(plants) % len(kinds)]
                var, make = SECRETS[kind]
                value = make(g)
                block = (
                    [value] if kind in BARE_KINDS else [CONTEXTS[g.choice(contexts)](g, var, value)]
                )
                plants.append((name, len(lines) + 1, len(lines) + len(block), kind))
            elif roll < 0.05:
                block = [
                    f"{g.choice(['deploy_key', 'signing_key', 'tls_key'])}: |",
                    *_pem(g).split("\n"),
                ]
                plants.append((name, len(lines) + 1, len(lines) + len(block), "private-key"))
            elif roll < 0.18:
                kind = negs[len(negatives) % len(negs)]
                block = [NEGATIVE_MAKERS[kind](g)]
                negatives.append((name, len(lines) + 1, len(lines) + len(block), kind))
            else:
                block = _filler(g)
            lines += block
            used += sum(len(line) + 1 for line in block)
        text = "\n".join(lines) + "\n"
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += len(text.encode())
        index += 1
    return plants, negatives, written
