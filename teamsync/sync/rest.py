"""The REST backend: Claude Code's team-memory wire format, hardened, in parts.

:class:`RestBackend` composes them and holds the reading path:

- :mod:`~teamsync.sync.rest_http`: the HTTP transport (credentials, retries,
  bounded bodies, the structured error body);
- :mod:`~teamsync.sync.rest_dialect` (reading) and :mod:`~teamsync.sync.rest_batches`
  (writing): the legacy dialect as Claude Code 2.1.197 speaks it, pure functions;
- :mod:`~teamsync.sync.rest_ext` (capabilities, limits, ``delta``) and
  :mod:`~teamsync.sync.rest_history` (``history``): the teamsync extensions, used
  only when the server advertises them;
- :mod:`~teamsync.sync.rest_cache`: the listing kept under its ETag across runs;
- :mod:`~teamsync.sync.rest_push`: PUTs under preconditions, then the read-back.

:meth:`RestBackend.snapshot` sends one conditional GET (``If-None-Match`` with
the kept ETag: a no-change sync costs a 304) and every entry is vetted before
the engine sees it; refused entries land in :attr:`Snapshot.rejected` with a
reason. :meth:`RestBackend.fetch` serves texts from that same response (or, with
the ``entries`` extension, asks for the changed keys by name), so what the
engine merges is exactly the version it planned against. The Memory Stores
backend (:mod:`teamsync.sync.memstore`) is a part of its own beside these.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import httpx2

from teamsync.config import Settings
from teamsync.errors import BackendError
from teamsync.sync.base import (
    Applied,
    BackendDefaults,
    ChangeSet,
    ListingCache,
    PreconditionFailed,
    Snapshot,
)
from teamsync.sync.config import SyncConfig
from teamsync.sync.history import Change
from teamsync.sync.plan import safe_who
from teamsync.sync.rest_batches import plan_batches as plan_batches
from teamsync.sync.rest_cache import ListingKeeper
from teamsync.sync.rest_dialect import fetched_problem, json_object, parse_full, parse_hashes
from teamsync.sync.rest_ext import DELTA_EXT, ENTRIES_EXT, Capabilities, apply_delta
from teamsync.sync.rest_ext import Limits as Limits
from teamsync.sync.rest_history import History
from teamsync.sync.rest_http import Http, load_token, repo_from_origin, unexpected
from teamsync.sync.rest_push import Pusher
from teamsync.sync.restore import RemoteVersion
from teamsync.sync.state import RemoteListing
from teamsync.wire import ENTRIES_PATH, PATH, repo_as_written

FETCH_CHUNK = 500
"""Keys asked for per ``entries`` request."""


class RestBackend(BackendDefaults):
    """A :class:`~teamsync.sync.base.Backend` over a Claude Code-style team-memory server;
    :meth:`descends_from` is the default (a store checksum cannot tell)."""

    name = "rest"

    def __init__(
        self,
        config: SyncConfig,
        token: str,
        *,
        repo: str,
        transport: httpx2.BaseTransport | None = None,
        who: str = "someone",
        max_entries: int | None = None,
        **http: Any,
    ) -> None:
        self.repo = repo
        self.who = safe_who(who)
        self.http = Http(config.url, token, transport=transport, **http)
        self.caps = Capabilities(self.http, max_entries)
        self._keeper = ListingKeeper()
        self._history = History(self.http, repo, self.caps)
        self._push = Pusher(self.http, repo, self.caps, self._keeper)
        self._snap: Snapshot | None = None
        self._texts: dict[str, str] = {}
        self.refused_on_fetch: dict[str, str] = {}
        """key -> why, for listed entries whose content :meth:`fetch` refused."""
        self.not_found: tuple[Mapping[str, str], bytes] | None = None

    @property
    def server_max_entries(self) -> int | None:
        """The cap the server named when it refused a push for it."""
        return self._push.server_max_entries

    # -- the listing, kept across runs (rest_cache) -------------------------------------
    def use_cache(self, cache: ListingCache) -> None:
        """Keep the listing (ETag, per-key hashes) across runs in ``cache`` (the base store).

        The engine calls this before the first snapshot; without it the backend
        still sends ``If-None-Match`` within one run.
        """
        listing = self._keeper.use(cache, read_yet=self._snap is not None)
        if listing is not None and self.caps.extensions is None:
            self.caps.extensions = listing.extensions

    def keep_listing_at_mark(self) -> None:
        """Put back the listing kept when the run started (a guard stopped the run).

        The listing stays the one read at the base's mark, so the next run's delta
        asks the server again about that mark's version, and a lost history is told
        again instead of being cached away.
        """
        self._keeper.put_back()

    def _save(self, etag: str | None, snap: Snapshot | None) -> None:  # refused ones stay so
        self._keeper.save(etag, snap, self.refused_on_fetch, self.caps.extensions)

    # -- reading ----------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """One conditional GET: a 304 rebuilds the snapshot from the kept listing.

        Once a listing is kept and the server advertised the ``entries``
        extension, the GET asks for ``view=hashes`` only and
        :meth:`fetch` asks for the changed keys by name; the first read, and
        every read from a plain server, is the full view.
        """
        return self._read(delta=True)

    def _read(self, *, delta: bool) -> Snapshot:
        """The snapshot GET; with ``delta``, a kept listing is brought up to date by the
        ``delta`` extension (only what changed since its serial), which must verify."""
        listing = self._keeper.listing
        headers = {"If-None-Match": listing.etag} if listing is not None else {}
        # With nothing listed yet (a first pull) the full view is one request and cheapest.
        # A server that never advertised ``entries`` (a plain one) gets the full view.
        exts = self.caps.extensions or ()
        hashes_first = listing is not None and ENTRIES_EXT in exts
        params = {"repo": self.repo, **({"view": "hashes"} if hashes_first else {})}
        base = listing if delta and hashes_first and DELTA_EXT in exts else None
        if base is not None and base.serial is not None and not base.rejected:
            params["since"] = str(base.serial)
        else:
            base = None
        status, head, body = self.http.send("GET", PATH, params=params, headers=headers)
        self.caps.note(head)
        self._texts, self.refused_on_fetch = {}, {}
        kept = self._keeper.snapshot()
        if status == 304 and kept is not None:
            self._snap = kept
            return kept
        if status == 404:
            self.not_found = (head, body)  # `init` checks it came from a team-memory server
            self._snap = Snapshot(version=None, checksums={})
            self._save(None, None)
            return self._snap
        if status != 200:
            raise unexpected(self.http.where, status, body, "pull")
        data = json_object(body, self.http.where)
        if base is not None and "since" in data:
            return self._delta(data, head, base)
        where, cap = self.http.where, self.caps.cap
        if hashes_first and not isinstance(data.get("content"), dict):
            return self._keep(parse_hashes(data, head, where, cap))
        snap, self._texts = parse_full(data, head, where, cap)  # asked for, or `view` ignored
        return self._keep(snap)

    def _delta(
        self, data: Mapping[str, Any], head: Mapping[str, str], base: RemoteListing
    ) -> Snapshot:
        """The kept listing brought up to date; read in full when the delta does not
        add up to the store the server names. The checksum the server held at our
        serial rides along: another one than ours is a lost history."""
        at = data.get("sinceChecksum")
        said = (base.serial, at) if isinstance(at, str) and base.serial is not None else None
        applied = apply_delta(data, head, base, self.http.where, self.caps.cap)
        if applied is None:
            self._snap = replace(self._read(delta=False), checksum_at=said)
            return self._snap
        return self._keep(replace(applied, checksum_at=said))

    def _keep(self, snap: Snapshot) -> Snapshot:
        self._snap = snap
        self._save(snap.version, snap)
        return snap

    def fetch(self, keys: Sequence[str]) -> Mapping[str, str]:
        """Texts of ``keys`` exactly as the snapshot listed them (others are omitted).

        Keys not already held come from the ``entries`` extension (by name, in
        chunks) or, on a plain server, from one full GET. Every entry is
        validated as the full GET's are; a refused one lands in
        :attr:`refused_on_fetch` and in the kept listing.
        """
        snap, self.refused_on_fetch = self._snap, {}
        wanted = [k for k in keys if k not in self._texts]
        if wanted and snap is not None and snap.version is not None:
            known = self.caps.extensions is not None
            if self.caps.has(ENTRIES_EXT):
                self._fetch_named(wanted, snap)
            else:
                self._fetch_full(wanted, snap)
            if self.refused_on_fetch or not known:
                self._save(snap.version, snap)
        return {k: self._texts[k] for k in keys if k in self._texts}

    def _fetch_named(self, keys: Sequence[str], snap: Snapshot) -> None:
        for start in range(0, len(keys), FETCH_CHUNK):
            chunk = keys[start : start + FETCH_CHUNK]
            raw = json.dumps({"keys": list(chunk)}, ensure_ascii=False).encode("utf-8")
            status, _, body = self.http.send(
                "POST", ENTRIES_PATH, params={"repo": self.repo}, content=raw
            )
            if status == 404:
                return  # the store went away meanwhile: the next run sees it
            if status != 200:
                raise unexpected(self.http.where, status, body, "fetching memories")
            data = json_object(body, self.http.where)
            entries = data.get("entries")
            if not isinstance(entries, dict):
                raise BackendError(f"{self.http.where} answered without entries; refused")
            moved = data.get("checksum") != snap.version
            self._take(chunk, entries, snap, moved)

    def _fetch_full(self, keys: Sequence[str], snap: Snapshot) -> None:
        status, head, body = self.http.send("GET", PATH, params={"repo": self.repo})
        if status == 404:
            return
        if status != 200:
            raise unexpected(self.http.where, status, body, "pull")
        data = json_object(body, self.http.where)
        full, texts = parse_full(data, head, self.http.where, self.caps.cap)
        moved = full.version != snap.version
        for key in keys:
            if key in full.rejected and not moved:
                self.refused_on_fetch[key] = full.rejected[key]
        self._take(keys, {k: texts[k] for k in keys if k in texts}, snap, moved)

    def _take(
        self, keys: Sequence[str], entries: Mapping[Any, Any], snap: Snapshot, moved: bool
    ) -> None:
        """Keep each entry that passes the full GET's checks and is the version planned on."""
        for key in keys:
            text = entries.get(key)
            if text is None:
                continue
            problem = fetched_problem(key, text, snap.checksums.get(key))
            if problem is None:
                self._texts[key] = text
            elif not moved:  # the same store version: the server sent what it did not list
                self.refused_on_fetch[key] = problem

    # -- the history view (rest_history) ------------------------------------------------
    def past_checksums(self, keys: Collection[str]) -> Mapping[str, Collection[str]]:
        """See :meth:`teamsync.sync.rest_history.History.past_checksums`."""
        return self._history.past_checksums(keys)

    def log(self, key: str | None, limit: int) -> list[Change]:
        """The newest ``limit`` changes (of ``key``) from the server's history view."""
        return self._history.log(key, limit)

    def version_at(self, key: str, ref: str) -> RemoteVersion:
        """``key`` at the server's history row ``ref`` (its checksum)."""
        return self._history.version_at(key, ref)

    # -- writing (rest_push) ------------------------------------------------------------
    def apply(self, changes: ChangeSet) -> Applied | PreconditionFailed:
        result = self._push.apply(changes, self._snap, self.refused_on_fetch)
        if isinstance(result, Applied):
            self._snap = None  # the next read is the server's
        return result

    def check_server(self) -> None:
        """After an empty (404) snapshot: refuse a URL that is no team-memory server."""
        from teamsync.sync.rest_probe import check_empty_answer

        if self.not_found is not None:
            head, body = self.not_found
            has_caps = self.caps.extensions is not None or bool(self.caps.known())
            check_empty_answer(self.http.where, head, body, capabilities=has_caps)

    def identity(self) -> str:
        return self.who

    def close(self) -> None:
        self.http.close()


def from_config(config: SyncConfig, settings: Settings) -> RestBackend:
    """The factory :mod:`teamsync.commands.sync` calls (see ``BACKENDS``)."""
    token = load_token(config, settings.environ)
    repo = repo_as_written(config.repo) if config.repo else repo_from_origin(settings.cwd)
    return RestBackend(config, token, repo=repo, who=_who(settings))


def _who(settings: Settings) -> str:
    env = settings.environ
    return env.get("GIT_AUTHOR_NAME") or env.get("USER") or env.get("LOGNAME") or "someone"
