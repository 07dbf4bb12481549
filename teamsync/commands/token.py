"""``teamsync token create|list|revoke``: manage the server's bearer tokens."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from teamsync.commands.serve import resolve_db_url
from teamsync.config import Settings
from teamsync.output import Output
from teamsync.server.limits import iso
from teamsync.server.storage import Storage, open_storage


@contextmanager
def _storage(settings: Settings, db: str | None) -> Iterator[Storage]:
    storage = open_storage(resolve_db_url(settings, db))
    try:
        yield storage
    finally:
        storage.close()


def token_create(
    settings: Settings,
    output: Output,
    *,
    repo: str,
    read_only: bool,
    db: str | None,
    name: str | None = None,
    expires: str | None = None,
) -> int:
    """Create a token and print it once (the database keeps only its hash)."""
    from teamsync.server.tokens import create_token, parse_expiry

    now = time.time()
    expires_at = parse_expiry(expires, now) if expires else None
    with _storage(settings, db) as storage:
        issued = create_token(
            storage, repo, read_only=read_only, label=name, now=now, expires_at=expires_at
        )
    rec = issued.record
    mode = "read-only" if rec.read_only else "read-write"
    output.emit(
        {
            "id": rec.id,
            "repo": rec.repo,
            "read_only": rec.read_only,
            "name": rec.label,
            "token": issued.token,
            "expires": None if rec.expires_at is None else iso(rec.expires_at),
        }
    )
    if not output.json_mode:
        output.info(f"Created {mode} token {rec.id} for {rec.repo}. It is shown only this once:")
        output.info(issued.token)
        if rec.expires_at is not None:
            output.info(f"It expires {iso(rec.expires_at)}; create a new one before then.")
    return 0


def token_list(settings: Settings, output: Output, *, db: str | None) -> int:
    """List tokens (ids, scopes, state); never the tokens or their hashes."""
    with _storage(settings, db) as storage:
        records = storage.list_tokens()
    now = time.time()
    rows = [
        {
            "id": r.id,
            "repo": r.repo,
            "read_only": r.read_only,
            "name": r.label,
            "created": iso(r.created_at),
            "revoked": None if r.revoked_at is None else iso(r.revoked_at),
            "expires": None if r.expires_at is None else iso(r.expires_at),
            "expired": r.expires_at is not None and r.expires_at <= now,
        }
        for r in records
    ]
    output.emit({"tokens": rows})
    if not output.json_mode:
        if not rows:
            output.info("no tokens yet: teamsync token create --repo OWNER/NAME")
        for row in rows:
            mode = "read-only " if row["read_only"] else "read-write"
            state = f"revoked {row['revoked']}" if row["revoked"] else "active"
            if not row["revoked"] and row["expires"]:
                state = f"{'expired' if row['expired'] else 'expires'} {row['expires']}"
            output.info(
                f"{row['id']}  {mode}  {row['repo']}  {row['name']}  {row['created']}  {state}"
            )
    return 0


def token_revoke(settings: Settings, output: Output, *, token_id: str, db: str | None) -> int:
    """Revoke a token by id; exit 1 when there is no such active token."""
    from teamsync.server.tokens import revoke_token

    with _storage(settings, db) as storage:
        done = revoke_token(storage, token_id, time.time())
    output.emit({"id": token_id, "revoked": done})
    if done:
        output.success(f"revoked token {token_id}")
        return 0
    output.error(f"no active token {token_id} (see `teamsync token list`)")
    return 1
