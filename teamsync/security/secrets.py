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
the secret text. A secret in the path itself is a finding on line 0, with the
path shown redacted. Only where ``inline_allow`` is on (ordinary code scans,
never a team-memory gate), lines carrying ``teamsync: allow`` or ``pragma:
allowlist secret`` are skipped (``teamsync: allow-next-line`` / ``pragma:
allowlist nextline secret`` skip the following line); a baseline is a set of
fingerprints.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from teamsync.security._prefilter import (
    Anchor,
    Finder,
    Hits,
    guard_after_prefix,
    make_finder,
    python_finder,
    rule_anchors,
)
from teamsync.security.keys import is_memory_path
from teamsync.security.names import name_findings
from teamsync.security.rules import (
    EN_LABEL_WORDS,
    EN_RUN_REACH,
    GENERIC_KEYWORDS,
    RULES,
    Rule,
    caseless_fold,
    clean_generic_value,
    foreign_label_heads,
    generic_key_end,
    generic_label,
    generic_line,
    generic_value_plausible,
    generic_value_random,
    is_entry_point,
)

TYPE_CHECKING = False  # typing's, without importing typing on the hook path

if TYPE_CHECKING:
    from teamsync.security.sources import Chunk

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
    import hashlib  # loaded only once there is a finding (OpenSSL costs a hook ~2 ms)

    data = f"{rule_id}\x00{secret}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:FINGERPRINT_LENGTH]


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


@dataclass(frozen=True)
class _Plan:
    """The anchor table for :data:`RULES` and the generic layer, and the engine that finds them."""

    engine: str
    finder: Finder
    rule_anchors: tuple[tuple[int, ...] | None, ...]
    generic_anchors: tuple[int, ...]
    english_starts: tuple[int, ...]
    """English label words, reported at every occurrence (see :func:`_generic_matches`)."""
    foreign_starts: tuple[int, ...]
    """The ASCII heads of foreign labels, reported at every occurrence."""
    rules_of: dict[int, tuple[int, ...]] = field(default_factory=dict, compare=False)
    """Anchor -> the rules (by index) it is an anchor of: a text's rules from its anchors."""
    everywhere: tuple[int, ...] = ()
    """The rules without anchors: they run over every text."""
    _regexes: list[re.Pattern[str] | None] = field(default_factory=list, compare=False)

    def regex(self, index: int) -> re.Pattern[str]:
        """Rule ``index``'s regex as the engine runs it, compiled the first time a text needs it.

        A hook's small text has the anchors of a rule or two at most: the others
        are never compiled in that process.
        """
        if not self._regexes:
            self._regexes.extend([None] * len(RULES))
        compiled = self._regexes[index]
        if compiled is None:
            compiled = self._regexes[index] = _bounded(RULES[index])
        return compiled

    def compile_all(self) -> None:
        """Compile every rule's regex and the generic patterns now (before forking workers,
        which then share them instead of each compiling its own)."""
        for index in range(len(RULES)):
            self.regex(index)
        generic_line()
        generic_key_end()


def _bounded(rule: Rule) -> re.Pattern[str]:
    """The rule's regex, refusing at once to start glued to a letter or digit.

    A rule with ``left_boundary`` drops such matches anyway; refusing them as a
    start keeps a long run of anchors (``eyJeyJeyJ…``) from being rescanned from
    every anchor in it, which is quadratic in the run.
    """
    if not rule.left_boundary or "s" in rule.regex.groupindex:
        return rule.regex
    pattern, flags = rule.regex.pattern, rule.regex.flags
    guarded = guard_after_prefix(pattern, flags, r"[^\W_]")  # keeps re's prefix search
    return re.compile(guarded or r"(?<![^\W_])(?:" + pattern + ")", flags)


def plan(engine: str | None = None) -> _Plan:
    """The compiled plan for ``engine`` (None: Hyperscan for large texts when installed)."""
    return _plan(engine)


@functools.lru_cache(maxsize=4)
def _plan(engine: str | None) -> _Plan:
    """Compile the anchors once per process (``engine`` "python" forces the fallback)."""
    table: dict[Anchor, int] = {}

    def ids(anchors: tuple[Anchor, ...]) -> tuple[int, ...]:
        return tuple(table.setdefault(anchor, len(table)) for anchor in anchors)

    per_rule = []
    for anchors in rules_anchors():
        per_rule.append(None if anchors is None else ids(anchors))
    from teamsync.security._labels import label_words

    generic = ids(tuple((kw, True) for kw in dict.fromkeys(GENERIC_KEYWORDS + label_words())))
    english = ids(tuple((word, True) for word in EN_LABEL_WORDS))
    foreign = ids(tuple((head, True) for head in foreign_label_heads() if head.isascii()))
    table_list, full = list(table), frozenset(english + foreign)
    if engine is None:
        name, finder = _sized(table_list, full)
    elif engine == "python":
        name, finder = "python", python_finder(table_list, full)
    else:  # "hyperscan" for every text (the tests compare the two)
        name, finder = make_finder(table_list, every=full)
    rules_of: dict[int, list[int]] = {}
    for index, anchor_ids in enumerate(per_rule):
        for ident in anchor_ids or ():
            rules_of.setdefault(ident, []).append(index)
    everywhere = tuple(i for i, anchor_ids in enumerate(per_rule) if anchor_ids is None)
    return _Plan(
        name, finder, tuple(per_rule), generic, english, foreign,
        {ident: tuple(indexes) for ident, indexes in rules_of.items()}, everywhere,
    )  # fmt: skip


def rules_fingerprint() -> str:
    """What the anchor table depends on: every rule's id, keywords, pattern and flags.

    A CRC-32 of them: it tells a stale table from a current one (a maintainer's
    slip, not an attack: whoever can edit the table can edit the rules), and
    ``zlib`` is cheap to load where ``hashlib`` is not.
    """
    import zlib

    crc = 0
    for rule in RULES:
        rule_key = (rule.id, rule.keywords, rule.regex.pattern, rule.regex.flags)
        crc = zlib.crc32(repr(rule_key).encode("utf-8", "surrogatepass"), crc)
    return f"crc32:{len(RULES)}:{crc:08x}"


def rules_anchors(*, use_table: bool = True) -> list[tuple[Anchor, ...] | None]:
    """Each rule's anchors; from the table shipped in :mod:`teamsync.security._anchors`
    while it still describes :data:`RULES`, else read from the regexes (about 20 ms of a
    hook's budget). ``python -m teamsync.security.secrets --write-anchors`` refreshes it."""
    if use_table:
        from teamsync.security import _anchors

        if _anchors.FINGERPRINT == rules_fingerprint():
            return list(_anchors.ANCHORS)
    return [rule_anchors(r.keywords, r.regex.pattern, r.regex.flags) for r in RULES]


def write_anchor_table(path: Path) -> None:
    """Write :mod:`teamsync.security._anchors` for the current rules (a maintainer's step)."""
    lines = [
        '"""Generated by ``python -m teamsync.security.secrets --write-anchors``: do not edit.',
        "",
        "Each rule's anchors, read once from its regex (see :func:`teamsync.security.secrets.",
        "rules_anchors`); used only while ``FINGERPRINT`` matches the rules.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f"FINGERPRINT = {rules_fingerprint()!r}",
        "ANCHORS: tuple[tuple[tuple[str, bool], ...] | None, ...] = (",
        *(f"    {anchors!r}," for anchors in rules_anchors(use_table=False)),
        ")",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


SMALL_WORK = 256 * 1024
"""Until a process has scanned this much text, the pure-Python finder serves it.

A pre-commit hook or a write guard scans a few small files, where Hyperscan's
import would cost more than it saves; a tree scan crosses the threshold within
its first files and switches. Both finders give the same offsets.
"""


def engine_for(chars: int) -> str | None:
    """The engine for a scan of ``chars`` characters known in advance: Hyperscan from the
    first text when the work is large (as :func:`make_finder` chooses: the Python engine
    if it is missing or ``TEAMSYNC_SCAN_ENGINE=python``), else None (sized as it goes)."""
    if chars < SMALL_WORK or os.environ.get("TEAMSYNC_SCAN_ENGINE", "") == "python":
        return None
    return "hyperscan"


def _sized(anchors: list[Anchor], every: frozenset[int]) -> tuple[str, Finder]:
    """A finder that loads Hyperscan once the work is large enough (same offsets either way)."""
    small = python_finder(anchors, every)
    large: list[Finder] = []
    seen = [0]

    def find(text: str) -> Hits:
        seen[0] += len(text)
        if not large and seen[0] < SMALL_WORK:
            return small(text)
        if not large:
            large.append(make_finder(anchors, every=every)[1])
        return large[0](text)

    return make_finder(anchors, probe_only=True, every=every)[0], find


class _Lines:
    """Line bounds for offsets visited in non-decreasing order (amortised linear)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.start = 0
        self.end = -1  # bounds of the current line; end < 0 means none yet

    def bounds(self, pos: int) -> tuple[int, int]:
        if self.end >= 0 and self.start <= pos <= self.end:
            return self.start, self.end
        text = self.text
        floor = self.end + 1 if 0 <= self.end < pos else 0  # search back no further than needed
        newline = text.rfind("\n", floor, pos)
        self.start = newline + 1 if newline >= 0 else floor
        end = text.find("\n", pos)
        self.end = len(text) if end < 0 else end
        return self.start, self.end


class _Text:
    """One text being scanned: anchor offsets, candidate spans, allow markers."""

    def __init__(self, text: str, path: str, first_line: int, compiled: _Plan) -> None:
        self.text = text
        self.path = path
        self.first_line = first_line
        self.positions = compiled.finder(text)
        self._spans: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self._allowed: dict[int, bool] = {}

    def anchor_spans(self, ids: tuple[int, ...], extra_chars: int) -> list[tuple[int, int]]:
        """The lines holding an anchor (to the end of the line ``extra_chars`` later), merged.

        ``ids`` is one of the plan's own tuples (a rule's anchors, the generic layer's),
        which live as long as the plan: the cache is keyed by its identity, not by
        hashing hundreds of numbers at every call.
        """
        key = (id(ids), extra_chars)
        cached = self._spans.get(key)
        if cached is None:
            text, spans, positions = self.text, [], self.positions
            wanted = positions.keys() & _id_set(ids)  # the few the text holds
            if not extra_chars:  # whole lines: each line's bounds found once, in text order
                line_end = -1
                for pos in sorted([p for ident in wanted for p in positions[ident]]):
                    if pos > line_end:
                        line_end = text.find("\n", pos)
                        if line_end < 0:
                            line_end = len(text)
                        spans.append((text.rfind("\n", 0, pos) + 1, line_end))
                self._spans[key] = spans  # (sorted and disjoint already)
                return spans
            for ident in wanted:
                line_end = -1
                for pos in positions[ident]:
                    if pos <= line_end:
                        continue  # the first one on its line counts (some anchors list all)
                    line_end = text.find("\n", pos)
                    if line_end < 0:
                        line_end = len(text)
                    end = text.find("\n", pos + extra_chars) if extra_chars else line_end
                    spans.append((text.rfind("\n", 0, pos) + 1, len(text) if end < 0 else end))
            cached = self._spans[key] = _merge(spans)
        return cached

    def allowed(self, line_start: int, line_end: int) -> bool:
        """Whether the line at ``line_start`` carries (or follows) an allow marker; cached."""
        cached = self._allowed.get(line_start)
        if cached is None:
            text = self.text
            line = text[line_start:line_end].lower()
            cached = any(marker in line for marker in ALLOW_MARKERS)
            if not cached and line_start > 0:
                previous = text[text.rfind("\n", 0, line_start - 1) + 1 : line_start - 1].lower()
                cached = any(marker in previous for marker in NEXT_LINE_MARKERS)
            self._allowed[line_start] = cached
        return cached

    def line_numbers(self, offsets: list[int]) -> dict[int, int]:
        numbers: dict[int, int] = {}
        line, last = self.first_line, 0
        for offset in sorted(set(offsets)):
            line += self.text.count("\n", last, offset)
            last = offset
            numbers[offset] = line
        return numbers


_ID_SETS: dict[int, tuple[tuple[int, ...], frozenset[int]]] = {}


def _id_set(ids: tuple[int, ...]) -> frozenset[int]:
    """``frozenset(ids)``, built once per tuple (kept with it, so its identity stays its own)."""
    held = _ID_SETS.get(id(ids))
    if held is None or held[0] is not ids:
        held = _ID_SETS[id(ids)] = (ids, frozenset(ids))
    return held[1]


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


class _Taken:
    """Disjoint secret spans already reported, for O(log n) overlap checks."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self._new: list[tuple[int, int]] = []

    def overlaps(self, start: int, end: int) -> bool:
        from bisect import bisect_right  # only once a rule matched

        at = bisect_right(self.starts, start) - 1
        if at >= 0 and self.ends[at] > start:
            return True
        return at + 1 < len(self.starts) and self.starts[at + 1] < end

    def add(self, start: int, end: int) -> None:
        self._new.append((start, end))

    def commit(self) -> None:
        """Fold the spans of the rule just run into the table (rules never overlap themselves)."""
        if self._new:
            merged = sorted([*zip(self.starts, self.ends, strict=True), *self._new])
            self.starts = [s for s, _ in merged]
            self.ends = [e for _, e in merged]
            self._new = []


def _rule_hits(
    doc: _Text,
    rule: Rule,
    regex: re.Pattern[str],
    spans: list[tuple[int, int]],
    taken: _Taken,
    inline_allow: bool = False,
) -> Iterator[_Hit]:
    text = doc.text
    use_group = "s" in regex.groupindex
    lines = _Lines(text) if inline_allow else None
    requires, left_boundary, validator = rule.requires, rule.left_boundary, rule.validator
    for start, end in spans:
        if requires and any(text.find(literal, start, end) < 0 for literal in requires):
            continue
        for match in regex.finditer(text, start, end):
            group = "s" if use_group and match.group("s") else 0
            s_start, s_end = match.span(group)
            if left_boundary and s_start > 0 and text[s_start - 1].isalnum():
                continue
            secret = text[s_start:s_end]
            if validator is not None and not validator(secret):
                continue
            if taken.overlaps(s_start, s_end):
                continue
            taken.add(s_start, s_end)
            if lines is not None and doc.allowed(*lines.bounds(s_start)):
                continue
            yield _Hit(s_start, rule.id, fingerprint(rule.id, secret))
    taken.commit()


_RUN_BACK = re.compile(rf"[\w.\-]{{0,{EN_RUN_REACH + 1}}}")


def _run_heads(text: str, backwards: str, start: int, words: list[int]) -> set[int]:
    r"""Where an English key holding a label word at each of ``words`` can start.

    That is the head of the word's ``[\w.\-]`` run (no further back than
    :data:`EN_RUN_REACH`), and, after a single space, the head of the run before
    it (``private key``, ``access token``: the label's first part ends that run).
    ``backwards`` is ``text`` reversed, so a run's length is one ``match``.
    """
    heads: set[int] = set()
    size = len(text)
    for at in words:
        for end in (at, at - 1) if at - 1 > start and text[at - 1] == " " else (at,):
            back = _RUN_BACK.match(backwards, size - end)
            reach = back.end() - back.start() if back is not None else 0
            if reach <= EN_RUN_REACH and (end == at or reach):
                heads.add(max(end - reach, start))
    return heads


def _matches_at(
    text: str, end: int, english: set[int], foreign: set[int], ascii_span: bool = False
) -> Iterator[re.Match[str]]:
    """The generic pattern tried at each possible start, as ``finditer`` would meet them.

    A match's span is skipped like ``finditer`` skips it. On an ASCII span a start
    only an English key can take is first checked cheaply by
    :func:`~teamsync.security.rules.generic_key_end` (most label words in prose are
    followed by neither a separator nor a verb).
    """
    pattern, key_end = generic_line(), generic_key_end()
    done = -1
    for at in sorted(english | foreign):
        if at < done:
            continue
        if (
            ascii_span
            and at not in foreign
            and not text.startswith("--", at)
            and not key_end.match(text, at, end)
        ):
            continue
        match = pattern.match(text, at, end)
        if match is not None:
            done = match.end()
            yield match


def _generic_matches(text: str, start: int, end: int) -> Iterator[re.Match[str]]:
    r"""``generic_line().finditer(text, start, end)``, trying the pattern only where it can start.

    A match starts at the head of a ``[\w.\-]`` run holding an English label word
    (:data:`EN_LABEL_WORDS`) or on a foreign label's first word
    (:func:`foreign_label_heads`). This is the path for a span of any script: the
    words are found with ``str.find`` in the caseless fold that agrees with ``re``'s
    IGNORECASE. (An ASCII span takes them from the anchor pass instead.)
    Matches never cross a line.
    """
    segment = text[start:end]
    folded = caseless_fold(segment)
    words: list[int] = []
    for word in EN_LABEL_WORDS:
        at = folded.find(word)
        while at >= 0:
            words.append(at)
            at = folded.find(word, at + 1)
    heads = _run_heads(segment, segment[::-1], 0, words) if words else set()
    english = {start + at for at in heads}  # (a span starts a line: no run crosses its start)
    foreign: set[int] = set()
    for word in foreign_label_heads():
        at = folded.find(word)
        while at >= 0:
            foreign.add(start + at)
            at = folded.find(word, at + 1)
    return _matches_at(text, end, english, foreign)


def _generic_line_matches(
    doc: _Text, ids: tuple[int, ...], compiled: _Plan
) -> Iterator[re.Match[str]]:
    """``generic_line().finditer`` over each line holding a generic anchor, at a fraction of
    the cost: the pattern is tried only where a label can start (see :func:`_matches_at`)."""
    import bisect  # only once a generic anchor was found: off the clean hook path

    text = doc.text
    ascii_text = text.isascii()
    positions = doc.positions
    english = sorted(pos for i in compiled.english_starts for pos in positions.get(i, ()))
    foreign = sorted(pos for i in compiled.foreign_starts for pos in positions.get(i, ()))
    backwards = ""
    for start, end in doc.anchor_spans(ids, 0):
        if ascii_text or text[start:end].isascii():
            # an ASCII span: the anchor pass found every label word on it, and only the
            # foreign heads that are ASCII can be there
            words = english[bisect.bisect_left(english, start) : bisect.bisect_left(english, end)]
            lo, hi = bisect.bisect_left(foreign, start), bisect.bisect_left(foreign, end)
            if not words and lo == hi:
                continue  # no label can start here (the line's anchors are the label model's)
            if words and not backwards:
                backwards = text[::-1]
            heads = _run_heads(text, backwards, start, words) if words else set()
            yield from _matches_at(text, end, heads, set(foreign[lo:hi]), ascii_span=True)
        else:
            yield from _generic_matches(text, start, end)


def _generic_candidates(
    doc: _Text,
    taken_lines: set[int],
    ids: tuple[int, ...],
    compiled: _Plan,
    inline_allow: bool = False,
) -> list[_Candidate]:
    from teamsync.security import _labels  # only once a generic anchor was found

    found: dict[int, tuple[str, str]] = {}
    tried: set[int] = set()
    text = doc.text
    lines = _Lines(text)
    prose = _labels.reads(doc.path)
    for match in _generic_line_matches(doc, ids, compiled):
        line_start, line_end = lines.bounds(match.start())
        if line_start in found or line_start in taken_lines:
            continue
        tried.add(line_start)
        quoted = match.group("qv") is not None
        value = clean_generic_value(match.group("qv") or match.group("uv") or "", quoted)
        if is_entry_point(value):
            continue
        label, strong = generic_label(match.group("key"))
        if not generic_value_plausible(value) and not (
            strong and prose and _labels.prose_password(value)
        ):
            continue  # (in prose, PGPASSWORD=~x~y: a password as people make one, not a path)
        if _labels._digit_code(value):
            continue  # a door code or PIN: the label model reads it (detect-secrets drops digits)
        if _labels.digest_on_line(value, text[line_start:line_end]):
            continue  # Checksum SHA-1 of the password file: <hex> (a digest, whatever its label)
        if not label or _labels._digest_label(text, match.start("key"), match.end("key")):
            continue  # a digest's label (cache_key, etag, checksum, key_sha256, cache key)
        if not strong and not generic_value_random(value):
            continue
        if _labels.echoes_label(match.group("key"), value):
            continue
        example = _labels.example_line(text[line_start:line_end])
        if not _labels.credential_value(value, "password" if strong else "token", example=example):
            continue
        if inline_allow and doc.allowed(line_start, line_end):
            continue
        found[line_start] = (label, value)
    read: dict[str, tuple[str, str] | None] = {}  # a line repeated in the text is read once
    for line_start, line_end in doc.anchor_spans(ids, 0) if prose else ():  # the label model
        if line_start in found or line_start in taken_lines:
            continue
        line = text[line_start:line_end]
        if line in read:
            first = read[line]
        else:  # (the label model reads a line alone: the same line, the same reading)
            first = read[line] = next(iter(_labels.candidates(line)), None)
        if first is None or inline_allow and doc.allowed(line_start, line_end):
            continue
        found[line_start] = (_labels.DETECTOR_KEYS[first[0]], first[1])
    for line_start, kind, value in _labels.table_rows(text) if prose and "|" in text else ():
        if line_start in found or line_start in taken_lines:
            continue
        line_end = text.find("\n", line_start)
        if inline_allow and doc.allowed(line_start, len(text) if line_end < 0 else line_end):
            continue
        found[line_start] = (_labels.DETECTOR_KEYS[kind], value)
    numbers = doc.line_numbers(list(found))
    return [_Candidate(doc.path, numbers[at], key, value) for at, (key, value) in found.items()]


class Scanner:
    """Scan many texts, then run the generic detectors once over all candidate lines.

    Time is linear in the text and in the number of findings: anchors come from
    one multi-pattern pass (:mod:`teamsync.security._prefilter`), rules run only
    on the lines holding their anchors, overlap checks bisect a sorted table,
    and line bounds are found by cursors that only move forward.
    """

    def __init__(
        self,
        *,
        baseline: frozenset[str] = frozenset(),
        generic: bool = True,
        inline_allow: bool = False,
        engine: str | None = None,
    ) -> None:
        self.baseline = baseline
        self.generic = generic
        self.inline_allow = inline_allow
        """Honour ``teamsync: allow`` pragmas; off for every team-memory gate (see docs/scanning.md)."""
        self.plan = plan(engine)
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
        keep_until: int | None = None,
        inline_allow: bool | None = None,
        commit: str | None = None,
    ) -> None:
        """Scan ``text`` with the specific rules and queue its generic candidate lines.

        ``keep_until`` (a window of a large file) drops what starts at or after that
        offset: the next window, which overlaps this one, reports it whole.
        ``inline_allow`` overrides the scanner's setting for this text (a memory
        file inside an ordinary code scan never honours pragmas); ``commit`` is
        the commit that added these lines (``--git-range``).
        """
        allow = self.inline_allow if inline_allow is None else inline_allow
        in_name = name_findings(path)  # a secret in the name: shown redacted, by rule
        if in_name:  # (each window or hunk of one file repeats it; finish() keeps one)
            path = in_name[0].path
            self._findings.extend(replace(f, commit=commit) for f in in_name)
        doc = _Text(text, path, first_line, self.plan)
        present = doc.positions.keys()  # the anchors the text holds (each with a hit)
        taken = _Taken()
        hits: list[_Hit] = []
        rules_of = self.plan.rules_of  # the rules whose anchors the text holds, in rule order
        active = set(self.plan.everywhere).union(*(rules_of.get(a, ()) for a in present))
        for index in sorted(active):
            rule, ids = RULES[index], self.plan.rule_anchors[index]
            if ids is None:
                spans = [(0, len(text))]
            else:
                spans = doc.anchor_spans(ids, rule.context_chars)
            hits.extend(_rule_hits(doc, rule, self.plan.regex(index), spans, taken, allow))
        if keep_until is not None:
            hits = [hit for hit in hits if hit.offset < keep_until]
        numbers = doc.line_numbers([hit.offset for hit in hits])
        self._findings.extend(
            Finding(path, numbers[h.offset], h.rule, h.fingerprint, commit) for h in hits
        )
        table = text.startswith("|") or "\n|" in text  # a row the label model reads anyway
        if self.generic and (table or not present.isdisjoint(self.plan.generic_anchors)):
            lines = _Lines(text)
            taken_lines = {lines.bounds(start)[0] for start in taken.starts}
            candidates = _generic_candidates(
                doc, taken_lines, self.plan.generic_anchors, self.plan, allow
            )
            if keep_until is not None:
                limit = doc.line_numbers([keep_until])[keep_until]
                candidates = [c for c in candidates if c.line < limit]
            self._candidates.extend(replace(c, commit=commit) if commit else c for c in candidates)

    def add_chunk(self, chunk: Chunk) -> None:
        """Scan one :class:`~teamsync.security.sources.Chunk` (a file, a window, a diff hunk).

        Inline pragmas count only when the scanner honours them *and* the chunk is
        not in a memory path (``memory/team/…``): there the writer could add them.
        """
        self.add(
            chunk.text,
            chunk.path,
            first_line=chunk.first_line,
            keep_until=chunk.keep_until,
            inline_allow=self.inline_allow and not is_memory_path(chunk.path),
            commit=chunk.commit,
        )

    def add_result(self, findings: list[Finding], candidates: list[_Candidate]) -> None:
        """Merge what another process's scanner found (see :mod:`teamsync.security.pool`)."""
        self._findings.extend(findings)
        self._candidates.extend(candidates)

    def take(self) -> tuple[list[Finding], list[_Candidate]]:
        """Hand over the findings and candidates so far, without running the generic layer."""
        out = (self._findings, self._candidates)
        self._findings, self._candidates = [], []
        return out

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


if __name__ == "__main__":  # pragma: no cover - a maintainer's command
    import sys

    if sys.argv[1:] != ["--write-anchors"]:
        sys.exit("usage: python -m teamsync.security.secrets --write-anchors")
    write_anchor_table(Path(__file__).with_name("_anchors.py"))
