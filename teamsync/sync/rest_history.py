"""The ``history`` extension: the server's history view, read page by page (bounded).

It recovers lost bases (:meth:`History.past_checksums`, see
:mod:`teamsync.sync.recover`) and answers ``teamsync log`` and ``teamsync restore``
(:meth:`History.log`, :meth:`History.version_at`). A plain server keeps no history:
nothing is recovered there, and ``log`` says it needs a teamsync server.
"""

from __future__ import annotations

import collections
from collections.abc import Collection, Iterator, Mapping
from datetime import datetime
from typing import Any

from teamsync.errors import BackendError
from teamsync.sync.history import Change
from teamsync.sync.rest_dialect import json_object
from teamsync.sync.rest_ext import HISTORY_EXT, Capabilities
from teamsync.sync.rest_http import Http, unexpected
from teamsync.sync.restore import RemoteVersion
from teamsync.wire import HISTORY_PATH

HISTORY_PAGE = 1_000
MAX_HISTORY_PAGES = 1_000
"""At most a million history rows are read to recover lost bases."""


class History:
    """The history view of one repository on one server."""

    def __init__(self, http: Http, repo: str, caps: Capabilities) -> None:
        self.http, self.repo, self.caps = http, repo, caps

    def past_checksums(self, keys: Collection[str]) -> Mapping[str, Collection[str]]:
        """key -> checksums the server's history view lists for it (the ``history`` extension).

        Pages through ``/history`` (bounded: :data:`MAX_HISTORY_PAGES`); a plain
        server has no history, so nothing is recovered and the plan stays the
        first-sync one (nothing deleted, conflicts kept as copies).
        """
        if not self.caps.has(HISTORY_EXT):
            return {}
        wanted = set(keys)
        seen: dict[str, set[str]] = {}
        for item in self.items():
            key = item.get("key") if isinstance(item, dict) else None
            value = item.get("checksum") if isinstance(item, dict) else None
            if key in wanted and isinstance(value, str):
                seen.setdefault(key, set()).add(value)
        return seen

    def items(self) -> Iterator[Any]:
        """Every row of the server's history view, oldest first, page by page (bounded)."""
        after = 0
        for _ in range(MAX_HISTORY_PAGES):
            params = {"repo": self.repo, "after": str(after), "limit": str(HISTORY_PAGE)}
            status, _, body = self.http.send("GET", HISTORY_PATH, params=params)
            if status != 200:
                raise unexpected(self.http.where, status, body, "reading the history")
            data = json_object(body, self.http.where)
            items = data.get("items")
            yield from items if isinstance(items, list) else []
            nxt = data.get("next_after")
            if not isinstance(nxt, int) or isinstance(nxt, bool) or nxt <= after:
                return
            after = nxt

    def log(self, key: str | None, limit: int) -> list[Change]:
        """The newest ``limit`` changes (of ``key``) from the server's history view."""
        if not self.caps.has(HISTORY_EXT):
            raise BackendError(
                f"{self.http.where} keeps no history (the `history` teamsync extension): "
                "`teamsync log` needs a teamsync server"
            )
        rows: collections.deque[Change] = collections.deque(maxlen=max(limit, 0))
        for item in self.items():
            row = history_row(item)
            if row is not None and (key is None or row.key == key):
                rows.append(row)
        return list(reversed(rows))

    def version_at(self, key: str, ref: str) -> RemoteVersion:
        """``key`` at the server's history row ``ref`` (its checksum: the server keeps no text)."""
        if not ref.isdigit():
            raise BackendError(f"{ref!r} is not a history id of the server; see `teamsync log`")
        for row in self.log(key, MAX_HISTORY_PAGES * HISTORY_PAGE):
            if row.version == ref:
                return RemoteVersion(key, ref, None, row.checksum, row.at)
        raise BackendError(f"the server's history has no change {ref} of {key}; see `teamsync log`")


def history_row(item: object) -> Change | None:
    """One ``/history`` item, or None when any field is not what the extension says."""
    if not isinstance(item, dict):
        return None
    key, who, at, ident = item.get("key"), item.get("who"), item.get("at"), item.get("id")
    action, check = item.get("action"), item.get("checksum")
    if not (isinstance(key, str) and isinstance(at, str) and action in ("upsert", "delete")):
        return None
    if not isinstance(ident, int) or isinstance(ident, bool):
        return None
    try:
        when = datetime.fromisoformat(at).timestamp()
    except ValueError:
        return None
    return Change(
        at=when,
        who=who if isinstance(who, str) else "?",
        key=key,
        action="upsert" if action == "upsert" else "delete",
        version=str(ident),
        checksum=check if isinstance(check, str) else None,
    )
