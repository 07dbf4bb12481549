"""Where a command works: the memory directory given as ``--dir`` / ``TEAMSYNC_DIR``.

Checked once, before any command that reads or writes a memory directory runs,
so a ``team/`` folder (or a folder inside one) given as ``--dir`` is refused
with the path to pass instead, by every command alike (``check`` would lint the
wrong level, ``init`` would write ``teamsync.yaml`` inside ``team/`` and
``sync`` would create ``team/team/``).
"""

from __future__ import annotations

from teamsync.config import Settings

NO_MEMORY_DIR = frozenset({"serve", "token"})
"""Verbs that never touch a memory directory: a stray ``TEAMSYNC_DIR`` does not stop them."""


def refuse_team_dir(settings: Settings, verb: str | None) -> None:
    """Raise :class:`~teamsync.errors.ConfigError` when the given directory is a ``team/``
    folder or inside one (nothing to check without ``--dir`` / ``TEAMSYNC_DIR``)."""
    if settings.dir is None or verb in NO_MEMORY_DIR:
        return
    from teamsync.memdir.paths import working_memory_dir

    working_memory_dir(settings)
