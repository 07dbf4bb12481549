"""Git fixtures for sync tests: a bare remote and teammates with their own memory dirs.

Each :class:`Teammate` has its own HOME (so its own git identity, state and
cache directories) and its own memory directory, and syncs in-process through
the real engine and the real git backend, or as a real ``teamsync`` subprocess.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from teamsync import _git as gitrun
from teamsync.config import Settings
from teamsync.output import Output
from teamsync.sync.config import SyncConfig
from teamsync.sync.engine import Mode, SyncReport

BRANCH = "teamsync/memory"
TEAMSYNC = str(Path(sys.executable).with_name("teamsync"))


def git(
    *args: str,
    cwd: Path | None = None,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    strip: bool = True,
) -> str:
    """Run git and return stdout (raises on failure)."""
    result = gitrun.run(args, cwd=cwd, env={**os.environ, **(env or {})}, stdin=stdin)
    if not result.ok:
        raise subprocess.CalledProcessError(
            result.returncode, ["git", *args], result.stdout, result.stderr
        ) from AssertionError(result.stderr)
    return result.text() if strip else result.stdout.decode("utf-8")


def make_remote(root: Path, name: str = "remote.git") -> Path:
    """An empty bare repository."""
    path = root / name
    git("init", "-q", "--bare", str(path))
    return path


def memory(title: str, body: str, *, kind: str = "project") -> str:
    """A well-formed memory file."""
    return f"---\nname: {title}\ndescription: {title} in one line\ntype: {kind}\n---\n{body}"


@dataclass
class Member:
    """One teammate's HOME and memory directory, driven through the library or the real CLI.

    Backend-specific subclasses add the remote and ``init``: :class:`Teammate`
    (git, here) and ``testing.server.RestMate`` (REST).
    """

    name: str
    home: Path
    memdir: Path

    @property
    def team(self) -> Path:
        return self.memdir / "team"

    @property
    def environ(self) -> dict[str, str]:
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))
        }
        env.update(HOME=str(self.home), TEAMSYNC_DIR=str(self.memdir))
        return env

    @property
    def settings(self) -> Settings:
        return Settings.build(dir=self.memdir, environ=self.environ, cwd=self.home)

    def sync(
        self,
        mode: Mode = "sync",
        *,
        dry_run: bool = False,
        now: float | None = None,
        yes: bool = False,
    ) -> SyncReport:
        """One library sync; ``yes`` goes past the mass-change guard, as ``--yes`` does."""
        from teamsync.commands.sync import sync_once

        return sync_once(self.settings, mode=mode, dry_run=dry_run, now=now, yes=yes)

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run the real ``teamsync`` executable as this teammate."""
        return subprocess.run(
            [TEAMSYNC, *args],
            env=self.environ,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.home,
        )

    def write(self, key: str, text: str) -> None:
        path = self.team / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        bump_mtime(path)

    def read(self, key: str) -> str:
        return (self.team / key).read_text(encoding="utf-8")

    def delete(self, key: str) -> None:
        (self.team / key).unlink()

    def files(self) -> dict[str, str]:
        """key -> text for every file under team/."""
        out = {}
        for path in sorted(self.team.rglob("*")):
            if path.is_file():
                out[path.relative_to(self.team).as_posix()] = path.read_text(encoding="utf-8")
        return out


@dataclass
class Teammate(Member):
    """A teammate syncing through the git backend."""

    remote: Path

    def init(self, branch: str = BRANCH) -> None:
        from teamsync.commands.sync import init

        assert init(self.settings, quiet_output(), SyncConfig("git", str(self.remote), branch)) == 0


def folder_memories() -> dict[str, str]:
    """A top-level memory and two in ``notes/`` (for the unknown-folder scenarios)."""
    return {
        "top.md": memory("Top", "top\n"),
        "notes/a.md": memory("A", "a\n"),
        "notes/b.md": memory("B", "b\n"),
    }


def stopped(mate: Member, *args: str) -> str:
    """Run a ``teamsync`` command that a guard must stop: exit 1, nothing changed here.

    Returns its stderr (the message and the way forward).
    """
    before = mate.files()
    result = mate.cli(*args)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert mate.files() == before
    return result.stderr


def bump_mtime(path: Path) -> None:
    """Make an edit visible to stat caches even within one clock tick."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, max(st.st_mtime_ns, time.time_ns()) + 1_000))


def quiet_output() -> Output:
    return Output(quiet=True, out=io.StringIO(), err=io.StringIO())


def make_team(
    root: Path, names: Sequence[str] = ("alice", "bob"), *, init: bool = True
) -> list[Teammate]:
    """A bare remote and one teammate per name, each with its own HOME and identity."""
    remote = make_remote(root)
    mates = []
    for name in names:
        home = root / f"home-{name}"
        home.mkdir()
        (home / ".gitconfig").write_text(
            f"[user]\n\tname = {name.title()}\n\temail = {name}@example.invalid\n"
            "[init]\n\tdefaultBranch = main\n",
            encoding="utf-8",
        )
        mate = Teammate(name, home, root / f"mem-{name}", remote)
        mate.team.mkdir(parents=True)
        if init:
            mate.init()
        mates.append(mate)
    return mates


def remote_files(remote: Path, branch: str = BRANCH) -> dict[str, str]:
    """key -> text on the remote branch (empty when the branch does not exist)."""
    try:
        listing = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "-z", branch)
    except subprocess.CalledProcessError:
        return {}
    out = {}
    for key in listing.split("\0"):
        if key:
            raw = git("--git-dir", str(remote), "cat-file", "blob", f"{branch}:{key}", strip=False)
            out[key] = raw
    return out


def commit_files(
    remote: Path,
    files: Mapping[str, bytes],
    *,
    branch: str = BRANCH,
    modes: Mapping[str, str] | None = None,
    message: str = "crafted",
    parent: bool = True,
) -> str:
    """Craft a commit on ``branch`` with plumbing only (any mode, any path bytes).

    ``files`` maps path -> blob content; ``modes`` overrides the mode
    (``120000`` symlink, ``160000`` gitlink: then the content is the target sha).
    """
    env = {"GIT_INDEX_FILE": str(remote / f"crafted-index-{os.getpid()}")}
    base = ["--git-dir", str(remote)]
    try:
        head = git(*base, "rev-parse", "--verify", "-q", f"refs/heads/{branch}")
    except subprocess.CalledProcessError:
        head = ""
    if head and parent:
        git(*base, "read-tree", head, env=env)
    else:
        git(*base, "read-tree", "--empty", env=env)
    for path, data in files.items():
        mode = (modes or {}).get(path, "100644")
        sha = (
            data.decode()
            if mode == "160000"
            else git(*base, "hash-object", "-w", "--stdin", stdin=data)
        )
        git(*base, "update-index", "--add", "--cacheinfo", f"{mode},{sha},{path}", env=env)
    tree = git(*base, "write-tree", env=env)
    Path(env["GIT_INDEX_FILE"]).unlink(missing_ok=True)
    parents = ["-p", head] if head and parent else []
    commit = git(*base, "commit-tree", tree, *parents, "-m", message)
    git(*base, "update-ref", f"refs/heads/{branch}", commit)
    return commit


def temp_files(root: Path) -> list[Path]:
    """Stray teamsync temp files anywhere below ``root``."""
    return list(root.rglob(".teamsync-tmp-*"))


def fake_token() -> str:
    """A GitHub-token-shaped string, built at run time so no secret sits in the source."""
    return "ghp" + "_" + "Zx9Qw" * 7 + "a"


def converge(mates: Iterable[Teammate], rounds: int = 3) -> None:
    """Sync everyone, round-robin, ``rounds`` times."""
    mates = list(mates)
    for _ in range(rounds):
        for mate in mates:
            mate.sync()


def seed_remote(remote: Path, files: Mapping[str, str], *, branch: str = BRANCH) -> str:
    """Commit ``files`` (key -> text) as the whole tree of ``branch``, quickly (one `git add`)."""
    work = Path(tempfile.mkdtemp(prefix="seed-"))
    try:
        for key, text in files.items():
            path = work / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        env = {"GIT_INDEX_FILE": str(work) + ".index", "GIT_WORK_TREE": str(work)}
        base = ["--git-dir", str(remote)]
        git(*base, "add", "-A", "--", ".", cwd=work, env=env)
        tree = git(*base, "write-tree", env=env)
        try:
            parent = ["-p", git(*base, "rev-parse", "--verify", "-q", f"refs/heads/{branch}")]
        except subprocess.CalledProcessError:
            parent = []
        commit = git(*base, "commit-tree", tree, *parent, "-m", f"seed {len(files)} files")
        git(*base, "update-ref", f"refs/heads/{branch}", commit)
        return commit
    finally:
        shutil.rmtree(work, ignore_errors=True)
        Path(str(work) + ".index").unlink(missing_ok=True)
