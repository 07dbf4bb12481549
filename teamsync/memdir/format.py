"""Memory files: YAML frontmatter (``name``, ``description``, ``type``) plus a Markdown body.

Two layouts occur, often in one directory (see ``docs/memdir.md``)::

    ---                                     ---
    name: deploy-freeze                     name: Deploys freeze on Fridays
    description: "No deploys after noon"    description: No deploys after noon
    metadata:                               type: project
      node_type: memory                     ---
      type: project                         Body text, kept byte for byte.
      originSessionId: <uuid>
      modified: 2026-08-01T09:00:00.000Z
    ---

``type`` is read at the top level, else under ``metadata``; ``metadata.modified``
(the content's own change time) and ``originSessionId`` likewise. A file without
frontmatter is a *legacy* topic file: Claude Code still loads it.

YAML is read the way Claude Code reads it (:func:`load_frontmatter`): values
holding `` #`` are quoted first; if strict parsing then fails, top-level values
that contain ``: `` or start with a YAML indicator are quoted and parsing is
retried. Parsing is strict about safety: hostile YAML (anchors and aliases,
explicit tags, deep nesting, huge frontmatter) raises
:class:`~teamsync.errors.MemoryFormatError` on the retry as on the first try,
and never hangs. A missing or unknown ``type`` or a bad ``description`` parses
fine and is reported by :func:`memory_issues`. ``render_memory(parse_memory(x))
== x`` for every file that parses, in either layout, because the original
frontmatter text is kept and reused while it still says the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
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


LAYOUT_METADATA = "metadata"
"""``type`` (and ``modified``, ``originSessionId``) under a ``metadata:`` block: what Claude Code writes today."""
LAYOUT_TOP = "top-level"
"""``type`` at the top level: the older layout."""
LAYOUT_LEGACY = "legacy"
"""No frontmatter at all: a legacy topic file."""


@dataclass(frozen=True)
class Memory:
    """One parsed memory file. ``frontmatter`` holds every key, in file order.

    ``name`` falls back to the file stem when the frontmatter's is empty or
    absent; ``type`` is the top-level one, else ``metadata.type``.
    """

    name: str | None
    description: str | None
    type: str | None
    body: str
    frontmatter: Mapping[str, Any] = field(default_factory=dict)
    head: str | None = field(default=None, compare=False, repr=False)
    """The original frontmatter block (delimiters included); reused by render while it still fits."""
    modified: datetime | None = None
    """``metadata.modified`` (or a top-level ``modified``) as an aware UTC datetime."""
    origin_session_id: str | None = None
    layout: str = LAYOUT_TOP
    stem: str | None = field(default=None, compare=False, repr=False)
    """The file stem the name falls back to."""


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


_TIMESTAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?Z")


def _fast_value(value: str) -> Any:
    """A value as YAML reads it when that is certain without YAML; else None.

    Plain strings, simply quoted strings, and the ISO UTC times Claude Code
    writes for ``modified``.
    """
    if "\t" in value or "\\" in value:
        return None
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        return None if value[0] in inner else inner
    stamp = _TIMESTAMP.fullmatch(value)
    if stamp is not None:
        year, month, day, hour, minute, second = (int(g) for g in stamp.groups()[:6])
        micro = int((stamp.group(7) or "0").ljust(6, "0"))
        try:
            return datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)
        except ValueError:
            return None
    if value[0] in _UNSAFE_START or ": " in value or " #" in value or value.endswith(":"):
        return None
    return value if _resolves_to(value) == _STR_TAG else None


def _fast_load(source: str) -> dict[str, Any] | None:
    """Plain ``key: value`` lines (and one ``metadata:``-style block of them), without YAML.

    Returns None whenever the result is not certain, and YAML decides.
    """
    if _NOT_PLAIN.search(source):
        return None
    result: dict[str, Any] = {}
    block: dict[str, Any] | None = None
    indent = ""
    for line in source.split("\n"):
        line = line[:-1] if line.endswith("\r") else line
        if not line.strip(" "):
            continue
        bare = line.lstrip(" ")
        if bare is not line and line[0] == " ":
            if block is None or (indent and line[: len(line) - len(bare)] != indent):
                return None
            indent = line[: len(line) - len(bare)]
        elif block is not None:
            if not block:
                return None  # ``key:`` with nothing below is null, not a mapping
            block = None
        match = _SIMPLE_LINE.fullmatch(bare)
        if match is None or _resolves_to(match.group(1)) != _STR_TAG:
            return None
        value = (match.group(2) or "").rstrip(" \t")
        target = result if block is None else block
        if not value:
            if block is not None:
                return None
            block, indent = {}, ""
            result[match.group(1)] = block
            continue
        parsed = _fast_value(value)
        if parsed is None:
            return None
        target[match.group(1)] = parsed
    return None if block is not None and not block else result


def _check_events(source: str, path: str) -> None:
    """Refuse anchors, aliases, explicit tags and deep nesting before anything is constructed."""
    depth = 0
    for event in yaml.parse(source, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise MemoryFormatError(
                path, "frontmatter uses YAML anchors or aliases; write values out"
            )
        tag = getattr(event, "tag", None)
        if tag is not None and not isinstance(event, (yaml.DocumentStartEvent,)):
            implicit = getattr(event, "implicit", True)
            if not (implicit is True or (isinstance(implicit, tuple) and any(implicit))):
                raise MemoryFormatError(
                    path, "frontmatter uses YAML tags (!...); write plain values"
                )
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_NESTING:
                raise MemoryFormatError(path, "frontmatter is nested too deeply")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


_TOP_VALUE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(\S(?:.*\S)?)[ \t]*")
_INDICATORS = frozenset("{}[]*&#!|>%@`")


def _quoted(value: str) -> bool:
    return len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]


def _requote(source: str, wants: Callable[[str], bool]) -> str:
    """Double-quote every unquoted top-level ``key: value`` whose value ``wants`` says so."""
    out = []
    for line in source.split("\n"):
        cr = "\r" if line.endswith("\r") else ""
        match = _TOP_VALUE.fullmatch(line[: len(line) - len(cr)])
        if match is None or _quoted(match.group(2)) or not wants(match.group(2)):
            out.append(line)
            continue
        escaped = match.group(2).replace("\\", "\\\\").replace('"', '\\"')
        out.append(f'{match.group(1)}: "{escaped}"{cr}')
    return "\n".join(out)


def _has_comment_mark(value: str) -> bool:
    return " #" in value


def _problematic(value: str) -> bool:
    return ": " in value or value[0] in _INDICATORS


def _size_guard(source: str, path: str) -> None:
    if len(source) > MAX_FRONTMATTER_CHARS:
        raise MemoryFormatError(
            path,
            f"frontmatter is over {MAX_FRONTMATTER_CHARS:,} characters; keep it to a few fields",
        )


def _strict_load(source: str, path: str) -> dict[str, Any]:
    """Strict YAML behind the guards; a syntax error leaves as ``yaml.YAMLError`` (the
    lenient retry's cue), every other failure as MemoryFormatError."""
    _size_guard(source, path)
    try:
        _check_events(source, path)
        data = yaml.load(source, Loader=_LOADER)  # noqa: S506 - a SafeLoader (C or Python)
    except (ValueError, TypeError, RecursionError, OverflowError) as exc:
        raise MemoryFormatError(path, f"frontmatter cannot be read: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise MemoryFormatError(path, "frontmatter must be a mapping of key: value lines")
    return data


def load_frontmatter(source: str, path: str = "<memory>") -> dict[str, Any]:
    """Parse frontmatter YAML safely into a mapping (empty when blank), as Claude Code does.

    1. values holding `` #`` are double-quoted (so ``Ticket #42`` is not cut at a comment);
    2. strict YAML; if it is not valid YAML, every unquoted top-level value that
       contains ``: `` or starts with one of ``{}[]*&#!|>%@`` or a backquote is
       double-quoted and strict YAML runs again. The guards (size, anchors and
       aliases, explicit tags, nesting) apply to both attempts, and a guard's
       refusal is final: it is never retried. When both attempts fail, the first
       attempt's error is reported.
    """
    _size_guard(source, path)
    fast = _fast_load(source)
    if fast is not None:
        return fast
    first = _requote(source, _has_comment_mark)
    try:
        return _strict_load(first, path)
    except yaml.YAMLError as error:
        cause = error
        refusal = MemoryFormatError(path, f"frontmatter is not valid YAML {_where(error)}")
        retry = _requote(first, _problematic)
        if retry == first:
            raise refusal from error
    try:
        return _strict_load(retry, path)
    except yaml.YAMLError:
        raise refusal from cause


def _where(error: yaml.YAMLError) -> str:
    """``at line L, column C: problem (context)``, in the file's own lines (the opening
    ``---`` is line 1). Only the parser's words and the position: never the line's text."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None)
    context = getattr(error, "context", None)
    words = problem or (str(error).splitlines() or [type(error).__name__])[0]
    if context:
        words += f" ({context})"
    if mark is None:
        return f": {words}"
    return f"at line {mark.line + 2}, column {mark.column + 1}: {words}"


def _text(value: Any) -> str | None:
    """A frontmatter value as the text a field holds (None when absent or not scalar)."""
    if value is None or isinstance(value, (dict, list)):
        return None
    return value if isinstance(value, str) else str(value)


def _modified(value: Any) -> datetime | None:
    """An ISO 8601 time (string or the datetime PyYAML makes of one) as aware UTC; else None."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def file_stem(path: str) -> str | None:
    """``team/deploy-freeze.md`` -> ``deploy-freeze`` (None for a placeholder path)."""
    if path.startswith("<"):
        return None
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def _effective_name(raw: str | None, stem: str | None) -> str | None:
    return raw if raw is not None and raw.strip() else (stem or raw)


def _metadata(frontmatter: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = frontmatter.get("metadata")
    return meta if isinstance(meta, dict) else {}


def parse_memory(text: str, path: str = "<memory>") -> Memory:
    """Parse a memory file's text. Raises MemoryFormatError only when it cannot be read at all."""
    head, source, body = split_frontmatter(text, path)
    frontmatter = load_frontmatter(source, path) if head is not None else {}
    meta = _metadata(frontmatter)
    kind = _text(frontmatter.get("type"))
    layout = LAYOUT_LEGACY if head is None else LAYOUT_TOP
    if kind is None and "type" in meta:
        kind, layout = _text(meta.get("type")), LAYOUT_METADATA
    elif kind is None and meta:
        layout = LAYOUT_METADATA
    stem = file_stem(path)
    return Memory(
        name=_effective_name(_text(frontmatter.get("name")), stem),
        description=_text(frontmatter.get("description")),
        type=kind,
        body=body,
        frontmatter=frontmatter,
        head=head,
        modified=_modified(meta.get("modified", frontmatter.get("modified"))),
        origin_session_id=_text(meta.get("originSessionId", frontmatter.get("originSessionId"))),
        layout=layout,
        stem=stem,
    )


def _desired(m: Memory) -> dict[str, Any]:
    data = dict(m.frontmatter)
    if m.name is not None and _effective_name(_text(data.get("name")), m.stem) != m.name:
        data["name"] = m.name
    if m.description is not None and _text(data.get("description")) != m.description:
        data["description"] = m.description
    if m.type is not None:
        meta = data.get("metadata")
        nested = isinstance(meta, dict) and data.get("type") is None
        if nested and isinstance(meta, dict) and _text(meta.get("type")) != m.type:
            data["metadata"] = {**meta, "type": m.type}
        elif not nested and _text(data.get("type")) != m.type:
            data["type"] = m.type
    return data


def format_modified(value: datetime) -> str:
    """``2026-08-01T09:00:00.000Z``: the form Claude Code writes ``metadata.modified`` in."""
    utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


class _Dumper(yaml.SafeDumper):
    """The safe dumper, writing datetimes as Claude Code does (unquoted ISO 8601, ``Z``)."""


def _represent_datetime(dumper: yaml.SafeDumper, value: datetime) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", format_modified(value))


_Dumper.add_representer(datetime, _represent_datetime)


def dump_frontmatter(data: Mapping[str, Any]) -> str:
    """YAML for ``data``; escapes non-ASCII when PyYAML would not read its own output back."""
    options: dict[str, Any] = {"Dumper": _Dumper, "sort_keys": False, "width": 2**16}
    dumped = yaml.dump(dict(data), allow_unicode=True, **options)
    try:
        if load_frontmatter(dumped) == data:
            return str(dumped)
    except MemoryFormatError:
        pass
    return str(yaml.dump(dict(data), allow_unicode=False, **options))


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
    return f"---\n{dump_frontmatter(data)}---\n{m.body}"


LEGACY_MESSAGE = (
    "no frontmatter (a legacy topic file): Claude Code loads it, but recall cannot select it "
    "by description; add name, description and type between --- lines"
)


def memory_issues(m: Memory) -> list[tuple[str, str]]:
    """``(kind, message)`` for each problem: kinds ``legacy``, ``type``, ``description``.

    ``legacy`` (no frontmatter) is the milder kind: Claude Code still loads such a file.
    """
    if m.layout == LAYOUT_LEGACY:
        return [("legacy", LEGACY_MESSAGE)]
    issues: list[tuple[str, str]] = []
    allowed = ", ".join(MEMORY_TYPES)
    if m.type is None:
        issues.append(("type", f"missing type (one of {allowed})"))
    elif m.type not in MEMORY_TYPES:
        # Echo a short, type-like value only: a frontmatter field may hold anything, secrets too.
        shown = repr(m.type) if len(m.type) <= 20 and m.type.isidentifier() else "value"
        where = " under metadata" if m.layout == LAYOUT_METADATA else ""
        issues.append(("type", f"unknown type {shown}{where} (one of {allowed})"))
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
