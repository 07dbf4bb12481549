"""The legacy dialect, writing: PUT bodies batched by their exact encoded size.

Upserts *and* deletes are packed greedily by the exact encoded size of the JSON
body (at most the server's ``batch_bytes``; an oversized entry goes alone, one
that would pass ``max_body_bytes`` even alone is held back and named). Deletes
travel as ``deletes`` (the extension) or Claude Code's own ``soft_delete_keys``.
Pure functions, no I/O: :mod:`teamsync.sync.rest_push` sends what they plan.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from teamsync.sync.base import Snapshot
from teamsync.sync.rest_ext import Limits


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
    Body sizes are counted exactly as :func:`teamsync.sync.rest_push.put` encodes them
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


def per_key(batch: Mapping[str, Any], ext: Collection[str]) -> bool:
    """True when every key of ``batch`` carries a ``baseChecksums`` precondition the
    server checks: the PUT then needs no store-wide ``If-Match``, so teammates who
    write different keys never refuse each other (only a key someone else changed
    gives 409, for that key)."""
    if "baseChecksums" not in ext:
        return False
    cas = batch.get("baseChecksums") or {}
    named = [*batch.get("entries", {}), *batch.get("deletes", [])]
    return bool(named) and all(key in cas for key in named)


def expected_after(
    prev: Snapshot | None, done: Mapping[str, str], deletes: Sequence[str]
) -> dict[str, str] | None:
    """The store's listing after a push, if nobody else wrote meanwhile.

    Under ``If-Match`` a 200 means the store was exactly the planned listing
    plus our batches; under per-key preconditions a teammate may have written
    other keys, which :func:`teamsync.sync.rest_push.verify` sees as a store checksum other
    than this listing's (and then reads the listing back). Refused entries live
    on the server too, unlisted here: then the listing is not known.
    """
    if prev is None or prev.rejected:
        return None
    sums = {**prev.checksums, **done}
    for key in deletes:
        sums.pop(key, None)
    return sums


def not_sent(pushed: int, where: str, too_big: Mapping[str, str]) -> str:
    parts = [f"pushed {pushed} memories to {where}"]
    for key in sorted(too_big)[:20]:
        parts.append(f"{key} was NOT pushed: {too_big[key]}; shorten or split it")
    if len(too_big) > 20:
        parts.append(f"and {len(too_big) - 20} more memories were NOT pushed for the same reasons")
    return "; ".join(parts) + "."
