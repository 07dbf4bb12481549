"""Caching of the REST listing: what the server said under an ETag, kept across runs.

A no-change sync costs one conditional GET answered 304: the snapshot is rebuilt
from the kept listing (:meth:`ListingKeeper.snapshot`), its deletes included
(``deletedEntries`` and ``deletedChecksums``: a stale copy is judged by its bytes
whichever way the listing came). The listing lives in the base
store (:class:`~teamsync.sync.base.ListingCache`) once the engine hands it over
(:meth:`~teamsync.sync.base.Backend.use_cache`); without it, only for one run. A
guard that stops a run puts back the listing kept when the run started
(:meth:`ListingKeeper.put_back`), so a lost history is told again, not cached away.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from teamsync.sync.base import ListingCache, Snapshot
from teamsync.sync.state import RemoteListing


class ListingKeeper:
    """The listing of one repository: the one read last, and the one kept at the start."""

    def __init__(self) -> None:
        self.listing: RemoteListing | None = None
        self.cache: ListingCache | None = None
        self.kept: RemoteListing | None = None

    def use(self, cache: ListingCache, read_yet: bool) -> RemoteListing | None:
        """Keep listings in ``cache`` from now on. The listing it held is taken as the one
        read last (and returned) unless a snapshot was ``read_yet``."""
        self.cache = cache
        listing = cache.listing()
        self.kept = listing
        if listing is None or read_yet:
            return None
        self.listing = listing
        return listing

    def put_back(self) -> None:
        """Put back the listing kept when the run started (a guard stopped the run)."""
        if self.cache is not None:
            self.cache.save_listing(self.kept)
        self.listing = self.kept

    def snapshot(self) -> Snapshot | None:
        """The kept listing as a snapshot (after a 304), or None when nothing is kept."""
        listing = self.listing
        if listing is None:
            return None
        return Snapshot(
            version=listing.version,
            checksums=dict(listing.checksums),
            changed_at=dict(listing.changed_at),
            rejected=dict(listing.rejected),
            serial=listing.serial,
            deleted=dict(listing.deleted),
            deleted_sums=dict(listing.deleted_sums),
        )

    def save(
        self,
        etag: str | None,
        snap: Snapshot | None,
        refused: Mapping[str, str],
        extensions: frozenset[str] | None,
    ) -> None:
        """Keep (or forget) what the server said under ``etag``, for the next run's 304;
        entries a fetch ``refused`` are kept as refused."""
        if snap is not None and refused:
            sums = {k: v for k, v in snap.checksums.items() if k not in refused}
            snap = replace(snap, checksums=sums, rejected={**snap.rejected, **refused})
        listing = None
        if etag and snap is not None:
            listing = RemoteListing(
                etag=etag,
                version=snap.version,
                serial=snap.serial,
                checksums=snap.checksums,
                changed_at=snap.changed_at,
                rejected=snap.rejected,
                extensions=extensions,
                deleted=snap.deleted,
                deleted_sums=snap.deleted_sums,
            )
        self.listing = listing
        if self.cache is not None:
            self.cache.save_listing(listing)
