"""Verify after: what a tool call actually changed in team memory and in the policy files.

The PreToolUse guard reads a Bash command's text, which cannot keep up with the
shell (``printf '\\147…'``, ``sort -o``, ``find -exec cp``, a hard link elsewhere…).
So around every call the guard cannot model exactly, two steps run:

* :func:`take` (PreToolUse) records a cheap snapshot under the state directory:
  the time, and the stamp of every guarded file (:mod:`teamsync.hooks.policy`),
  with a trusted copy of each guarded file kept up to date (copied only when its
  stamp moved), and the inode number of every entry of every team directory the
  call could reach, read from the directory listing itself (no ``stat``);
* :func:`check` (PostToolUse) runs ``lstat`` on every entry and reads only those
  that are new, have another inode, or whose ``st_ctime`` is not older than the
  snapshot (the kernel sets it on every write, rename, link and chmod, and no
  unprivileged program can set it back; a directory moved in whole brings entries
  the snapshot did not list):

  - a new or changed file in ``team/`` that holds a likely secret (in its content
    or its name), and any new link or odd file there, is **moved** to the
    quarantine ``<state dir>/quarantine/…``, outside ``team/``, never synced;
  - a changed guarded file is **put back** from the trusted copy (one that did not
    exist is moved to the quarantine), the changed version kept in the quarantine;
  - the answer names what was found (rule, line, file) and where it went, never
    how to get past the gate.

This layer is the guarantee for the hook; the text-based judgement in
:mod:`teamsync.hooks.bash` is a fast first filter. ``push`` scans every file again
before it sends anything (the gate that holds when no hook runs at all).

A snapshot whose PostToolUse never came (the tool failed, the session died) is
checked by the session's next PostToolUse; there, guarded files are put back
only when the snapshot is younger than :data:`ORPHAN_RESTORE_S`, so a person's
own later edit is not undone.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from pathlib import Path

from teamsync.hooks.places import Places
from teamsync.hooks.policy import Guarded, guarded_files

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any

ORPHAN_RESTORE_S = 120.0
CTIME_SLACK_S = 2.0
"""A file whose status changed this long before the snapshot is checked too: the
kernel's file clock is coarse (and some file systems keep seconds only)."""
ORPHAN_MAX_AGE_S = 86_400.0
MAX_SCAN_BYTES = 8_000_000
_ID = re.compile(r"[^A-Za-z0-9_.-]")

Stamp = list[int]


def _state(places: Places) -> Path:
    return places.settings.state_dir / "guard"


def _stamp(st: os.stat_result) -> Stamp:
    kind = 0 if stat.S_ISREG(st.st_mode) else 1 if stat.S_ISLNK(st.st_mode) else 2
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, kind, st.st_mode & 0o7777]


def _files(team: str) -> list[tuple[str, os.DirEntry[str]]]:
    """``(key, entry)`` for every entry below ``team`` that is not a directory; links are
    entries, never followed, and an unreadable directory or entry is passed over."""
    from teamsync._fastpath import entries

    return entries(team)


def walk(team: str) -> dict[str, Stamp]:
    """``key -> stamp`` for every entry below ``team`` (links are entries, never followed)."""
    out: dict[str, Stamp] = {}
    for key, entry in _files(team):
        try:
            out[key] = _stamp(entry.stat(follow_symlinks=False))
        except OSError:
            continue
    return out


def names(team: str) -> dict[str, int]:
    """``key -> inode`` for every entry below ``team``, from the listing alone (no ``stat``)."""
    out: dict[str, int] = {}
    for key, entry in _files(team):
        try:
            out[key] = entry.inode()
        except OSError:
            continue
    return out


def _file_stamp(path: str) -> Stamp | None:
    try:
        return _stamp(os.stat(path))
    except (OSError, ValueError):
        return None


def _session(payload: dict[str, Any]) -> str:
    return _ID.sub("_", str(payload.get("session_id") or "none"))[:80]


def _pending_name(payload: dict[str, Any]) -> str:
    """``<session>~<call>.json``: a session's snapshots are told apart by name alone."""
    return f"{_session(payload)}~{snapshot_id(payload)}.json"


def snapshot_id(payload: dict[str, Any]) -> str:
    raw = payload.get("tool_use_id") or payload.get("session_id") or "call"
    return _ID.sub("_", str(raw))[:120]


TRUSTED_VERSIONS = 4
"""Trusted copies kept per guarded file: the state any live snapshot may name."""


def _versions(index: dict[str, Any], path: str) -> list[dict[str, Any]]:
    entry = index.get(path)
    versions = entry.get("versions") if isinstance(entry, dict) else None
    return [v for v in versions if isinstance(v, dict)] if isinstance(versions, list) else []


def _trusted(places: Places, guarded: list[Guarded]) -> dict[str, Any]:
    """Stamps of the guarded files, with a trusted copy of each state kept (the last few)."""
    folder = _state(places) / "trusted"
    index_path = folder / "index.json"
    index = _load(index_path) or {}
    stamps: dict[str, Any] = {}
    changed = False
    for item in guarded:
        now = _file_stamp(item.path)
        stamps[item.path] = [now, item.kind]
        versions = _versions(index, item.path)
        if now is None or any(v.get("stamp") == now for v in versions):
            continue
        try:
            with open(item.path, "rb") as handle:
                data = handle.read(MAX_SCAN_BYTES)
        except OSError:
            continue
        from teamsync._files import write_atomic

        name = f"{_ID.sub('_', item.path.strip('/'))[-180:]}.{time.time_ns()}"
        write_atomic(folder / name, data, new_mode=0o600, durable=False)
        versions.append({"stamp": now, "copy": name, "mode": now[5]})
        for old in versions[:-TRUSTED_VERSIONS]:
            (folder / str(old.get("copy"))).unlink(missing_ok=True)
        index[item.path] = {"versions": versions[-TRUSTED_VERSIONS:]}
        changed = True
    if changed:
        from teamsync._files import write_atomic

        write_atomic(index_path, json.dumps(index), new_mode=0o600, durable=False)
    return stamps


def take(places: Places, payload: dict[str, Any]) -> None:
    """Record the snapshot for the tool call ``payload`` (PreToolUse)."""
    from teamsync._files import write_atomic
    from teamsync.hooks.gitconf import current

    gitconfig = current(places)  # first: the hooks it points to are guarded files
    guarded = guarded_files(places)
    snap = {
        "t": time.time(),
        "session": str(payload.get("session_id") or ""),
        "teams": {str(t): names(str(t)) for t in places.teams},
        "guarded": _trusted(places, guarded),
        "gitconfig": gitconfig,
    }
    pending = _state(places) / "pending"
    write_atomic(pending / _pending_name(payload), json.dumps(snap), durable=False)
    from teamsync.hooks.fastcache import record

    record(places, payload, guarded, snap)  # what the next call's fast path reads


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _quarantine_dir(places: Places, sid: str) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return places.settings.state_dir / "quarantine" / f"{stamp}-{sid}"


def _move(src: str, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.rename(src, dest)
    except OSError:  # another file system: copy, then remove
        import shutil

        shutil.copy2(src, dest, follow_symlinks=False)
        os.unlink(src)


def _read(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_SCAN_BYTES + 1)
    return data.decode("utf-8", "replace")


def _findings(changed: list[tuple[str, str]], places: Places) -> dict[str, str]:
    """``path -> where found`` for the changed team files (path, key) holding a secret."""
    from teamsync.errors import where_found
    from teamsync.security.names import name_findings
    from teamsync.security.secrets import Scanner

    scanner = Scanner()
    names: dict[str, list[Any]] = {}
    too_big: set[str] = set()
    for path, key in changed:
        found = name_findings(key)
        if found:
            names[path] = found
        text = _read(path)
        if text is None:
            continue
        if len(text) > MAX_SCAN_BYTES:
            too_big.add(path)
            continue
        scanner.add(text, path)
    raw = scanner.finish()
    by_path: dict[str, list[Any]] = {}
    for finding in raw:
        by_path.setdefault(finding.path, []).append(finding)
    if by_path:
        from teamsync.security.allowlist import load_committed

        allow = load_committed(places.project, places.memdir)
        by_path = {p: [f for f in fs if f.fingerprint not in allow] for p, fs in by_path.items()}
    out = {p: where_found(fs) for p, fs in by_path.items() if fs}
    for path, found in names.items():
        out[path] = ", ".join(filter(None, (out.get(path), where_found(found))))
    for path in too_big:
        out.setdefault(path, "too large to check")
    return out


def _check_teams(places: Places, snap: dict[str, Any], sid: str) -> list[str]:
    """The team entries changed since the snapshot: a ``stat`` of each, and a read of
    only those whose status changed after it (``st_ctime``: the kernel sets it on every
    write, rename, link and chmod, and no program can set it back)."""
    try:
        since = int((float(snap.get("t", 0)) - CTIME_SLACK_S) * 1e9)
    except (TypeError, ValueError):
        since = 0
    listed = snap.get("teams")
    before_all: dict[str, Any] = listed if isinstance(listed, dict) else {}
    changed: list[tuple[str, str]] = []
    odd: list[tuple[str, str, str]] = []
    for team in places.teams:
        before = before_all.get(str(team))
        for key, now in walk(str(team)).items():
            known = before is None or (isinstance(before, dict) and before.get(key) == now[0])
            if known and now[3] < since:
                continue
            path = os.path.join(team, key)
            if now[4] == 1:
                odd.append((path, key, "a link"))
            elif now[4] == 2:
                odd.append((path, key, "not a regular file"))
            else:
                changed.append((path, key))
    return _act(places, changed, odd, sid)


def _act(
    places: Places, changed: list[tuple[str, str]], odd: list[tuple[str, str, str]], sid: str
) -> list[str]:
    """Quarantine the changed team files holding a secret, and every odd entry."""
    messages: list[str] = []
    if not changed and not odd:
        return messages
    found = _findings(changed, places) if changed else {}
    where = _quarantine_dir(places, sid)
    keys = dict(changed)
    for path, what in sorted(found.items()):
        key = keys[path]
        _move(path, where / _team_label(places, path) / key)
        messages.append(f"`{_shown(key)}` held a likely secret: {what}")
    for path, key, what in odd:
        _move(path, where / _team_label(places, path) / key)
        messages.append(f"`{_shown(key)}` is {what}, which team memory does not hold")
    if messages:
        messages = [
            "teamsync moved out of team memory, into its quarantine (never synced; "
            f"{where}): " + "; ".join(messages) + "."
        ]
    return messages


def _team_label(places: Places, path: str) -> str:
    for n, team in enumerate(places.teams):
        if path.startswith(str(team) + "/"):
            return f"team-{n}"
    return "team"


def _shown(key: str) -> str:
    from teamsync.security.names import redact_name

    return "team/" + redact_name(key)


def _same(path: str, data: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(len(data) + 1) == data
    except OSError:
        return False


def _restore(places: Places, snap: dict[str, Any], sid: str) -> list[str]:
    recorded = snap.get("guarded")
    guarded: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    folder = _state(places) / "trusted"
    index = _load(folder / "index.json") or {}
    where = _quarantine_dir(places, sid) / "changed-policy"
    put_back: list[str] = []
    for path, (before, kind) in guarded.items():
        now = _file_stamp(path)
        if now == before:
            continue
        label = f"{kind} (`{os.path.basename(path)}`)"
        keep = where / _ID.sub("_", path.strip("/"))[-200:]
        if before is None:
            if now is not None:
                _move(path, keep)
                put_back.append(f"{label}: removed the new file")
            continue
        entry = next((v for v in _versions(index, path) if v.get("stamp") == before), None)
        try:
            data = None if entry is None else (folder / str(entry["copy"])).read_bytes()
        except OSError:
            data = None
        if entry is None or data is None:
            put_back.append(
                f"{label}: changed, and no trusted copy was kept; a person must check it"
            )
            continue
        if now is not None and _same(path, data):
            continue  # touched, or already put back
        if now is not None:
            keep.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            import shutil

            shutil.copy2(path, keep)
        from teamsync._files import write_atomic

        write_atomic(Path(path), data, mode=int(entry.get("mode") or 0o644))
        put_back.append(f"{label}: put back as it was")
    if put_back:
        return [
            "teamsync put back what this call changed in files kept by people, not by tools: "
            + "; ".join(put_back)
            + f" (the changed versions are in {where})."
        ]
    return []


def _baselines(
    places: Places, payload: dict[str, Any], mine: Path | None
) -> tuple[list[dict[str, Any]], list[Path]]:
    """This call's snapshot (if any) and the session's snapshots whose PostToolUse never
    came, each with its ``age``; and the snapshot files to drop after this check."""
    pending = _state(places) / "pending"
    try:
        listed = os.listdir(pending)
    except OSError:
        listed = []
    prefix = _session(payload) + "~"
    now = time.time()
    snaps: list[dict[str, Any]] = []
    drop: list[Path] = [] if mine is None else [mine]
    for name in listed:
        path = pending / name
        if not name.endswith(".json"):
            continue
        if not name.startswith(prefix):  # another session's call: only drop it when stale
            try:
                if now - path.stat().st_mtime > ORPHAN_MAX_AGE_S:
                    drop.append(path)
            except OSError:
                pass
            continue
        snap = _load(path)
        try:
            age = now - float(snap["t"]) if snap is not None else ORPHAN_MAX_AGE_S + 1
        except (KeyError, TypeError, ValueError):
            age = ORPHAN_MAX_AGE_S + 1
        if snap is None or age > ORPHAN_MAX_AGE_S:
            drop.append(path)
            continue
        own = path == mine
        snaps.append({**snap, "age": age, "own": own})
        if not own and age >= ORPHAN_RESTORE_S:
            drop.append(path)  # checked once more now; its own PostToolUse is long overdue
    return snaps, drop


def check(places: Places, payload: dict[str, Any], *, own: bool = True) -> list[str]:
    """Compare against the snapshots and act; the messages for the model (PostToolUse).

    One pass over ``team/`` against the oldest snapshot that counts: this call's,
    and those of the session's earlier calls whose PostToolUse never came (a failed
    tool, a session that died). Guarded files are put back to their state in the
    oldest snapshot younger than :data:`ORPHAN_RESTORE_S` (or this call's). Without
    any snapshot (the PreToolUse hook did not run), team files changed in the last
    :data:`ORPHAN_RESTORE_S` seconds are checked. ``own=False`` (after a Write or
    Edit, which has no snapshot) checks only the earlier calls' snapshots.
    """
    sid = snapshot_id(payload)
    started = time.time()
    mine = _state(places) / "pending" / _pending_name(payload) if own else None
    snaps, drop = _baselines(places, payload, mine)
    if own and not any(s["own"] for s in snaps):  # the PreToolUse hook did not run
        snaps.append({"t": started - ORPHAN_RESTORE_S, "age": 0.0, "own": True})
    last = _state(places) / f"{_session(payload)}.last"
    try:  # what changed since this session's previous check (a process left running)
        snaps.append({"t": float(last.read_text(encoding="utf-8")), "age": 0.0, "own": False})
    except (OSError, ValueError):
        pass
    messages: list[str] = []
    if snaps:
        base = min(snaps, key=lambda s: float(s["t"]))
        messages += _check_teams(places, base, sid)
        recent = [
            s for s in snaps if (s["own"] or s["age"] < ORPHAN_RESTORE_S) and s.get("guarded")
        ]
        if recent:
            oldest = min(recent, key=lambda s: float(s["t"]))
            gitconfig = oldest.get("gitconfig")
            if isinstance(gitconfig, dict):  # first: the hooks put back next live there
                from teamsync.hooks.gitconf import check as check_gitconfig

                messages += check_gitconfig(places, gitconfig)
            messages += _restore(places, oldest, sid)
    for path in drop:
        path.unlink(missing_ok=True)
    from teamsync._files import write_atomic

    write_atomic(last, repr(started), new_mode=0o600, durable=False)
    return messages


def check_written(places: Places, payload: dict[str, Any], team: Path, key: str) -> list[str]:
    """After a Write or Edit into team memory: the file as written (PostToolUse).

    The guard before it judged the result it predicted; this reads what Claude Code
    actually wrote (an Edit's quote handling included) and quarantines a secret.
    """
    messages = check(places, payload, own=False)
    path = os.path.join(team, key)
    try:
        st = os.lstat(path)
    except OSError:
        return messages
    if stat.S_ISREG(st.st_mode):
        return messages + _act(places, [(path, key)], [], snapshot_id(payload))
    return messages + _act(places, [], [(path, key, "a link")], snapshot_id(payload))


def block_json(messages: list[str]) -> str:
    """Claude Code's blocking PostToolUse answer: the model is told what was found."""
    return json.dumps({"decision": "block", "reason": " ".join(messages)})


def answer_json(messages: list[str], *, failed: bool = False) -> str:
    """The answer after a call: :func:`block_json` for ``PostToolUse``; for
    ``PostToolUseFailure`` (whose documented answer is context, not a decision) the
    ``additionalContext`` Claude Code gives the model with the error."""
    if not failed:
        return block_json(messages)
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUseFailure",
                "additionalContext": " ".join(messages),
            }
        }
    )


__all__ = ["answer_json", "block_json", "check", "check_written", "names", "take", "walk"]
