"""Every git process the git backend runs, in one place; objects are written with GitPython.

The cache clone is bare and addressed with ``--git-dir`` semantics
(``GIT_DIR``), so an inherited ``GIT_DIR`` or work tree cannot redirect it.
Errors are translated to :class:`~teamsync.errors.BackendError` /
:class:`~teamsync.errors.AuthError` with URLs sanitized: a message never
carries a password or token, even one embedded in the URL.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

from teamsync.errors import AuthError, BackendError

_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
_AUTH_HINTS = (
    "authentication failed",
    "permission denied",
    "could not read username",
    "could not read password",
    "access denied",
    "403",
)
_REJECTED = (
    "[rejected]",
    "fetch first",
    "non-fast-forward",
    "stale info",
    "failed to update ref",
    "cannot lock ref",
    "incorrect old value",
)


def sanitize_url(text: str) -> str:
    """Mask credentials embedded in URLs (``https://user:token@host`` -> ``https://***@host``)."""
    return _USERINFO.sub("***@", text)


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    kind: str
    sha: str
    size: int | None
    key: str
    key_problem: str | None = None


def _parse_tree_line(raw: bytes) -> TreeEntry:
    meta, _, path = raw.partition(b"\t")
    mode, kind, sha, size = meta.decode("ascii").split()
    try:
        key, problem = path.decode("utf-8"), None
    except UnicodeDecodeError:
        key, problem = path.decode("utf-8", "backslashreplace"), "path is not valid UTF-8"
    return TreeEntry(mode, kind, sha, None if size == "-" else int(size), key, problem)


class GitRunner:
    """Runs git for one bare cache repository."""

    def __init__(self, path: Path, environ: Mapping[str, str] | None = None) -> None:
        self.path = path
        env = dict(os.environ if environ is None else environ)
        for var in ("GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE"):
            env.pop(var, None)
        env.update(GIT_DIR=str(path), LC_ALL="C", LANGUAGE="C")
        env.setdefault("GIT_TERMINAL_PROMPT", "0")
        self._env = env
        self._repo: Any = None
        self._db: sqlite3.Connection | None = None
        self.sums: dict[str, str] = {}

    def run(
        self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> bytes:
        """Run ``git args…``; raise a sanitized BackendError/AuthError on failure."""
        status, out, err = self.try_run(*args, stdin=stdin, env=env)
        if status != 0:
            self.fail(args[0], err)
        return out

    def try_run(
        self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> tuple[int, bytes, str]:
        """Run git with exactly our environment (inherited ``GIT_*`` redirections removed)."""
        result = subprocess.run(
            ["git", *args],
            input=stdin if stdin is not None else b"",
            capture_output=True,
            env={**self._env, **(env or {})},
            check=False,
        )
        return result.returncode, result.stdout, result.stderr.decode("utf-8", "replace")

    def fail(self, verb: str, stderr: str) -> None:
        lines = [ln.strip() for ln in sanitize_url(stderr).splitlines() if ln.strip()]
        detail = lines[-1] if lines else "no details"
        if any(hint in stderr.lower() for hint in _AUTH_HINTS):
            raise AuthError(
                f"git {verb} was refused: {detail}; check your git credentials for this remote"
            )
        raise BackendError(f"git {verb} failed: {detail}")

    # -- set-up -------------------------------------------------------------------
    def ensure_bare(self, url: str, branch: str) -> None:
        if not (self.path / "HEAD").exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.run("init", "--bare", "-q", str(self.path))
            self.run("config", "core.logAllRefUpdates", "false")
        current = self.try_run("config", "remote.origin.url")[1].decode().strip()
        if current != url:
            self.run("config", "remote.origin.url", url)
        self._db = sqlite3.connect(self.path / "teamsync-sums.sqlite3", isolation_level=None)
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE IF NOT EXISTS sums (sha TEXT PRIMARY KEY, value TEXT)")
        self.sums = dict(self._db.execute("SELECT sha, value FROM sums"))

    def remember_sums(self, fresh: Mapping[str, str]) -> None:
        self.sums.update(fresh)
        if self._db is not None and fresh:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO sums VALUES (?, ?)", fresh.items())
            self._db.execute("COMMIT")

    def close(self) -> None:
        if self._repo is not None:
            self._repo.close()
            self._repo = None
        if self._db is not None:
            self._db.close()
            self._db = None

    # -- reading ------------------------------------------------------------------
    def fetch(self, branch: str, tracking: str) -> str | None:
        """Fetch ``branch`` into ``tracking``; its commit, or None when it does not exist."""
        status, _, err = self.try_run(
            "fetch",
            "--no-tags",
            "--no-write-fetch-head",
            "-q",
            "origin",
            f"+refs/heads/{branch}:{tracking}",
        )
        if status != 0:
            if "couldn't find remote ref" not in err:
                self.fail("fetch", err)
            self.try_run("update-ref", "-d", tracking)
            return None
        return self.run("rev-parse", "--verify", "-q", f"{tracking}^{{commit}}").decode().strip()

    def ls_tree(self, commit: str) -> list[TreeEntry]:
        out = self.run("ls-tree", "-r", "-l", "-z", "--full-tree", commit)
        return [_parse_tree_line(raw) for raw in out.split(b"\0") if raw]

    def read_blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        """sha -> content for every blob among ``shas`` (one ``cat-file --batch``)."""
        if not shas:
            return {}
        out = self.run("cat-file", "--batch", stdin="".join(f"{s}\n" for s in shas).encode())
        blobs: dict[str, bytes] = {}
        pos = 0
        while pos < len(out):
            end = out.index(b"\n", pos)
            header = out[pos:end].decode("ascii", "replace").split()
            pos = end + 1
            if len(header) != 3:
                continue
            size = int(header[2])
            if header[1] == "blob":
                blobs[header[0]] = out[pos : pos + size]
            pos += size + 1
        return blobs

    def change_times(self, head: str) -> dict[str, float]:
        """path -> commit time of the newest commit touching it (one ``git log``)."""
        out = self.run("log", "--format=%x01%ct", "--name-only", "-z", "--no-renames", head, "--")
        times: dict[str, float] = {}
        for chunk in out.split(b"\x01")[1:]:
            parts = chunk.split(b"\0")
            stamp = float(parts[0].decode("ascii"))
            for raw in parts[1:]:
                path = raw.lstrip(b"\n").decode("utf-8", "backslashreplace")
                if path:
                    times.setdefault(path, stamp)
        return times

    def identity(self) -> str:
        for key in ("user.name", "user.email"):
            status, out, _ = self.try_run("config", key)
            value = out.decode("utf-8", "replace").strip().split("@")[0]
            if status == 0 and value:
                return value
        return self._env.get("USER") or "someone"

    # -- writing ------------------------------------------------------------------
    def _store_blobs(self, texts: Mapping[str, str]) -> dict[str, str]:
        from gitdb import IStream  # type: ignore[import-untyped]

        out = {}
        for key, text in texts.items():
            data = text.encode("utf-8")
            out[key] = _hex(self._odb().store(IStream(b"blob", len(data), BytesIO(data))).hexsha)
        return out

    def _odb(self) -> Any:
        from git import Repo

        if self._repo is None:
            self._repo = Repo(self.path)
        return self._repo.odb

    def commit(
        self, head: str | None, upserts: Mapping[str, str], deletes: Sequence[str], message: str
    ) -> str:
        """A commit of ``head``'s tree with ``upserts``/``deletes`` applied (``head`` if unchanged).

        Trees are rewritten with ``mktree`` along the changed paths only, so entries
        we refuse to read (odd names, links, gitlinks) are carried over untouched and
        never pass through an index, which would reject them.
        """
        changes: dict[str, str | None] = dict(self._store_blobs(upserts))
        changes.update({key: None for key in deletes})
        old_tree = self.run("rev-parse", f"{head}^{{tree}}").decode().strip() if head else None
        tree = self._rewrite(old_tree, changes) or self._write_tree({})
        if head and tree == old_tree:
            return head
        parents = ["-p", head] if head else []
        return self.run("commit-tree", tree, *parents, stdin=message.encode()).decode().strip()

    def _rewrite(self, tree: str | None, changes: Mapping[str, str | None]) -> str | None:
        """The sha of ``tree`` with ``changes`` (path -> blob sha or None) applied; None if empty."""
        entries: dict[bytes, tuple[bytes, str]] = {}
        if tree:
            for raw in self.run("ls-tree", "-z", tree).split(b"\0"):
                if raw:
                    meta, _, name = raw.partition(b"\t")
                    raw_mode, _, raw_sha = meta.split()
                    entries[name] = (b"%o" % int(raw_mode, 8), raw_sha.decode())
        nested: dict[str, dict[str, str | None]] = {}
        for path, sha in changes.items():
            head, sep, rest = path.partition("/")
            if sep:
                nested.setdefault(head, {})[rest] = sha
            elif sha is None:
                entries.pop(head.encode("utf-8"), None)
            else:
                entries[head.encode("utf-8")] = (b"100644", sha)
        for head, sub in nested.items():
            name = head.encode("utf-8")
            mode, current = entries.get(name, (b"", ""))
            new = self._rewrite(current if mode == b"40000" else None, sub)
            if new is None:
                entries.pop(name, None)
            else:
                entries[name] = (b"40000", new)
        return self._write_tree(entries) if entries else None

    def _write_tree(self, entries: Mapping[bytes, tuple[bytes, str]]) -> str:
        """Write a raw tree object (no validation of the entries we carry over untouched)."""
        from gitdb import IStream

        def order(name: bytes) -> bytes:
            return name + b"/" if entries[name][0] == b"40000" else name

        body = b"".join(
            entries[n][0] + b" " + n + b"\0" + bytes.fromhex(entries[n][1])
            for n in sorted(entries, key=order)
        )
        stored = self._odb().store(IStream(b"tree", len(body), BytesIO(body)))
        return _hex(stored.hexsha)

    def push(self, commit: str, branch: str, tracking: str) -> bool:
        """Push without force; False when the remote moved (non-fast-forward)."""
        status, out, err = self.try_run(
            "push", "--porcelain", "-q", "origin", f"{commit}:refs/heads/{branch}"
        )
        if status != 0:
            text = (out.decode("utf-8", "replace") + "\n" + err).lower()
            if any(marker in text for marker in _REJECTED):
                return False
            self.fail("push", err or out.decode("utf-8", "replace"))
        self.run("update-ref", tracking, commit)
        return True


def _hex(sha: bytes | str) -> str:
    return sha.decode("ascii") if isinstance(sha, bytes) else sha
