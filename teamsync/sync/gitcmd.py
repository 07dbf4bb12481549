"""Every git process the git backend runs, in one place (trees are written in :mod:`gittree`).

The cache clone is bare and addressed with ``--git-dir`` semantics
(``GIT_DIR``), so an inherited ``GIT_DIR`` or work tree cannot redirect it.
Errors are translated to :class:`~teamsync.errors.BackendError` /
:class:`~teamsync.errors.AuthError` with URLs sanitized: a message never
carries a password or token, even one embedded in the URL.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from teamsync import _git
from teamsync.errors import AuthError, BackendError
from teamsync.security.names import printable
from teamsync.wire import redact_url

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


_NETWORK_HINTS = (
    "could not resolve host",  # ssh and curl both say this
    "name or service not known",
    "temporary failure in name resolution",
    "failed to connect",
    "couldn't connect to server",
    "connection refused",
    "connection timed out",
    "operation timed out",
    "network is unreachable",
    "no route to host",
    "connection reset",
    "ssl certificate problem",
    "unable to access",
)
_NOT_FOUND_HINTS = ("repository not found", "not found", "does not exist", "no such file")


def _local_path(url: str) -> Path | None:
    """The filesystem path of a local remote (a path or ``file://``), else None."""
    if url.startswith("file://"):
        return Path(url[len("file://") :])
    if "://" in url or (":" in url.split("/", 1)[0] and not url.startswith((".", "/"))):
        return None  # ssh, https, scp-like host:path
    return Path(url) if url else None


def classify_git_error(verb: str, stderr: str, url: str) -> tuple[str, str]:
    """(kind, message) for a failed git command: what happened and what to do.

    Kinds: ``auth``, ``network``, ``not-found``, ``not-a-repository``, ``failed``.
    The message carries git's own words only sanitized and escaped (a remote's
    text can hold terminal escapes or, in a URL, a credential).
    """
    clean = redact_url(stderr)
    lines = [ln.strip() for ln in clean.splitlines() if ln.strip()]
    low = clean.lower()
    where = printable(redact_url(url)) if url else "the remote"
    first = next((ln for ln in lines if ln.lower().startswith(("fatal:", "ssh:", "error:", "remote:"))),
                 lines[0] if lines else "no details")  # fmt: skip
    detail = printable(first)
    local = _local_path(url)
    if local is not None and "does not appear to be a git repository" in low:
        if not local.exists():
            return "not-found", (
                f"git {verb}: no repository at {where} (the path does not exist). Check the "
                "path, or create the remote with `git init --bare PATH`, then run "
                "`teamsync init --git PATH` again"
            )
        return "not-a-repository", (
            f"git {verb}: {where} exists but is not a git repository. Give the path of a "
            "(bare) repository, e.g. one made with `git init --bare`"
        )
    if any(hint in low for hint in _AUTH_HINTS):
        return "auth", (
            f"git {verb} was refused by {where}: {detail}; check your git credentials for "
            "this remote (ssh key or credential helper) and that you may access it"
        )
    if any(hint in low for hint in _NETWORK_HINTS):
        return "network", (
            f"git {verb}: could not reach {where}: {detail}. Check the host name, your network "
            "or VPN and any proxy, then try again"
        )
    if "does not appear to be a git repository" in low or any(h in low for h in _NOT_FOUND_HINTS):
        return "not-found", (
            f"git {verb}: {where} was not found: {detail}. Check the URL (or remote name) and "
            "that the repository exists and you may read it"
        )
    return "failed", f"git {verb} failed for {where}: {detail}"


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    kind: str
    sha: str
    size: int | None
    key: str
    key_problem: str | None = None


@dataclass(frozen=True)
class Vetted:
    """A remote tree after the hostile-content checks: what may travel, and what not."""

    shas: dict[str, str]
    """key -> blob sha of every usable entry."""
    sums: dict[str, str]
    """key -> ``sha256:…`` of every usable entry."""
    rejected: dict[str, str]
    """key -> reason."""


VET_VERSION = 1
"""Bump when the checks change, so cached verdicts are recomputed."""


def _parse_tree_line(raw: bytes) -> TreeEntry:
    meta, _, path = raw.partition(b"\t")
    mode, kind, sha, size = meta.decode("ascii").split()
    try:
        key, problem = path.decode("utf-8"), None
    except UnicodeDecodeError:
        key, problem = path.decode("utf-8", "backslashreplace"), "path is not valid UTF-8"
    return TreeEntry(mode, kind, sha, None if size == "-" else int(size), key, problem)


def parse_change_times(out: bytes) -> dict[str, float]:
    """Parse ``git log -z --format=%x00%ct --name-only``: path -> newest commit time.

    Every field is NUL-terminated and paths are never empty, so an empty field
    marks the next commit's header: no byte a path may hold (0x01, a newline,
    digits) can be mistaken for framing.
    """
    times: dict[str, float] = {}
    stamp: float | None = None
    header = first = False
    for field in out.split(b"\0"):
        if not field:
            header = True
            continue
        if header:
            header, first = False, True
            try:
                stamp = float(field.strip().decode("ascii"))
            except (UnicodeDecodeError, ValueError):
                stamp = None
            continue
        raw = field.removeprefix(b"\n") if first else field
        first = False
        if stamp is not None and raw:
            times.setdefault(raw.decode("utf-8", "backslashreplace"), stamp)
    return times


class GitRunner:
    """Runs git for one bare cache repository."""

    def __init__(self, path: Path, environ: Mapping[str, str] | None = None) -> None:
        self.path = path
        self._env = _git.clean_env(environ, extra={"GIT_DIR": str(path)})
        self._db: sqlite3.Connection | None = None
        self._sums: dict[str, str] | None = None
        self._config: dict[str, str] = {}

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
        result = _git.run(args, env={**self._env, **(env or {})}, stdin=stdin)
        return result.returncode, result.stdout, result.stderr

    def fail(self, verb: str, stderr: str) -> None:
        url = self._config.get("remote.origin.url", "")
        kind, message = classify_git_error(verb, stderr, url)
        error = AuthError(message) if kind == "auth" else BackendError(message)
        error.kind = f"git-{kind}"
        raise error

    # -- set-up -------------------------------------------------------------------
    def ensure_bare(self, url: str, branch: str) -> None:
        if not (self.path / "HEAD").exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.run("init", "--bare", "-q", str(self.path))
            self.run("config", "core.logAllRefUpdates", "false")
        pattern = r"^(user\.name|user\.email|remote\.origin\.url)$"
        out = self.try_run("config", "-z", "--get-regexp", pattern)[1].decode("utf-8", "replace")
        self._config = dict(item.partition("\n")[::2] for item in out.split("\0") if item)
        if self._config.get("remote.origin.url") != url:
            self.run("config", "remote.origin.url", url)
            self._config["remote.origin.url"] = url
        self._db = sqlite3.connect(self.path / "teamsync-sums.sqlite3", isolation_level=None)
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE IF NOT EXISTS sums (sha TEXT PRIMARY KEY, value TEXT)")
        self._db.execute("CREATE TABLE IF NOT EXISTS vetted (id TEXT PRIMARY KEY, data TEXT)")

    @property
    def sums(self) -> dict[str, str]:
        """blob sha -> ``sha256:…`` (or ``!reason``), loaded on first use."""
        if self._sums is None:
            rows = self._db.execute("SELECT sha, value FROM sums") if self._db else []
            self._sums = dict(rows)
        return self._sums

    def remember_sums(self, fresh: Mapping[str, str]) -> None:
        self.sums.update(fresh)  # loads first, so the cache stays complete
        if self._db is not None and fresh:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO sums VALUES (?, ?)", fresh.items())
            self._db.execute("COMMIT")

    def load_vetted(self, commit: str | None) -> Vetted | None:
        """The verdict on ``commit``'s tree from an earlier run (None: the latest one)."""
        if self._db is None:
            return None
        if commit is None:
            row = self._db.execute("SELECT data FROM vetted WHERE id LIKE ?", (f"{VET_VERSION}:%",))
        else:
            row = self._db.execute(
                "SELECT data FROM vetted WHERE id = ?", (f"{VET_VERSION}:{commit}",)
            )
        found = row.fetchone()
        if found is None:
            return None
        data = json.loads(found[0])
        return Vetted(data["shas"], data["sums"], data["rejected"])

    def save_vetted(self, commit: str, vetted: Vetted) -> None:
        """Keep the verdict for the newest commit only."""
        if self._db is None:
            return
        data = json.dumps({"shas": vetted.shas, "sums": vetted.sums, "rejected": vetted.rejected})
        self._db.execute("BEGIN")
        self._db.execute("DELETE FROM vetted")
        self._db.execute("INSERT INTO vetted VALUES (?, ?)", (f"{VET_VERSION}:{commit}", data))
        self._db.execute("COMMIT")

    def close(self) -> None:
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
        out = self.run("log", "--format=%x00%ct", "--name-only", "-z", "--no-renames", head, "--")
        return parse_change_times(out)

    def is_ancestor(self, old: str, new: str) -> bool:
        """Is commit ``old`` ``new`` or one of its ancestors? False when ``old`` is unknown."""
        if not re.fullmatch(r"[0-9a-f]{40}([0-9a-f]{24})?", old):
            return False
        status, _, _ = self.try_run("merge-base", "--is-ancestor", old, new)
        return status == 0

    def identity(self) -> str:
        """The user's git name (else the local part of the email, else $USER)."""
        for key in ("user.name", "user.email"):
            value = self._config.get(key, "").strip().split("@")[0]
            if value:
                return value
        return self._env.get("USER") or "someone"

    # -- writing ------------------------------------------------------------------
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


def project_remote_url(cwd: Path, name: str, environ: Mapping[str, str]) -> str | None:
    """The URL of remote ``name`` of the git project around ``cwd`` (``origin`` …), if any."""
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        return None
    result = _git.run(["-C", str(cwd), "remote", "get-url", name], environ=environ)
    url = result.text()
    return url if result.ok and url else None
