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
from teamsync.security.names import printable
from teamsync.security.secrets import FINGERPRINT_LENGTH

_FINGERPRINT = re.compile(r"[0-9a-f]{16,64}")
_SHOWN = 3
"""Candidates listed for an ambiguous prefix (the rest are counted)."""


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
    fingerprints = match_fingerprints(settings, req, entries)
    verb = "remove from" if req.remove else "add to"
    shown = ", ".join(fp[:16] for fp in fingerprints)
    if not confirm(f"{verb} {os.path.relpath(path, settings.cwd)}: {shown}?"):
        output.warn("nothing changed")
        return 1
    known = {e.fingerprint: e for e in entries}
    for fp in fingerprints:
        if req.remove:
            known.pop(fp, None)
        else:
            known[fp] = Entry(
                fp, req.reason.strip(), req.rule, req.path, _who(settings), now_iso(), req.repo
            )
    save_entries(path, list(known.values()))
    committed = path.parent.name == ALLOWLIST_DIR and not req.file
    output.success(
        f"teamsync: {len(fingerprints)} fingerprint(s) {'removed from' if req.remove else 'added to'} "
        f"{path}. "
        + (
            "It counts once committed and reviewed: push and the Claude Code hook read the "
            "allowlist from the project's HEAD, so until you commit it no gate uses this change"
            if committed
            else "Keep this file under review: no commit stands behind it"
        )
    )
    output.emit({"allowlist": str(path), "changed": list(fingerprints)})
    return 0


Finder = Callable[[], dict[str, str]]
"""Full fingerprint -> where it was found (``path:line rule``)."""


def match_fingerprints(
    settings: Settings, req: AllowRequest, entries: list[Entry], find: Finder | None = None
) -> tuple[str, ...]:
    """The full fingerprint each of ``req.fingerprints`` stands for.

    A full one (32 hex digits, as ``--json`` and SARIF give) stands for itself.
    A shorter one is the prefix a text scan prints: it stands for the one
    fingerprint that starts with it, among the allowlist's entries for
    ``--remove``, else among the findings of a scan of ``--path`` (or of the
    project's files and the memory directory: there the one who pasted it saw
    it). No match, or more than one, is
    refused (with the candidates): an entry the gates would never match is
    never written.
    """
    found: dict[str, str] | None = None
    resolved: list[str] = []
    for given in req.fingerprints:
        if len(given) >= FINGERPRINT_LENGTH:
            resolved.append(given)
            continue
        if req.remove:
            pool = {e.fingerprint: f"{e.path or '-'} {e.rule or '-'}" for e in entries}
            where = "the allowlist"
        else:
            if found is None:
                found = (find or (lambda: _scan_for_fingerprints(settings, req)))()
            pool, where = found, f"a scan of {_scan_scope(settings, req)}"
        resolved.append(_unique(given, pool, where))
    return tuple(dict.fromkeys(resolved))


def _unique(prefix: str, pool: dict[str, str], where: str) -> str:
    matches = sorted(fp for fp in pool if fp.startswith(prefix))
    if len(matches) == 1:
        return matches[0]
    full = "the full fingerprint from `teamsync scan --format json`"
    if not matches:
        raise UsageError(
            f"no fingerprint in {where} starts with {prefix}; pass {full} (or --path FILE "
            "where the scan reported it)"
        )
    listed = "; ".join(f"{fp} ({printable(pool[fp])})" for fp in matches[:_SHOWN])
    more = f"; and {len(matches) - _SHOWN} more" if len(matches) > _SHOWN else ""
    raise UsageError(
        f"{prefix} is ambiguous: {len(matches)} fingerprints in {where} start with it: "
        f"{listed}{more}; pass more digits or {full}"
    )


def _scoped(settings: Settings, req: AllowRequest) -> bool:
    """``--path`` names a file or directory here (as the scan printed it): scan only that."""
    return bool(req.path) and os.path.exists(os.path.join(settings.cwd, req.path))


def _scan_scope(settings: Settings, req: AllowRequest) -> str:
    return req.path if _scoped(settings, req) else "the project and the memory directory"


def _scan_for_fingerprints(settings: Settings, req: AllowRequest) -> dict[str, str]:
    """Every finding's fingerprint in ``--path`` (when it exists), else in the project's
    files (git's tracked and unignored ones; the directory outside git) and the memory
    directory."""
    from teamsync.commands.scan import ScanRequest, collect
    from teamsync.hooks.gitenv import git_maybe
    from teamsync.memdir.paths import memory_dir

    if _scoped(settings, req):
        paths: tuple[str, ...] = (req.path,)
    else:
        listed = git_maybe(
            ["ls-files", "-z", "-co", "--exclude-standard", "--full-name"], settings.cwd
        )
        top = git_maybe(["rev-parse", "--show-toplevel"], settings.cwd)
        project = (
            [os.path.join(top, name) for name in listed.split("\0") if name]
            if listed is not None and top
            else [str(settings.cwd)]
        )
        memdir = memory_dir(settings)
        paths = tuple(p for p in project if os.path.isfile(p) or os.path.isdir(p))
        paths += (str(memdir),) if memdir.is_dir() else ()
    scan = ScanRequest(paths=paths, ignore_inline_allow=True)
    _, findings, _ = collect(scan, settings)
    return {f.fingerprint: f"{f.path}:{f.line} {f.rule}" for f in findings}
