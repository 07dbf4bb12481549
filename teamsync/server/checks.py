"""Defence in depth on every PUT: the same gates as the client, run again.

Order: keys (the shared validator, memory files only: ``*.md`` and, as Claude
Code 2.1.197 syncs them, ``*.txt``), checksum syntax, contents (valid UTF-8, no
NUL, at most ``max_entry_bytes``), then the secret scanner. Those gates judge
one entry at a time: :func:`screen_put` takes a refused entry out of the batch
and reports it (``rejectedEntries`` in the 200 answer), so one bad file never
stops the rest from being shared (Claude Code stops all pushes after a 4xx).
So are upserted keys that collide with each other after NFKC + case folding or
where one is the other's folder: every key of such a group is refused (a delete
may fold like an upsert, which is a case-only rename). What is wrong with the
request as a whole stays a refusal of the whole request: a key both upserted
and deleted, a malformed ``baseChecksums`` value. A new key that clashes with a
stored one is found by the storage, inside the write transaction (so a
concurrent writer cannot slip between the check and the write): that key alone
is left out and reported (:func:`stored_clashes`), the rest is written.
Refusals name keys, rules and fingerprints, never content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from teamsync.security.keys import find_collisions, find_prefix_clashes, is_memory_key, key_problem
from teamsync.security.names import name_findings, redact_name
from teamsync.server.limits import ServerConfig, error_body, iso
from teamsync.server.models import PutBody
from teamsync.server.storage import WriteOk, WriteRefused

_CHECKSUM_RE = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class Reply:
    """An HTTP status and JSON body (the app wraps it in a response)."""

    status: int
    body: dict[str, Any]


Refusal = Reply


LEGACY_SUFFIXES = (".md", ".txt")
"""What a legacy PUT may store: Claude Code 2.1.197 syncs ``*.md`` and ``*.txt`` files."""


@dataclass(frozen=True)
class Screened:
    """A PUT after the per-entry gates: what may be stored, and what was refused."""

    body: PutBody
    refused: list[dict[str, Any]]
    """One ``{"key", "reason", "error_code"[, "findings"]}`` per refused entry."""


def screen_put(body: PutBody, config: ServerConfig, repo: str | None = None) -> Screened | Refusal:
    """The entries of ``body`` that pass every gate, and the refused ones with why.

    A refusal of the whole request (:class:`Reply`) only for what is wrong with
    the request itself (see the module docstring). Inline allow comments in an
    entry do not count (the writer could add them); only the operator's
    allowlist for ``repo`` (``teamsync serve --allowlist``) does.
    """
    refused: dict[str, dict[str, Any]] = {}
    for key, reason in _key_problems(body).items():
        refused[key] = {
            "key": _echo(key),
            "reason": reason,
            "error_code": "team_memory_invalid_key",
        }
    entries = {k: v for k, v in body.entries.items() if k not in refused}
    whole = _check_request(body, entries) or _check_checksums(body)
    if whole is not None:
        return whole
    for key, item in _collisions(entries).items():
        refused[key] = item
    entries = {k: v for k, v in entries.items() if k not in refused}
    for key, item in _content_problems(entries, config).items():
        refused[key] = item
    entries = {k: v for k, v in entries.items() if k not in refused}
    for key, item in _secret_problems(entries, config.allowed(repo)).items():
        refused[key] = item
    clean = body.model_copy(
        update={
            "entries": {k: v for k, v in entries.items() if k not in refused},
            "deletes": [k for k in body.deletes if k not in refused],
            "baseChecksums": (
                None
                if body.baseChecksums is None
                else {k: v for k, v in body.baseChecksums.items() if k not in refused}
            ),
        }
    )
    return Screened(clean, [refused[k] for k in sorted(refused)])


def check_put(body: PutBody, config: ServerConfig, repo: str | None = None) -> Refusal | None:
    """The whole-request view of :func:`screen_put`: the first refusal, or None when all pass."""
    screened = screen_put(body, config, repo)
    if isinstance(screened, Reply):
        return screened
    if not screened.refused:
        return None
    first = screened.refused[0]
    code = str(first["error_code"])
    status = 413 if code == "team_memory_entry_too_large" else 422
    msg = f"{len(screened.refused)} entr(y/ies) refused: {first['reason']}"
    return Refusal(status, error_body(code, msg, keys=screened.refused))


def _key_problems(body: PutBody) -> dict[str, str]:
    keys = set(body.entries) | set(body.deletes) | set(body.baseChecksums or {})
    bad: dict[str, str] = {}
    for key in sorted(keys):
        secret = name_findings(key) if isinstance(key, str) else []
        reason = key_problem(key)
        if secret:  # a key that holds a secret: refused by rule, never echoed
            rules = ", ".join(sorted({f.rule for f in secret}))
            reason = f"the key holds a likely secret ({rules}); name the file for its topic"
        elif reason is None and not is_stored_key(key):
            reason = "not a memory file (only *.md and *.txt keys are stored)"
        if reason is not None:
            bad[key] = reason
    return bad


def is_stored_key(key: str) -> bool:
    """A memory file (``*.md``) or a text file Claude Code syncs (``*.txt``)."""
    if is_memory_key(key):
        return True
    name = key.rsplit("/", 1)[-1]
    return name.endswith(".txt") and len(name) > len(".txt")


def _check_request(body: PutBody, entries: dict[str, str]) -> Refusal | None:
    both = sorted(set(body.entries) & set(body.deletes))
    if both:
        msg = "a key cannot be upserted and deleted in one request"
        return Refusal(422, error_body("team_memory_invalid_body", msg, keys=both))
    return None


def _collisions(entries: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Upserts that clash with each other in one request, each refused (every key of a
    clashing group: which one was meant is not the server's to guess). A delete may
    share an upsert's folded name: that is a case- or normalisation-only rename
    (Deploy.md -> deploy.md)."""
    groups: list[list[str]] = find_collisions(entries)
    groups += [list(pair) for pair in find_prefix_clashes(entries)]
    bad: dict[str, dict[str, Any]] = {}
    for group in groups:
        for key in group:
            others = ", ".join(_echo(k) for k in sorted(group) if k != key)
            bad[key] = {
                "key": _echo(key),
                "reason": (
                    f"clashes with {others} in the same request (they differ only by case or "
                    "Unicode normalization, or one is the other's folder); rename one"
                ),
                "error_code": "team_memory_key_collision",
                "keys": sorted(_echo(k) for k in group),
            }
    return bad


def stored_clashes(pairs: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """One refused entry per new key that clashes with a stored key (the write left it
    out, under the lock; the rest was stored): ``team_memory_key_collision``, naming
    the stored key(s) it clashes with."""
    others: dict[str, list[str]] = {}
    for new, stored in pairs:
        others.setdefault(new, []).append(stored)
    out = []
    for key in sorted(others):
        names = sorted(others[key])
        how = ", ".join(_echo(k) for k in names)
        out.append(
            {
                "key": _echo(key),
                "reason": (
                    f"clashes with {how}, already stored (they differ only by case or Unicode "
                    "normalization, or one is the other's folder); rename it, or pull first"
                ),
                "error_code": "team_memory_key_collision",
                "keys": [_echo(key), *(_echo(k) for k in names)],
            }
        )
    return out


def _echo(key: str) -> str:
    """A refused key as the error body may carry it: secrets redacted, lone surrogates escaped."""
    return redact_name(key).encode("utf-8", "backslashreplace").decode("utf-8")


def _check_checksums(body: PutBody) -> Refusal | None:
    bad = sorted(
        key
        for key, value in (body.baseChecksums or {}).items()
        if value is not None and not _CHECKSUM_RE.fullmatch(value)
    )
    if bad:
        msg = "baseChecksums values must be sha256:<64 hex> or null"
        return Refusal(422, error_body("team_memory_invalid_body", msg, keys=bad))
    return None


def _content_problems(entries: dict[str, str], config: ServerConfig) -> dict[str, dict[str, Any]]:
    bad: dict[str, dict[str, Any]] = {}
    for key in sorted(entries):
        text = entries[key]
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            reason = "not valid UTF-8 text (lone surrogate)"
            bad[key] = {"key": key, "reason": reason, "error_code": "team_memory_invalid_content"}
            continue
        if "\x00" in text:
            reason = "contains NUL; memory files are text"
            bad[key] = {"key": key, "reason": reason, "error_code": "team_memory_invalid_content"}
        elif size > config.max_entry_bytes:
            bad[key] = {
                "key": key,
                "reason": f"{size} bytes, over the {config.max_entry_bytes}-byte entry limit",
                "error_code": "team_memory_entry_too_large",
                "entry_bytes": size,
                "max_entry_bytes": config.max_entry_bytes,
            }
    return bad


def _secret_problems(
    entries: dict[str, str], allowed: frozenset[str] = frozenset()
) -> dict[str, dict[str, Any]]:
    from teamsync.security.secrets import scan_text

    bad: dict[str, dict[str, Any]] = {}
    for key in sorted(entries):
        found = [
            {"line": f.line, "rule": f.rule, "fingerprint": f.fingerprint}
            for f in scan_text(entries[key], key, baseline=allowed)
        ]
        if found:
            named = ", ".join(sorted({f"{f['rule']}, line {f['line']}" for f in found}))
            bad[key] = {
                "key": key,
                "reason": f"refused: likely secret ({named}); remove it and push again",
                "error_code": "team_memory_secret_detected",
                "findings": found,
            }
    return bad


def write_reply(result: WriteOk | WriteRefused) -> Reply:
    """The response to a storage write outcome."""
    if isinstance(result, WriteOk):
        h = result.head
        body = {
            "checksum": h.checksum,
            "lastModified": iso(h.last_modified),
            "version": h.version,
            "changedKeys": list(result.changed),
            "rejectedEntries": stored_clashes(result.clashed),
        }
        return Reply(200, body)
    if result.kind == "conflict":
        msg = "these keys changed on the server since your base; pull, merge, retry"
        return Reply(409, error_body("team_memory_conflict", msg, keys=list(result.keys)))
    if result.kind == "precondition":
        msg = "the store changed since your If-Match checksum; re-fetch and retry"
        return Reply(412, error_body("team_memory_precondition_failed", msg))
    msg = (
        f"the repository may hold at most {result.max_entries} entries; "
        f"this request would make {result.received_entries}"
    )
    return Reply(
        413,
        error_body(
            "team_memory_too_many_entries",
            msg,
            max_entries=result.max_entries,
            received_entries=result.received_entries,
        ),
    )
