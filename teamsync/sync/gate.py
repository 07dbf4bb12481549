"""The gate every text passes on its way across, in both directions.

Key validation, ``*.md`` and the size limit, and a whole-content secret scan
(:func:`teamsync.security.guard.guard_write`); an outgoing memory whose
frontmatter cannot be read is held too. A verdict is kept per (key, checksum)
for the run, and a text scanned clean is remembered in the base store (under
the scanner's identity), so it is not scanned again. Reasons name the rule and
line, never the text.
"""

from __future__ import annotations

from collections.abc import Mapping

from teamsync.errors import MemoryFormatError, SecurityError, TeamsyncError
from teamsync.memdir.format import INDEX_NAME, parse_memory
from teamsync.security.guard import guard_many, scanner_identity
from teamsync.sync.base import checksum
from teamsync.sync.report import Progress, gate_reason
from teamsync.sync.state import BaseStore

GATE_CHUNK = 1000
"""Texts per scanner pass when a big gate reports progress."""


class Gate:
    """The write guard for one run, with its verdicts so far."""

    def __init__(
        self, state: BaseStore, allowlist: frozenset[str], progress: Progress | None
    ) -> None:
        self.state, self.allowlist, self.progress = state, allowlist, progress
        self._refused: dict[tuple[str, str], TeamsyncError] = {}
        """(key, checksum) -> why the gate refused that text, this run (scanned once)."""

    def refused_now(self, local: Mapping[str, str]) -> dict[str, str]:
        """key -> why, for keys whose current checksum in ``local`` the gate refused."""
        return {
            key: gate_reason(problem)
            for (key, sum_), problem in self._refused.items()
            if local.get(key) == sum_
        }

    def check(self, items: Mapping[str, str]) -> dict[str, TeamsyncError]:
        """key -> why its text may not cross (the write guard), for many texts at once.

        One scanner pass over the texts this machine has not scanned clean before
        (under the same scanner: :func:`~teamsync.security.guard.scanner_identity`);
        a text it has is only put through the key and size rules again. The
        texts scanned clean now are remembered.
        """
        if not items:
            return {}
        identity = scanner_identity()
        sums = {key: checksum(text) for key, text in items.items()}
        refused = {
            key: self._refused[key, s] for key, s in sums.items() if (key, s) in self._refused
        }
        known = self.state.vetted(sums.values(), identity) if identity else set()
        todo = [(k, t, sums[k] not in known) for k, t in items.items() if k not in refused]
        self._scan(todo, sums, identity, refused)
        self._refused.update(((key, sums[key]), problem) for key, problem in refused.items())
        return refused

    def _scan(
        self,
        todo: list[tuple[str, str, bool]],
        sums: Mapping[str, str],
        identity: str | None,
        refused: dict[str, TeamsyncError],
    ) -> None:
        """Scan ``todo`` in chunks (with progress when it is big); remember the clean."""
        progress = self.progress if len(todo) > GATE_CHUNK else None
        if progress is not None:
            progress.start(sum(1 for _, _, scan in todo if scan), "Scanning")
        for start in range(0, len(todo), GATE_CHUNK):
            chunk = todo[start : start + GATE_CHUNK]
            clean = self._chunk(chunk, refused)
            if identity and clean:
                self.state.remember_vetted((sums[key] for key in clean), identity)
            if progress is not None:
                progress.advance(sum(1 for _, _, scan in chunk if scan))

    def outgoing(self, items: Mapping[str, str]) -> dict[str, TeamsyncError]:
        """:meth:`check`, and a memory whose frontmatter neither YAML attempt can read is
        held back too, with its line and column, until it is fixed (Claude Code could
        not read it either; a teammate would receive a file nothing can parse)."""
        refused: dict[str, TeamsyncError] = {}
        for key, text in items.items():
            if key.rsplit("/", 1)[-1] == INDEX_NAME:
                continue
            try:
                parse_memory(text, key)
            except MemoryFormatError as exc:
                refused[key] = MemoryFormatError(
                    key, f"{exc.message}; fix the frontmatter (`teamsync check`), then sync again"
                )
        return {**self.check({k: t for k, t in items.items() if k not in refused}), **refused}

    def _chunk(
        self, chunk: list[tuple[str, str, bool]], refused: dict[str, TeamsyncError]
    ) -> list[str]:
        """One scanner pass over ``chunk``; the keys scanned clean. If the pass itself
        fails (detect-secrets raised on some text), each text is judged alone, so only
        the text that makes it fail is refused, as a write of that one file would be."""
        try:
            verdicts = guard_many(chunk, baseline=self.allowlist)
        except SecurityError:
            if len(chunk) == 1:
                raise
            clean: list[str] = []
            for item in chunk:
                try:
                    clean += self._chunk([item], refused)
                except SecurityError as exc:
                    refused[item[0]] = exc
            return clean
        refused.update(verdicts.refused)
        return list(verdicts.clean)
