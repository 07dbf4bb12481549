"""8 clients x 25 edit-and-sync rounds on one repository: zero lost updates."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from teamsync.errors import ConflictError
from teamsync.server.storage import open_storage
from testing.gitrepos import memory
from testing.server import RestMate, app_for, make_rest_team, token_for, uvicorn_server

CLIENTS = 8
ROUNDS = 25


def _edit(mate: RestMate, i: int, r: int) -> None:
    shared = mate.team / "shared.md"
    text = shared.read_text() if shared.exists() else memory("Shared", "")
    mate.write("shared.md", text + f"client {i} round {r}\n")
    mate.write(f"own-{i}.md", memory(f"Own {i}", f"client {i} latest round {r}\n"))


@pytest.mark.slow
def test_eight_clients_lose_no_update(tmp_path: Path, db_url: str) -> None:
    store = open_storage(db_url)
    tokens = [token_for(store, label=f"c{i}") for i in range(CLIENTS)]
    with uvicorn_server(app_for(store)) as url:
        names = [f"c{i}" for i in range(CLIENTS)]
        mates = make_rest_team(tmp_path, url, tokens, names)
        errors: list[BaseException] = []
        retried = [0]

        def work(i: int, mate: RestMate) -> None:
            try:
                for r in range(ROUNDS):
                    _edit(mate, i, r)
                    try:
                        mate.sync()
                    except ConflictError:
                        retried[0] += 1  # stays local; a later round pushes it
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i, m)) for i, m in enumerate(mates)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        assert not errors, errors
        for _ in range(3):
            for mate in mates:
                mate.sync()
        final = store.state("acme/widgets", contents=True)
    assert final is not None and final.entries is not None
    everything = "\n".join(final.entries.values())
    missing = [
        (i, r)
        for i in range(CLIENTS)
        for r in range(ROUNDS)
        if f"client {i} round {r}\n" not in everything
    ]
    assert missing == []
    for i in range(CLIENTS):
        assert f"client {i} latest round {ROUNDS - 1}" in final.entries[f"own-{i}.md"]
    assert all(m.files() == mates[0].files() for m in mates)
    store.close()
