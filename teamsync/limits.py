"""Every limit and fixed name that more than one layer needs, in one place.

Stdlib only and imported by everything: the memdir core, the security gates,
the sync client, the server and the hooks' fast path. A value that describes
the wire format (what a server accepts) lives here too, so that the client and
the server can never disagree about it; :mod:`teamsync.wire` builds on it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Final

INDEX_NAME: Final = "MEMORY.md"
"""The index of a memory directory: not a memory, but synced like one."""

MAX_MEMORY_BYTES: Final = 250_000
"""One memory file / one wire entry, in UTF-8 bytes (Claude Code's limit)."""
MAX_INDEX_LINES: Final = 200
MAX_INDEX_BYTES: Final = 25_000
"""What Claude Code loads of ``MEMORY.md``: cut at a line boundary past either."""

TEMP_PREFIX: Final = ".teamsync-tmp-"
CONFIG_NAME: Final = "teamsync.yaml"
"""The sync configuration in a memory directory (``<memory dir>/teamsync.yaml``, never synced)."""
"""Every temporary file teamsync writes starts with this; walkers skip it."""

DEFAULT_BRANCH: Final = "teamsync/memory"
"""The git backend's default branch."""

WIRE_PATH: Final = "/api/claude_code/team_memory"
"""The team-memory endpoint, as Claude Code's client calls it."""
BATCH_BYTES: Final = 200_000
"""The largest encoded PUT body a client sends (it batches greedily below it)."""
MAX_BODY_BYTES: Final = 1_048_576
"""The largest PUT body the server reads: a lone 250,000-byte entry, JSON-escaped, still fits."""
DEFAULT_MAX_ENTRIES: Final = 5_000
"""Entries per repository, unless the server is configured otherwise."""
REQUEST_TIMEOUT_S: Final = 30.0
"""The REST client's timeout for one request (connect, read, write), in seconds."""
