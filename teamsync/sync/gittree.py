"""Writing commits for the git backend: blobs and trees with GitPython, no index.

Trees are rewritten only along the changed paths and written as raw tree
objects, so entries teamsync refuses to read (odd names, symlinks, gitlinks)
are carried over untouched; an index would reject them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from io import BytesIO
from typing import Any

from teamsync.sync.gitcmd import GitRunner


class CommitBuilder:
    """Builds commits in a bare cache repository."""

    def __init__(self, git: GitRunner) -> None:
        self.git = git
        self._repo: Any = None

    def close(self) -> None:
        if self._repo is not None:
            self._repo.close()
            self._repo = None

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
            self._repo = Repo(self.git.path)
        return self._repo.odb

    def commit(
        self, head: str | None, upserts: Mapping[str, str], deletes: Sequence[str], message: str
    ) -> str:
        """A commit of ``head``'s tree with ``upserts``/``deletes`` applied (``head`` if unchanged).

        Trees are rewritten along the changed paths only and stored as raw tree
        objects through gitdb (no ``mktree``, no index), so entries we refuse to read
        (odd names, links, gitlinks) are carried over untouched; an index would reject
        them.
        """
        changes: dict[str, str | None] = dict(self._store_blobs(upserts))
        changes.update({key: None for key in deletes})
        old_tree = self.git.run("rev-parse", f"{head}^{{tree}}").decode().strip() if head else None
        tree = self._rewrite(old_tree, changes) or self._write_tree({})
        if head and tree == old_tree:
            return head
        parents = ["-p", head] if head else []
        return self.git.run("commit-tree", tree, *parents, stdin=message.encode()).decode().strip()

    def _rewrite(self, tree: str | None, changes: Mapping[str, str | None]) -> str | None:
        """The sha of ``tree`` with ``changes`` (path -> blob sha or None) applied; None if empty."""
        entries: dict[bytes, tuple[bytes, str]] = {}
        if tree:
            for raw in self.git.run("ls-tree", "-z", tree).split(b"\0"):
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


def _hex(sha: bytes | str) -> str:
    return sha.decode("ascii") if isinstance(sha, bytes) else sha
