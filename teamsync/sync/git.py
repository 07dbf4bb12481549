"""The git backend: team memory on a dedicated branch of any git remote.

The files live on an orphan branch (default ``teamsync/memory``) that holds
only memory files, in any repository git can reach: ``file://``, a plain path,
ssh or https. A bare cache clone in ``Settings.cache_dir/git/`` fetches just
that branch; nothing is ever checked out, so a hostile tree cannot plant a
symlink or a submodule on disk. :meth:`GitBackend.snapshot` refuses (and
reports through :attr:`Snapshot.rejected`) symlinks, gitlinks, keys that fail
validation, non-``*.md`` files, non-UTF-8 content and blobs over the size
limit.

Push builds a commit on top of the fetched head in a private index (the
user's git identity, a message listing the keys) and pushes it without force:
a non-fast-forward answer becomes :class:`PreconditionFailed`, and the engine
fetches, reconciles and retries. Credentials come from git's own helpers;
URLs are sanitized before they appear in any message.

All git processes go through :mod:`teamsync.sync.gitcmd`; commits are written by
:mod:`teamsync.sync.gittree`.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path

from teamsync._lock import FileLock
from teamsync.config import Settings
from teamsync.errors import BackendError, MemoryFormatError
from teamsync.limits import DEFAULT_BRANCH
from teamsync.memdir.format import decode_memory
from teamsync.security.keys import clashes_with, key_clashes
from teamsync.sync.base import (
    Applied,
    BackendDefaults,
    ChangeSet,
    PreconditionFailed,
    Snapshot,
    checksum,
)
from teamsync.sync.config import SyncConfig
from teamsync.sync.gitcmd import GitRunner, TreeEntry, Vetted
from teamsync.sync.gittree import CommitBuilder
from teamsync.sync.history import Action, Change
from teamsync.sync.local import file_problem
from teamsync.sync.plan import safe_who
from teamsync.sync.restore import RemoteVersion

CACHE_LOCK_WAIT_S = 600.0
"""How long a sync waits for another one using the same git cache, telling the user."""
TRAILER = "Teamsync-Modified:"
"""Commit trailer carrying a first-shared file's own change time: ``<POSIX time> <key>``."""
_MODES = {"120000": "symlink (refused)", "160000": "submodule (gitlink, refused)"}

__all__ = ["DEFAULT_BRANCH", "GitBackend", "from_config"]


class GitBackend(BackendDefaults):
    """A :class:`~teamsync.sync.base.Backend` over one branch of one git remote."""

    name = "git"

    def __init__(
        self,
        url: str,
        *,
        branch: str = DEFAULT_BRANCH,
        cache_dir: Path,
        environ: Mapping[str, str] | None = None,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        self.url, self.branch = url, branch
        digest = hashlib.sha256(f"{url}\0{branch}".encode()).hexdigest()[:24]
        self.path = cache_dir / "git" / digest
        self._tracking = f"refs/remotes/origin/{branch}"
        self._lock = FileLock(cache_dir / "git" / f"{digest}.lock", "another teamsync sync")
        self._lock.acquire(timeout=CACHE_LOCK_WAIT_S, on_wait=on_wait)
        self._git = GitRunner(self.path, environ)
        self._git.ensure_bare(url, branch)
        self._builder = CommitBuilder(self._git)
        self._listing: dict[str, str] = {}
        self._sums: dict[str, str] = {}
        self._blobs: dict[str, bytes] = {}
        self._head: str | None = None
        self._refused: set[str] = set()

    # -- Backend ----------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """Fetch the branch, then list and vet its tree (cached per commit)."""
        self._head = self._git.fetch(self.branch, self._tracking)
        if self._head is None:
            vetted = Vetted({}, {}, {})
        else:
            cached = self._git.load_vetted(self._head)
            if cached is None:
                previous = self._git.load_vetted(None)
                cached = self._vet(self._git.ls_tree(self._head), previous)
                self._git.save_vetted(self._head, cached)
            vetted = cached
        self._listing, self._sums = vetted.shas, vetted.sums
        self._refused = set(vetted.rejected)
        times = _CommitTimes(self._git, self._head)
        return Snapshot(self._head, dict(vetted.sums), times, dict(vetted.rejected))

    def _vet(self, entries: Sequence[TreeEntry], previous: Vetted | None = None) -> Vetted:
        """Refuse links, gitlinks, odd keys, non-memory files, huge or non-UTF-8 blobs.

        An entry with the same key, mode and blob as in ``previous`` (the last
        verdict) keeps its verdict, so a one-file change re-checks one entry.
        """
        known = previous.shas if previous is not None else {}
        rejected: dict[str, str] = {}
        usable: dict[str, str] = {}
        for entry in entries:
            if entry.mode == "100644" and known.get(entry.key) == entry.sha:
                usable[entry.key] = entry.sha
                continue
            problem = _MODES.get(entry.mode) or (
                None if entry.kind == "blob" else f"{entry.kind} object (refused)"
            )
            problem = problem or entry.key_problem or file_problem(entry.key, entry.size)
            if problem:
                rejected[entry.key] = problem
            else:
                usable[entry.key] = entry.sha
        blob_sums = self._checksums(list(usable.values()))
        sums: dict[str, str] = {}
        for key, sha in usable.items():
            value = blob_sums.get(sha, "!unreadable blob")
            if value.startswith("!"):
                rejected[key] = value[1:]
            else:
                sums[key] = value
        clashes = key_clashes(sums) if sums.keys() - known.keys() else {}
        for key, reason in clashes.items():
            rejected[key] = reason
            sums.pop(key, None)
        return Vetted({k: usable[k] for k in sums}, sums, rejected)

    def fetch(self, keys: Sequence[str]) -> Mapping[str, str]:
        wanted = {k: self._listing[k] for k in keys if k in self._listing}
        missing = [sha for sha in wanted.values() if sha not in self._blobs]
        self._blobs.update(self._git.read_blobs(missing))
        out: dict[str, str] = {}
        for key, sha in wanted.items():
            try:
                out[key] = decode_memory(self._blobs[sha], key)
            except (KeyError, MemoryFormatError):
                continue
        return out

    def past_checksums(self, keys: Collection[str]) -> Mapping[str, Collection[str]]:
        """key -> checksum of every blob the branch's history held at that path (one git log)."""
        if self._head is None or not keys:
            return {}
        wanted = set(keys)
        out = self._git.run(
            "log", "--format=", "--raw", "--no-abbrev", "--no-renames", "--root", "-z",
            self._head, "--",
        )  # fmt: skip
        shas = _blobs_by_path(out, wanted)
        sums = self._checksums(sorted({sha for found in shas.values() for sha in found}))
        return {
            key: {sums[sha] for sha in found if sha in sums and not sums[sha].startswith("!")}
            for key, found in shas.items()
        }

    def apply(self, changes: ChangeSet) -> Applied | PreconditionFailed:
        """Commit ``changes`` on the fetched head and push without force."""
        if changes.base_version != self._head:
            return PreconditionFailed()
        moved = [
            key
            for key, expected in changes.base_checksums.items()
            if self._current(key) != expected
        ]
        if moved:
            return PreconditionFailed(moved)
        self._refuse_clashes(changes)
        message = changes.message + _trailers(changes.modified)
        commit = self._builder.commit(self._head, changes.upserts, changes.deletes, message)
        if commit == self._head:
            return Applied(self._head, {})
        if not self._git.push(commit, self.branch, self._tracking):
            return PreconditionFailed()
        self._head = commit
        self._sums = {k: v for k, v in self._sums.items() if k not in changes.deletes}
        self._sums.update({k: checksum(v) for k, v in changes.upserts.items()})
        return Applied(commit, {k: checksum(v) for k, v in changes.upserts.items()})

    def log(self, key: str | None, limit: int) -> list[Change]:
        """The newest ``limit`` file changes (of ``key``) on the sync branch, from its commits."""
        head = self._git.fetch(self.branch, self._tracking)
        if head is None:
            return []
        args = ["-c", "core.quotePath=false", "log", "--no-renames", "--name-status"]
        args += ["--format=%x01%H%x09%ct%x09%an", f"-n{limit}", head, "--"]
        out = self._git.run(*args, *([key] if key is not None else []))
        return parse_log(out)[:limit]

    def version_at(self, key: str, ref: str) -> RemoteVersion:
        """``key`` as the sync branch's commit ``ref`` (a full or abbreviated sha) left it."""
        head = self._git.fetch(self.branch, self._tracking)
        if head is None or not re.fullmatch(r"[0-9a-f]{4,64}", ref):
            raise BackendError(f"{ref!r} is not a commit of the sync branch; see `teamsync log`")
        status, out, _ = self._git.try_run("rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
        sha = out.decode().strip()
        if status != 0 or not self._git.is_ancestor(sha, head):
            raise BackendError(f"{ref!r} is not a commit of the sync branch; see `teamsync log`")
        status, blob, _ = self._git.try_run("cat-file", "blob", f"{sha}:{key}")
        if status != 0:
            return RemoteVersion(key, sha, None, None)
        try:
            text = decode_memory(blob, key)
        except MemoryFormatError as exc:
            raise BackendError(f"team/{key} at {sha[:12]} is not a memory file: {exc}") from exc
        return RemoteVersion(key, sha, text, checksum(text))

    def noop_listing(self) -> tuple[str, Mapping[str, str]] | None:
        """(fetched commit, key -> checksum) when its vetted listing is cached and refuses
        nothing: what :func:`teamsync.sync.noop.certify` compares with the base."""
        if self._head is None:
            return None
        vetted = self._git.load_vetted(self._head)
        if vetted is None or vetted.rejected:
            return None
        return self._head, vetted.sums

    def descends_from(self, version: str) -> bool | None:
        """Is ``version`` (a commit synced earlier) an ancestor of the fetched head?"""
        if self._head is None:
            return False
        return self._git.is_ancestor(version, self._head)

    def identity(self) -> str:
        return safe_who(self._git.identity())

    def close(self) -> None:
        self._builder.close()
        self._git.close()
        self._lock.release()

    # -- helpers ----------------------------------------------------------------
    def _refuse_clashes(self, changes: ChangeSet) -> None:
        """The branch never gets two keys one file system cannot hold side by side.

        New keys are checked against every path on the branch (refused ones too)
        after the change's own deletes, so a case-only rename passes.
        """
        new = [key for key in changes.upserts if key not in self._listing]
        if not new:
            return
        after = (self._listing.keys() | self._refused) - set(changes.deletes)
        pairs = clashes_with(new, after | set(changes.upserts))
        if pairs:
            named = ", ".join(f"{a!r} with {b!r}" for a, b in pairs[:10])
            raise BackendError(
                f"push refused: {named} differ only by case or Unicode form, or one "
                "is the other's folder; rename one of them and sync again"
            )

    def _current(self, key: str) -> str | None:
        return self._sums.get(key)

    def _checksums(self, shas: Sequence[str]) -> dict[str, str]:
        """blob sha1 -> ``sha256:…`` (or ``!reason``), cached across runs."""
        known = self._git.sums
        unknown = sorted({s for s in shas if s not in known})
        if unknown:
            blobs = self._git.read_blobs(unknown)
            fresh = {}
            for sha in unknown:
                data = blobs.get(sha)
                fresh[sha] = _blob_sum(data)
                if data is not None and len(self._blobs) < 20_000:
                    self._blobs[sha] = data
            self._git.remember_sums(fresh)
        return {s: known[s] for s in shas if s in known}


def parse_log(out: bytes) -> list[Change]:
    """``git log --name-status --format=%x01%H%x09%ct%x09%an`` -> rows, newest first."""
    rows: list[Change] = []
    for record in out.decode("utf-8", "replace").split("\x01")[1:]:
        head, _, files = record.partition("\n")
        sha, _, rest = head.partition("\t")
        stamp, _, who = rest.partition("\t")
        at = float(stamp) if stamp.isdigit() else 0.0
        for line in files.splitlines():
            status, _, path = line.partition("\t")
            if not path or not status:
                continue
            action: Action = "delete" if status.startswith("D") else "upsert"
            rows.append(Change(at=at, who=who, key=path, action=action, version=sha))
    return rows


def _trailers(modified: Mapping[str, float]) -> str:
    if not modified:
        return ""
    lines = [f"{TRAILER} {modified[k]:.3f} {k}" for k in sorted(modified)]
    return "\n" + "\n".join(lines) + "\n"


def _shared_times(git: GitRunner, head: str, times: Mapping[str, float]) -> dict[str, float]:
    """key -> the sharer's change time, where the newest commit touching the key is the
    first share that carried it (a later commit's time wins); never a future time."""
    out = git.run("log", "--format=%x01%ct%x02%B", f"--grep=^{TRAILER}", head, "--")
    found: dict[str, float] = {}
    for record in out.split(b"\x01")[1:]:
        stamp, _, body = record.partition(b"\x02")
        try:
            committed = float(stamp.decode("ascii"))
        except ValueError:
            continue
        for line in body.decode("utf-8", "replace").splitlines():
            if not line.startswith(TRAILER):
                continue
            raw, _, key = line[len(TRAILER) :].strip().partition(" ")
            try:
                claimed = float(raw)
            except ValueError:
                continue
            if times.get(key) == committed and 0 < claimed < committed and key not in found:
                found[key] = claimed
    return found


def _blobs_by_path(raw_log: bytes, wanted: Collection[str]) -> dict[str, set[str]]:
    """Parse ``git log --raw -z --no-abbrev``: path -> every blob sha it had (old and new sides)."""
    found: dict[str, set[str]] = {}
    tokens = raw_log.split(b"\0")
    i = 0
    while i < len(tokens) - 1:
        head = tokens[i].lstrip(b"\n")
        if not head.startswith(b":"):
            i += 1
            continue
        fields = head[1:].split()
        path = tokens[i + 1].decode("utf-8", "backslashreplace")
        i += 2  # a status token is always followed by its path (--no-renames: one path)
        if len(fields) < 4 or path not in wanted:
            continue
        for mode, sha in ((fields[0], fields[2]), (fields[1], fields[3])):
            if mode.startswith(b"100") and sha.strip(b"0"):
                found.setdefault(path, set()).add(sha.decode("ascii"))
    return found


def _blob_sum(data: bytes | None) -> str:
    if data is None:
        return "!unreadable blob"
    try:
        return checksum(decode_memory(data, "blob"))
    except MemoryFormatError as exc:
        return "!" + exc.message


class _CommitTimes(Mapping[str, float]):
    """key -> commit time of the newest commit that touched it; computed on first use."""

    def __init__(self, git: GitRunner, head: str | None) -> None:
        self._git, self._head = git, head
        self._times: dict[str, float] | None = None

    def _load(self) -> dict[str, float]:
        if self._times is None:
            self._times = self._git.change_times(self._head) if self._head else {}
            if self._head:
                self._times.update(_shared_times(self._git, self._head, self._times))
        return self._times

    def __getitem__(self, key: str) -> float:
        return self._load()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


def from_config(config: SyncConfig, settings: Settings) -> GitBackend:
    """The backend factory :mod:`teamsync.commands.sync` calls (see ``BACKENDS``)."""
    return GitBackend(
        config.url,
        branch=config.branch or DEFAULT_BRANCH,
        cache_dir=settings.cache_dir,
        environ=settings.environ,
        on_wait=lambda message: print(f"teamsync: {message}", file=sys.stderr, flush=True),
    )
