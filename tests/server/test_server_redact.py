"""``teamsync redact --repo R KEY`` on ``teamsync serve``'s legacy dialect: the operator
blanks the text a deleted memory's tombstone keeps, on SQLite and PostgreSQL, while the
server runs; the checksum and history stay, so a teammate's stale copy is still told."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from teamsync.server.storage import Storage
from testing.gitrepos import TEAMSYNC, memory
from testing.server import app_for, make_rest_team, token_for, uvicorn_server

DOOR = "to open the staging door, knock twice and say marigold otter\n"  # no scanner rule


def _redact(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TEAMSYNC, "--json", "redact", "--db", db_url, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_operator_blanks_a_deleted_memorys_kept_text(
    tmp_path: Path, storage: Storage, db_url: str
) -> None:
    token = token_for(storage)
    with uvicorn_server(app_for(storage)) as url:
        alice, bob = make_rest_team(tmp_path, url, [token, token], ["alice", "bob"])
        alice.write("door.md", memory("Door", DOOR))
        alice.write("kept.md", memory("Kept", "nothing secret\n"))
        alice.sync()
        bob.sync()
        (alice.team / "door.md").unlink()
        alice.sync()
        assert storage.last_content("acme/widgets", "door.md") == (memory("Door", DOOR), True)

        live = _redact(db_url, "--repo", "Acme/Widgets", "kept.md")
        assert live.returncode == 1 and json.loads(live.stdout)["reason"] == "live"
        assert "live memory" in live.stderr
        assert storage.last_content("acme/widgets", "kept.md") is not None  # unchanged

        done = _redact(db_url, "--repo", "Acme/Widgets", "door.md")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {
            "redacted": "door.md",
            "repo": "acme/widgets",
            "backend": "rest",
        }
        assert "marigold" not in done.stdout + done.stderr
        assert storage.last_content("acme/widgets", "door.md") is None
        again = _redact(db_url, "--repo", "acme/widgets", "door.md")
        assert again.returncode == 1 and json.loads(again.stdout)["reason"] == "none"
        bad = _redact(db_url, "--repo", "acme/widgets", "../x.md")
        assert bad.returncode == 2 and "not a memory key" in bad.stderr

        if db_url.startswith("sqlite:///"):  # the text is out of the file and its WAL
            db = Path(db_url.removeprefix("sqlite:///"))
            for part in (db, Path(f"{db}-wal")):
                assert not part.exists() or b"marigold otter" not in part.read_bytes()

        # the tombstone and its checksum stay: the delete is still listed and told
        history = [h for h in storage.history("acme/widgets", after=0, limit=50)]
        assert [h.action for h in history if h.key == "door.md"][-1] == "delete"
        assert storage.tombstones("acme/widgets")["door.md"].checksum.startswith("sha256:")
        assert bob.sync().deleted == ["door.md"]
        assert alice.files() == bob.files() == {"kept.md": memory("Kept", "nothing secret\n")}


def test_redact_in_a_rest_directory_names_the_server_side_command(tmp_path: Path) -> None:
    from teamsync.server.storage import open_storage

    storage = open_storage(f"sqlite:///{tmp_path / 'srv.sqlite3'}")
    try:
        token = token_for(storage)
        with uvicorn_server(app_for(storage)) as url:
            (alice,) = make_rest_team(tmp_path, url, [token], ["alice"])
            result = alice.cli("redact", "17")
    finally:
        storage.close()
    assert result.returncode == 1
    assert "teamsync redact --repo OWNER/NAME KEY" in result.stderr.replace("\n", " ")
