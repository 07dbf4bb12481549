"""The Memory Stores backend: ``team/`` mirrors one folder of an Anthropic memory store.

Everything goes through the official SDK (``client.beta.memory_stores.memories``),
with the key from the environment and ``base_url`` for a self-hosted server
(``teamsync serve``). The engine, its plan and its gates are the same as for
git and REST; this module only maps them onto the store's calls:

- :meth:`MemstoreBackend.snapshot` lists the folder with ``view=basic`` (no
  contents; every memory's ``content_sha256`` and size), 100 per page, paged
  to the end. The first page is conditional on the last listing's ETag when
  the server gives one (an extension ``teamsync serve`` offers): a no-op sync is
  one small request. Every listed path is checked as a key before the engine
  sees it (key rules, ``*.md``, size, clashes); refused ones are reported.
- :meth:`fetch` reads contents by id (``view=full``), or by ``view=full``
  pages when most of the folder is wanted, and keeps only a content whose hash
  is the one listed.
- :meth:`apply` sends one call per change: a create; an update carrying a
  ``content_sha256`` precondition; a delete with ``expected_content_sha256``;
  a rename (a delete and a create of the same content) as one update of
  ``path``, which keeps the memory's id and history. A 409 (precondition or
  path conflict) is :class:`~teamsync.sync.base.PreconditionFailed`: the engine
  re-lists, merges and retries. 429 and 5xx are retried by the SDK with backoff
  that honours ``retry-after``.
- Keys become store paths under the prefix, checked with the store's own rules
  (NFC, at most 20 segments and 1,024 bytes, no control or format characters)
  before anything is sent; a memory over the store's 102,400-byte limit is held
  back with a message, and the rest is sent.

A store that is gone (404) reads as holding nothing, so the engine's
lost-history guard stops a sync that would read it as "everything deleted".
A store restored to an older state is told by version ids, which the API never
reuses: the state dir remembers, per memory, the ``memory_version_id`` last seen
and the ones seen superseded (by an edit, a rename or a delete, ours or a
teammate's). A listing whose current version of a memory is one of those went
back in time (:meth:`MemstoreBackend.descends_from` says no, and the guard
stops). A teammate who writes old content again makes a new version: not a loss.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from teamsync._files import write_atomic
from teamsync.config import Settings
from teamsync.errors import AuthError, BackendError, ConfigError, MissingExtra
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
from teamsync.sync.config import SyncConfig, remote_identity
from teamsync.sync.history import Change
from teamsync.sync.local import file_problem
from teamsync.sync.plan import safe_who
from teamsync.sync.restore import RemoteVersion
from teamsync.wire import (
    MANIFEST_NAME,
    MEMORY_MAX_BYTES,
    MEMORY_PAGE_MAX,
    memory_path_problem,
    memory_sha256,
    store_checksum,
)

if TYPE_CHECKING:
    import anthropic

MAX_RETRIES = 4
"""Retries of a 429 or 5xx (the SDK's backoff, honouring ``retry-after``)."""
TIMEOUT_S = 60.0
MAX_PAGES = 2_000
"""At most 200,000 memories are listed (100 a page); a server that pages on forever stops there."""
FULL_PAGE = 20
DESCENT_PROBES = 50
"""Memories gone since the last listing whose history is looked up, at most."""
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Listed:
    """One memory as the listing gave it."""

    id: str
    sha: str
    """``content_sha256`` (64 hex)."""
    size: int
    updated_at: float
    version: str = ""
    """``memory_version_id``: the version holding the current content (``memver_…``)."""


@dataclass(frozen=True)
class Seen:
    """What this machine saw of one memory's versions (kept in the state dir)."""

    latest: str
    """The ``memory_version_id`` listed last ("" once the memory left the listing)."""
    superseded: tuple[str, ...]
    """Version ids seen current here and then replaced (an edit, a rename, a delete)."""
    at: float
    """``updated_at`` of the latest version seen live (0.0: not recorded, an older cache)."""


SUPERSEDED_KEPT = 16
"""Version ids kept per memory once superseded (by an edit, a rename or a delete)."""
RECORDS_KEPT = 50_000
"""Memories (live or deleted) whose versions are remembered, at most."""


def normalize_prefix(prefix: str | None) -> str:
    """``team`` / ``/team`` / ``/team/`` -> ``/team/``; None or ``/`` -> ``/``; else UsageError."""
    from teamsync.errors import UsageError

    raw = (prefix or "/").strip()
    if raw in ("", "/"):
        return "/"
    raw = "/" + raw.strip("/") + "/"
    problem = memory_path_problem(raw[:-1])
    if problem is not None:
        raise UsageError(f"--path-prefix {prefix!r}: {problem}")
    return raw


class MemstoreBackend(BackendDefaults):
    """A :class:`~teamsync.sync.base.Backend` over one folder of a memory store."""

    name = "memstore"

    def __init__(
        self,
        store_id: str,
        api_key: str,
        *,
        prefix: str = "/",
        base_url: str | None = None,
        who: str = "someone",
        cache: Path | None = None,
        max_retries: int = MAX_RETRIES,
        client: anthropic.Anthropic | None = None,
    ) -> None:
        try:
            import anthropic
        except ImportError as exc:
            raise MissingExtra("anthropic", "memstore", "the Memory Stores backend") from exc
        if not hasattr(anthropic.resources.beta, "MemoryStores"):  # an SDK older than 2.15
            raise MissingExtra("anthropic>=2.15", "memstore", "the Memory Stores backend")

        self.store_id = store_id
        self.prefix = normalize_prefix(prefix)
        self.who = safe_who(who)
        self.where = f"memory store {store_id}" + (f" at {base_url}" if base_url else "")
        self.client = client or anthropic.Anthropic(
            api_key=api_key, base_url=base_url or None, max_retries=max_retries, timeout=TIMEOUT_S
        )
        self.mems = self.client.beta.memory_stores.memories
        self.cache = cache
        self._listing: dict[str, Listed] = {}
        self._etag: str | None = None
        self._snap: Snapshot | None = None
        self.refused_on_fetch: dict[str, str] = {}
        self._cached_listing: dict[str, Listed] = {}
        self._cached_rejected: dict[str, str] = {}
        self._seen: dict[str, dict[str, Listed]] = {}
        """store checksum -> the listing it names, for :meth:`descends_from`."""
        self._record: dict[str, Seen] = {}
        """memory id -> what this machine saw of its versions (:class:`Seen`)."""
        self._went_back: list[str] = []
        """Keys whose current version is one this machine saw superseded (this listing)."""
        self._cache_at_start: str | None = None
        self.requests = 0
        """Calls sent (the benchmark reads it)."""
        self._load_cache()

    # -- reading ----------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        listing, rejected = self._list()
        self.refused_on_fetch = {}
        if listing is None:  # the store is gone
            self._listing, self._snap = {}, Snapshot(version=None, checksums={})
            return self._snap
        sums = {k: "sha256:" + m.sha for k, m in listing.items()}
        self._seen[store_checksum(sums)] = listing
        snap = Snapshot(
            version=store_checksum(sums),
            checksums=sums,
            changed_at={k: m.updated_at for k, m in listing.items()},
            rejected=rejected,
            went_back=tuple(self._went_back),
        )
        self._listing, self._snap = listing, snap
        return snap

    def _list(self) -> tuple[dict[str, Listed] | None, dict[str, str]]:
        """key -> memory for the folder (None: no such store), and refused paths."""
        import anthropic

        raw: list[Any] = []
        page: str | None = None
        first_etag: str | None = None
        for n in range(MAX_PAGES):
            headers = {"If-None-Match": self._etag} if n == 0 and self._etag else {}
            try:
                resp = self._call(
                    self.mems.with_raw_response.list,
                    self.store_id,
                    path_prefix=self.prefix if self.prefix != "/" else anthropic.omit,
                    limit=MEMORY_PAGE_MAX,
                    view="basic",
                    **({"page": page} if page else {}),
                    extra_headers=headers,
                )
            except _NotModified:
                return dict(self._cached_listing), dict(self._cached_rejected)
            except anthropic.NotFoundError:
                return None, {}
            if n == 0:
                first_etag = resp.headers.get("etag")
            parsed = resp.parse()
            raw.extend(parsed.data)
            page = parsed.next_page
            if not page:
                break
        else:
            raise BackendError(f"{self.where} listed more than {MAX_PAGES} pages; refused")
        listing, rejected = self._validate(raw)
        self._went_back = self._older(listing)
        self._cached_rejected = rejected
        self._keep(listing, first_etag)
        return listing, rejected

    def _older(self, listing: Mapping[str, Listed]) -> list[str]:
        """Keys listed at an older version than this machine saw: the store went back.

        Older is either a version seen superseded here, or another version than the
        one seen last whose ``updated_at`` is earlier than that one's (a version the
        store made before the one this machine saw: the restored backup was taken
        between two edits this machine did not see apart). A store's clock that ran
        backwards between two writes of one memory would read the same way.
        """
        out = []
        for key, m in listing.items():
            seen = self._record.get(m.id)
            if seen is None or not m.version or m.version == seen.latest:
                continue
            if m.version in seen.superseded or (seen.at and m.updated_at < seen.at):
                out.append(key)
        return sorted(out)

    def _remember(self, listing: Mapping[str, Listed]) -> None:
        """Advance the version record to ``listing`` (a read of the folder, or what a push
        made of it): a version no longer current is superseded, a memory gone is deleted."""
        now = {m.id: m for m in listing.values() if m.version}
        if listing and not now:
            return  # a server that lists no version ids: nothing to judge by
        rec = self._record
        for mid, seen in list(rec.items()):
            current = now.get(mid)
            version = current.version if current is not None else ""
            if version == seen.latest:
                continue
            older = (*seen.superseded, seen.latest) if seen.latest else seen.superseded
            at = current.updated_at if current is not None else seen.at  # kept once deleted
            rec[mid] = Seen(version, older[-SUPERSEDED_KEPT:], at)
        for mid, m in now.items():
            if mid not in rec:
                rec[mid] = Seen(m.version, (), m.updated_at)
        while len(rec) > RECORDS_KEPT:  # the oldest records go first (insertion order)
            rec.pop(next(iter(rec)))

    def _validate(self, items: Sequence[Any]) -> tuple[dict[str, Listed], dict[str, str]]:
        listing: dict[str, Listed] = {}
        rejected: dict[str, str] = {}
        for item in items:
            path = getattr(item, "path", None)
            if getattr(item, "type", None) != "memory" or not isinstance(path, str):
                continue
            if not path.startswith(self.prefix):
                continue  # not below the folder asked for: not ours to judge
            key = path[len(self.prefix) :]
            if key == MANIFEST_NAME:
                continue  # a mount's bookkeeping, never a memory
            sha, size = (
                getattr(item, "content_sha256", None),
                getattr(item, "content_size_bytes", 0),
            )
            problem = file_problem(key, size if isinstance(size, int) else None)
            if problem is None and not (
                isinstance(sha, str) and len(sha) == 64 and set(sha) <= _HEX
            ):
                problem = "the store listed no usable content_sha256 for it"
            if problem is None and key in listing:
                problem = "the store listed this path twice"
            if problem is not None:
                rejected[key] = problem
                continue
            listing[key] = _listed(item)
        for key, reason in key_clashes({k: m.sha for k, m in listing.items()}).items():
            rejected[key] = reason
            listing.pop(key, None)
        return listing, rejected

    def fetch(self, keys: Sequence[str]) -> Mapping[str, str]:
        """Contents of ``keys`` exactly as listed (a memory changed meanwhile is omitted)."""
        import anthropic

        wanted = [k for k in keys if k in self._listing]
        texts: dict[str, str] = {}
        if len(wanted) > max(len(self._listing) // FULL_PAGE, 50):
            for item in self._pages(view="full"):
                key = item.path[len(self.prefix) :] if item.path.startswith(self.prefix) else None
                if key is not None and key in self._listing and isinstance(item.content, str):
                    self._take(key, item.content, item.content_sha256, texts)
            return {k: texts[k] for k in keys if k in texts}
        for key in wanted:
            try:
                item = self._call(
                    self.mems.retrieve, self._listing[key].id, memory_store_id=self.store_id
                )
            except anthropic.NotFoundError:
                continue  # deleted meanwhile: the next round sees it
            if isinstance(item.content, str):
                self._take(key, item.content, item.content_sha256, texts)
        return {k: texts[k] for k in keys if k in texts}

    def _take(self, key: str, text: str, claimed: str, texts: dict[str, str]) -> None:
        listed = self._listing[key].sha
        if memory_sha256(text) != claimed:
            self.refused_on_fetch[key] = "content does not match the content_sha256 the store gave"
        elif claimed == listed:
            problem = file_problem(key, len(text.encode("utf-8")))
            if problem is None and "\x00" in text:
                problem = "content holds NUL bytes (not a text memory)"
            if problem is None:
                texts[key] = text
            else:
                self.refused_on_fetch[key] = problem

    def _pages(self, view: str) -> Iterator[Any]:
        import anthropic

        page: str | None = None
        for _ in range(MAX_PAGES):
            resp = self._call(
                self.mems.list,
                self.store_id,
                path_prefix=self.prefix if self.prefix != "/" else anthropic.omit,
                limit=FULL_PAGE if view == "full" else MEMORY_PAGE_MAX,
                view=view,
                **({"page": page} if page else {}),
            )
            yield from resp.data
            page = resp.next_page
            if not page:
                return

    # -- writing ----------------------------------------------------------------------
    def apply(self, changes: ChangeSet) -> Applied | PreconditionFailed:
        import anthropic

        held: dict[str, str] = {}
        sendable: dict[str, str] = {}
        for key, text in changes.upserts.items():
            why = self._unsendable(key, text)
            if why is None:
                sendable[key] = text
            else:
                held[key] = why
        renames = _renames(sendable, changes.deletes, changes.base_checksums)
        done: dict[str, str] = {}
        deleted: list[str] = []
        self._etag = None  # whatever happens, the next listing is read afresh
        after = dict(self._listing)
        try:
            for old, new in sorted(renames.items()):
                after[new] = _listed(self._rename(old, new, changes.base_checksums[old]))
                after.pop(old, None)
                done[new] = checksum(sendable[new])
                deleted.append(old)
            for key in sorted(set(sendable) - set(renames.values())):
                try:
                    made = self._upsert(key, sendable[key], changes.base_checksums.get(key))
                except _Blocked as exc:
                    held[key] = exc.why  # the rest goes ahead; the file stays here
                    continue
                after[key] = _listed(made)
                done[key] = checksum(sendable[key])
            for key in sorted(set(changes.deletes) - set(renames)):
                self._delete(key, changes.base_checksums.get(key))
                after.pop(key, None)
                deleted.append(key)
        except _Conflict as exc:
            self._keep(None, None)
            return PreconditionFailed(keys=[exc.key])
        except anthropic.NotFoundError as exc:
            raise BackendError(
                f"{self.where} is gone (404) in the middle of a push: {exc.message}"
            ) from None
        listing = {k: v for k, v in (self._snap.checksums if self._snap else {}).items()}
        listing.update(done)
        for key in deleted:
            listing.pop(key, None)
        self._keep(after, None)  # no ETag for it: the next run lists afresh, knowing these ids
        return Applied(version=store_checksum(listing), checksums=done, held=held)

    def _unsendable(self, key: str, text: str) -> str | None:
        size = len(text.encode("utf-8"))
        if size > MEMORY_MAX_BYTES:
            return (
                f"{size:,} bytes, over the memory store's {MEMORY_MAX_BYTES:,}-byte limit for one "
                "memory; shorten or split it"
            )
        problem = memory_path_problem(self.prefix + key)
        if problem is not None:
            return f"the memory store cannot hold this name: {problem}; rename the file"
        return None

    def _upsert(self, key: str, text: str, base: str | None) -> Any:
        import anthropic

        listed = self._listing.get(key)
        if base is None or listed is None:
            try:
                return self._call(
                    self.mems.create, self.store_id, path=self.prefix + key, content=text
                )
            except anthropic.ConflictError as exc:
                blocking = _overlapping(exc, self.prefix + key)
                if blocking is None:
                    raise _Conflict(key) from None
                raise _Blocked(
                    f"not pushed: the store holds {blocking!r}, which needs this name as a file "
                    "or a folder (the server said so for this one memory); rename one"
                ) from None
        try:
            return self._call(
                self.mems.update,
                listed.id,
                memory_store_id=self.store_id,
                content=text,
                precondition={"type": "content_sha256", "content_sha256": _hex(base)},
            )
        except (anthropic.ConflictError, anthropic.NotFoundError):
            raise _Conflict(key) from None

    def _rename(self, old: str, new: str, base: str | None) -> Any:
        import anthropic

        listed = self._listing.get(old)
        if listed is None or base is None:
            raise _Conflict(old)
        try:
            return self._call(
                self.mems.update,
                listed.id,
                memory_store_id=self.store_id,
                path=self.prefix + new,
                precondition={"type": "content_sha256", "content_sha256": _hex(base)},
            )
        except (anthropic.ConflictError, anthropic.NotFoundError):
            raise _Conflict(old) from None

    def _delete(self, key: str, base: str | None) -> None:
        import anthropic

        listed = self._listing.get(key)
        if listed is None:
            return  # already gone
        try:
            self._call(
                self.mems.delete,
                listed.id,
                memory_store_id=self.store_id,
                **({"expected_content_sha256": _hex(base)} if base else {}),
            )
        except anthropic.ConflictError:
            raise _Conflict(key) from None
        except anthropic.NotFoundError:
            return  # deleted meanwhile: what we wanted

    # -- the SDK, with teamsync's errors ----------------------------------------------
    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import anthropic

        self.requests += 1
        try:
            return fn(*args, **kwargs)
        except anthropic.APIStatusError as exc:
            if exc.status_code == 304:
                raise _NotModified() from None
            if isinstance(exc, anthropic.ConflictError | anthropic.NotFoundError):
                raise
            if isinstance(exc, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
                raise AuthError(
                    f"{self.where} refused the key ({exc.status_code}): {_message(exc)}. Check "
                    "ANTHROPIC_API_KEY (or TEAMSYNC_TOKEN for teamsync serve)"
                ) from None
            raise BackendError(
                f"{self.where} answered {exc.status_code}: {_message(exc)}"
            ) from None
        except anthropic.APIConnectionError as exc:
            raise BackendError(
                f"cannot reach {self.where} ({type(exc).__name__}); check the network and the URL"
            ) from None
        except anthropic.APIResponseValidationError:
            raise BackendError(
                f"{self.where} answered something that is not a memory; refused"
            ) from None

    # -- the listing kept across runs --------------------------------------------------
    def _load_cache(self) -> None:
        if self.cache is None:
            return
        try:
            self._cache_at_start = self.cache.read_text(encoding="utf-8")
            data = json.loads(self._cache_at_start)
            if data.get("store") != [self.store_id, self.prefix]:
                return
            self._record = {
                str(k): Seen(str(v[0]), tuple(str(x) for x in v[1]), float(v[2]) if v[2:] else 0.0)
                for k, v in data.get("versions", {}).items()
            }
            items = {k: Listed(*v) for k, v in data["listing"].items()}
            rejected = {str(k): str(v) for k, v in data["rejected"].items()}
            etag = data["etag"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
            return
        if etag is None or isinstance(etag, str):
            self._etag, self._cached_listing, self._cached_rejected = etag, items, rejected
            sums = {k: "sha256:" + m.sha for k, m in items.items()}
            self._seen[store_checksum(sums)] = items

    def keep_listing_at_mark(self) -> None:
        """Put back what the state dir held when the run started (a guard stopped it):
        the next run reads the store afresh and judges it against the same record."""
        if self.cache is None:
            return
        try:
            if self._cache_at_start is None:
                self.cache.unlink(missing_ok=True)
            else:
                write_atomic(self.cache, self._cache_at_start, new_mode=0o600)
        except OSError:
            pass

    def _keep(self, listing: dict[str, Listed] | None, etag: str | None) -> None:
        """Keep ``listing`` (None: forget it) and the ETag it was read under, across runs."""
        self._etag = etag
        self._cached_listing = listing or {}
        if listing is not None:
            sums = {k: "sha256:" + m.sha for k, m in listing.items()}
            self._seen[store_checksum(sums)] = listing
            self._remember(listing)
        if self.cache is None:
            return
        data = {
            "store": [self.store_id, self.prefix],
            "etag": self._etag,
            "listing": {
                k: [m.id, m.sha, m.size, m.updated_at, m.version]
                for k, m in self._cached_listing.items()
            },
            "rejected": self._cached_rejected if listing is not None else {},
            "versions": {k: [v.latest, list(v.superseded), v.at] for k, v in self._record.items()},
        }
        try:
            self.cache.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomic(self.cache, json.dumps(data), new_mode=0o600)
        except OSError:
            pass  # a cache that cannot be written costs one full listing next time

    # -- history ----------------------------------------------------------------------
    def _versions(self, memory_id: str | None = None, *, full: bool = False) -> Iterator[Any]:
        """The store's versions, newest first (of one memory when ``memory_id``)."""
        vers = self.client.beta.memory_stores.memory_versions
        page: str | None = None
        for _ in range(MAX_PAGES):
            resp = self._call(
                vers.list,
                self.store_id,
                limit=FULL_PAGE if full else MEMORY_PAGE_MAX,
                view="full" if full else "basic",
                **({"memory_id": memory_id} if memory_id else {}),
                **({"page": page} if page else {}),
            )
            yield from resp.data
            page = resp.next_page
            if not page:
                return

    def past_checksums(self, keys: Collection[str]) -> Mapping[str, Collection[str]]:
        """key -> every ``content_sha256`` the store's retained versions hold for its path."""
        wanted = {self.prefix + k: k for k in keys}
        seen: dict[str, set[str]] = {}
        for v in self._versions():
            key = wanted.get(v.path) if isinstance(v.path, str) else None
            if key is not None and isinstance(v.content_sha256, str):
                seen.setdefault(key, set()).add("sha256:" + v.content_sha256)
        return seen

    def log(self, key: str | None, limit: int) -> list[Change]:
        """The newest ``limit`` changes (of ``key``), with who made each (``created_by``)."""
        rows: list[Change] = []
        path = None if key is None else self.prefix + key
        for v in self._versions():
            if len(rows) >= limit:
                break
            at = v.path if isinstance(v.path, str) else None
            if at is None or not at.startswith(self.prefix) or (path is not None and at != path):
                continue
            rows.append(
                Change(
                    at=v.created_at.timestamp(),
                    who=_actor(v.created_by),
                    key=at[len(self.prefix) :],
                    action="delete" if v.operation == "deleted" else "upsert",
                    version=v.id,
                    checksum=None if v.content_sha256 is None else "sha256:" + v.content_sha256,
                )
            )
        return rows

    def version_at(self, key: str, ref: str) -> RemoteVersion:
        """``key`` as the store's version ``ref`` (``memver_…``) left it."""
        import anthropic

        vers = self.client.beta.memory_stores.memory_versions
        try:
            v = self._call(vers.retrieve, ref, memory_store_id=self.store_id)
        except anthropic.NotFoundError:
            raise BackendError(f"{self.where} has no version {ref}; see `teamsync log`") from None
        if v.path != self.prefix + key:
            raise BackendError(f"version {ref} is not a version of {key}; see `teamsync log {key}`")
        if v.redacted_at is not None or v.content is None:
            raise BackendError(f"version {ref} of {key} holds no content (deleted or redacted)")
        return RemoteVersion(
            key, ref, v.content, "sha256:" + memory_sha256(v.content), v.created_at.timestamp()
        )

    def redact(self, ref: str) -> str:
        """Blank version ``ref`` for good (the store's own redaction); its id back."""
        vers = self.client.beta.memory_stores.memory_versions
        return str(self._call(vers.redact, ref, memory_store_id=self.store_id).id)

    def texts(self, *, history: bool) -> Iterator[tuple[str, str, str | None]]:
        """``(path, text, version id)`` of every memory below the prefix, or with
        ``history`` of every retained version that still holds a text (for ``scan``)."""
        if not history:
            for item in self._pages(view="full"):
                if isinstance(item.content, str):
                    yield item.path, item.content, item.memory_version_id
            return
        for v in self._versions(full=True):
            if isinstance(v.content, str) and isinstance(v.path, str):
                if v.path.startswith(self.prefix):
                    yield v.path, v.content, v.id

    def descends_from(self, version: str) -> bool | None:
        """Does the store's history lead from the listing ``version`` named to now?

        No, when a memory is listed at a version this machine saw superseded
        (restored from a backup). Otherwise the listing ``version`` names must be
        known (this process or the kept listing of the last run saw it): each
        memory of it that is gone now must have left a version (a delete, or the
        rename that moved it); a memory with no retained versions at all means the
        store lost its history (deleted and made again, restored from a backup).
        None when it cannot tell.
        """
        import anthropic

        if self._went_back:
            return False  # a memory is back at a version this machine saw superseded
        then = self._seen.get(version)
        if then is None:
            return None
        now = {m.id for m in self._listing.values()}
        gone = sorted({m.id for m in then.values()} - now)
        if not gone:
            # nothing vanished; with version ids listed, nothing went back either
            versioned = any(m.version for m in self._listing.values())
            return True if versioned else None
        vers = self.client.beta.memory_stores.memory_versions
        for memory_id in gone[:DESCENT_PROBES]:
            try:
                page = self._call(vers.list, self.store_id, memory_id=memory_id, limit=1)
            except anthropic.NotFoundError:
                return False
            if not page.data:
                return False
        return True

    def identity(self) -> str:
        return self.who

    def close(self) -> None:
        self.client.close()


class _Blocked(Exception):
    """A create the store refused for that one memory: another memory's path overlaps."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class _Conflict(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _NotModified(Exception):
    pass


def _listed(item: Any) -> Listed:
    """A listed memory, or a create's or update's answer, as a listing entry."""
    updated = getattr(item, "updated_at", None)
    version = getattr(item, "memory_version_id", None)
    return Listed(
        str(item.id),
        str(item.content_sha256),
        int(item.content_size_bytes),
        updated.timestamp() if isinstance(updated, datetime) else 0.0,
        version if isinstance(version, str) else "",
    )


def _hex(value: str) -> str:
    return value.removeprefix("sha256:")


def _overlapping(exc: Any, path: str) -> str | None:
    """The other memory's path when a create's 409 is a path conflict with a memory at
    another path (an ancestor or a descendant: ``conflicting_path``, as the API
    reference documents it), printable; None for anything else (the same path taken
    meanwhile, a precondition, a server that names no path): a conflict to re-list."""
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or error.get("type") != "memory_path_conflict_error":
        return None
    other = error.get("conflicting_path")
    if not isinstance(other, str) or not other or other == path:
        return None
    return printable(other[:1100])


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    text = error.get("message") if isinstance(error, dict) else None
    return printable(text[:300]) if isinstance(text, str) else "no message"


ACTOR_KINDS = (
    ("user_id", "user"),
    ("api_key_id", "API key"),
    ("session_id", "session"),
    ("service_account_id", "service account"),
)
"""The API's actors (``created_by``): each names one id, and its kind; none names a person."""


def _actor(actor: Any) -> str:
    """Who wrote a version, as far as the store tells: the actor's kind and id (``API key
    apikey_…``, ``user user_…``, ``session sesn_…``, ``service account svac_…``), led by
    the token's label where the server adds one (``teamsync serve``: ``alice (API key
    apikey_…)``). Printable only: a server's words never reach the terminal raw."""
    if actor is None:
        return "?"
    for attr, kind in ACTOR_KINDS:
        value = getattr(actor, attr, None)
        if isinstance(value, str):
            named = f"{kind} {printable(value[:100])}"
            label = (getattr(actor, "model_extra", None) or {}).get("label")
            return (
                f"{printable(label[:60])} ({named})" if isinstance(label, str) and label else named
            )
    return "?"


def _renames(
    upserts: Mapping[str, str], deletes: Sequence[str], base: Mapping[str, str | None]
) -> dict[str, str]:
    """old key -> new key: a delete and a create of the same content, one to one."""
    new_by_sum: dict[str, list[str]] = {}
    for key in sorted(upserts):
        if base.get(key) is None:
            new_by_sum.setdefault(checksum(upserts[key]), []).append(key)
    out: dict[str, str] = {}
    for old in sorted(deletes):
        was = base.get(old)
        if was is not None and new_by_sum.get(was):
            out[old] = new_by_sum[was].pop(0)
    return out


def load_key(config: SyncConfig, environ: Mapping[str, str]) -> str:
    """``ANTHROPIC_API_KEY`` > ``TEAMSYNC_TOKEN`` (a ``teamsync serve`` token) > ``token_file``."""
    from teamsync.sync.rest_http import load_token

    key = environ.get("ANTHROPIC_API_KEY", "").strip() or environ.get("TEAMSYNC_TOKEN", "").strip()
    try:
        return load_token(config, {"TEAMSYNC_TOKEN": key})
    except ConfigError as exc:
        if key or config.token_file:
            raise
        raise ConfigError(
            "no key for the memory store: set ANTHROPIC_API_KEY (Anthropic's API) or "
            "TEAMSYNC_TOKEN (a `teamsync serve` token), or `token_file` in teamsync.yaml"
        ) from exc


def check_mount(team: Path, store_id: str) -> None:
    """Refuse a ``team/`` that Claude Code mounts for another store (its ``.memory-sync``).

    Claude Code stops syncing a mount whose manifest names another partition;
    so does teamsync: a manifest that names other stores and not this one, or
    that cannot be read, fails closed. One that names this store is fine (both
    sync the same store) and is never synced itself.
    """
    import re

    manifest = team / MANIFEST_NAME
    try:
        if not manifest.is_file() or manifest.is_symlink():
            if manifest.is_symlink() or manifest.exists():
                raise ConfigError(f"{manifest} is not a regular file; refused")
            return
        text = manifest.read_text(encoding="utf-8", errors="replace")[:65_536]
    except OSError as exc:
        raise ConfigError(f"cannot read {manifest}: {exc.strerror}; refused") from exc
    named = set(re.findall(r"memstore_[A-Za-z0-9]+", text))
    if store_id in named:
        return
    other = ", ".join(sorted(named)[:3]) or "a store this cannot tell"
    raise ConfigError(
        f"{team} is Claude Code's mount of another memory store ({other}: its {MANIFEST_NAME} "
        f"says so), not of {store_id}. Syncing it with a second store would mix the two; "
        "nothing was changed. Sync another memory directory with this store, or point "
        "--memory-store at the store the mount belongs to."
    )


def from_config(config: SyncConfig, settings: Settings) -> MemstoreBackend:
    """The factory :mod:`teamsync.commands.sync` calls (see ``BACKENDS``)."""
    import hashlib

    from teamsync.memdir.paths import working_memory_dir

    if not config.memory_store:
        raise ConfigError("teamsync.yaml: the memstore backend needs `memory_store`")
    check_mount(working_memory_dir(settings) / "team", config.memory_store)
    env = settings.environ
    who = env.get("GIT_AUTHOR_NAME") or env.get("USER") or env.get("LOGNAME") or "someone"
    name = hashlib.sha256(remote_identity(config).encode("utf-8")).hexdigest()[:16]
    return MemstoreBackend(
        config.memory_store,
        load_key(config, env),
        prefix=config.path_prefix or "/",
        base_url=config.url or None,
        who=who,
        cache=settings.state_dir / "memstore" / f"{name}.json",
    )
