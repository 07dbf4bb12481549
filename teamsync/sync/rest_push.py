"""The REST push: batches sent under preconditions, then read back.

Every PUT carries a precondition: per key (``baseChecksums`` for every key it
names) when the server has that extension, so writers of different keys never
refuse each other; otherwise ``If-Match: <store checksum>``, or
``If-None-Match: *`` when the store did not exist (404) yet. 412 and 409 become
:class:`~teamsync.sync.base.PreconditionFailed`: the engine re-snapshots, merges
and retries, so a teammate's newer version is never overwritten. The read-back
after the push proves it took (a server that ignores deletes or drops writes
fails the run, never silently). ``rejectedEntries`` in a 200 answer become
:attr:`Applied.held` (the rest was stored).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from teamsync.errors import BackendError, TooManyEntries
from teamsync.security.names import printable
from teamsync.sync.base import Applied, ChangeSet, PreconditionFailed, Snapshot, checksum
from teamsync.sync.rest_batches import BatchPlan, expected_after, not_sent, per_key, plan_batches
from teamsync.sync.rest_cache import ListingKeeper
from teamsync.sync.rest_dialect import json_object, refused_entries, serial
from teamsync.sync.rest_ext import Capabilities
from teamsync.sync.rest_http import Http, error_details, error_message, unexpected
from teamsync.wire import PATH, is_store_checksum


@dataclass(frozen=True)
class _Sent:
    version: str | None
    serial: int | None
    done: dict[str, str]
    """key -> checksum stored."""
    held: dict[str, str]
    """key -> why the server refused it (``rejectedEntries``)."""
    puts: int


class Pusher:
    """Pushes change sets to one repository of one server."""

    def __init__(self, http: Http, repo: str, caps: Capabilities, keeper: ListingKeeper) -> None:
        self.http, self.repo, self.caps, self.keeper = http, repo, caps, keeper
        self.server_max_entries: int | None = None
        """The cap a server named when it refused a push for it (413)."""

    def apply(
        self, changes: ChangeSet, snap: Snapshot | None, refused: Mapping[str, str]
    ) -> Applied | PreconditionFailed:
        """Send ``changes`` planned on ``snap`` (entries a fetch ``refused`` stay refused
        in the kept listing)."""
        wants = changes.deletes or changes.base_checksums or changes.modified
        ext = self.caps.known() if wants else frozenset()
        deletes = list(changes.deletes)
        # Claude Code's own deletes (``soft_delete_keys``) on a server without the extension
        field = "deletes" if "deletes" in ext else "soft_delete_keys"
        cas = changes.base_checksums if "baseChecksums" in ext else {}
        times = changes.modified if "entryModified" in ext else {}
        limits = self.caps.limit()
        plan = plan_batches(changes.upserts, deletes, cas, limits, times, delete_field=field)
        sent = self._send(plan, changes, ext, snap)
        if isinstance(sent, PreconditionFailed):
            return sent
        if sent.puts:
            self._record(sent, deletes, snap, refused)
        if plan.too_big:
            raise BackendError(not_sent(len(sent.done), self.http.where, plan.too_big))
        return Applied(
            version=sent.version, checksums=sent.done, serial=sent.serial, held=sent.held
        )

    def _send(
        self, plan: BatchPlan, changes: ChangeSet, ext: frozenset[str], snap: Snapshot | None
    ) -> _Sent | PreconditionFailed:
        version, count, puts = changes.base_version, None, 0
        done: dict[str, str] = {}
        held: dict[str, str] = {}
        for batch in plan.batches:
            try:
                result = self.put(batch, None if per_key(batch, ext) else version)
            except TooManyEntries as exc:
                raise exc.after_partial_push(len(done), _total_after(snap, changes)) from None
            if isinstance(result, PreconditionFailed):
                return result
            version, count, refused = result
            puts += 1
            entries = batch.get("entries", {})
            held.update({k: why for k, why in refused.items() if k in entries})
            done.update({k: checksum(v) for k, v in entries.items() if k not in refused})
        return _Sent(version, count, done, held, puts)

    def _record(
        self, sent: _Sent, deletes: Sequence[str], prev: Snapshot | None, refused: Mapping[str, str]
    ) -> None:
        """Read the push back; keep the listing it leaves when that is known exactly."""
        before = prev.serial if prev is not None else None
        expected = expected_after(prev, sent.done, deletes)
        verified = self.verify(sent, deletes, before, expected)
        exts = self.caps.extensions
        if verified and expected is not None:
            stamps = {**prev.changed_at} if prev is not None else {}
            stamps.update(dict.fromkeys(sent.done, time.time()))
            after = Snapshot(sent.version, expected, stamps, {}, sent.serial)
            self.keeper.save(sent.version, after, refused, exts)
        else:
            self.keeper.save(None, None, refused, exts)  # the next run reads the listing afresh

    def verify(
        self,
        sent: _Sent,
        deletes: Sequence[str],
        before: int | None,
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
        version = sent.version
        exact = expected is not None and version is not None
        exact = exact and is_store_checksum(expected or {}, version or "")
        read = self._read_back(version if exact else None)
        if read is None:
            return True
        sums, count = read
        missing = [k for k, c in sent.done.items() if sums.get(k) != c]
        missing += [k for k in deletes if k in sums]
        if not missing:
            return False
        if count is not None and before is not None and count > before + sent.puts:
            return False  # others wrote since: the next round reconciles those keys
        shown = ", ".join(printable(k) for k in sorted(missing)[:10])
        raise BackendError(
            f"{self.http.where} acknowledged the push but does not hold it: {len(missing)} "
            f"key(s) read back differently ({shown}). Nothing was recorded as synced and your "
            "local copies are unchanged; the server is not storing writes: tell its admin, "
            "then run `teamsync sync` again."
        )

    def _read_back(self, version: str | None) -> tuple[Mapping[str, Any], int | None] | None:
        """The listed hashes and version counter; None when a 304 says the store is
        exactly ``version`` (asked only when the expected listing is known)."""
        headers = {"If-None-Match": version} if version else {}
        status, _, body = self.http.send(
            "GET", PATH, params={"repo": self.repo, "view": "hashes"}, headers=headers
        )
        if status == 304 and version:
            return None
        if status == 404:
            return {}, None
        if status != 200:
            raise unexpected(self.http.where, status, body, "push check")
        data = json_object(body, self.http.where)
        listed = data.get("entryChecksums")
        return (listed if isinstance(listed, dict) else {}), serial(data)

    def put(
        self, batch: Mapping[str, Any], version: str | None
    ) -> tuple[str, int | None, dict[str, str]] | PreconditionFailed:
        """One PUT: ``(new checksum, version counter, refused key -> why)`` or the conflict.

        The precondition is ``If-Match: version``, ``If-None-Match: *`` when the store
        did not exist, or (``version`` None) none on the store: the batch carries a
        per-key one for every key it names (:func:`~teamsync.sync.rest_batches.per_key`).
        A server may store a batch but for some entries (``rejectedEntries``: a secret,
        a key it refuses); those come back with the server's reason.
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
            data = json_object(body, self.http.where)
            new = data.get("checksum") or head.get("etag", "").strip('"')
            if not isinstance(new, str) or not new:
                raise BackendError(f"{self.http.where} accepted a push without a checksum")
            return new, serial(data), refused_entries(data)
        if status in (409, 412):
            keys = error_details(body).get("keys") if status == 409 else None
            good = [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []
            return PreconditionFailed(keys=good)
        if status == 413:
            raise self._too_large(body)
        raise unexpected(self.http.where, status, body, "push")

    def _too_large(self, body: bytes) -> BackendError:
        details = error_details(body)
        if details.get("error_code") == "team_memory_too_many_entries":
            most, got = details.get("max_entries"), details.get("received_entries")
            if isinstance(most, int):
                self.server_max_entries = most
            return TooManyEntries(self.http.where, most, got)
        why = error_message(body) or "request too large"
        return BackendError(f"{self.http.where} refused the push (413): {why}")


def _total_after(snap: Snapshot | None, changes: ChangeSet) -> int | None:
    """How many entries the whole push would leave on the server (None: unknown)."""
    if snap is None:
        return None
    keys = set(snap.checksums) | set(changes.upserts)
    return len(keys - set(changes.deletes))
