"""``teamsync redact VERSION``: blank a remote version that holds a secret, where that is possible.

- A memory store (Anthropic's, or ``teamsync serve``'s Memory Stores API):
  the store's own redaction (``memory_versions/{id}/redact``) blanks that
  version's content and path for good; its author and time stay.
- git: a pushed commit is in every clone; it cannot be rewritten for
  everyone. The command says what to do instead and changes nothing.
- The legacy REST dialect: the server's history view keeps checksums, never
  texts; the one past text ``teamsync serve`` keeps is a deleted memory's (its
  tombstone). The client cannot blank it: the command says so, names the
  server-side command, and changes nothing. The operator runs
  ``teamsync redact --repo OWNER/NAME KEY`` on the server's database
  (:func:`run_redact_server`).

In every case the secret was exposed: rotate it first.
"""

from __future__ import annotations

from teamsync.config import Settings
from teamsync.errors import UsageError
from teamsync.memdir.paths import working_memory_dir
from teamsync.output import Output
from teamsync.security.names import printable
from teamsync.sync.config import load_config

ROTATE = "Rotate the secret first: once written to shared history it must be treated as leaked."
GIT_ADVICE = (
    "git history cannot be rewritten for everyone: every teammate's clone holds the commit. "
    f"{ROTATE} If the sync branch must be cleaned too, rewrite it (git filter-repo) and "
    "force-push; each teammate's next sync then stops with the lost-history guard, and they "
    "re-clone or run `teamsync sync --restore-remote` after removing the secret locally."
)
REST_ADVICE = (
    "the legacy REST history keeps checksums, never texts; the only past text a server "
    "keeps is a deleted memory's. "
    f"{ROTATE} Remove the secret from the memory and sync (a live text is replaced, not "
    "kept). For a deleted memory on `teamsync serve`, its operator runs `teamsync redact "
    "--repo OWNER/NAME KEY --db URL` on the server's database."
)


def run_redact(settings: Settings, output: Output, version: str) -> int:
    config = load_config(working_memory_dir(settings))
    if config.backend == "git":
        output.error(GIT_ADVICE)
        output.emit({"redacted": None, "backend": "git", "advice": GIT_ADVICE})
        return 1
    if config.backend != "memstore":
        output.error(REST_ADVICE)
        output.emit({"redacted": None, "backend": config.backend, "advice": REST_ADVICE})
        return 1
    ref = version.strip()
    if not ref.startswith("memver_"):
        raise UsageError(
            f"{printable(ref)!r} is not a memory version id (memver_…); see `teamsync log`"
        )
    from teamsync.commands.sync import open_backend

    backend = open_backend(config, settings)
    try:
        done = backend.redact(ref)  # type: ignore[attr-defined]
    finally:
        backend.close()
    output.success(
        f"version {printable(done)} is redacted: its content and path are gone for good."
    )
    output.info(ROTATE)
    output.emit({"redacted": done, "backend": "memstore"})
    return 0


def run_redact_server(
    settings: Settings, output: Output, *, repo: str, key: str, db: str | None
) -> int:
    """Server side, legacy dialect: blank the text ``teamsync serve`` keeps for the
    deleted memory ``key`` of ``repo`` (its tombstone). A live memory is refused: its
    text is current, not history (remove the secret and sync)."""
    from teamsync.commands.serve import resolve_db_url
    from teamsync.security.keys import key_problem
    from teamsync.server.storage import open_storage
    from teamsync.wire import normalize_repo

    name = normalize_repo(repo)
    problem = key_problem(key)
    if problem is not None:
        raise UsageError(f"{printable(key)!r} is not a memory key: {problem}")
    storage = open_storage(resolve_db_url(settings, db))
    try:
        done = storage.redact_deleted(name, key)
    finally:
        storage.close()
    shown = f"{printable(key)} of {printable(name)}"
    if done == "live":
        message = (
            f"{shown} is a live memory, not history: nothing was changed. Remove the secret "
            "from it and sync (the server replaces a text, it keeps no older one); a delete "
            "keeps the last text, which this command then blanks."
        )
        output.error(message)
        output.emit({"redacted": None, "key": key, "repo": name, "reason": "live"})
        return 1
    if done == "none":
        message = f"the server keeps no text for {shown} (never stored, or already blank)."
        output.error(message)
        output.emit({"redacted": None, "key": key, "repo": name, "reason": "none"})
        return 1
    output.success(
        f"the deleted memory {shown} is blanked on the server: its checksum and history "
        "rows stay, its text is gone."
    )
    output.info(ROTATE)
    output.emit({"redacted": key, "repo": name, "backend": "rest"})
    return 0
