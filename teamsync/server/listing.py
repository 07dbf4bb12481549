"""The full listing as a stream: the JSON body of a ``GET`` written a page at a time.

A store of 50,000 memories is tens of megabytes of JSON; built whole (the rows,
then the dicts, then the encoded body) it took several times that in server
memory per request, and kept it after. Here the body is produced from the
storage's pages (:meth:`~teamsync.server.storage.Storage.listing`) as it is
sent, so a request holds one page, whatever the store's size. The bytes are
exactly what ``JSONResponse`` would have sent for the same view.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool

from teamsync.server.limits import iso
from teamsync.server.storage import Listing, Row


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _object(pages: Iterator[list[Row]], value: Callable[[Any], Any]) -> Iterator[str]:
    """``{"key":value,…}`` from pages of ``(key, raw)`` rows."""
    yield "{"
    first = True
    for page in pages:
        part = ",".join(f"{_dump(key)}:{_dump(value(raw))}" for key, raw in page)
        if part:
            yield part if first else "," + part
            first = False
    yield "}"


def _same(raw: Any) -> Any:
    return raw


def _stamp(raw: Any) -> str:
    return iso(float(raw))


def body(
    listing: Listing,
    repo: str,
    *,
    hashes: bool,
    deleted: Mapping[str, int] | None = None,
    deleted_sums: Mapping[str, str] | None = None,
) -> Iterator[bytes]:
    """The ``view=hashes`` or the full view of ``listing``, in chunks; ``deleted`` (key ->
    deletion time in ms, the legacy dialect's ``deletedEntries``) beside the checksums,
    and ``deleted_sums`` (key -> checksum of what was deleted, teamsync's
    ``deletedChecksums`` extension, which other clients ignore) after it."""
    gone = b',"deletedEntries":' + _dump(dict(deleted or {})).encode()
    gone += b',"deletedChecksums":' + _dump(dict(deleted_sums or {})).encode()
    h = listing.head
    common = {"checksum": h.checksum, "version": h.version, "lastModified": iso(h.last_modified)}
    if hashes:
        yield _dump(common)[:-1].encode() + b',"entryChecksums":'
    else:
        yield (_dump({"repo": repo, **common})[:-1] + ',"content":{"entries":').encode()
        for part in _object(listing.pages("content"), _same):
            yield part.encode()
        yield b',"entryChecksums":'
    for part in _object(listing.pages("checksum"), _same):
        yield part.encode()
    if not hashes:
        yield gone
    yield b',"entryLastModified":' if hashes else b'},"entryLastModified":'
    for part in _object(listing.pages("updated_at"), _stamp):
        yield part.encode()
    if hashes:
        yield gone
    yield b"}"


async def stream(listing: Listing, chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    """``chunks`` read in the thread pool (the database is blocking), the listing's
    transaction closed at the end or when the client goes away."""
    try:
        while True:
            chunk = await run_in_threadpool(next, chunks, None)
            if chunk is None:
                return
            yield chunk
    finally:
        listing.close()
