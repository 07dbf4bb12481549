"""Who changed what and when on the remote: the rows ``teamsync log`` shows.

Each backend reads its own history (REST: the server's ``history``
extension; git: the sync branch's commits) into :class:`Change` rows, newest
first. Everything a remote says is untrusted text: keys and names are shown
through :func:`teamsync.security.names.printable` by the command, never raw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Action = Literal["upsert", "delete"]
DEFAULT_LIMIT = 50


@dataclass(frozen=True)
class Change:
    at: float
    """POSIX time of the change (server time; git: the commit's committer time)."""
    who: str
    key: str
    action: Action
    version: str
    """REST: the history row id; git: the commit sha."""
    checksum: str | None = None
    """The entry's checksum after the change (None for a delete, or unknown)."""
