"""``teamsync pre-receive``: the git server's own secret gate for the memory branch.

Installed as the ``pre-receive`` hook of a self-hosted git server's repository
(or run by CI on the memory branch), it reads git's ``<old> <new> <ref>`` lines
on stdin and refuses the whole push when what it brings to the memory branch
holds a likely secret: every line the new commits add, and every changed file
whole at the new tip.

The allowlist comes from the server's side, never from the pusher's work tree:
``.teamsync/allowlist.json`` at ``--allowlist-ref`` (default ``HEAD``, the
repository's protected default branch) of this repository, or the file an
operator names with ``--allowlist-file``. A model, or anyone, who commits an
allowlist entry on their own machine changes nothing here until that commit is
reviewed and merged into the protected branch.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from teamsync._git import clean_env
from teamsync.config import Settings
from teamsync.errors import UsageError
from teamsync.output import Output

QUARANTINE_VARS = (
    "GIT_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_QUARANTINE_PATH",
)
"""What git gives a pre-receive hook so that the pushed (still quarantined) objects can be read."""


def hook_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for git commands inside the hook: clean, plus the quarantine."""
    kept = {k: environ[k] for k in QUARANTINE_VARS if k in environ}
    if "GIT_DIR" in kept:
        kept["GIT_DIR"] = os.path.abspath(kept["GIT_DIR"])
    return clean_env(environ, extra=kept)


def server_allowlist(
    cwd: Path, env: Mapping[str, str], ref: str, file: str | None
) -> frozenset[str]:
    from teamsync.security.allowlist import ALLOWLIST_DIR, ALLOWLIST_NAME, parse_fingerprints

    if file is not None:
        try:
            text = Path(file).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--allowlist-file {file}: {exc.strerror}") from exc
        return parse_fingerprints(text, file)
    from teamsync import _git

    where = f"{ref}:{ALLOWLIST_DIR}/{ALLOWLIST_NAME}"
    result = _git.run(["show", where], cwd=cwd, env=env)
    return parse_fingerprints(
        result.stdout.decode("utf-8", "replace") if result.ok else None, where
    )


def run_pre_receive(
    settings: Settings,
    output: Output,
    stdin: TextIO,
    *,
    branch: str | None,
    allowlist_ref: str,
    allowlist_file: str | None,
) -> int:
    """Scan each pushed update of the memory branch; 1 (refuse the push) on a finding."""
    from teamsync.errors import where_found
    from teamsync.security.secrets import Scanner
    from teamsync.security.sources import ZERO_SHA, Chunk, iter_pushed

    env = hook_env(settings.environ)
    cwd = settings.cwd
    allow = server_allowlist(cwd, env, allowlist_ref, allowlist_file)
    refused = 0
    for line in stdin.read().splitlines():
        parts = line.split()
        if len(parts) != 3:
            raise UsageError(f"expected `<old> <new> <ref>` lines on stdin, got {line[:80]!r}")
        old, new, ref = parts
        if new in ZERO_SHA or (branch is not None and ref != f"refs/heads/{branch}"):
            continue
        scanner = Scanner(baseline=allow)
        for item in iter_pushed(old, new, cwd, env):
            if isinstance(item, Chunk):
                scanner.add_chunk(item)
        findings = scanner.finish()
        if findings:
            refused += 1
            output.error(
                f"teamsync: refused {ref}: {len(findings)} likely secret(s) in team memory"
            )
            for finding in findings:
                commit = f" (commit {finding.commit[:12]})" if finding.commit else ""
                output.error(f"  {finding.path}: {where_found([finding])}{commit}")
    if refused:
        output.error(
            "Team memory is shared with every collaborator: keep the secret in a secret "
            f"manager. The allowlist is read from {allowlist_file or allowlist_ref}."
        )
        return 1
    return 0


__all__ = ["hook_env", "run_pre_receive", "server_allowlist"]
