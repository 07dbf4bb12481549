"""The git backend's no-op certificate: a sync that would change nothing, answered cheaply.

A full run ends by checking, from what it already holds, that three things
agree: the stat cache of ``team/`` (every cached checksum), the base, and the
fetched remote commit's vetted listing (which refuses nothing). If they do,
and the base store's remote mark is that commit, it *certifies* the state
(:func:`certify`): the commit goes into the base store
(:meth:`~teamsync.sync.state.BaseStore.certify_noop`), where every later write
transaction withdraws it, and a small pointer file under the state directory
names, for this memory directory, the store, the git cache and the exact
``teamsync.yaml`` text the run used.

:func:`noop_version` is the reader the CLI's fast path
(:mod:`teamsync.commands.sync_fast`) calls before importing click, the engine
or GitPython. It answers with the remote commit only when

- the pointer exists and still matches: the same memory directory, program
  version, cache directory, ``team/`` (resolved) and byte-identical
  ``teamsync.yaml``;
- the certificate is still in the store (no write since);
- every file below ``team/`` still matches the stat cache exactly
  (:meth:`~teamsync.sync.state.BaseStore.unchanged`, the engine's own check);
- one ``git ls-remote origin refs/heads/<branch>``, run in the cache clone
  with the git backend's environment, names that same commit.

Then a full run would plan nothing: local, base and remote are the certified
ones. Anything else, including any error, returns None and the full path runs.
Stdlib only (plus the light :mod:`teamsync.sync.state` and :mod:`teamsync._git`),
so the answer costs an interpreter start, a few reads and one git process.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from teamsync import _git
from teamsync._version import __version__
from teamsync.limits import CONFIG_NAME
from teamsync.sync.state import BaseStore

if TYPE_CHECKING:
    from teamsync.sync.config import SyncConfig

_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")

__all__ = ["certify", "noop_version", "pointer_path"]


def pointer_path(state_dir: str | os.PathLike[str], memdir: str | os.PathLike[str]) -> str:
    """Where the pointer for ``memdir`` lives (its own text is checked on read)."""
    tag = zlib.crc32(os.fsencode(os.fspath(memdir)))
    return os.path.join(state_dir, "sync", "noop", f"{tag:08x}.json")


def certify(
    *,
    state: BaseStore,
    store: Path,
    memdir: Path,
    team_root: Path,
    config: SyncConfig,
    state_dir: Path,
    cache_dir: Path,
    git_dir: Path,
    listing: tuple[str, Mapping[str, str]] | None,
) -> bool:
    """Certify the no-op state if local (stat cache), base and remote agree; True if done.

    ``listing`` is the fetched commit and its vetted checksums (None when the
    backend cannot vouch for one: nothing fetched, not vetted, something refused).
    """
    from teamsync.sync.config import load_config, remote_identity

    if listing is None:
        return False
    version, sums = listing
    mark = state.remote_mark()
    if mark is None or mark.version != version or not _SHA.fullmatch(version):
        return False
    base = state.checksums()
    if dict(sums) != base or state.stat_checksums() != base:
        return False
    if remote_identity(config, Path("/")) != remote_identity(config):
        return False  # a relative remote path: its store depends on the working directory
    try:
        text = (memdir / CONFIG_NAME).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if load_config(memdir) != config:
        return False  # changed under this run
    if not state.certify_noop(version, sums):  # checked again, from the store, as it records
        return False
    pointer = {
        "program": __version__,
        "memdir": os.fspath(memdir),
        "config": text,
        "team": os.fspath(team_root),
        "store": os.fspath(store),
        "cache_dir": os.fspath(cache_dir),
        "git_dir": os.fspath(git_dir),
        "branch": config.branch,
    }
    from teamsync._files import write_atomic

    write_atomic(Path(pointer_path(state_dir, memdir)), json.dumps(pointer), durable=False)
    return True


def noop_version(
    memdir: Path, *, state_dir: str, cache_dir: str, environ: Mapping[str, str]
) -> str | None:
    """The remote commit when a sync of ``memdir`` would change nothing, else None.

    See the module docstring for what is checked; nothing is written.
    """
    try:
        with open(pointer_path(state_dir, memdir), encoding="utf-8") as handle:
            pointer = json.load(handle)
        with open(os.path.join(memdir, CONFIG_NAME), encoding="utf-8") as handle:
            config = handle.read()
    except (OSError, ValueError):
        return None
    if not isinstance(pointer, dict) or not all(
        isinstance(pointer.get(k), str)
        for k in ("program", "memdir", "config", "team", "store", "cache_dir", "git_dir", "branch")
    ):
        return None
    if (
        pointer["program"] != __version__
        or pointer["memdir"] != os.fspath(memdir)
        or pointer["config"] != config
        or pointer["cache_dir"] != os.fspath(Path(cache_dir))
    ):
        return None
    team = os.path.realpath(os.path.join(memdir, "team"))
    if team != pointer["team"] or not os.path.isdir(team):
        return None
    ref = f"refs/heads/{pointer['branch']}"
    env = _git.clean_env(environ, extra={"GIT_DIR": pointer["git_dir"]})
    remote = _git.popen(["ls-remote", "origin", ref], env=env)  # runs while we look here
    try:
        version = _local_version(Path(pointer["store"]), team)
        out, _ = remote.communicate(b"")
    finally:
        if remote.poll() is None:
            remote.kill()
            remote.wait()
    if version is None or remote.returncode != 0:
        return None
    heads = [line.split(b"\t") for line in out.splitlines()]
    found = [sha.decode("ascii", "replace") for sha, *name in heads if name == [ref.encode()]]
    return version if found == [version] else None


def _local_version(store_file: Path, team: str) -> str | None:
    """The certified commit, if the certificate stands and ``team/`` matches the stat cache."""
    store = BaseStore.open_readonly(store_file)
    if store is None:
        return None
    try:
        version = store.noop_version()
        if version is None:
            return None
        mark = store.remote_mark()
        base = store.checksums()
        # team/ matches the stat cache, the stat cache says the base, the base is the remote's
        if mark is None or mark.version != version or store.unchanged(team) != base:
            return None
        return version
    finally:
        store.close()
