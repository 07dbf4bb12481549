"""The REST backend: Claude Code's team-memory wire format, hardened.

- :meth:`RestBackend.snapshot` sends one conditional GET (``If-None-Match``
  with the cached ETag: a no-change sync costs a 304) of the full view and
  validates every entry before the engine sees it: key, ``*.md``, size,
  UTF-8, the checksum the server claims, case/NFKC collisions and file/folder
  clashes (``a.md`` beside ``A.md/x.md``), the entry cap.
  Refused entries land in :attr:`Snapshot.rejected` with a reason; the rest
  are kept. :meth:`fetch` serves texts from that same response, so what the
  engine merges is exactly the version it planned against.
- :meth:`apply` batches upserts *and* deletes greedily by the exact encoded
  size of the JSON body (<= the server's advertised ``batch_bytes``, 200,000
  by default; an oversized entry goes alone, one that would pass the server's
  ``max_body_bytes`` even alone is held back and named) and sends every PUT
  with a precondition: per key (``baseChecksums`` for every key it names) when
  the server has that extension, so writers of different keys never refuse
  each other; otherwise ``If-Match: <store checksum>``, or ``If-None-Match: *``
  when the store did not exist (404) yet. 412 and 409 become
  :class:`PreconditionFailed`: the engine re-snapshots, merges and retries, so
  a teammate's newer version is never overwritten.
- Extensions (per-key ``baseChecksums``, ``deletes``) are used only when the
  server advertises them (``X-Teamsync-Extensions`` header or the
  ``/capabilities`` probe). Against a plain server, deletes travel as Claude
  Code's own ``soft_delete_keys``; the read-back after the push proves they
  took (a server that ignores them fails the run, never silently).
- The legacy dialect as Claude Code 2.1.197 speaks it: ``deletedEntries`` in
  a listing become :attr:`Snapshot.deleted` (a teammate's delete is not undone
  by an old local copy), ``rejectedEntries`` in a 200 answer become
  :attr:`Applied.held` (the rest was stored), and the repository travels as
  written (the server folds it).
- Limits (entries per repository, bytes per entry, bytes per body) come from
  the ``/capabilities`` probe (:class:`Limits`), asked for only when a listing
  passes the default entry cap or a push is sent; a plain server gets Claude
  Code's defaults. A hostile server cannot raise them past hard ceilings.
"""

from __future__ import annotations

import collections
import json
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

import httpx2

from teamsync.config import Settings
from teamsync.errors import BackendError, TooManyEntries
from teamsync.limits import BATCH_BYTES, DEFAULT_MAX_ENTRIES, MAX_BODY_BYTES, MAX_MEMORY_BYTES
from teamsync.security.keys import key_clashes
from teamsync.security.names import printable
from teamsync.sync.base import (
    Applied,
    BackendDefaults,
    ChangeSet,
    PreconditionFailed,
    Snapshot,
    checksum,
)
from teamsync.sync.config import SyncConfig
from teamsync.sync.history import Change
from teamsync.sync.local import file_problem
from teamsync.sync.plan import safe_who
from teamsync.sync.rest_http import Http, error_details, error_message, load_token, repo_from_origin
from teamsync.sync.restore import RemoteVersion
from teamsync.sync.state import RemoteListing
from teamsync.wire import (
    CAPABILITIES_PATH,
    ENTRIES_PATH,
    HISTORY_PATH,
    PATH,
    is_store_checksum,
    repo_as_written,
)

ENTRIES_EXT = "entries"
DELTA_EXT = "delta"
"""The extension that serves named keys (``POST …/team_memory/entries``)."""
FETCH_CHUNK = 500
"""Keys asked for per ``entries`` request."""
MAX_ENTRIES = DEFAULT_MAX_ENTRIES
"""Default cap on entries taken from a server that does not advertise its own."""
CEILING_ENTRIES = 1_000_000
"""No server, however it advertises, makes the client take more entries than this."""
CEILING_BODY_BYTES = 64 * 1024 * 1024
HISTORY_PAGE = 1_000
MAX_HISTORY_PAGES = 1_000
"""At most a million history rows are read to recover lost bases."""


class ListingCache(Protocol):
    """Where the listing outlives the process (:class:`~teamsync.sync.state.BaseStore`)."""

    def listing(self) -> RemoteListing | None: ...

    def save_listing(self, listing: RemoteListing | None) -> None: ...


@dataclass(frozen=True)
class Limits:
    """What the server accepts; from ``/capabilities`` ``limits`` or Claude Code's defaults."""

    max_entries: int = MAX_ENTRIES
    max_entry_bytes: int = MAX_MEMORY_BYTES
    """UTF-8 bytes per entry (never above the client's own limit for one memory)."""
    batch_bytes: int = BATCH_BYTES
    max_body_bytes: int = MAX_BODY_BYTES

    @classmethod
    def advertised(cls, raw: object) -> Limits:
        """Limits from a probe answer; anything missing or odd keeps the default, and
        nothing passes the client's ceilings (a hostile server cannot raise them)."""
        data = raw if isinstance(raw, dict) else {}

        def pick(name: str, default: int, ceiling: int) -> int:
            value = data.get(name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                return default
            return min(value, ceiling)

        body = pick("max_body_bytes", MAX_BODY_BYTES, CEILING_BODY_BYTES)
        return cls(
            max_entries=pick("max_entries", MAX_ENTRIES, CEILING_ENTRIES),
            max_entry_bytes=pick("max_entry_bytes", MAX_MEMORY_BYTES, MAX_MEMORY_BYTES),
            batch_bytes=min(pick("batch_bytes", BATCH_BYTES, CEILING_BODY_BYTES), body),
            max_body_bytes=body,
        )


class RestBackend(BackendDefaults):
    """A :class:`~teamsync.sync.base.Backend` over a Claude Code-style team-memory server."""

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
        self.max_entries = max_entries
        """A fixed client cap (tests); None: the server's advertised cap."""
        self.http = Http(config.url, token, transport=transport, **http)
        self.extensions: frozenset[str] | None = None
        self.limits: Limits | None = None
        self.server_max_entries: int | None = None
        self._listing: RemoteListing | None = None
        self._cache: ListingCache | None = None
        self._snap: Snapshot | None = None
        self._texts: dict[str, str] = {}
        self.refused_on_fetch: dict[str, str] = {}
        """key -> why, for listed entries whose content :meth:`fetch` refused."""
        self.not_found: tuple[Mapping[str, str], bytes] | None = None
        self._kept: RemoteListing | None = None

    # -- reading ----------------------------------------------------------------------
    def use_cache(self, cache: ListingCache) -> None:
        """Keep the listing (ETag, per-key hashes) across runs in ``cache`` (the base store).

        The engine calls this before the first snapshot; without it the backend
        still sends ``If-None-Match`` within one run.
        """
        self._cache = cache
        listing = cache.listing()
        self._kept = listing
        if listing is not None and self._snap is None:
            self._listing = listing
            if self.extensions is None:
                self.extensions = listing.extensions

    def keep_listing_at_mark(self) -> None:
        """Put back the listing kept when the run started (a guard stopped the run).

        The listing stays the one read at the base's mark, so the next run's delta
        asks the server again about that mark's version, and a lost history is told
        again instead of being cached away.
        """
        if self._cache is not None:
            self._cache.save_listing(self._kept)
        self._listing = self._kept

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
        listing = self._listing
        headers = {"If-None-Match": listing.etag} if listing is not None else {}
        # With nothing listed yet (a first pull) the full view is one request and cheapest.
        # A server that never advertised ``entries`` (a plain one) gets the full view.
        exts = self.extensions or ()
        hashes_first = listing is not None and ENTRIES_EXT in exts
        params = {"repo": self.repo, **({"view": "hashes"} if hashes_first else {})}
        base = listing if delta and hashes_first and DELTA_EXT in exts else None
        if base is not None and base.serial is not None and not base.rejected:
            params["since"] = str(base.serial)
        else:
            base = None
        status, head, body = self.http.send("GET", PATH, params=params, headers=headers)
        self._note_extensions(head)
        self._texts, self.refused_on_fetch = {}, {}
        if status == 304 and listing is not None:
            self._snap = Snapshot(
                version=listing.version,
                checksums=dict(listing.checksums),
                changed_at=dict(listing.changed_at),
                rejected=dict(listing.rejected),
                serial=listing.serial,
            )
            return self._snap
        if status == 404:
            self.not_found = (head, body)  # `init` checks it came from a team-memory server
            self._snap = Snapshot(version=None, checksums={})
            self._save_listing(None, None)
            return self._snap
        if status != 200:
            raise self._unexpected(status, body, "pull")
        data = _json(body, self.http.where)
        if base is not None and "since" in data:
            # the checksum the server held at our serial: another one is a lost history
            at = data.get("sinceChecksum")
            said = (base.serial, at) if isinstance(at, str) and base.serial is not None else None
            applied = self._parse_delta(data, head, base)
            if applied is None:  # it does not add up to the store the server names: read it all
                self._snap = replace(self._read(delta=False), checksum_at=said)
                return self._snap
            snap = replace(applied, checksum_at=said)
        elif hashes_first and not isinstance(data.get("content"), dict):
            snap = self._parse_hashes(data, head)
        else:  # the full view (asked for, or a server that ignores ``view``)
            snap, self._texts = self._parse_full(data, head)
        self._snap = snap
        self._save_listing(snap.version, snap)
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
            known = self.extensions is not None
            if ENTRIES_EXT in self._extensions():
                self._fetch_named(wanted, snap)
            else:
                self._fetch_full(wanted, snap)
            if self.refused_on_fetch or not known:
                self._save_listing(snap.version, snap)
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
                raise self._unexpected(status, body, "fetching memories")
            data = _json(body, self.http.where)
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
            raise self._unexpected(status, body, "pull")
        full, texts = self._parse_full(_json(body, self.http.where), head)
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
            planned = snap.checksums.get(key)
            if not isinstance(text, str):
                problem: str | None = "content is not text"
            else:
                problem = _entry_problem(key, text, None)
            if problem is None and isinstance(text, str) and checksum(text) == planned:
                self._texts[key] = text
            elif not moved:  # the same store version: the server sent what it did not list
                why = problem or "content does not match the checksum the server listed for it"
                self.refused_on_fetch[key] = why

    def _parse_hashes(self, data: Mapping[str, Any], head: Mapping[str, str]) -> Snapshot:
        """``view=hashes``: keys are checked now (names, clashes, cap); contents at fetch."""
        sums = data.get("entryChecksums")
        if not isinstance(sums, dict):
            raise BackendError(f"{self.http.where} answered without entryChecksums; refused")
        version = data.get("checksum") or head.get("etag", "").strip('"') or None
        if not isinstance(version, str):
            raise BackendError(f"{self.http.where} answered a non-string checksum; refused")
        cap = self.max_entries
        if cap is None:
            cap = self._limits().max_entries if len(sums) > MAX_ENTRIES else MAX_ENTRIES
        listed: dict[str, str] = {}
        rejected: dict[str, str] = {}
        for n, key in enumerate(sorted(k for k in sums if isinstance(k, str))):
            value = sums[key]
            problem = file_problem(key)
            if n >= cap:
                rejected[key] = f"over the client's limit of {cap} entries per repository"
            elif not isinstance(value, str) or not value.startswith("sha256:"):
                rejected[key] = "the server listed no usable checksum for it"
            elif problem is not None:
                rejected[key] = problem
            else:
                listed[key] = value
        for key, reason in key_clashes(listed).items():
            rejected[key] = reason
            listed.pop(key, None)
        stamps = data.get("entryLastModified")
        changed = _times(stamps, listed) if isinstance(stamps, dict) else {}
        return Snapshot(
            version=version,
            checksums=listed,
            changed_at=changed,
            rejected=rejected,
            deleted=_deleted_at(data.get("deletedEntries"), listed),
            serial=_serial(data),
        )

    def _parse_delta(
        self, data: Mapping[str, Any], head: Mapping[str, str], listing: RemoteListing
    ) -> Snapshot | None:
        """The kept listing with the delta applied, checked as a full ``view=hashes`` is;
        None when the delta is malformed or the result is not the store the server names."""
        sums, gone, version = data.get("entryChecksums"), data.get("deleted"), data.get("checksum")
        if (
            data.get("since") != listing.serial
            or not isinstance(sums, dict)
            or not isinstance(gone, list)
            or not isinstance(version, str)
            or not all(
                isinstance(k, str) and isinstance(v, str) and v.isascii() for k, v in sums.items()
            )  # fmt: skip
            or not all(isinstance(k, str) for k in gone)
        ):
            return None
        dropped = set(gone)  # once: a long list must not cost its length per key
        merged = {k: v for k, v in listing.checksums.items() if k not in dropped}
        merged.update(sums)
        try:
            if not is_store_checksum(merged, version):
                return None
        except UnicodeEncodeError:  # a lone surrogate in a key: no store holds it
            return None
        snap = self._parse_hashes({**data, "entryChecksums": merged}, head)
        kept = {
            k: t for k, t in listing.changed_at.items() if k in snap.checksums and k not in sums
        }
        return Snapshot(
            version=snap.version,
            checksums=snap.checksums,
            changed_at={**kept, **snap.changed_at},
            rejected=snap.rejected,
            serial=snap.serial,
        )

    def _save_listing(self, etag: str | None, snap: Snapshot | None) -> None:
        """Keep (or forget) what the server said under ``etag``, for the next run's 304."""
        if snap is not None and self.refused_on_fetch:
            sums = {k: v for k, v in snap.checksums.items() if k not in self.refused_on_fetch}
            snap = Snapshot(
                version=snap.version,
                checksums=sums,
                changed_at=snap.changed_at,
                rejected={**snap.rejected, **self.refused_on_fetch},
                serial=snap.serial,
            )
        listing = None
        if etag and snap is not None:
            listing = RemoteListing(
                etag=etag,
                version=snap.version,
                serial=snap.serial,
                checksums=snap.checksums,
                changed_at=snap.changed_at,
                rejected=snap.rejected,
                extensions=self.extensions,
            )
        self._listing = listing
        if self._cache is not None:
            self._cache.save_listing(listing)

    def past_checksums(self, keys: Collection[str]) -> Mapping[str, Collection[str]]:
        """key -> checksums the server's history view lists for it (the ``history`` extension).

        Pages through ``/history`` (bounded: :data:`MAX_HISTORY_PAGES`); a plain
        server has no history, so nothing is recovered and the plan stays the
        first-sync one (nothing deleted, conflicts kept as copies).
        """
        if "history" not in self._extensions():
            return {}
        wanted = set(keys)
        seen: dict[str, set[str]] = {}
        for item in self._history_items():
            key = item.get("key") if isinstance(item, dict) else None
            value = item.get("checksum") if isinstance(item, dict) else None
            if key in wanted and isinstance(value, str):
                seen.setdefault(key, set()).add(value)
        return seen

    def _history_items(self) -> Iterator[Any]:
        """Every row of the server's history view, oldest first, page by page (bounded)."""
        after = 0
        for _ in range(MAX_HISTORY_PAGES):
            params = {"repo": self.repo, "after": str(after), "limit": str(HISTORY_PAGE)}
            status, _, body = self.http.send("GET", HISTORY_PATH, params=params)
            if status != 200:
                raise self._unexpected(status, body, "reading the history")
            data = _json(body, self.http.where)
            items = data.get("items")
            yield from items if isinstance(items, list) else []
            nxt = data.get("next_after")
            if not isinstance(nxt, int) or isinstance(nxt, bool) or nxt <= after:
                return
            after = nxt

    def log(self, key: str | None, limit: int) -> list[Change]:
        """The newest ``limit`` changes (of ``key``) from the server's history view."""
        if "history" not in self._extensions():
            raise BackendError(
                f"{self.http.where} keeps no history (the `history` teamsync extension): "
                "`teamsync log` needs a teamsync server"
            )
        rows: collections.deque[Change] = collections.deque(maxlen=max(limit, 0))
        for item in self._history_items():
            row = _history_row(item)
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

    def _parse_full(
        self, data: Mapping[str, Any], head: Mapping[str, str]
    ) -> tuple[Snapshot, dict[str, str]]:
        content = data.get("content")
        entries = content.get("entries") if isinstance(content, dict) else None
        if not isinstance(entries, dict):
            raise BackendError(f"{self.http.where} answered without content.entries; refused")
        claimed = content.get("entryChecksums") if isinstance(content, dict) else None
        claimed = claimed if isinstance(claimed, dict) else {}
        version = data.get("checksum") or head.get("etag", "").strip('"') or None
        if not isinstance(version, str):
            raise BackendError(f"{self.http.where} answered a non-string checksum; refused")
        cap = self.max_entries
        if cap is None:
            over = len(entries) > MAX_ENTRIES
            cap = self._limits().max_entries if over else MAX_ENTRIES
        texts, rejected = _validate(entries, claimed, cap)
        stamps = data.get("entryLastModified")
        changed = _times(stamps, texts) if isinstance(stamps, dict) else {}
        snap = Snapshot(
            version=version,
            checksums={k: checksum(t) for k, t in texts.items()},
            changed_at=changed,
            rejected=rejected,
            serial=_serial(data),
            deleted=_deleted_at(content.get("deletedEntries") if content else None, texts),
        )
        return snap, texts

    # -- writing ----------------------------------------------------------------------
    def apply(self, changes: ChangeSet) -> Applied | PreconditionFailed:
        wants = changes.deletes or changes.base_checksums or changes.modified
        ext = self._extensions() if wants else frozenset()
        deletes = list(changes.deletes)
        # Claude Code's own deletes (``soft_delete_keys``) on a server without the extension
        field = "deletes" if "deletes" in ext else "soft_delete_keys"
        cas = changes.base_checksums if "baseChecksums" in ext else {}
        limits = self._limits()
        version = changes.base_version
        before = self._snap.serial if self._snap is not None else None
        done: dict[str, str] = {}
        serial: int | None = None
        puts = 0
        times = changes.modified if "entryModified" in ext else {}
        plan = plan_batches(changes.upserts, deletes, cas, limits, times, delete_field=field)
        held: dict[str, str] = {}
        for batch in plan.batches:
            try:
                result = self._put(batch, None if _per_key(batch, ext) else version)
            except TooManyEntries as exc:
                raise exc.after_partial_push(len(done), self._total_after(changes)) from None
            if isinstance(result, PreconditionFailed):
                return result
            version, serial, refused = result
            puts += 1
            held.update({k: why for k, why in refused.items() if k in batch.get("entries", {})})
            done.update(
                {k: checksum(v) for k, v in batch.get("entries", {}).items() if k not in refused}
            )
        prev, self._snap = self._snap, None
        if puts:
            expected = _expected_after(prev, done, deletes)
            verified = self._verify(done, deletes, before, puts, version, expected)
            if verified and expected is not None:
                stamps = {**prev.changed_at} if prev is not None else {}
                stamps.update(dict.fromkeys(done, time.time()))
                after = Snapshot(version, expected, stamps, {}, serial)
                self._save_listing(version, after)
            else:
                self._save_listing(None, None)  # the next run reads the listing afresh
        if plan.too_big:
            raise BackendError(_not_sent(len(done), self.http.where, plan.too_big))
        return Applied(version=version, checksums=done, serial=serial, held=held)

    def _verify(
        self,
        stored: Mapping[str, str],
        deletes: Sequence[str],
        before: int | None,
        puts: int,
        version: str | None,
        expected: Mapping[str, str] | None,
    ) -> bool:
        """Read the hashes back: a push the server answered 200 to must show in its GET.

        When the new store checksum is exactly the one the pushed listing
        gives (:func:`~teamsync.wire.is_store_checksum`), the read-back is
        conditional and a 304 proves it in one small request; True then (the
        kept listing is exact). A key that reads differently is a teammate's
        newer write only if the server's version counter moved past our own
        writes; otherwise the server did not store what it acknowledged, and
        the run fails with the base not advanced, so the local copies stay
        local changes (never overwritten).
        """
        exact = expected is not None and version is not None
        exact = exact and is_store_checksum(expected or {}, version or "")
        headers = {"If-None-Match": version} if exact and version else {}
        status, head, body = self.http.send(
            "GET", PATH, params={"repo": self.repo, "view": "hashes"}, headers=headers
        )
        if status == 304 and exact:
            return True
        sums: Mapping[str, Any] = {}
        serial = None
        if status == 200:
            data = _json(body, self.http.where)
            listed = data.get("entryChecksums")
            sums = listed if isinstance(listed, dict) else {}
            serial = _serial(data)
        elif status != 404:
            raise self._unexpected(status, body, "push check")
        missing = [k for k, c in stored.items() if sums.get(k) != c]
        missing += [k for k in deletes if k in sums]
        if not missing:
            return False
        if serial is not None and before is not None and serial > before + puts:
            return False  # others wrote since: the next round reconciles those keys
        shown = ", ".join(printable(k) for k in sorted(missing)[:10])
        raise BackendError(
            f"{self.http.where} acknowledged the push but does not hold it: {len(missing)} "
            f"key(s) read back differently ({shown}). Nothing was recorded as synced and your "
            "local copies are unchanged; the server is not storing writes: tell its admin, "
            "then run `teamsync sync` again."
        )

    def _put(
        self, batch: Mapping[str, Any], version: str | None
    ) -> tuple[str, int | None, dict[str, str]] | PreconditionFailed:
        """One PUT: ``(new checksum, version counter, refused key -> why)`` or the conflict.

        The precondition is ``If-Match: version``, ``If-None-Match: *`` when the store
        did not exist, or (``version`` None) none on the store: the batch carries a
        per-key one for every key it names (:func:`_per_key`). A server may store a
        batch but for some entries (``rejectedEntries``: a secret, a key it refuses);
        those come back with the server's reason.
        """
        headers: dict[str, str] = {}
        if version:
            headers["If-Match"] = version
        elif not batch.get("baseChecksums"):
            headers["If-None-Match"] = "*"
        raw = json.dumps(batch, ensure_ascii=False).encode("utf-8")
        status, head, body = self.http.send(
            "PUT", PATH, params={"repo": self.repo}, headers=headers, content=raw
        )
        if status == 200:
            data = _json(body, self.http.where)
            new = data.get("checksum") or head.get("etag", "").strip('"')
            if not isinstance(new, str) or not new:
                raise BackendError(f"{self.http.where} accepted a push without a checksum")
            return new, _serial(data), _refused_entries(data)
        if status in (409, 412):
            keys = error_details(body).get("keys") if status == 409 else None
            good = [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []
            return PreconditionFailed(keys=good)
        if status == 413:
            raise self._too_large(body)
        raise self._unexpected(status, body, "push")

    def _too_large(self, body: bytes) -> BackendError:
        details = error_details(body)
        if details.get("error_code") == "team_memory_too_many_entries":
            most, got = details.get("max_entries"), details.get("received_entries")
            if isinstance(most, int):
                self.server_max_entries = most
            return TooManyEntries(self.http.where, most, got)
        why = error_message(body) or "request too large"
        return BackendError(f"{self.http.where} refused the push (413): {why}")

    def _total_after(self, changes: ChangeSet) -> int | None:
        """How many entries the whole push would leave on the server (None: unknown)."""
        if self._snap is None:
            return None
        keys = set(self._snap.checksums) | set(changes.upserts)
        return len(keys - set(changes.deletes))

    def _unexpected(self, status: int, body: bytes, what: str) -> BackendError:
        why = error_message(body)
        return BackendError(
            f"{what} failed: {self.http.where} answered {status}" + (f": {why}" if why else "")
        )

    # -- extensions ----------------------------------------------------------------------
    def _note_extensions(self, head: Mapping[str, str]) -> None:
        advertised = head.get("x-teamsync-extensions")
        if advertised is not None:
            self.extensions = frozenset(x.strip() for x in advertised.split(",") if x.strip())

    def _extensions(self) -> frozenset[str]:
        if self.extensions is None:
            self._probe()
        return self.extensions or frozenset()

    def _limits(self) -> Limits:
        if self.limits is None:
            self._probe()
        return self.limits or Limits()

    def _probe(self) -> None:
        """One ``/capabilities`` request: extensions and limits (defaults when absent)."""
        try:
            status, _, body = self.http.send("GET", CAPABILITIES_PATH, params={})
            data = _json(body, self.http.where) if status == 200 else {}
        except BackendError:
            data = {}
        listed = data.get("extensions")
        if self.extensions is None:
            self.extensions = frozenset(
                x for x in (listed if isinstance(listed, list) else []) if isinstance(x, str)
            )
        self.limits = Limits.advertised(data.get("limits"))

    def descends_from(self, version: str) -> bool | None:
        """A store checksum cannot tell; the engine compares :attr:`Snapshot.serial`."""
        return None

    def check_server(self) -> None:
        """After an empty (404) snapshot: refuse a URL that is no team-memory server."""
        from teamsync.sync.rest_probe import check_empty_answer

        if self.not_found is not None:
            head, body = self.not_found
            has_caps = self.extensions is not None or bool(self._extensions())
            check_empty_answer(self.http.where, head, body, capabilities=has_caps)

    def identity(self) -> str:
        return self.who

    def close(self) -> None:
        self.http.close()


def _per_key(batch: Mapping[str, Any], ext: Collection[str]) -> bool:
    """True when every key of ``batch`` carries a ``baseChecksums`` precondition the
    server checks: the PUT then needs no store-wide ``If-Match``, so teammates who
    write different keys never refuse each other (only a key someone else changed
    gives 409, for that key)."""
    if "baseChecksums" not in ext:
        return False
    cas = batch.get("baseChecksums") or {}
    named = [*batch.get("entries", {}), *batch.get("deletes", [])]
    return bool(named) and all(key in cas for key in named)


def _expected_after(
    prev: Snapshot | None, done: Mapping[str, str], deletes: Sequence[str]
) -> dict[str, str] | None:
    """The store's listing after a push, if nobody else wrote meanwhile.

    Under ``If-Match`` a 200 means the store was exactly the planned listing
    plus our batches; under per-key preconditions a teammate may have written
    other keys, which :meth:`RestBackend._verify` sees as a store checksum other
    than this listing's (and then reads the listing back). Refused entries live
    on the server too, unlisted here: then the listing is not known.
    """
    if prev is None or prev.rejected:
        return None
    sums = {**prev.checksums, **done}
    for key in deletes:
        sums.pop(key, None)
    return sums


def _history_row(item: object) -> Change | None:
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


def _serial(data: Mapping[str, Any]) -> int | None:
    """The server's version counter (``version``), when it is a plain non-negative integer."""
    value = data.get("version")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _json(body: bytes, where: str) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise BackendError(f"{where} answered something that is not JSON; refused") from exc
    if not isinstance(data, dict):
        raise BackendError(f"{where} answered JSON that is not an object; refused")
    return data


def _validate(
    entries: Mapping[Any, Any], claimed: Mapping[Any, Any], cap: int
) -> tuple[dict[str, str], dict[str, str]]:
    """Split a server listing into acceptable texts and ``key -> reason`` refusals."""
    texts: dict[str, str] = {}
    rejected: dict[str, str] = {}
    for n, key in enumerate(sorted(k for k in entries if isinstance(k, str))):
        text = entries[key]
        if n >= cap:
            rejected[key] = f"over the client's limit of {cap} entries per repository"
        elif not isinstance(text, str):
            rejected[key] = "content is not text"
        else:
            rejected_reason = _entry_problem(key, text, claimed.get(key))
            if rejected_reason is None:
                texts[key] = text
            else:
                rejected[key] = rejected_reason
    for key, reason in key_clashes(texts).items():
        rejected[key] = reason
        texts.pop(key, None)
    return texts, rejected


def _entry_problem(key: str, text: str, claimed: object) -> str | None:
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return "content is not valid UTF-8"
    problem = file_problem(key, size)
    if problem is not None:
        return problem
    if "\x00" in text:
        return "content holds NUL bytes (not a text memory)"
    if claimed is not None and claimed != checksum(text):
        return "content does not match the checksum the server listed for it"
    return None


def _deleted_at(raw: object, live: Mapping[str, str]) -> dict[str, float]:
    """``deletedEntries`` (key -> deletion time, in ms since the epoch as Claude Code
    sends it, or s): only safe memory keys that are not live, only sane times."""
    out: dict[str, float] = {}
    for key, when in raw.items() if isinstance(raw, dict) else ():
        if not isinstance(key, str) or key in live or file_problem(key) is not None:
            continue
        if isinstance(when, bool) or not isinstance(when, int | float) or when <= 0:
            continue
        seconds = when / 1000 if when > 1e11 else float(when)
        if seconds < time.time() + 86_400:
            out[key] = seconds
    return out


def _times(stamps: Mapping[Any, Any], keys: Mapping[str, str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in keys:
        raw = stamps.get(key)
        if isinstance(raw, str):
            try:
                out[key] = datetime.fromisoformat(raw).timestamp()
            except ValueError:
                continue
    return out


@dataclass(frozen=True)
class BatchPlan:
    batches: list[dict[str, Any]]
    """PUT bodies, each at most ``batch_bytes`` encoded (a lone oversized entry excepted)."""
    too_big: dict[str, str]
    """key -> why it cannot be sent (over the entry size, or alone over the body size)."""


def _encoded(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def plan_batches(
    upserts: Mapping[str, str],
    deletes: Sequence[str],
    cas: Mapping[str, str | None],
    limits: Limits,
    modified: Mapping[str, float] | None = None,
    *,
    delete_field: str = "deletes",
) -> BatchPlan:
    """Greedy PUT bodies sized by their exact encoded JSON (escapes included).

    Deletes travel like entries: each with its ``baseChecksums`` precondition,
    so 4,500 deletes take several bodies instead of one the server refuses.
    ``modified`` (first-share change times) travels as ``entryModified``.
    Body sizes are counted exactly as :meth:`RestBackend._put` encodes them
    (``json.dumps(ensure_ascii=False)``, default separators).
    """
    items: list[tuple[str, str, int]] = []  # (key, "entries" | "deletes", encoded cost)
    for key in sorted(deletes):
        cost = _encoded(key) + 2 + (_encoded(key) + 2 + _encoded(cas[key]) + 2 if key in cas else 0)
        items.append((key, "deletes", cost))
    stamps = {k: iso_time(t) for k, t in (modified or {}).items() if k in upserts}
    for key in sorted(upserts):
        cost = _encoded(key) + 2 + _encoded(upserts[key]) + 2
        cost += _encoded(key) + 2 + _encoded(cas[key]) + 2 if key in cas else 0
        cost += _encoded(key) + 2 + _encoded(stamps[key]) + 2 if key in stamps else 0
        items.append((key, "entries", cost))
    skeleton = _encoded({"entries": {}, delete_field: [], "baseChecksums": {}, "entryModified": {}})
    batches: list[dict[str, Any]] = []
    too_big: dict[str, str] = {}
    body: dict[str, Any] = {"entries": {}}
    size = skeleton
    for key, kind, cost in items:
        if kind == "entries" and len(upserts[key].encode("utf-8")) > limits.max_entry_bytes:
            too_big[key] = f"over the server's {limits.max_entry_bytes:,}-byte limit per memory"
            continue
        if skeleton + cost > limits.max_body_bytes:
            too_big[key] = (
                f"JSON-encoded, it alone passes the server's {limits.max_body_bytes:,}-byte "
                "request limit (control characters and quotes grow when escaped)"
            )
            continue
        if _has_items(body) and size + cost > limits.batch_bytes:
            batches.append(body)
            body, size = {"entries": {}}, skeleton
        if kind == "deletes":
            body.setdefault(delete_field, []).append(key)
        else:
            body["entries"][key] = upserts[key]
            if key in stamps:
                body.setdefault("entryModified", {})[key] = stamps[key]
        if key in cas:
            body.setdefault("baseChecksums", {})[key] = cas[key]
        size += cost
    if _has_items(body):
        batches.append(body)
    return BatchPlan(batches, too_big)


def iso_time(ts: float) -> str:
    """``2026-11-30T04:34:05.123+00:00`` (what ``datetime.fromisoformat`` reads back)."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")


def _has_items(body: Mapping[str, Any]) -> bool:
    return bool(body.get("entries") or body.get("deletes") or body.get("soft_delete_keys"))


def _refused_entries(data: Mapping[str, Any]) -> dict[str, str]:
    """``rejectedEntries`` of a 200 answer: key -> the server's reason (printable)."""
    items = data.get("rejectedEntries")
    out: dict[str, str] = {}
    for item in items if isinstance(items, list) else []:
        key = item.get("key") if isinstance(item, dict) else None
        why = item.get("reason") if isinstance(item, dict) else None
        if isinstance(key, str):
            out[key] = printable(why[:300]) if isinstance(why, str) else "refused by the server"
    return out


def _not_sent(pushed: int, where: str, too_big: Mapping[str, str]) -> str:
    parts = [f"pushed {pushed} memories to {where}"]
    for key in sorted(too_big)[:20]:
        parts.append(f"{key} was NOT pushed: {too_big[key]}; shorten or split it")
    if len(too_big) > 20:
        parts.append(f"and {len(too_big) - 20} more memories were NOT pushed for the same reasons")
    return "; ".join(parts) + "."


def from_config(config: SyncConfig, settings: Settings) -> RestBackend:
    """The factory :mod:`teamsync.commands.sync` calls (see ``BACKENDS``)."""
    token = load_token(config, settings.environ)
    repo = repo_as_written(config.repo) if config.repo else repo_from_origin(settings.cwd)
    return RestBackend(config, token, repo=repo, who=_who(settings))


def _who(settings: Settings) -> str:
    env = settings.environ
    return env.get("GIT_AUTHOR_NAME") or env.get("USER") or env.get("LOGNAME") or "someone"
