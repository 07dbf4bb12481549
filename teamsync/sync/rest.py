"""The REST backend: Claude Code's team-memory wire format, hardened.

- :meth:`RestBackend.snapshot` sends one conditional GET (``If-None-Match``
  with the cached ETag: a no-change sync costs a 304) of the full view and
  validates every entry before the engine sees it: key, ``*.md``, size,
  UTF-8, the checksum the server claims, case/NFKC collisions, the entry cap.
  Refused entries land in :attr:`Snapshot.rejected` with a reason; the rest
  are kept. :meth:`fetch` serves texts from that same response, so what the
  engine merges is exactly the version it planned against.
- :meth:`apply` batches upserts greedily (encoded JSON <= 200,000 bytes; an
  oversized entry goes alone) and sends every PUT with a precondition:
  ``If-Match: <store checksum>``, or ``If-None-Match: *`` when the store did
  not exist (404) yet. 412 and 409 become :class:`PreconditionFailed`: the
  engine re-snapshots, merges and retries, so a teammate's newer version is
  never overwritten.
- Extensions (per-key ``baseChecksums``, ``deletes``) are used only when the
  server advertises them (``X-Teamsync-Extensions`` header or the
  ``/capabilities`` probe). Against a plain server, deletes are not sent and
  the run fails with a message naming them: never silently dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import httpx2

from teamsync.config import Settings
from teamsync.errors import BackendError
from teamsync.security.keys import find_collisions
from teamsync.sync.base import Applied, ChangeSet, PreconditionFailed, Snapshot, checksum
from teamsync.sync.config import SyncConfig
from teamsync.sync.local import file_problem
from teamsync.sync.plan import safe_who
from teamsync.sync.rest_http import Http, error_details, error_message, load_token, repo_from_origin

PATH = "/api/claude_code/team_memory"
BATCH_BYTES = 200_000
MAX_ENTRIES = 5_000
"""Client-side cap on entries taken from a server (a hostile one may list millions)."""

__all__ = ["RestBackend", "from_config"]


class RestBackend:
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
        max_entries: int = MAX_ENTRIES,
        **http: Any,
    ) -> None:
        self.repo = repo
        self.who = safe_who(who)
        self.max_entries = max_entries
        self.http = Http(config.url, token, transport=transport, **http)
        self.extensions: frozenset[str] | None = None
        self.server_max_entries: int | None = None
        self._etag: str | None = None
        self._snap: Snapshot | None = None
        self._texts: dict[str, str] = {}
        self.not_found: tuple[Mapping[str, str], bytes] | None = None

    # -- reading ----------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        headers = {"If-None-Match": self._etag} if self._etag and self._snap else {}
        status, head, body = self.http.send(
            "GET", PATH, params={"repo": self.repo}, headers=headers
        )
        self._note_extensions(head)
        if status == 304 and self._snap is not None:
            return self._snap
        if status == 404:
            self.not_found = (head, body)  # `init` checks it came from a team-memory server
            self._etag, self._texts = None, {}
            self._snap = Snapshot(version=None, checksums={})
            return self._snap
        if status != 200:
            raise self._unexpected(status, body, "pull")
        snap, texts = self._parse_full(body, head)
        self._etag, self._snap, self._texts = snap.version, snap, texts
        return snap

    def fetch(self, keys: Sequence[str]) -> Mapping[str, str]:
        return {k: self._texts[k] for k in keys if k in self._texts}

    def _parse_full(self, body: bytes, head: Mapping[str, str]) -> tuple[Snapshot, dict[str, str]]:
        data = _json(body, self.http.where)
        content = data.get("content")
        entries = content.get("entries") if isinstance(content, dict) else None
        if not isinstance(entries, dict):
            raise BackendError(f"{self.http.where} answered without content.entries; refused")
        claimed = content.get("entryChecksums") if isinstance(content, dict) else None
        claimed = claimed if isinstance(claimed, dict) else {}
        version = data.get("checksum") or head.get("etag", "").strip('"') or None
        if not isinstance(version, str):
            raise BackendError(f"{self.http.where} answered a non-string checksum; refused")
        texts, rejected = _validate(entries, claimed, self.max_entries)
        stamps = data.get("entryLastModified")
        changed = _times(stamps, texts) if isinstance(stamps, dict) else {}
        snap = Snapshot(
            version=version,
            checksums={k: checksum(t) for k, t in texts.items()},
            changed_at=changed,
            rejected=rejected,
        )
        return snap, texts

    # -- writing ----------------------------------------------------------------------
    def apply(self, changes: ChangeSet) -> Applied | PreconditionFailed:
        ext = self._extensions() if (changes.deletes or changes.base_checksums) else frozenset()
        deletes = list(changes.deletes) if "deletes" in ext else []
        skipped = [] if "deletes" in ext else sorted(changes.deletes)
        cas = changes.base_checksums if "baseChecksums" in ext else {}
        version = changes.base_version
        done: dict[str, str] = {}
        for batch in _batches(changes.upserts, deletes, cas):
            try:
                result = self._put(batch, version)
            except TooManyEntries as exc:
                raise exc.after_partial_push(len(done), self._total_after(changes)) from None
            if isinstance(result, PreconditionFailed):
                return result
            version = result
            done.update({k: checksum(v) for k, v in batch.get("entries", {}).items()})
        self._snap = None
        if skipped:
            raise BackendError(
                f"pushed {len(done)} memories, but {self.http.where} does not support deletes "
                f"(a teamsync extension), so these deletions were NOT propagated: "
                f"{', '.join(skipped[:20])}{' …' if len(skipped) > 20 else ''}. "
                "Restore the files, or delete them on the server by other means."
            )
        return Applied(version=version, checksums=done)

    def _put(self, batch: Mapping[str, Any], version: str | None) -> str | PreconditionFailed:
        headers = {"If-Match": version} if version else {"If-None-Match": "*"}
        raw = json.dumps(batch, ensure_ascii=False).encode("utf-8")
        status, head, body = self.http.send(
            "PUT", PATH, params={"repo": self.repo}, headers=headers, content=raw
        )
        if status == 200:
            new = _json(body, self.http.where).get("checksum") or head.get("etag", "").strip('"')
            if not isinstance(new, str) or not new:
                raise BackendError(f"{self.http.where} accepted a push without a checksum")
            return new
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
            self.extensions = frozenset()
            try:
                status, _, body = self.http.send("GET", PATH + "/capabilities", params={})
                listed = _json(body, self.http.where).get("extensions") if status == 200 else None
            except BackendError:
                listed = None
            if isinstance(listed, list):
                self.extensions = frozenset(x for x in listed if isinstance(x, str))
        return self.extensions

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


class TooManyEntries(BackendError):
    """The server's entry cap refused a batch (413 ``team_memory_too_many_entries``)."""

    def __init__(self, where: str, most: object, got: object, text: str | None = None) -> None:
        super().__init__(
            text
            or f"{where} holds at most {most} memories per repository and this push would "
            f"make {got}; delete memories the team no longer needs, then push again"
        )
        self.where, self.most = where, most

    def after_partial_push(self, stored: int, total: int | None) -> TooManyEntries:
        """The message once earlier batches of the same push were already stored."""
        whole = f"this push would make {total}" if total is not None else "this push is larger"
        kept = (
            f"; {stored} of its memories were already stored (the rest were not sent)"
            if stored
            else ""
        )
        text = (
            f"{self.where} holds at most {self.most} memories per repository and {whole}{kept}. "
            "Delete memories the team no longer needs, then push again"
        )
        return TooManyEntries(self.where, self.most, total, text)


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
    for group in find_collisions(texts):
        for key in group:
            others = ", ".join(repr(k) for k in group if k != key)
            rejected[key] = f"collides with {others} (differ only by case or Unicode form)"
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


def _batches(
    upserts: Mapping[str, str], deletes: Sequence[str], cas: Mapping[str, str | None]
) -> Iterator[dict[str, Any]]:
    """Greedy batches of at most :data:`BATCH_BYTES` encoded bytes (an oversized entry alone)."""
    batch: dict[str, Any] = _start(deletes, cas)
    size = len(json.dumps(batch, ensure_ascii=False).encode("utf-8"))
    for key in sorted(upserts):
        item = len(json.dumps({key: upserts[key]}, ensure_ascii=False).encode("utf-8"))
        if key in cas:
            item += len(json.dumps({key: cas[key]}).encode("utf-8"))
        if batch.get("entries") and size + item > BATCH_BYTES:
            yield batch
            batch, size = _start((), {}), 64
        batch.setdefault("entries", {})[key] = upserts[key]
        if key in cas:
            batch.setdefault("baseChecksums", {})[key] = cas[key]
        size += item
    if batch.get("entries") or batch.get("deletes"):
        yield batch


def _start(deletes: Sequence[str], cas: Mapping[str, str | None]) -> dict[str, Any]:
    batch: dict[str, Any] = {"entries": {}}
    if deletes:
        batch["deletes"] = list(deletes)
        batch["baseChecksums"] = {k: cas[k] for k in deletes if k in cas}
    return batch


def from_config(config: SyncConfig, settings: Settings) -> RestBackend:
    """The factory :mod:`teamsync.commands.sync` calls (see ``BACKENDS``)."""
    from teamsync.server.limits import normalize_repo

    token = load_token(config, settings.environ)
    repo = normalize_repo(config.repo) if config.repo else repo_from_origin(settings.cwd)
    return RestBackend(config, token, repo=repo, who=_who(settings))


def _who(settings: Settings) -> str:
    env = settings.environ
    return env.get("GIT_AUTHOR_NAME") or env.get("USER") or env.get("LOGNAME") or "someone"
