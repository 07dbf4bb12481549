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
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from teamsync.security.names import name_findings
from teamsync.security.rules import (
    GENERIC_KEYWORDS,
    RULES,
    Rule,
    clean_generic_value,
    generic_label,
    generic_line,
    generic_value_plausible,
    generic_value_random,
    is_entry_point,
)

ALLOW_MARKERS = ("teamsync: allow", "pragma: allowlist secret")
NEXT_LINE_MARKERS = ("teamsync: allow-next-line", "pragma: allowlist nextline secret")
FINGERPRINT_LENGTH = 32


@dataclass(frozen=True)
class Finding:
    """Where a likely secret is; never what it is."""

    path: str
    line: int
    """0 for a secret in the file's name (the path is then shown redacted)."""
    rule: str
    fingerprint: str
    commit: str | None = None
    """``scan --git-range``: the commit that added the line."""

    def as_dict(self) -> dict[str, str | int]:
        data: dict[str, str | int] = {
            "path": self.path,
            "line": self.line,
            "rule": self.rule,
            "fingerprint": self.fingerprint,
        }
        if self.commit:
            data["commit"] = self.commit
        return data


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
    commit: str | None = None


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


def _rule_hits(
    doc: _Text, rule: Rule, taken: list[tuple[int, int]], inline_allow: bool = False
) -> Iterator[_Hit]:
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
            if inline_allow and doc.allowed(s_start):
                continue
            yield _Hit(s_start, rule.id, fingerprint(rule.id, secret))


def _generic_candidates(doc: _Text, taken_lines: set[int], inline_allow: bool) -> list[_Candidate]:
    found: dict[int, tuple[str, str]] = {}
    for start, end in doc.keyword_spans(GENERIC_KEYWORDS, 0):
        for match in generic_line().finditer(doc.text, start, end):
            line_start = doc.line_span(match.start())[0]
            if line_start in found or line_start in taken_lines:
                continue
            quoted = match.group("qv") is not None
            value = clean_generic_value(match.group("qv") or match.group("uv") or "", quoted)
            label, strong = generic_label(match.group("key"))
            if not generic_value_plausible(value) or is_entry_point(value):
                continue
            if not strong and not generic_value_random(value):
                continue
            if inline_allow and doc.allowed(line_start):
                continue
            found[line_start] = (label, value)
    numbers = doc.line_numbers(list(found))
    return [_Candidate(doc.path, numbers[at], key, value) for at, (key, value) in found.items()]


class Scanner:
    """Scan many texts, then run the generic detectors once over all candidate lines."""

    def __init__(
        self,
        *,
        baseline: frozenset[str] = frozenset(),
        generic: bool = True,
        inline_allow: bool = False,
    ) -> None:
        self.baseline = baseline
        self.generic = generic
        self.inline_allow = inline_allow
        """Honour ``teamsync: allow`` pragmas; off for every team-memory gate (see docs/scanning.md)."""
        self._findings: list[Finding] = []
        self._candidates: list[_Candidate] = []

    def __repr__(self) -> str:
        return f"Scanner(findings={len(self._findings)}, candidates={len(self._candidates)})"

    def add(
        self,
        text: str,
        path: str,
        *,
        first_line: int = 1,
        inline_allow: bool | None = None,
        commit: str | None = None,
    ) -> None:
        """Scan ``text`` with the specific rules and queue its generic candidate lines.

        ``inline_allow`` overrides the scanner's setting for this text (a memory
        file inside an ordinary code scan never honours pragmas).
        """
        allow = self.inline_allow if inline_allow is None else inline_allow
        in_name = name_findings(path)  # a secret in the name: shown redacted, reported by rule
        if in_name:
            path = in_name[0].path
            self._findings.extend(replace(f, commit=commit) for f in in_name)
        doc = _Text(text, path, first_line)
        taken: list[tuple[int, int]] = []
        hits = [hit for rule in RULES for hit in _rule_hits(doc, rule, taken, allow)]
        numbers = doc.line_numbers([hit.offset for hit in hits])
        self._findings.extend(
            Finding(path, numbers[h.offset], h.rule, h.fingerprint, commit) for h in hits
        )
        if self.generic:
            taken_lines = {doc.line_span(start)[0] for start, _ in taken}
            found = _generic_candidates(doc, taken_lines, allow)
            self._candidates.extend(replace(c, commit=commit) if commit else c for c in found)

    def finish(self) -> list[Finding]:
        """Every finding so far (generic ones included), minus the baseline, sorted."""
        findings = self._findings
        if self._candidates:
            from teamsync.security._generic import detect

            flagged = detect([(c.path, c.key, c.value) for c in self._candidates])
            for index, rule_id, fp in flagged:
                candidate = self._candidates[index]
                findings.append(
                    Finding(candidate.path, candidate.line, rule_id, fp, candidate.commit)
                )
            self._candidates = []
        unique = {(f.path, f.line, f.rule, f.fingerprint, f.commit): f for f in findings}
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
    inline_allow: bool = False,
) -> list[Finding]:
    """Findings for ``text`` (reported as ``path``); empty when it holds no likely secret.

    Inline ``teamsync: allow`` pragmas count only with ``inline_allow=True`` (an
    ordinary code scan); every team-memory gate leaves it off, so a writer cannot
    allowlist its own secret. A reviewed allowlist is the ``baseline``.
    """
    scanner = Scanner(baseline=baseline, generic=generic, inline_allow=inline_allow)
    scanner.add(text, path, first_line=first_line)
    return scanner.finish()
