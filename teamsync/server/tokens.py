"""Bearer tokens: created once, stored hashed, scoped to one repository.

A token reads ``tsm_<id>_<secret>``: the 12-hex ``id`` is public (it names the
token in ``token list`` / ``token revoke`` and finds its row), the 43-character
secret is 256 random bits. Only ``sha256(token)`` is stored; verification
compares hashes with :func:`hmac.compare_digest`. The plain token is returned
once, to be printed once, and never logged.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass

from teamsync.errors import UsageError
from teamsync.server.limits import normalize_repo
from teamsync.server.storage import Storage, TokenRecord

PREFIX = "tsm_"
_TOKEN_RE = re.compile(r"tsm_([0-9a-f]{12})_[A-Za-z0-9_-]{43}")
_ID_RE = re.compile(r"[0-9a-f]{12}")
_LABEL_RE = re.compile(r"[A-Za-z0-9._@ -]{1,64}")


@dataclass(frozen=True)
class Issued:
    record: TokenRecord
    token: str
    """The plain token: show it once, then forget it."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(
    storage: Storage,
    repo: str,
    *,
    read_only: bool,
    label: str | None,
    now: float,
    expires_at: float | None = None,
) -> Issued:
    """Create and store a token for ``repo``; the caller prints ``Issued.token`` once."""
    repo = normalize_repo(repo)
    if expires_at is not None and expires_at <= now:
        raise UsageError("--expires: the expiry is in the past; give a duration like 90d")
    token_id = secrets.token_hex(6)
    token = f"{PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
    name = label if label is not None else f"token-{token_id}"
    if not _LABEL_RE.fullmatch(name):
        raise UsageError("--name: use 1-64 letters, digits, spaces or ._@-")
    record = TokenRecord(
        id=token_id,
        token_hash=hash_token(token),
        repo=repo,
        read_only=read_only,
        label=name,
        created_at=now,
        expires_at=expires_at,
    )
    storage.add_token(record)
    return Issued(record=record, token=token)


def verify_token(storage: Storage, token: str, now: float | None = None) -> TokenRecord | None:
    """The live record ``token`` belongs to, or None (unknown, malformed, revoked, expired)."""
    match = _TOKEN_RE.fullmatch(token)
    if match is None:
        return None
    record = storage.get_token(match.group(1))
    if record is None or record.revoked_at is not None:
        return None
    if record.expires_at is not None and (time.time() if now is None else now) >= record.expires_at:
        return None
    if not hmac.compare_digest(record.token_hash, hash_token(token)):
        return None
    return record


_DURATION = re.compile(r"(\d{1,5})([hdw])")
_UNIT_S = {"h": 3600, "d": 86400, "w": 7 * 86400}


def parse_expiry(text: str, now: float) -> float:
    """``--expires``: a duration (``12h``, ``90d``, ``8w``) or a date (``2027-03-31``, UTC)."""
    text = text.strip()
    match = _DURATION.fullmatch(text)
    if match:
        return now + int(match.group(1)) * _UNIT_S[match.group(2)]
    from datetime import UTC, datetime

    try:
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise UsageError(
            f"--expires {text!r}: give a duration (12h, 90d, 8w) or a date (YYYY-MM-DD, UTC)"
        ) from None
    return day.timestamp()


def revoke_token(storage: Storage, token_id: str, now: float) -> bool:
    """Revoke by public id; False when there is no such live token."""
    if not _ID_RE.fullmatch(token_id):
        raise UsageError(
            f"{token_id!r} is not a token id (12 hex digits, see `teamsync token list`)"
        )
    return storage.revoke_token(token_id, now)
