"""Defence in depth on every PUT: the same gates as the client, run again.

Order: keys (the shared validator, memory files only, no key both upserted and
deleted, no two upserted keys that collide after NFKC + case folding or where
one is the other's folder; a delete may fold like an upsert, which is a
case-only rename), checksum syntax,
contents (valid UTF-8, no NUL, at most ``max_entry_bytes``), then the secret
scanner. Refusals name keys, rules and fingerprints, never content.
"""

from __future__ import annotations

import re
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


def check_put(body: PutBody, config: ServerConfig, repo: str | None = None) -> Refusal | None:
    """The first gate ``body`` fails, as an HTTP refusal; None when all pass.

    Inline allow comments in an entry do not count (the writer could add them);
    only the operator's allowlist for ``repo`` (``teamsync serve --allowlist``) does.
    """
    return (
        _check_keys(body)
        or _check_checksums(body)
        or _check_contents(body, config)
        or (_check_secrets(body, config.allowed(repo)))
    )


def _check_keys(body: PutBody) -> Refusal | None:
    keys = set(body.entries) | set(body.deletes) | set(body.baseChecksums or {})
    bad = []
    for key in sorted(keys):
        secret = name_findings(key) if isinstance(key, str) else []
        reason = key_problem(key)
        if secret:  # a key that holds a secret: refused by rule, never echoed
            rules = ", ".join(sorted({f.rule for f in secret}))
            reason = f"the key holds a likely secret ({rules}); name the file for its topic"
        elif reason is None and not is_memory_key(key):
            reason = "not a memory file (only *.md keys are stored)"
        if reason is not None:
            bad.append({"key": _echo(key), "reason": reason})
    if bad:
        return Refusal(
            422, error_body("team_memory_invalid_key", f"{len(bad)} key(s) rejected", keys=bad)
        )
    both = sorted(set(body.entries) & set(body.deletes))
    if both:
        msg = "a key cannot be upserted and deleted in one request"
        return Refusal(422, error_body("team_memory_invalid_body", msg, keys=both))
    # Upserts must not clash with each other. A delete may share an upsert's folded
    # name: that is a case- or normalisation-only rename (Deploy.md -> deploy.md).
    groups: list[list[str]] = find_collisions(body.entries)
    groups += [list(pair) for pair in find_prefix_clashes(body.entries)]
    if groups:
        msg = (
            "keys differ only by case or Unicode normalization, "
            "or one key's name is another key's folder"
        )
        return Refusal(422, error_body("team_memory_key_collision", msg, keys=groups))
    return None


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


def _check_contents(body: PutBody, config: ServerConfig) -> Refusal | None:
    for key in sorted(body.entries):
        text = body.entries[key]
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            msg = f"{key}: not valid UTF-8 text (lone surrogate)"
            return Refusal(422, error_body("team_memory_invalid_content", msg, key=key))
        if "\x00" in text:
            msg = f"{key}: contains NUL; memory files are text"
            return Refusal(422, error_body("team_memory_invalid_content", msg, key=key))
        if size > config.max_entry_bytes:
            msg = f"{key}: {size} bytes, over the {config.max_entry_bytes}-byte entry limit"
            return Refusal(
                413,
                error_body(
                    "team_memory_entry_too_large",
                    msg,
                    key=key,
                    entry_bytes=size,
                    max_entry_bytes=config.max_entry_bytes,
                ),
            )
    return None


def _check_secrets(body: PutBody, allowed: frozenset[str] = frozenset()) -> Refusal | None:
    from teamsync.security.secrets import scan_text

    findings = []
    for key in sorted(body.entries):
        for f in scan_text(body.entries[key], key, baseline=allowed):
            findings.append(
                {"key": key, "line": f.line, "rule": f.rule, "fingerprint": f.fingerprint}
            )
    if not findings:
        return None
    named = ", ".join(sorted({f"{f['key']} ({f['rule']}, line {f['line']})" for f in findings}))
    msg = f"refused: likely secret in {named}; remove it and push again"
    return Refusal(422, error_body("team_memory_secret_detected", msg, findings=findings))


def write_reply(result: WriteOk | WriteRefused) -> Reply:
    """The response to a storage write outcome."""
    if isinstance(result, WriteOk):
        h = result.head
        body = {
            "checksum": h.checksum,
            "lastModified": iso(h.last_modified),
            "version": h.version,
            "changedKeys": list(result.changed),
        }
        return Reply(200, body)
    if result.kind == "conflict":
        msg = "these keys changed on the server since your base; pull, merge, retry"
        return Reply(409, error_body("team_memory_conflict", msg, keys=list(result.keys)))
    if result.kind == "precondition":
        msg = "the store changed since your If-Match checksum; re-fetch and retry"
        return Reply(412, error_body("team_memory_precondition_failed", msg))
    if result.kind == "collision":
        pairs = [list(result.keys[i : i + 2]) for i in range(0, len(result.keys), 2)]
        msg = (
            "keys differ only by case or Unicode normalization from stored keys, "
            "or one key's name is the other's folder"
        )
        return Reply(422, error_body("team_memory_key_collision", msg, keys=pairs))
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
