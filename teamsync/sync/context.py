"""What one run's steps share: the team directory, the base store, the report, the
gate, and this round's view of ``MEMORY.md`` while files are held back here."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from teamsync.errors import TeamsyncError
from teamsync.memdir.format import INDEX_NAME
from teamsync.security.fs import SafeDir
from teamsync.sync.base import checksum
from teamsync.sync.gate import Gate
from teamsync.sync.indexview import IndexView
from teamsync.sync.local import read_memory
from teamsync.sync.report import Progress, SyncReport
from teamsync.sync.state import BaseStore


@dataclass
class RunContext:
    """One run's fixed inputs, and the round's index view."""

    team: SafeDir
    state: BaseStore
    report: SyncReport
    who: str
    now: float
    freshness_dir: Path | None
    allowlist: frozenset[str] = frozenset()
    progress: Progress | None = None
    gate: Gate = field(init=False)
    index: IndexView | None = None
    """This round's view of ``MEMORY.md`` while files are held back here (else None)."""
    held: frozenset[str] = frozenset()
    """Keys held back here this round that the remote lacks (their index lines stay here)."""

    def __post_init__(self) -> None:
        self.gate = Gate(self.state, self.allowlist, self.progress)

    @property
    def backups(self) -> Path | None:
        """Where ``MEMORY.md`` backups go (None: no state dir)."""
        return None if self.freshness_dir is None else self.freshness_dir / "index-backups"

    def local_text(self, key: str, expect: str | None) -> str | None:
        """The local text when it still has checksum ``expect`` (else None: skip this round).

        For the index while files are held back, ``expect`` is the shared view's
        checksum and the shared view is what is returned (:mod:`teamsync.sync.indexview`).
        """
        try:
            text = read_memory(self.team, key)
        except (OSError, TeamsyncError):
            return None
        view = self.index
        if key == INDEX_NAME and view is not None and expect == view.shared_sum:
            return view.shared if text == view.full else None
        return text if checksum(text) == expect else None

    def restored(self, key: str, expect: str | None, text: str) -> str:
        """``text`` (the shared index written here) with this side's withheld lines back."""
        view = self.index
        if key != INDEX_NAME or view is None or expect != view.shared_sum:
            return text
        return view.restore(text)
