"""Names are content: secrets in file names, keys and tree paths.

A model that proposes ``team/<token>.md``, a PUT whose key is a token, a git tree
with a path holding a password: each puts the secret where every collaborator
sees it, and where tools print it. Every gate scans the key with the specific
rules (:data:`teamsync.security.rules.RULES`) before the content, and a key
that holds a secret is shown only through :func:`redact_name`, which replaces
each secret with the rule id (``team/<github-pat>.md``). Every name teamsync
prints goes through :func:`printable`, which also escapes control characters.

Keys are short (at most 1024 bytes), so the rules run straight over the whole
key; the generic password layer does not run on names (a name has no
``label = value`` shape worth trusting).
"""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False  # typing's, without importing typing on the hook path

if TYPE_CHECKING:
    from teamsync.security.secrets import Finding

NAME_LINE = 0
"""The line number a finding in a file's name carries."""
_MAYBE = re.compile(r"[A-Za-z0-9]{10}")
"""Every rule's secret holds a run of 10 letters or digits; most names have none."""


@functools.cache
def _rule_anchors() -> list[tuple[tuple[str, bool], ...] | None]:
    """Each rule's anchors (a literal every match holds; None: run the rule anyway)."""
    from teamsync.security.secrets import rules_anchors

    return rules_anchors()


@functools.cache
def _rule_literals() -> list[tuple[tuple[str, ...], tuple[str, ...]] | None]:
    """Each rule's anchors as (caseless literals, exact literals), None: run the rule anyway."""
    return [
        None
        if anchors is None
        else (tuple(lit for lit, caseless in anchors if caseless),
              tuple(lit for lit, caseless in anchors if not caseless))
        for anchors in _rule_anchors()
    ]  # fmt: skip


def _spans(name: str) -> list[tuple[int, int, str, str]]:
    """(start, end, rule id, secret) for each secret in ``name``, leftmost first, no overlaps."""
    if _MAYBE.search(name) is None:
        return []
    from teamsync.security.rules import RULES

    lowered = name.lower()
    spans: list[tuple[int, int, str, str]] = []
    for rule, literals in zip(RULES, _rule_literals(), strict=True):
        if literals is not None and not (
            any(map(lowered.__contains__, literals[0])) or any(map(name.__contains__, literals[1]))
        ):
            continue
        if any(literal not in name for literal in rule.requires):
            continue
        for match in rule.regex.finditer(name):
            group = "s" if "s" in rule.regex.groupindex and match.group("s") else 0
            start, end = match.span(group)
            if rule.left_boundary and start > 0 and name[start - 1].isalnum():
                continue
            secret = name[start:end]
            if rule.validator is not None and not rule.validator(secret):
                continue
            if any(start < e and s < end for s, e, _, _ in spans):
                continue
            spans.append((start, end, rule.id, secret))
    return sorted(spans)


def name_findings(name: str, shown: str | None = None) -> list[Finding]:
    """Findings for the secrets in ``name`` (line :data:`NAME_LINE`), reported at ``shown``."""
    spans = _spans(name) if name else []
    if not spans:
        return []
    from teamsync.security.secrets import Finding, fingerprint

    where = shown if shown is not None else redact_name(name)
    return [
        Finding(where, NAME_LINE, rule, fingerprint(rule, secret)) for _, _, rule, secret in spans
    ]


def printable(text: str) -> str:
    """``text`` safe to print: each secret in it replaced by ``<rule-id>``
    (:func:`redact_name`), then control and other invisible characters escaped, so
    a file name can neither drive the terminal nor repeat a secret."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in redact_name(text))


def redact_name(name: str) -> str:
    """``name`` with each secret replaced by ``<rule-id>``; unchanged when it holds none."""
    spans = _spans(name)
    if not spans:
        return name
    parts: list[str] = []
    last = 0
    for start, end, rule, _ in spans:
        parts.append(name[last:start])
        parts.append(f"<{rule}>")
        last = end
    parts.append(name[last:])
    return "".join(parts)
