"""``teamsync redact VERSION``: blank a remote version that holds a secret, where that is possible.

- A memory store (Anthropic's, or ``teamsync serve``'s Memory Stores API):
  the store's own redaction (``memory_versions/{id}/redact``) blanks that
  version's content and path for good; its author and time stay.
- git: a pushed commit is in every clone; it cannot be rewritten for
  everyone. The command says what to do instead and changes nothing.
- The legacy REST dialect: the server's history view keeps checksums, never
  texts; nothing there to blank. The command says so and changes nothing.

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
    "the legacy REST history keeps checksums, never texts: there is no version text to blank. "
    f"{ROTATE} Remove the secret from the memory and sync; a memory store (`teamsync init "
    "--memory-store`) keeps texts per version and can redact them."
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
