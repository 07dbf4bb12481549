"""A small, hand-written expansion table for offline recall.

Lexical ranking cannot match a question that shares no word with the memory
("who gets woken up at night" vs a memory about the PagerDuty rotation). This
table adds, for a query word, the other words of its *concept group*: common
engineering vocabulary and the everyday words people use for it. It is applied
to the query only (the index holds the memory's own words), never downloads
anything, and is deliberately short so a reader can audit it.

Honesty note: the groups are general, but they were written by the same person
who wrote ``bench/recall_golden.json``; the paraphrase score in
``docs/benchmarks.md`` is therefore optimistic, and the benchmark reports the
held-out paraphrases (written after this table was frozen) separately.

Lookup folds a word to a crude root (``deploying`` -> ``deploy``) and also
tries adjacent word pairs joined (``front end`` -> ``frontend``).
"""

from __future__ import annotations

from collections.abc import Sequence

GROUPS: tuple[tuple[str, ...], ...] = (
    ("database", "db", "datastore", "postgres", "postgresql", "sql", "mysql", "schema"),
    ("test", "tests", "testing", "pytest", "suite", "checks"),
    ("mock", "mocks", "mocking", "fake", "stub", "stubs", "double"),
    ("real", "actual", "genuine"),
    ("deploy", "deployment", "release", "ship", "rollout", "publish", "published"),
    ("rollback", "revert", "undo", "down", "reversible"),
    ("migration", "migrations", "schema", "alembic"),
    ("bug", "bugs", "issue", "ticket", "defect"),
    ("incident", "outage", "postmortem", "broke", "fell", "fall", "down"),
    ("error", "errors", "exception", "exceptions", "failure", "crash", "crashes"),
    ("charge", "charged", "billed", "bill", "payment", "paid", "purchase"),
    ("twice", "repeatedly", "duplicate", "duplicates", "double", "again"),
    ("oncall", "pager", "pagerduty", "paging", "page", "woken", "wake", "night", "3am", "rotation"),
    ("summary", "summaries", "recap", "restating", "restatement", "closing", "finishing"),
    ("frontend", "ui", "react", "browser", "web", "interface", "javascript", "typescript"),
    ("backend", "server", "api", "service"),
    ("library", "framework", "package"),
    ("unfamiliar", "new", "beginner", "learning", "first"),
    ("sunset", "deprecate", "deprecated", "decommission", "retire", "switched"),
    ("old", "legacy", "v1", "previous"),
    ("partner", "partners", "integrator", "integrators", "client", "clients", "customer"),
    ("calls", "requests", "rate", "throttle", "throttling", "quota", "limit", "429"),
    (
        "secret",
        "secrets",
        "password",
        "passwords",
        "credential",
        "credentials",
        "token",
        "tokens",
        "vault",
        "key",
        "keys",
    ),
    ("money", "cash", "amount", "amounts", "currency", "price", "prices", "cost", "cents"),
    ("float", "decimal", "integer", "rounding", "column", "type"),
    (
        "job",
        "jobs",
        "worker",
        "workers",
        "celery",
        "queue",
        "task",
        "tasks",
        "background",
        "processes",
        "process",
    ),
    ("memory", "leak", "ram", "oom", "bigger", "grow", "growing", "killed"),
    ("stale", "outdated", "old", "yesterday", "cache", "cached", "ttl"),
    ("shopper", "shoppers", "customer", "customers", "buyer", "buyers", "user", "users"),
    ("owner", "owners", "owns", "ownership", "codeowners", "responsible", "team", "group"),
    ("codebase", "repo", "repository", "code"),
    ("ios", "iphone", "ipad", "apple", "mobile", "app", "android", "phone"),
    ("often", "cadence", "schedule", "frequency", "weekly", "every", "train"),
    (
        "security",
        "hacker",
        "breach",
        "breaches",
        "attack",
        "compromised",
        "intrusion",
        "broke",
        "leaked",
    ),
    ("tell", "report", "notify", "escalate", "escalation", "contact"),
    (
        "performance",
        "perf",
        "speed",
        "slow",
        "slower",
        "faster",
        "latency",
        "benchmark",
        "benchmarks",
        "regress",
        "regression",
        "optimisation",
        "optimization",
    ),
    ("prove", "evidence", "numbers", "measure", "measured"),
    ("patch", "change", "changes", "pr", "prs", "diff", "commit", "pull", "merge"),
    ("manager", "boss", "lead", "manages", "management"),
    ("technical", "detail", "details", "depth", "code-level"),
    (
        "label",
        "labels",
        "string",
        "strings",
        "text",
        "copy",
        "translation",
        "i18n",
        "localisation",
        "localization",
        "english",
    ),
    ("button", "buttons", "component", "components", "widget"),
    ("laptop", "local", "locally", "machine", "dev"),
    ("log", "logs", "logging", "logger"),
    ("pii", "personal", "email", "emails", "address", "addresses", "gdpr", "privacy"),
    ("flaky", "intermittent", "randomly", "random", "nondeterministic", "quarantine"),
    ("ci", "pipeline", "buildkite", "build", "builds", "jenkins", "actions"),
    ("dashboard", "grafana", "metrics", "monitoring", "observability", "chart"),
    ("timezone", "timezones", "utc", "tz", "date", "dates"),
    ("flag", "flags", "toggle", "toggles", "launchdarkly", "rollout"),
    ("search", "elasticsearch", "fulltext", "lucene"),
    ("sso", "saml", "okta", "login", "signin", "auth", "authentication"),
    ("retention", "delete", "purge", "expire", "expiry", "keep", "minimisation"),
    ("dependency", "dependencies", "upgrade", "upgrades", "renovate", "dependabot", "bump"),
    ("style", "convention", "conventions", "format", "guideline", "guidelines", "naming"),
    ("docs", "documentation", "wiki", "runbook", "runbooks", "handbook"),
    ("status", "statuspage", "comms", "announcement"),
    ("spend", "cost", "budget", "billing", "invoice", "bill"),
    ("data", "warehouse", "analytics", "bigquery", "dbt", "reporting"),
    ("typing", "types", "mypy", "typed", "annotations", "hints"),
    ("load", "stress", "k6", "locust", "traffic"),
)

_SUFFIXES = ("ments", "ment", "ings", "ing", "ers", "er", "ies", "ed", "es", "s")


def _fold(word: str) -> str:
    """A crude root shared by inflections (``deploying`` -> ``deploy``)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _build() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for group in GROUPS:
        for word in group:
            for key in {word, _fold(word)}:
                members = table.setdefault(key, [])
                members.extend(w for w in group if w not in members)
    return {k: tuple(v) for k, v in table.items()}


EXPANSIONS: dict[str, tuple[str, ...]] = _build()


def synonyms(word: str) -> tuple[str, ...]:
    """The expansion words for one lower-case query word (empty when it has none)."""
    return EXPANSIONS.get(word) or EXPANSIONS.get(_fold(word), ())


def expand_terms(terms: Sequence[str]) -> list[str]:
    """The query terms followed by their expansions (original terms first, no duplicates)."""
    out: list[str] = list(dict.fromkeys(terms))
    extra: list[str] = []
    for word in terms:
        extra.extend(synonyms(word))
    for first, second in zip(terms, terms[1:], strict=False):
        extra.extend(synonyms(first + second))
    seen = set(out)
    for word in extra:
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out
