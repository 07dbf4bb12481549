"""The secret scanner every gate uses: curated rules, a prefilter, detect-secrets for the rest.

How a text is scanned:

1. **Prefilter.** The text is lower-cased once; each rule's keywords are
   substring checks (a rule without keywords starts with a case-sensitive
   literal, which ``re`` finds as fast). A text with no candidate pays these
   passes and nothing else.
2. **Specific rules** (:mod:`teamsync.security.rules`) run only where their
   keywords occur: over the keyword's line (plus ``context_chars`` for
   multi-line secrets such as PEM blocks). Validators drop documented example
   keys and placeholders; a span one rule reported is not reported again.
3. **Generic secrets** (``password = …``, a high-entropy string assigned to a
   secret-named key) go through detect-secrets' own KeywordDetector and
   high-entropy plugins and its heuristic false-positive filters, applied to
   candidate lines only. detect-secrets is imported lazily, the first time a
   candidate line exists, and all candidates of a run share one
   ``transient_settings`` block (see :class:`Scanner`).

A :class:`Finding` names the path, line, rule and a fingerprint (a truncated
sha256 of rule id and secret). No object this module returns or raises holds
the secret text. Lines carrying ``teamsync: allow`` or ``pragma: allowlist
secret`` are skipped (``teamsync: allow-next-line`` / ``pragma: allowlist
nextline secret`` skip the following line); a baseline is a set of fingerprints.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from teamsync.security.rules import RULES, Rule, looks_like_placeholder

ALLOW_MARKERS = ("teamsync: allow", "pragma: allowlist secret")
NEXT_LINE_MARKERS = ("teamsync: allow-next-line", "pragma: allowlist nextline secret")
FINGERPRINT_LENGTH = 32


@dataclass(frozen=True)
class Finding:
    """Where a likely secret is; never what it is."""

    path: str
    line: int
    rule: str
    fingerprint: str

    def as_dict(self) -> dict[str, str | int]:
        return {
            "path": self.path,
            "line": self.line,
            "rule": self.rule,
            "fingerprint": self.fingerprint,
        }


def fingerprint(rule_id: str, secret: str) -> str:
    """The stable identity of one secret under one rule (hex, truncated sha256)."""
    data = f"{rule_id}\x00{secret}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:FINGERPRINT_LENGTH]


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(text: str) -> str:
    lowered = text.lower()
    # A few characters change length when lower-cased; keep offsets aligned.
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


@dataclass(frozen=True)
class _Hit:
    offset: int
    rule: str
    fingerprint: str


@dataclass(frozen=True)
class _Candidate:
    path: str
    line: int
    key: str
    value: str = field(repr=False)  # the candidate secret: never in a repr


class _Text:
    """One text being scanned, with its lower-cased twin and line helpers."""

    def __init__(self, text: str, path: str, first_line: int) -> None:
        self.text = text
        self.lowered = _lower(text)
        self.path = path
        self.first_line = first_line
        self._spans: dict[tuple[tuple[str, ...], int], list[tuple[int, int]]] = {}

    def line_span(self, pos: int, extra_chars: int = 0) -> tuple[int, int]:
        """The line holding ``pos``, extended to the end of the line ``extra_chars`` later."""
        start = self.text.rfind("\n", 0, pos) + 1
        end = self.text.find("\n", pos + extra_chars)
        return start, (len(self.text) if end < 0 else end)

    def keyword_spans(self, keywords: tuple[str, ...], extra_chars: int) -> list[tuple[int, int]]:
        """The lines holding a keyword (plus ``extra_chars`` after each), merged; cached."""
        key = (keywords, extra_chars)
        cached = self._spans.get(key)
        if cached is None:
            cached = self._spans[key] = self._find_spans(keywords, extra_chars)
        return cached

    def _find_spans(self, keywords: tuple[str, ...], extra_chars: int) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        for kw in keywords:
            hay = self.lowered if kw == kw.lower() else self.text
            pos = hay.find(kw)
            while pos >= 0:
                spans.append(self.line_span(pos, extra_chars))
                line_end = hay.find("\n", pos)
                pos = hay.find(kw, line_end + 1) if line_end >= 0 else -1
        return _merge(spans)

    def allowed(self, pos: int) -> bool:
        start, end = self.line_span(pos)
        line = self.lowered[start:end]
        if any(marker in line for marker in ALLOW_MARKERS):
            return True
        if start == 0:
            return False
        prev_start, _ = self.line_span(start - 1)
        previous = self.lowered[prev_start : start - 1]
        return any(marker in previous for marker in NEXT_LINE_MARKERS)

    def line_numbers(self, offsets: list[int]) -> dict[int, int]:
        numbers: dict[int, int] = {}
        line, last = self.first_line, 0
        for offset in sorted(set(offsets)):
            line += self.text.count("\n", last, offset)
            last = offset
            numbers[offset] = line
        return numbers


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _rule_hits(doc: _Text, rule: Rule, taken: list[tuple[int, int]]) -> Iterator[_Hit]:
    if rule.keywords:
        spans = doc.keyword_spans(rule.keywords, rule.context_chars)
    else:
        spans = [(0, len(doc.text))]
    text = doc.text
    for start, end in spans:
        if any(text.find(literal, start, end) < 0 for literal in rule.requires):
            continue
        for match in rule.regex.finditer(text, start, end):
            group = "s" if "s" in rule.regex.groupindex and match.group("s") else 0
            s_start, s_end = match.span(group)
            if rule.left_boundary and s_start > 0 and text[s_start - 1].isalnum():
                continue
            secret = text[s_start:s_end]
            if rule.validator is not None and not rule.validator(secret):
                continue
            if any(s_start < t_end and t_start < s_end for t_start, t_end in taken):
                continue
            taken.append((s_start, s_end))
            if doc.allowed(s_start):
                continue
            yield _Hit(s_start, rule.id, fingerprint(rule.id, secret))


_GENERIC_KEYWORDS = ("pass", "pwd", "secret", "token", "credential", "auth", "key")
_GENERIC_LINE = re.compile(
    r"(?P<key>(?:pass(?:word|wd|phrase)?|pwd|secret|token|credentials?|authorization"
    r"|(?:api|auth|access|private|client|account|service|db|database|master|signing|encryption)"
    r"[_.\-]?key)[\w.\-]*)"
    r"""["'\]]{0,2}\s*(?::=|=>|[:=])(?!=)\s*(?:(?:bearer|basic|token)\s+)?"""
    r"""(?:(?P<q>["'`])(?P<qv>[^"'`\n]{1,300})(?P=q)|(?P<uv>[^\s"'`,;)]{1,300}))""",
    re.IGNORECASE,
)
_WORDISH = re.compile(
    r"[A-Za-z]{1,9}"  # a word
    r"|[A-Z][A-Z0-9_]*_[A-Z0-9_]+"  # an environment variable name
    r"|[a-z]+(?:[_\-]+[a-z]+)+"  # an identifier
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"  # an attribute reference (self._key, settings.API_KEY)
)
_PUBLIC_PREFIXES = ("pk_live_", "pk_test_", "ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-")


def generic_value_plausible(value: str) -> bool:
    """Cheap checks before detect-secrets sees a value: drop words, references, templates."""
    if len(value) < 6 or any(c.isspace() for c in value) or value[-1] in "-_":
        return False
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


def _generic_candidates(doc: _Text, taken_lines: set[int]) -> list[_Candidate]:
    found: dict[int, tuple[str, str]] = {}
    text = doc.text
    for start, end in doc.keyword_spans(_GENERIC_KEYWORDS, 0):
        if text.find("=", start, end) < 0 and text.find(":", start, end) < 0:
            continue
        for match in _GENERIC_LINE.finditer(doc.text, start, end):
            value = match.group("qv") or match.group("uv") or ""
            line_start = doc.line_span(match.start())[0]
            if line_start in found or line_start in taken_lines:
                continue
            if generic_value_plausible(value) and not doc.allowed(line_start):
                found[line_start] = (match.group("key"), value)
    numbers = doc.line_numbers(list(found))
    return [_Candidate(doc.path, numbers[at], key, value) for at, (key, value) in found.items()]


class Scanner:
    """Scan many texts, then run the generic detectors once over all candidate lines."""

    def __init__(self, *, baseline: frozenset[str] = frozenset(), generic: bool = True) -> None:
        self.baseline = baseline
        self.generic = generic
        self._findings: list[Finding] = []
        self._candidates: list[_Candidate] = []

    def __repr__(self) -> str:
        return f"Scanner(findings={len(self._findings)}, candidates={len(self._candidates)})"

    def add(self, text: str, path: str, *, first_line: int = 1) -> None:
        """Scan ``text`` with the specific rules and queue its generic candidate lines."""
        doc = _Text(text, path, first_line)
        taken: list[tuple[int, int]] = []
        hits = [hit for rule in RULES for hit in _rule_hits(doc, rule, taken)]
        numbers = doc.line_numbers([hit.offset for hit in hits])
        self._findings.extend(Finding(path, numbers[h.offset], h.rule, h.fingerprint) for h in hits)
        if self.generic:
            taken_lines = {doc.line_span(start)[0] for start, _ in taken}
            self._candidates.extend(_generic_candidates(doc, taken_lines))

    def finish(self) -> list[Finding]:
        """Every finding so far (generic ones included), minus the baseline, sorted."""
        findings = self._findings
        if self._candidates:
            from teamsync.security._generic import detect

            flagged = detect([(c.path, c.key, c.value) for c in self._candidates])
            for index, rule_id, fp in flagged:
                candidate = self._candidates[index]
                findings.append(Finding(candidate.path, candidate.line, rule_id, fp))
            self._candidates = []
        unique = {(f.path, f.line, f.rule, f.fingerprint): f for f in findings}
        kept = [f for f in unique.values() if f.fingerprint not in self.baseline]
        self._findings = []
        return sorted(kept, key=lambda f: (f.path, f.line, f.rule))


def scan_text(
    text: str,
    path: str = "<text>",
    *,
    baseline: frozenset[str] = frozenset(),
    generic: bool = True,
    first_line: int = 1,
) -> list[Finding]:
    """Findings for ``text`` (reported as ``path``); empty when it holds no likely secret."""
    scanner = Scanner(baseline=baseline, generic=generic)
    scanner.add(text, path, first_line=first_line)
    return scanner.finish()
