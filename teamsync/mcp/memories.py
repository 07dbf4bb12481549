"""What ``teamsync mcp`` serves, with no MCP import: search, get, list and remember.

One :class:`MemoryService` per server, over one memory directory (resolved as
the CLI resolves it: ``--dir``, ``TEAMSYNC_DIR`` or Claude Code's layout).

* :meth:`~MemoryService.search` is ``teamsync recall``: Claude when a key is
  set, the offline ranker otherwise, and the same relevance floor (it may
  return nothing);
* :meth:`~MemoryService.get` reads one memory (or an index) through
  :class:`~teamsync.security.fs.SafeDir`: validated keys, no link followed;
* :meth:`~MemoryService.manifest` is the manifest, newest first;
* :meth:`~MemoryService.remember` writes one *new* team memory through the
  extraction tools (:class:`~teamsync.recall.tools.MemoryTools`), so the same
  write policy applies as to the hook, ``extract`` and sync: key rules, the
  whole content scanned with no allowlist and no inline pragma counting, the
  extraction rules, one name per case-folded spelling. ``MEMORY.md`` then gets
  the entry (:func:`~teamsync.memdir.lint.fix_memdir`). Nothing leaves the
  machine here: pushing is the caller's choice (``teamsync.yaml``).

Every refusal is a :class:`ToolRefused` whose message says what was wrong, and
never repeats a secret or says how to get past the check.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from teamsync.config import Settings
from teamsync.errors import KeyRejected, MemoryFormatError, SecurityError, TeamsyncError
from teamsync.memdir.format import INDEX_NAME, dump_frontmatter, parse_memory
from teamsync.memdir.freshness import age_days, changed_at, checksum_bytes, freshness_note
from teamsync.memdir.headers import scan_headers

MEMORY_TYPES = ("user", "feedback", "project", "reference")
TEAM_TYPES = ("feedback", "project", "reference")
"""The types a team memory may have (a ``user`` memory is private: never in ``team/``)."""
MAX_LISTED = 1000
MAX_SEARCH = 20
MAX_READ_BYTES = 256 * 1024
MAX_NAME_CHARS = 120
MAX_DESCRIPTION_CHARS = 300
SLUG_CHARS = 60
RESOURCE_SCHEME = "memory"


class ToolRefused(Exception):
    """A call that cannot be done; the message goes back to the calling model as is."""


def resource_uri(path: str) -> str:
    """``memory:///team/x.md`` for the memory at ``team/x.md``."""
    return f"{RESOURCE_SCHEME}:///{quote(path)}"


def path_from_uri(uri: str) -> str:
    prefix = f"{RESOURCE_SCHEME}:///"
    if not uri.startswith(prefix):
        raise ToolRefused(f"not a teamsync memory URI: expected {prefix}<path>")
    return unquote(uri[len(prefix) :])


def slug(name: str) -> str:
    """The file-name part for a memory called ``name``: letters and digits of any script, ``_``."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    cut = re.sub(r"_+", "_", "".join(c if c.isalnum() else "_" for c in folded)).strip("_")
    return cut[:SLUG_CHARS].rstrip("_")


def _one_line(label: str, value: Any, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ToolRefused(f"{label} must be a non-empty string")
    if "\n" in value or "\r" in value:
        raise ToolRefused(f"{label} must be one line")
    if len(value) > limit:
        raise ToolRefused(f"{label} is {len(value)} characters; at most {limit}")
    return value.strip()


def _name(text: str, path: str) -> str | None:
    try:
        return parse_memory(text, path).name
    except MemoryFormatError:
        return None


def memory_text(name: str, kind: str, description: str, body: str) -> str:
    """A memory file in the plain layout; :class:`MemoryTools` gives it Claude Code's current one."""
    front = dump_frontmatter({"name": name, "description": description, "type": kind})
    return f"---\n{front}---\n\n{body.strip()}\n"


@dataclass
class MemoryService:
    settings: Settings
    memdir: Path
    remember_enabled: bool = False
    after_remember: Callable[[str], str | None] | None = None
    """Called with the new memory's key once it is written (the push, when configured);
    returns a note for the caller, or None."""
    claude: Any = None
    """An injected Claude client for search (tests); None: from the environment."""
    offline: bool = False
    notes: list[str] = field(default_factory=list)

    # -- reading -------------------------------------------------------------

    def search(self, query: Any, limit: Any = 5) -> dict[str, Any]:
        from teamsync.recall.recall import recall

        if not isinstance(query, str) or not query.strip():
            raise ToolRefused("query must be a non-empty string: say what you are looking for")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH:
            raise ToolRefused(f"limit must be a whole number from 1 to {MAX_SEARCH}")
        self._require_dir()
        try:
            result = recall(
                self.settings, query, limit=limit, offline=self.offline, claude=self.claude
            )
        except TeamsyncError as exc:
            raise ToolRefused(str(exc)) from exc
        memories = [
            {
                "path": m.path,
                "name": _name(m.content, m.path),
                "type": m.type,
                "description": m.description,
                "age_days": m.age_days,
                "stale": m.stale,
                "stale_reasons": list(m.stale_reasons),
                "freshness_note": m.freshness,
                "score": m.score,
                "why": m.why,
                "content": m.content,
                "truncated": m.truncated,
            }
            for m in result.memories
        ]
        return {"memories": memories, "selector": result.selector, "notes": result.notes}

    def get(self, path: Any) -> dict[str, Any]:
        from teamsync.security.fs import SafeDir
        from teamsync.security.keys import validate_key

        if not isinstance(path, str) or not path:
            raise ToolRefused(
                "path must be a memory's path, as memory_list or memory_search gave it"
            )
        key = path.removeprefix("./")
        try:
            validate_key(key)
        except KeyRejected as exc:
            raise ToolRefused(f"cannot read {exc.key}: {exc.reason}") from exc
        if not key.endswith(".md"):
            raise ToolRefused("only memory files (*.md) and MEMORY.md indexes can be read")
        self._require_dir()
        try:
            with SafeDir(self.memdir) as root:
                data = root.read_bytes(key, max_bytes=MAX_READ_BYTES)
        except FileNotFoundError:
            raise ToolRefused(f"{key} does not exist; memory_list shows the memories") from None
        except (OSError, SecurityError, MemoryFormatError) as exc:
            raise ToolRefused(f"cannot read {key}: {exc}") from exc
        text = data.decode("utf-8", errors="replace")
        out: dict[str, Any] = {"path": key, "content": text}
        if key.rsplit("/", 1)[-1] != INDEX_NAME:
            out.update(self._about(key, text, data))
        return out

    def _about(self, key: str, text: str, data: bytes) -> dict[str, Any]:
        modified = None
        try:
            memory = parse_memory(text, key)
            about: dict[str, Any] = {
                "name": memory.name,
                "type": memory.type,
                "description": memory.description,
            }
            modified = memory.modified.timestamp() if memory.modified is not None else None
        except MemoryFormatError:
            about = {"name": None, "type": None, "description": None}
        stamp = changed_at(
            self.settings.state_dir, self.memdir / key, checksum_bytes(data), modified
        )
        days = age_days(stamp, time.time())
        return {**about, "age_days": days, "freshness_note": freshness_note(days)}

    def manifest(self, kind: Any = None) -> dict[str, Any]:
        if kind is not None and kind not in MEMORY_TYPES:
            raise ToolRefused(f"type must be one of {', '.join(MEMORY_TYPES)} (or left out)")
        self._require_dir()
        now = time.time()
        headers = scan_headers(self.memdir, MAX_LISTED)
        memories = [
            {
                "path": h.path,
                "name": h.name,
                "type": h.type,
                "description": h.description,
                "age_days": age_days(h.modified or h.mtime, now),
            }
            for h in headers
            if kind is None or h.type == kind
        ]
        return {"memories": memories, "capped": len(headers) >= MAX_LISTED}

    def resources(self) -> list[dict[str, str]]:
        """Each index and memory as ``{uri, name, description}`` (indexes first)."""
        self._require_dir()
        out = [
            {"uri": resource_uri(p), "name": p, "description": "the memory index"}
            for p in (INDEX_NAME, f"team/{INDEX_NAME}")
            if (self.memdir / p).is_file() and not (self.memdir / p).is_symlink()
        ]
        for h in scan_headers(self.memdir, MAX_LISTED):
            out.append(
                {
                    "uri": resource_uri(h.path),
                    "name": h.name or h.path,
                    "description": h.description or "",
                }
            )
        return out

    def read_resource(self, uri: str) -> str:
        text: str = self.get(path_from_uri(uri))["content"]
        return text

    # -- writing -------------------------------------------------------------

    def remember(self, name: Any, kind: Any, description: Any, body: Any) -> dict[str, Any]:
        """Write a new team memory through the one write policy; refuse anything else."""
        from teamsync.recall.tools import MemoryTools, ToolError

        if not self.remember_enabled:
            raise ToolRefused("this server is read-only: memory_remember is not offered")
        name = _one_line("name", name, MAX_NAME_CHARS)
        description = _one_line("description", description, MAX_DESCRIPTION_CHARS)
        if kind not in TEAM_TYPES:
            raise ToolRefused(
                f"type must be one of {', '.join(TEAM_TYPES)} for a team memory "
                "(a user memory is private and is never shared)"
            )
        if not isinstance(body, str) or not body.strip():
            raise ToolRefused("body must be a non-empty string")
        stem = slug(name)
        if not stem:
            raise ToolRefused("name must contain at least one letter or digit")
        key = f"team/{kind}_{stem}.md"
        self._require_dir()
        tools = MemoryTools(self.memdir)
        if key in tools.existing:
            raise ToolRefused(
                f"{key} already exists: memory_remember only creates new memories; "
                "give this one a name of its own"
            )
        try:
            tools.write_file(key, memory_text(name, kind, description, body))
        except ToolError as exc:
            raise ToolRefused(str(exc)) from exc
        if not tools.proposed:  # write_file raises on every refusal; nothing staged is a bug
            raise ToolRefused(f"{key} was not written")
        written = tools.commit()
        return {"path": key, "written": bool(written), **self._index_after(key)}

    def _index_after(self, key: str) -> dict[str, Any]:
        from teamsync.memdir.lint import fix_memdir

        notes: list[str] = []
        try:
            fix_memdir(self.memdir)
        except TeamsyncError as exc:
            notes.append(f"MEMORY.md was not updated: {exc}")
        index = self.memdir / "team" / INDEX_NAME
        try:
            indexed = f"]({key.removeprefix('team/')})" in index.read_text(encoding="utf-8")
        except OSError:
            indexed = False
        if self.after_remember is not None:
            note = self.after_remember(key)
            if note:
                notes.append(note)
        else:
            notes.append("not pushed: the team sees it after the next `teamsync sync`")
        return {"indexed": indexed, "notes": notes}

    def _require_dir(self) -> None:
        if not self.memdir.is_dir():
            raise ToolRefused(
                f"the memory directory {self.memdir} does not exist; start the server with "
                "--dir or TEAMSYNC_DIR pointing at it"
            )
