"""Memory files: YAML frontmatter (``name``, ``description``, ``type``) plus a Markdown body.

::

    ---
    name: Deploys freeze on Fridays
    description: No production deploys after Friday noon; ops is thin at weekends
    type: project
    ---
    Body text, kept byte for byte.

Parsing is strict about safety and lenient about content: hostile YAML (anchors
and aliases, custom tags, deep nesting, huge frontmatter) raises
:class:`~teamsync.errors.MemoryFormatError` and never hangs; a missing or unknown
``type`` or a bad ``description`` parses fine and is reported by
:func:`memory_problems`. ``render_memory(parse_memory(x)) == x`` for every file
that parses, because the original frontmatter text is kept and reused while it
still says the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from teamsync.errors import MemoryFormatError
from teamsync.limits import INDEX_NAME as INDEX_NAME
from teamsync.limits import MAX_MEMORY_BYTES as MAX_MEMORY_BYTES

MEMORY_TYPES = ("user", "feedback", "project", "reference")
MAX_FRONTMATTER_CHARS = 32_000
"""Frontmatter beyond this is refused before YAML sees it (it is three short fields)."""
MAX_DESCRIPTION_CHARS = 250
MAX_NESTING = 64

_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPEN = re.compile(r"\A(\ufeff?)---[ \t]*(\r?\n)")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_SIMPLE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*))?")
_UNSAFE_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"
# Anything outside plain printable text (or a lone CR) goes to the real YAML parser.
_NOT_PLAIN = re.compile(
    r"[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
    r"|\r(?!\n)"
)


@dataclass(frozen=True)
class Memory:
    """One parsed memory file. ``frontmatter`` holds every key, in file order."""

    name: str | None
    description: str | None
    type: str | None
    body: str
    frontmatter: Mapping[str, Any] = field(default_factory=dict)
    head: str | None = field(default=None, compare=False, repr=False)
    """The original frontmatter block (delimiters included); reused by render while it still fits."""


def decode_memory(data: bytes, path: str, *, limit: int = MAX_MEMORY_BYTES) -> str:
    """Decode a memory file's bytes, refusing huge, binary or non-UTF-8 content."""
    if len(data) > limit:
        raise MemoryFormatError(path, too_big(len(data), limit))
    if b"\x00" in data:
        raise MemoryFormatError(path, "binary file (contains NUL bytes); memories are Markdown")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemoryFormatError(
            path, f"not valid UTF-8 (byte {exc.start}); re-save it as UTF-8"
        ) from exc


def too_big(size: int, limit: int = MAX_MEMORY_BYTES) -> str:
    return f"file is {size:,} bytes, over the {limit:,}-byte limit; split it"


def split_frontmatter(text: str, path: str = "<memory>") -> tuple[str | None, str, str]:
    """Return ``(head, yaml_text, body)``; ``head`` is None when there is no frontmatter."""
    opening = _OPEN.match(text)
    if opening is None:
        return None, "", text
    close = _CLOSE.search(text, opening.end())
    if close is None:
        raise MemoryFormatError(path, "frontmatter opens with --- but never closes; add a --- line")
    return text[: close.end()], text[opening.end() : close.start()], text[close.end() :]


def _resolves_to(scalar: str) -> str:
    return str(_RESOLVER.resolve(yaml.ScalarNode, scalar, (True, False)))  # type: ignore[no-untyped-call]


def _fast_load(source: str) -> dict[str, Any] | None:
    """Plain ``key: value`` lines whose values resolve to strings, without YAML; else None."""
    if _NOT_PLAIN.search(source):
        return None
    result: dict[str, Any] = {}
    for line in source.split("\n"):
        line = line[:-1] if line.endswith("\r") else line
        if not line.strip(" "):
            continue
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None or _resolves_to(match.group(1)) != _STR_TAG:
            return None
        value = (match.group(2) or "").rstrip(" \t")
        if not value:
            return None
        if value[0] in _UNSAFE_START or ": " in value or " #" in value or value.endswith(":"):
            return None
        if "\t" in value or "\\" in value:
            return None
        if _resolves_to(value) != _STR_TAG:
            return None
        result[match.group(1)] = value
    return result


def _check_events(source: str, path: str) -> None:
    """Refuse anchors, aliases and deep nesting before anything is constructed."""
    depth = 0
    for event in yaml.parse(source, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise MemoryFormatError(
                path, "frontmatter uses YAML anchors or aliases; write values out"
            )
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_NESTING:
                raise MemoryFormatError(path, "frontmatter is nested too deeply")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def load_frontmatter(source: str, path: str = "<memory>") -> dict[str, Any]:
    """Parse frontmatter YAML safely into a mapping (empty when blank)."""
    if len(source) > MAX_FRONTMATTER_CHARS:
        raise MemoryFormatError(
            path,
            f"frontmatter is over {MAX_FRONTMATTER_CHARS:,} characters; keep it to three fields",
        )
    fast = _fast_load(source)
    if fast is not None:
        return fast
    try:
        _check_events(source, path)
        data = yaml.load(source, Loader=_LOADER)  # noqa: S506 - a SafeLoader (C or Python)
    except yaml.YAMLError as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise MemoryFormatError(path, f"frontmatter is not valid YAML: {detail}") from exc
    except (ValueError, TypeError, RecursionError) as exc:
        raise MemoryFormatError(path, f"frontmatter cannot be read: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise MemoryFormatError(path, "frontmatter must be a mapping of key: value lines")
    return data


def _text(value: Any) -> str | None:
    """A frontmatter value as the text a field holds (None when absent or not scalar)."""
    if value is None or isinstance(value, (dict, list)):
        return None
    return value if isinstance(value, str) else str(value)


def parse_memory(text: str, path: str = "<memory>") -> Memory:
    """Parse a memory file's text. Raises MemoryFormatError only when it cannot be read at all."""
    head, source, body = split_frontmatter(text, path)
    frontmatter = load_frontmatter(source, path) if head is not None else {}
    return Memory(
        name=_text(frontmatter.get("name")),
        description=_text(frontmatter.get("description")),
        type=_text(frontmatter.get("type")),
        body=body,
        frontmatter=frontmatter,
        head=head,
    )


def _desired(m: Memory) -> dict[str, Any]:
    data = dict(m.frontmatter)
    for key in ("name", "description", "type"):
        value = getattr(m, key)
        if value is not None and _text(data.get(key)) != value:
            data[key] = value
    return data


def _dump(data: dict[str, Any]) -> str:
    """YAML for ``data``; escapes non-ASCII when PyYAML would not read its own output back."""
    dumped = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=2**16)
    try:
        if load_frontmatter(dumped) == data:
            return dumped
    except MemoryFormatError:
        pass
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=False, width=2**16)


def render_memory(m: Memory) -> str:
    """Render a memory; the original frontmatter text is reused while it still matches."""
    data = _desired(m)
    if m.head is not None:
        try:
            if load_frontmatter(split_frontmatter(m.head)[1]) == data:
                return m.head + m.body
        except MemoryFormatError:
            pass
    if not data:
        return "---\n---\n" + m.body if _OPEN.match(m.body) else m.body
    return f"---\n{_dump(data)}---\n{m.body}"


def memory_issues(m: Memory) -> list[tuple[str, str]]:
    """``(kind, message)`` for each problem: kinds ``frontmatter``, ``name``, ``type``, ``description``."""
    if not m.frontmatter:
        return [("frontmatter", "no frontmatter; add name, description and type between --- lines")]
    issues: list[tuple[str, str]] = []
    if not (m.name or "").strip():
        issues.append(("name", "missing name"))
    allowed = ", ".join(MEMORY_TYPES)
    if m.type is None:
        issues.append(("type", f"missing type (one of {allowed})"))
    elif m.type not in MEMORY_TYPES:
        # Echo a short, type-like value only: a frontmatter field may hold anything, secrets too.
        shown = repr(m.type) if len(m.type) <= 20 and m.type.isidentifier() else "value"
        issues.append(("type", f"unknown type {shown} (one of {allowed})"))
    issues.extend(("description", msg) for msg in _description_problems(m.description))
    return issues


def _description_problems(description: str | None) -> list[str]:
    if description is None or not description.strip():
        return ["missing description; recall picks memories by it"]
    if "\n" in description.strip() or "\r" in description.strip():
        return ["description spans several lines; recall reads one specific line"]
    if len(description) > MAX_DESCRIPTION_CHARS:
        return [
            f"description is {len(description)} characters; keep it under {MAX_DESCRIPTION_CHARS}"
        ]
    return []


def memory_problems(m: Memory) -> list[str]:
    """Human messages for what is wrong with a parsed memory (empty when it is fine)."""
    return [message for _, message in memory_issues(m)]
