"""The scanner's one multi-pattern pass: where each rule's anchors occur in a text.

An *anchor* is a literal every match of a rule must contain: the rule's
keywords when it has any (a keyword in lower case matches ASCII case-
insensitively, one with an upper-case letter matches as written), or else the
literal prefixes of its regex, read from the compiled pattern (``AKIA``,
``ghp_``, ``eyJ`` …). A keyword-less rule whose prefix cannot be read, or whose
regex could match across a line break, has no anchors and runs over the whole
text, so a new rule in :mod:`teamsync.security.rules` is never silently
narrowed.

:func:`find_anchors` returns, per anchor, the offset of its first occurrence on
every line that holds it. Two interchangeable engines compute it:

- **Hyperscan** (the optional ``hyperscan`` wheel, the ``fast`` extra):
  all anchors compiled into one literal database (about 1 ms), one pass over
  the UTF-8 bytes, at over 1 GB/s;
- **pure Python** when the wheel is missing: ``str.find`` per anchor, skipping
  to the next line after each hit, about 30 MB/s per CPU-second on a 65-anchor
  table.

Both give the same offsets (a test runs both over the benchmark corpora), so a
scan's findings do not depend on which is installed. ``TEAMSYNC_SCAN_ENGINE=python``
forces the fallback.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
from collections import defaultdict
from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any

Anchor = tuple[str, bool]
"""(literal, caseless): caseless anchors match ASCII letters in either case."""

MIN_PREFIX = 2
MAX_PREFIXES = 16
_WIDE = re.compile(r"[^\x00-\x7f]")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """``text`` with only ASCII letters lower-cased (offsets never move)."""
    if text.isascii():
        return text.lower()
    lowered = text.lower()
    if len(lowered) == len(text) and "\u212a" not in text:  # KELVIN SIGN lowers to "k"
        return lowered
    return text.translate(_ASCII_LOWER)


def wide_lower(text: str) -> str:
    """``text`` lower-cased for the anchors in other scripts (``Şifre`` finds ``şifre``), offsets
    kept: ``İ`` lowers to two characters (i and a dot), so it becomes ``i`` first, as
    ``re``'s IGNORECASE takes it. (ASCII anchors keep :func:`ascii_lower`, which Hyperscan's
    ASCII-only folding agrees with.)"""
    lowered = text.replace("\u0130", "i").lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


# --- reading a rule's anchors from its compiled regex --------------------------------------


def _sre() -> tuple[Any, Any] | None:
    try:
        return importlib.import_module("re._parser"), importlib.import_module("re._constants")
    except ImportError:  # pragma: no cover - CPython < 3.11 names them sre_parse/sre_constants
        return None


def _prefixes(items: Sequence[Any], c: Any, heads: list[str]) -> tuple[list[str], bool]:
    """Extend ``heads`` by the literal run at the start of ``items``; (heads, reached the end)."""
    for op, arg in items:
        if op is c.LITERAL:
            heads = [h + chr(arg) for h in heads]
        elif op in (c.ASSERT, c.ASSERT_NOT, c.AT):
            continue  # zero-width: the literal run goes on after it
        elif (
            op is c.IN
            and all(o is c.LITERAL for o, _ in arg)
            and len(arg) * len(heads) <= MAX_PREFIXES
        ):
            heads = [h + chr(a) for h in heads for _, a in arg]
        elif op is c.SUBPATTERN and not arg[1] and not arg[2]:  # a group without flag changes
            heads, complete = _prefixes(list(arg[3]), c, heads)
            if not complete:
                return heads, False
        elif op is c.BRANCH:
            grown: list[str] = []
            shortest_ok = True
            for alternative in arg[1]:
                branch, complete = _prefixes(list(alternative), c, heads)
                grown += branch
                shortest_ok &= complete
            if len(grown) > MAX_PREFIXES:
                return heads, False
            if not shortest_ok:
                return grown, False
            heads = grown
        else:
            return heads, False
    return heads, True


def literal_prefixes(pattern: str, flags: int) -> tuple[str, ...] | None:
    """Literals one of which starts every match of ``pattern``; None when unreadable."""
    sre = _sre()
    if sre is None or flags & 2:  # re.IGNORECASE over the whole pattern
        return None
    parser, c = sre
    try:
        parsed = parser.parse(pattern, flags)
    except Exception:  # noqa: BLE001 - an unreadable pattern simply gets no anchors
        return None
    if parsed.state.flags & 2:  # an inline (?i) at the start
        return None
    heads, _ = _prefixes(list(parsed), c, [""])
    if not heads or min(len(h) for h in heads) < MIN_PREFIX:
        return None
    return tuple(sorted(set(heads)))


def literal_heads(pattern: str, flags: int) -> frozenset[str] | None:
    """Literals one of which starts every match of ``pattern``, however many alternatives it
    has (letters as written: a caseless pattern's caller folds them), or None when that
    cannot be read. A necessary condition for a search: no head in the text, no match."""
    sre = _sre()
    if sre is None:  # pragma: no cover - CPython < 3.11
        return None
    parser, c = sre

    def heads(items: Sequence[Any]) -> frozenset[str] | None:
        prefix = ""
        for op, arg in items:
            if op in (c.ASSERT, c.ASSERT_NOT, c.AT):
                continue  # zero-width: the literal run goes on after it
            if op is c.LITERAL:
                prefix += chr(arg)
                continue
            if prefix:
                break
            if op is c.SUBPATTERN:
                return heads(list(arg[3]))
            if op is c.BRANCH:
                found: set[str] = set()
                for alternative in arg[1]:
                    branch = heads(list(alternative))
                    if branch is None:
                        return None
                    found |= branch
                return frozenset(found)
            return None
        return frozenset({prefix}) if prefix else None

    try:
        return heads(list(parser.parse(pattern, flags)))
    except Exception:  # noqa: BLE001 - unreadable: no heads
        return None


_SPECIAL = frozenset(".^$*+?{}[]|()\\")


def guard_after_prefix(pattern: str, flags: int, guard: str) -> str | None:
    """``pattern`` with ``(?<!guard L)`` after its one literal prefix ``L``, or None.

    The same as ``(?<!guard)pattern`` (no match starts right after a ``guard``
    character), but ``re`` still sees the literal prefix and skips to it as a
    substring search instead of trying the assertion at every position. None when
    the pattern has several prefixes or none, or the rewrite cannot be shown exact
    (the result must parse to the original with one assertion added).
    """
    prefixes = literal_prefixes(pattern, flags)
    sre = _sre()
    if prefixes is None or len(prefixes) != 1 or sre is None:
        return None
    literal, parser, c = prefixes[0], *sre
    read, at = "", 0
    while len(read) < len(literal) and at < len(pattern):
        char = pattern[at]
        if char == "\\" and at + 1 < len(pattern) and not pattern[at + 1].isalnum():
            char, at = pattern[at + 1], at + 2
        elif char in _SPECIAL:
            return None
        else:
            at += 1
        read += char
    if read != literal:
        return None
    import re

    escaped = re.escape(literal)
    rewritten = escaped + "(?<!" + guard + escaped + ")" + pattern[at:]
    try:
        whole = list(parser.parse(pattern, flags))
        new = list(parser.parse(rewritten, flags))
    except Exception:  # noqa: BLE001 - unreadable: no rewrite
        return None
    n = len(literal)
    if len(new) != len(whole) + 1 or new[n][0] is not c.ASSERT_NOT:
        return None
    return rewritten if _shape(new[:n] + new[n + 1 :]) == _shape(whole) else None


def _shape(node: Any) -> Any:
    """A parsed pattern as nested tuples, comparable by value (``SubPattern`` is not)."""
    if isinstance(node, (list, tuple)) or hasattr(node, "data"):
        return tuple(_shape(x) for x in getattr(node, "data", node))
    return node


def _set_has_newline(items: Sequence[Any], c: Any) -> bool:
    negate = any(op is c.NEGATE for op, _ in items)
    hit = False
    for op, arg in items:
        if op is c.LITERAL and arg == 10:
            hit = True
        elif op is c.RANGE and arg[0] <= 10 <= arg[1]:
            hit = True
        elif op is c.CATEGORY and arg in (
            c.CATEGORY_SPACE, c.CATEGORY_NOT_DIGIT, c.CATEGORY_NOT_WORD, c.CATEGORY_LINEBREAK,
            c.CATEGORY_UNI_SPACE, c.CATEGORY_UNI_NOT_DIGIT, c.CATEGORY_UNI_NOT_WORD,
            c.CATEGORY_UNI_LINEBREAK,
        ):  # fmt: skip
            hit = True
    return hit != negate


def _crosses_lines(items: Sequence[Any], c: Any, dotall: bool) -> bool:
    for op, arg in items:
        if op is c.LITERAL:
            if arg == 10:
                return True
        elif op is c.NOT_LITERAL:
            if arg != 10:
                return True
        elif op is c.ANY:
            if dotall:
                return True
        elif op is c.IN:
            if _set_has_newline(arg, c):
                return True
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            if _crosses_lines(list(arg[2]), c, dotall):
                return True
        elif op in (c.SUBPATTERN,):
            if _crosses_lines(list(arg[3]), c, dotall or bool(arg[1] & 16)):
                return True
        elif op is c.ATOMIC_GROUP:
            if _crosses_lines(list(arg), c, dotall):
                return True
        elif op is c.BRANCH:
            if any(_crosses_lines(list(alt), c, dotall) for alt in arg[1]):
                return True
        elif op in (c.ASSERT, c.ASSERT_NOT, c.AT, c.GROUPREF):
            continue  # zero-width (a back-reference repeats text already on the line)
        else:
            return True  # unknown: assume the worst
    return False


def crosses_lines(pattern: str, flags: int) -> bool:
    """True when ``pattern`` could match a newline (or when that cannot be told)."""
    sre = _sre()
    if sre is None:
        return True
    parser, c = sre
    try:
        parsed = parser.parse(pattern, flags)
    except Exception:  # noqa: BLE001
        return True
    return _crosses_lines(list(parsed), c, bool(flags & 16))


def rule_anchors(keywords: tuple[str, ...], pattern: str, flags: int) -> tuple[Anchor, ...] | None:
    """A rule's anchors (see the module docstring); None means "scan the whole text"."""
    if keywords:
        return tuple((kw, kw == kw.lower()) for kw in keywords)
    prefixes = literal_prefixes(pattern, flags)
    if prefixes is None or crosses_lines(pattern, flags):
        return None
    return tuple((p, False) for p in prefixes)


# --- the engines ----------------------------------------------------------------------------

Hits = dict[int, list[int]]
Finder = Callable[[str], Hits]
"""text -> for each anchor present (by its number), the offsets of its first occurrence on
each line holding it (of every occurrence, for the anchors a finder was built to report in
full). An absent anchor has no entry: a text holds a few of the table's hundreds."""


def _first_per_line(text: str, offsets: list[int]) -> list[int]:
    kept: list[int] = []
    line_end = -1
    for pos in offsets:
        if pos > line_end:
            kept.append(pos)
            line_end = text.find("\n", pos)
            if line_end < 0:
                break
    return kept


def python_finder(anchors: Sequence[Anchor], every: frozenset[int] = frozenset()) -> Finder:
    """The pure-Python engine: ``str.find`` per anchor, one hit per line (all for ``every``)."""

    needles = [literal.lower() if caseless else literal for literal, caseless in anchors]
    wide = [frozenset(c for c in needle if not c.isascii()) for needle in needles]

    def find(text: str) -> Hits:
        lowered: str | None = None
        wide_lowered: str | None = None
        present: set[str] | None = None  # the non-ASCII letters of the text and its lower case
        out: Hits = {}
        for ident, (_, caseless) in enumerate(anchors):
            if caseless and lowered is None:
                lowered = ascii_lower(text)
            hay = lowered if caseless and lowered is not None else text
            needle = needles[ident]
            if wide[ident]:  # a label in another script: absent unless its letters are there
                if wide_lowered is None:  # (without İ or K, ascii_lower lowered it all)
                    plain = lowered is not None and "\u0130" not in text and "\u212a" not in text
                    wide_lowered = lowered if plain and lowered is not None else wide_lower(text)
                if caseless:
                    hay = wide_lowered
                if present is None:  # (measured: faster than set(text) or the runs' join)
                    present = set(_WIDE.findall(text))
                    if wide_lowered is not text:
                        present.update(_WIDE.findall(wide_lowered))
                if not wide[ident] <= present:
                    continue
            pos = hay.find(needle)
            if pos < 0:
                continue
            hits: list[int] = []
            if ident in every:
                while pos >= 0:
                    hits.append(pos)
                    pos = hay.find(needle, pos + 1)
            while pos >= 0:
                hits.append(pos)
                line_end = text.find("\n", pos)
                pos = hay.find(needle, line_end + 1) if line_end >= 0 else -1
            out[ident] = hits
        return out

    return find


def hyperscan_finder(
    anchors: Sequence[Anchor], every: frozenset[int] = frozenset()
) -> Finder | None:
    """The Hyperscan engine, or None when the wheel is missing or refuses the anchors."""
    try:
        hyperscan: Any = importlib.import_module("hyperscan")
        db = hyperscan.Database()
        db.compile(
            expressions=[literal.encode("utf-8") for literal, _ in anchors],
            ids=list(range(len(anchors))),
            elements=len(anchors),
            flags=[hyperscan.HS_FLAG_CASELESS if caseless else 0 for _, caseless in anchors],
            literal=True,
        )
    except Exception:  # noqa: BLE001 - a missing or broken wheel means the fallback
        return None
    import threading

    lengths = [len(literal.encode("utf-8")) for literal, _ in anchors]
    local = threading.local()  # a scratch space may serve one scan at a time: one per thread

    one_byte = all(literal.isascii() and "?" not in literal for literal, _ in anchors)

    def find(text: str) -> Hits:
        # One byte per character: a text that is not ASCII is scanned in Latin-1 with "?"
        # for what Latin-1 lacks. The anchors here are ASCII and hold no "?", and a byte
        # of 0x80 or more never matches one (Hyperscan folds ASCII letters only), so the
        # matches are those in the UTF-8 bytes, and their offsets are character offsets.
        if text.isascii():
            data = text.encode("ascii")
        elif one_byte:
            data = text.encode("latin-1", "replace")
        else:  # pragma: no cover - no anchor holds "?" today
            data = text.encode("utf-8", "surrogatepass")
        ends: defaultdict[int, list[int]] = defaultdict(list)

        def on_match(ident: int, _from: int, to: int, _flags: int, _ctx: object) -> None:
            ends[ident].append(to)

        scratch = getattr(local, "scratch", None)
        if scratch is None:
            scratch = local.scratch = hyperscan.Scratch(db)
        db.scan(data, match_event_handler=on_match, scratch=scratch)
        to_char = None if len(data) == len(text) else _CharOffsets(text)  # (see above)
        out: Hits = {}
        for ident, found in ends.items():  # (most anchors are absent from most texts)
            starts = sorted(to - lengths[ident] for to in found)
            if to_char is not None:
                starts = to_char.of(starts)
            out[ident] = starts if ident in every else _first_per_line(text, starts)
        return out

    return find


class _CharOffsets:
    """Byte offsets in a text's UTF-8 to character offsets, from one table built per text.

    The table holds, for each run of non-ASCII characters, the byte offset just past
    it and how many bytes more than characters the text holds up to there; a byte
    offset that starts an (ASCII) anchor maps by one bisection.
    """

    def __init__(self, text: str) -> None:
        self.byte_ends: list[int] = []
        self.extra: list[int] = []
        extra = 0
        for run in _WIDE_RUN.finditer(text):
            extra += len(run.group().encode("utf-8", "surrogatepass")) - len(run.group())
            self.byte_ends.append(run.end() + extra)
            self.extra.append(extra)

    def of(self, byte_offsets: list[int]) -> list[int]:
        from bisect import bisect_right

        ends, extra = self.byte_ends, self.extra
        out = []
        for offset in byte_offsets:
            at = bisect_right(ends, offset) - 1
            out.append(offset - (extra[at] if at >= 0 else 0))
        return out


_WIDE_RUN = re.compile(r"[^\x00-\x7f]+")


def make_finder(
    anchors: Sequence[Anchor],
    engine: str | None = None,
    *,
    probe_only: bool = False,
    every: frozenset[int] = frozenset(),
) -> tuple[str, Finder]:
    """(engine name, finder) for ``anchors``; ``engine`` "python" forces the fallback.

    ``probe_only`` names the engine that would be used without loading it; the
    anchors numbered in ``every`` are reported at every occurrence, not once a line.
    """
    choice = engine or os.environ.get("TEAMSYNC_SCAN_ENGINE", "")
    usable = choice != "python"
    if probe_only:
        found = usable and importlib.util.find_spec("hyperscan") is not None
        return ("hyperscan" if found else "python"), python_finder(anchors, every)
    if usable:
        fast = _mixed_finder(anchors, every)
        if fast is not None:
            return "hyperscan", fast
    return "python", python_finder(anchors, every)


def _mixed_finder(anchors: Sequence[Anchor], every: frozenset[int]) -> Finder | None:
    """Hyperscan for the ASCII anchors, ``str.find`` for the others (labels in other scripts).

    Hyperscan's caseless mode folds ASCII only, so a non-ASCII anchor always goes
    through the pure-Python finder, in either engine: the offsets stay identical.
    A text that is all ASCII cannot hold a non-ASCII anchor and skips that part.
    """
    ascii_ids = [i for i, (literal, _) in enumerate(anchors) if literal.isascii()]
    other_ids = [i for i, (literal, _) in enumerate(anchors) if not literal.isascii()]
    fast = hyperscan_finder(
        [anchors[i] for i in ascii_ids],
        frozenset(n for n, i in enumerate(ascii_ids) if i in every),
    )
    if fast is None:
        return None
    if not other_ids:
        return fast
    slow = python_finder(
        [anchors[i] for i in other_ids],
        frozenset(n for n, i in enumerate(other_ids) if i in every),
    )

    def find(text: str) -> Hits:
        out = {ascii_ids[n]: hits for n, hits in fast(text).items()}
        if not text.isascii():
            out.update((other_ids[n], hits) for n, hits in slow(text).items())
        return out

    return find
