"""Text handling for lexical recall: fields, identifier splitting, query terms, MATCH syntax.

Pure functions, no I/O: the index (:mod:`teamsync.recall.lexical`) applies
:func:`augment` to every column it stores and :func:`match_expression` to every
query.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from teamsync.recall import langs

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_HAS_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FIELD = re.compile(r"^(name|description|type)[ \t]*:[ \t]*(.*?)[ \t]*$", re.MULTILINE)

STOP_WORDS = langs.STOP["en"]


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


def _scalar(value: str) -> str:
    """A flat YAML scalar's text: a double-quoted one is decoded (``"\\u672c"`` is ``本``; JSON
    strings are YAML double-quoted scalars), a single-quoted one unquoted."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
        except ValueError:
            return value[1:-1]
        return decoded if isinstance(decoded, str) else value[1:-1]
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def extract_fields(text: str) -> Fields:
    """Split a memory into name/description/body without a YAML parser (fast and hang-proof).

    Only flat ``key: value`` lines are read; anything else in the frontmatter
    stays searchable as body text.
    """
    match = _FRONTMATTER.match(text)
    if match is None:
        return Fields("", "", text)
    found = {k: _scalar(v) for k, v in _FIELD.findall(match.group(1))}
    rest = _FIELD.sub("", match.group(1))
    body = text[match.end() :]
    return Fields(found.get("name", ""), found.get("description", ""), f"{rest}\n{body}")


def query_terms(query: str) -> list[str]:
    """Lower-cased search terms (the text of :func:`query_units`)."""
    return [unit.text for unit in query_units(query)]


@dataclass(frozen=True)
class Unit:
    """One query term: the text shown in ``--explain`` and its FTS5 MATCH expression."""

    text: str
    expression: str


def _latin_unit(word: str, lang: str) -> Unit:
    parts = [match_expression([word])]
    if lang in langs.SNOWBALL and word.isalpha():
        stemmed = langs.stem([word], lang)[0]
        parts.append(f'norm:"{stemmed}"' + ("*" if len(stemmed) >= 4 else ""))
    return Unit(word, " OR ".join(parts))


def query_units(query: str) -> list[Unit]:
    """The query's search units, by script and by the query's language (:func:`langs.detect`).

    Latin words: prefix-matched as before, plus their Snowball stem on the ``norm`` column for
    a language Snowball covers (not English, which porter handles); the language's stop words
    and one-letter words are dropped, acronyms in capitals kept. Hangul words: the word and the
    word without its particle, both prefix-matched (``토큰을`` finds ``토큰``). Han and kana:
    bigrams and katakana words on the ``norm`` column (:func:`langs.cjk_units`). When every
    word is a stop word, all are kept.
    """
    lang = langs.detect(query)
    units: list[Unit] = []
    loose: list[Unit] = []
    for original in _WORD.findall(query):
        for piece in langs.split_scripts(original):
            if langs.has_cjk(piece):
                units += [Unit(u, f'norm:"{u}"') for u in langs.cjk_units(piece)]
                continue
            word = langs.fold(piece)
            if langs.is_hangul(word):
                bare = langs.strip_particle(word)
                unit = Unit(bare, " OR ".join(dict.fromkeys([f'"{word}"*', f'"{bare}"*'])))
                stop = langs.is_stop(word, piece, lang)
            else:
                unit = _latin_unit(word, lang)
                stop = langs.is_stop(word, piece, lang)
            (loose if stop else units).append(unit)
    parts = split_identifiers(query).split()
    units += [_latin_unit(part, "en") for part in parts if not langs.is_stop(part, part, "en")]
    kept = units or loose
    return list({unit.expression: unit for unit in kept}.values())


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
