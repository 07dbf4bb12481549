"""The ``entryModified`` extension (issue 18): a created key keeps its sharer's change time."""

from __future__ import annotations

from teamsync.server.storage import Storage, WriteOk, WriteRequest, open_storage

REPO = "acme/widgets"


def _times(storage: Storage) -> dict[str, float]:
    state = storage.state(REPO, contents=False)
    assert state is not None
    return dict(state.updated_at)


def test_a_created_key_keeps_the_sharers_time_and_an_edit_does_not(db_url: str) -> None:
    storage = open_storage(db_url)
    now = 2_000_000_000.0
    old = now - 40 * 86_400
    created = WriteRequest(
        upserts={"old.md": "a", "future.md": "b", "ancient.md": "c"},
        modified={"old.md": old, "future.md": now + 3_600, "ancient.md": 12.0},
    )
    assert isinstance(storage.write(REPO, created, now), WriteOk)
    times = _times(storage)
    assert times["old.md"] == old  # the sharer's time, for a created key
    assert times["future.md"] == now and times["ancient.md"] == now  # insane claims: server's
    edit = WriteRequest(upserts={"old.md": "a2"}, modified={"old.md": old})
    assert isinstance(storage.write(REPO, edit, now + 10), WriteOk)
    assert _times(storage)["old.md"] == now + 10  # an existing key: the server's clock
    history = storage.history(REPO, after=0, limit=10)
    assert {h.at for h in history} == {now, now + 10}  # history keeps the server's time
    storage.close()
