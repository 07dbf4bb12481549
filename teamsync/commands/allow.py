"""``teamsync allow``: a person records a reviewed false positive in the project allowlist.

The team-memory gates ignore inline ``teamsync: allow`` comments (the writer
could add them). This command is the one way to let a finding through: it
appends the fingerprint, with the person's reason, name and the time, to the
reviewed allowlist (:mod:`teamsync.security.allowlist`), which is committed
with the project and reviewed like code.

It asks the person to confirm at a terminal and refuses without one, so a tool
(a model's Bash call, a script) cannot use it; the Claude Code hook refuses a
model's call to it as well.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from teamsync.config import Settings
from teamsync.errors import UsageError
from teamsync.output import Output
from teamsync.security.allowlist import (
    ALLOWLIST_DIR,
    Entry,
    default_path,
    load_entries,
    now_iso,
    save_entries,
)

_FINGERPRINT = re.compile(r"[0-9a-f]{16,64}")


@dataclass(frozen=True)
class AllowRequest:
    fingerprints: tuple[str, ...] = ()
    reason: str = ""
    rule: str = ""
    path: str = ""
    repo: str = ""
    file: str | None = None
    remove: bool = False
    list_only: bool = False


def _target(settings: Settings, req: AllowRequest) -> Path:
    if req.file:
        path = Path(req.file)
        return path if path.is_absolute() else settings.cwd / path
    from teamsync.memdir.paths import memory_dir

    return default_path(settings.cwd, memory_dir(settings))


def _who(settings: Settings) -> str:
    env = settings.environ
    return env.get("GIT_AUTHOR_NAME") or env.get("USER") or env.get("LOGNAME") or "unknown"


def _validate(req: AllowRequest) -> None:
    if req.list_only:
        return
    if not req.fingerprints:
        raise UsageError("give the FINGERPRINT(s) to allow, from the scan or refusal report")
    bad = [fp for fp in req.fingerprints if not _FINGERPRINT.fullmatch(fp)]
    if bad:
        raise UsageError(f"{bad[0]!r} is not a fingerprint (16-64 lower-case hex digits)")
    if not req.remove and len(req.reason.strip()) < 8:
        raise UsageError("--reason must say why this is not a secret (at least 8 characters)")


def run_allow(
    settings: Settings,
    output: Output,
    req: AllowRequest,
    *,
    confirm: Callable[[str], bool] | None,
) -> int:
    """Add, remove or list allowlist entries; ``confirm`` is the person's yes (None: no terminal)."""
    _validate(req)
    path = _target(settings, req)
    entries = load_entries(path)
    if req.list_only:
        for e in entries:
            output.info(f"{e.fingerprint}  {e.rule or '-'}  {e.path or '-'}  {e.reason}")
        if not entries:
            output.info(f"teamsync: {path} holds no entries")
        output.emit({"allowlist": str(path), "entries": [e.as_dict() for e in entries]})
        return 0
    if confirm is None:
        raise UsageError(
            "teamsync allow needs a person at a terminal to confirm; run it yourself in a "
            "terminal, then commit the allowlist for review"
        )
    verb = "remove from" if req.remove else "add to"
    shown = ", ".join(fp[:16] for fp in req.fingerprints)
    if not confirm(f"{verb} {os.path.relpath(path, settings.cwd)}: {shown}?"):
        output.warn("nothing changed")
        return 1
    known = {e.fingerprint: e for e in entries}
    for fp in req.fingerprints:
        if req.remove:
            known.pop(fp, None)
        else:
            known[fp] = Entry(
                fp, req.reason.strip(), req.rule, req.path, _who(settings), now_iso(), req.repo
            )
    save_entries(path, list(known.values()))
    committed = path.parent.name == ALLOWLIST_DIR and not req.file
    output.success(
        f"teamsync: {len(req.fingerprints)} fingerprint(s) {'removed from' if req.remove else 'added to'} "
        f"{path}. "
        + (
            "It counts once committed and reviewed: push and the Claude Code hook read the "
            "allowlist from the project's HEAD, so until you commit it no gate uses this change"
            if committed
            else "Keep this file under review: no commit stands behind it"
        )
    )
    output.emit({"allowlist": str(path), "changed": list(req.fingerprints)})
    return 0
