"""A team directory that behaves like a case-insensitive, case-preserving file system.

The CI machine's kernel has no casefold support (ext4 ``-O casefold`` and
tmpfs ``casefold`` need CONFIG_UNICODE), so macOS's APFS and Windows' NTFS
are simulated one level up: :class:`CaseInsensitiveDir` is a real
:class:`~teamsync.security.fs.SafeDir` on a real directory whose every lookup
(stat, read, write, delete) opens an existing entry that differs from the
asked name only by case, as those file systems do. Listing shows names as
stored. :func:`sync_case_insensitive` runs the real engine and backend over it.
"""

from __future__ import annotations

import os
import time

from teamsync.commands.sync import open_backend, remote_id, safety_for
from teamsync.memdir.paths import memory_dir
from teamsync.security.fs import SafeDir
from teamsync.security.keys import TEMP_PREFIX
from teamsync.sync.config import load_config
from teamsync.sync.engine import Mode, SyncReport, run_sync
from teamsync.sync.state import BaseStore
from testing.gitrepos import Member


class CaseInsensitiveDir(SafeDir):
    """Every name resolves to the stored spelling of an existing entry, case-blind."""

    def _stored(self, key: str) -> str:
        parts, path, out = key.split("/"), str(self.root), []
        for seg in parts:
            try:
                names = os.listdir(path)
            except (FileNotFoundError, NotADirectoryError):
                names = []
            if seg not in names:
                seg = next(
                    (
                        n
                        for n in sorted(names)
                        if n.casefold() == seg.casefold() and not n.startswith(TEMP_PREFIX)
                    ),
                    seg,
                )
            out.append(seg)
            path = os.path.join(path, seg)
        return "/".join(out)

    def _parent(self, key: str, *, create: bool) -> tuple[int, str]:
        return super()._parent(self._stored(key), create=create)


def sync_case_insensitive(member: Member, mode: Mode = "sync", *, yes: bool = False) -> SyncReport:
    """``sync_once`` for ``member``, with the team directory seen case-insensitively;
    ``yes`` goes past the mass-change guard, as ``--yes`` does."""
    settings = member.settings
    memdir = memory_dir(settings)
    config = load_config(memdir)
    team = CaseInsensitiveDir(memdir / "team", create=True)
    backend = open_backend(config, settings)
    state = BaseStore.open(settings.state_dir, team.root, remote_id(config))
    try:
        return run_sync(
            team,
            backend,
            state,
            mode=mode,
            dry_run=False,
            who=backend.identity(),
            now=time.time(),
            freshness_dir=settings.state_dir,
            safety=safety_for(config, yes=True, recover=None) if yes else None,
        )
    finally:
        state.close()
        backend.close()
        team.close()
