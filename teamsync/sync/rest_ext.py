"""The teamsync extensions of the wire format, and the limits a server advertises.

A server names its extensions in the ``X-Teamsync-Extensions`` header or the
``/capabilities`` probe (:class:`Capabilities`); the client uses one only when
it is named: per-key ``baseChecksums``, ``deletes``, ``entryModified``,
``entries`` (named keys by ``POST``), ``delta`` (:func:`apply_delta`: only what
changed since a serial) and ``history`` (:mod:`teamsync.sync.rest_history`).
Limits (entries per repository, bytes per entry, bytes per body) come from the
same probe (:class:`Limits`); a plain server gets Claude Code's defaults, and a
hostile one cannot raise them past hard ceilings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from teamsync.errors import BackendError
from teamsync.limits import BATCH_BYTES, DEFAULT_MAX_ENTRIES, MAX_BODY_BYTES, MAX_MEMORY_BYTES
from teamsync.sync.base import Snapshot
from teamsync.sync.rest_dialect import Cap, json_object, parse_hashes
from teamsync.sync.rest_http import Http
from teamsync.sync.state import RemoteListing
from teamsync.wire import CAPABILITIES_PATH, CAPS_HEADER, is_store_checksum

ENTRIES_EXT = "entries"
"""The extension that serves named keys (``POST …/team_memory/entries``)."""
DELTA_EXT = "delta"
"""The extension that lists only what changed since a serial (``since``)."""
HISTORY_EXT = "history"
MAX_ENTRIES = DEFAULT_MAX_ENTRIES
"""Default cap on entries taken from a server that does not advertise its own."""
CEILING_ENTRIES = 1_000_000
"""No server, however it advertises, makes the client take more entries than this."""
CEILING_BODY_BYTES = 64 * 1024 * 1024


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


class Capabilities:
    """What one server advertised: its extensions and limits, probed at most once."""

    def __init__(self, http: Http, max_entries: int | None = None) -> None:
        self.http = http
        self.max_entries = max_entries
        """A fixed client cap (tests); None: the server's advertised cap."""
        self.extensions: frozenset[str] | None = None
        self.limits: Limits | None = None

    def note(self, head: Mapping[str, str]) -> None:
        """Take the extensions an answer's header names."""
        advertised = head.get(CAPS_HEADER.lower())
        if advertised is not None:
            self.extensions = frozenset(x.strip() for x in advertised.split(",") if x.strip())

    def known(self) -> frozenset[str]:
        """The extensions (probing for them the first time they are needed)."""
        if self.extensions is None:
            self.probe()
        return self.extensions or frozenset()

    def has(self, extension: str) -> bool:
        return extension in self.known()

    def limit(self) -> Limits:
        if self.limits is None:
            self.probe()
        return self.limits or Limits()

    def cap(self, listed: int) -> int:
        """The entry cap for a listing of ``listed`` entries: past the default cap only
        when the server advertises more (asked only then)."""
        if self.max_entries is not None:
            return self.max_entries
        return self.limit().max_entries if listed > MAX_ENTRIES else MAX_ENTRIES

    def probe(self) -> None:
        """One ``/capabilities`` request: extensions and limits (defaults when absent)."""
        data: dict[str, Any]
        try:
            status, _, body = self.http.send("GET", CAPABILITIES_PATH, params={})
            data = json_object(body, self.http.where) if status == 200 else {}
        except BackendError:
            data = {}
        listed = data.get("extensions")
        if self.extensions is None:
            self.extensions = frozenset(
                x for x in (listed if isinstance(listed, list) else []) if isinstance(x, str)
            )
        self.limits = Limits.advertised(data.get("limits"))


def apply_delta(
    data: Mapping[str, Any],
    head: Mapping[str, str],
    listing: RemoteListing,
    where: str,
    cap: Cap,
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
    snap = parse_hashes({**data, "entryChecksums": merged}, head, where, cap)
    kept = {k: t for k, t in listing.changed_at.items() if k in snap.checksums and k not in sums}
    # deletes: the kept listing's still stand unless the key lives again; the delta's
    # (``deletedEntries`` / ``deletedChecksums`` of its ``deleted`` keys) are newer
    still = {k: t for k, t in listing.deleted.items() if k not in merged and k not in snap.deleted}
    return Snapshot(
        version=snap.version,
        checksums=snap.checksums,
        changed_at={**kept, **snap.changed_at},
        rejected=snap.rejected,
        serial=snap.serial,
        deleted={**still, **snap.deleted},
        deleted_sums={
            **{k: v for k, v in listing.deleted_sums.items() if k in still},
            **snap.deleted_sums,
        },
    )
