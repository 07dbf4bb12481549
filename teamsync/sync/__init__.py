"""Sync: one engine (:mod:`teamsync.sync.engine`) over backends that implement
:class:`teamsync.sync.base.Backend`. Nothing here imports GitPython or httpx2 at
module level; backends are loaded by name through :data:`BACKENDS`."""

from __future__ import annotations

BACKENDS: dict[str, str] = {
    "git": "teamsync.sync.git:GitBackend",
    "rest": "teamsync.sync.rest:RestBackend",
    "memstore": "teamsync.sync.memstore:MemstoreBackend",
}
