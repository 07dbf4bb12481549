"""Text handling for lexical recall: fields, identifier splitting, query terms, MATCH syntax.

Pure functions, no I/O: the index (:mod:`teamsync.recall.lexical`) applies
:func:`augment` to every column it stores and :func:`match_expression` to every
query.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_HAS_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FIELD = re.compile(r"^(name|description|type)[ \t]*:[ \t]*(.*?)[ \t]*$", re.MULTILINE)

STOP_WORDS = frozenset(
    """a about after again all also am an and any are as at be been before being both but by
    can could did do does doing done for from get got had has have having he her here how i if
    in into is it its just let me more most my no nor not of off on once only or other our out
    over own same she should so some such than that the their them then there these they this
    those through to too under until up very via was we were what when where which while who
    whom why will with would you your""".split()
)


@dataclass(frozen=True)
class Fields:
    """What the index stores for one memory."""

    name: str
    description: str
    body: str


def split_identifiers(text: str) -> str:
    """Return the extra tokens for camelCase/PascalCase words in ``text`` (space separated)."""
    extra: list[str] = []
    for word in _WORD.findall(text):
        if _HAS_CAMEL.search(word):
            extra.extend(part.lower() for part in _CAMEL_PART.findall(word))
    return " ".join(extra)


def augment(text: str) -> str:
    """``text`` plus its split camelCase words (what the index stores)."""
    extra = split_identifiers(text)
    return f"{text}\n{extra}" if extra else text


def path_words(key: str) -> str:
    """The searchable words of a memory key: ``team/deploy-freeze.md`` -> ``deploy-freeze``."""
    stem = key[:-3] if key.endswith(".md") else key
    parts = stem.split("/")
    if parts and parts[0] == "team":
        parts = parts[1:]
    return " ".join(parts)


def extract_fields(text: str) -> Fields:
    """Split a memory into name/description/body without a YAML parser (fast and hang-proof).

    Only flat ``key: value`` lines are read; anything else in the frontmatter
    stays searchable as body text.
    """
    match = _FRONTMATTER.match(text)
    if match is None:
        return Fields("", "", text)
    found = {k: v.strip("'\"") for k, v in _FIELD.findall(match.group(1))}
    rest = _FIELD.sub("", match.group(1))
    body = text[match.end() :]
    return Fields(found.get("name", ""), found.get("description", ""), f"{rest}\n{body}")


def query_terms(query: str) -> list[str]:
    """Lower-cased search terms: words, camelCase parts, minus stop words (unless nothing is left)."""
    words = [w.lower() for w in _WORD.findall(query)]
    words += split_identifiers(query).split()
    kept = [w for w in words if w not in STOP_WORDS] or words
    return list(dict.fromkeys(kept))


_SUFFIXES = ("ments", "ment", "ings", "ing", "ions", "ion", "ers", "er", "ed", "es", "s", "y")


def _root(term: str) -> str:
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= 4:
            return term[: -len(suffix)]
    return term


def match_expression(terms: Sequence[str]) -> str:
    """The FTS5 MATCH expression: an OR of quoted terms, prefix-matched from 3 characters.

    Porter stems inflections inconsistently (``deploy`` -> ``deploi`` but
    ``deployment`` -> ``deploy``), so a crude root prefix is added as well.
    """
    parts: list[str] = []
    for raw in terms:
        term = raw.replace('"', "")
        if not term:
            continue
        quoted = '"' + term + '"'
        parts.append(quoted + "*" if len(term) >= 3 else quoted)
        root = _root(term)
        if root != term:
            parts.append('"' + root + '"*')
    return " OR ".join(dict.fromkeys(parts))
