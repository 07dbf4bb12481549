"""Real-format memories through the whole stack: git and REST sync, recall, the manifest.

Teammates are real directories syncing over a bare git remote and over a real
uvicorn server on loopback (SQLite storage), exactly as users run them.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pytest

from teamsync.memdir.format import LAYOUT_METADATA, parse_memory
from teamsync.memdir.index import parse_index
from teamsync.memdir.lint import check_memdir
from teamsync.server.storage import open_storage
from testing.gitrepos import Member, converge, make_team
from testing.server import app_for, make_rest_team, token_for, uvicorn_server

COMPAT = Path(__file__).parent / "compat" / "memory" / "team"
MODIFIED = "2026-08-01T09:00:00.000Z"
CRLF_KEY = "db-migrations.md"  # CRLF line ends in the fixture

INDEX = (
    "# Team memory\n\nShared notes. Ask in #ops before changing deploy rules.\n\n"
    "## Project\n- [Deploy freeze](deploy-freeze.md) — no deploys after Friday noon\n"
    f"- [DB migrations]({CRLF_KEY}) — separate deploy step\n"
    "\n> Keep entries short.\n"
)


def _seed(mate: Member) -> dict[str, bytes]:
    files = {
        "deploy-freeze.md": (COMPAT / "deploy-freeze.md").read_bytes(),
        CRLF_KEY: (COMPAT / CRLF_KEY).read_bytes(),
        "MEMORY.md": INDEX.encode("utf-8"),
    }
    for key, data in files.items():
        (mate.team / key).write_bytes(data)
    return files


def _bytes(mate: Member) -> dict[str, bytes]:
    return {
        p.relative_to(mate.team).as_posix(): p.read_bytes()
        for p in sorted(mate.team.rglob("*"))
        if p.is_file()
    }


def _modified_age() -> int:
    stamp = datetime.fromisoformat(MODIFIED.replace("Z", "+00:00")).timestamp()
    return max(0, math.floor((time.time() - stamp) / 86_400))


def _recall_and_manifest(mate: Member) -> None:
    done = mate.cli("--json", "recall", "--offline", "prod deploys after Friday noon")
    assert done.returncode == 0, done.stderr
    hits = {m["path"]: m for m in json.loads(done.stdout)["memories"]}
    hit = hits["team/deploy-freeze.md"]
    assert hit["type"] == "project"
    assert hit["age_days"] == _modified_age()  # the content's clock, not the pull's
    assert hit["stale"] is (_modified_age() >= 2)

    from teamsync.recall.recall import build_manifest

    manifest, _ = build_manifest(mate.memdir, mate.settings.state_dir)
    (line,) = [ln for ln in manifest.splitlines() if "team/deploy-freeze.md" in ln]
    days = _modified_age()
    age = {0: "today", 1: "1 day old"}.get(days, f"{days} days old")
    assert line.startswith(f"- [project] team/deploy-freeze.md (2026-08-01T09:00:00Z, {age}): No")


def _check_clean(mate: Member) -> None:
    report = check_memdir(mate.memdir)
    assert report.problems == [], report.problems


def test_git_sync_keeps_metadata_memories_byte_identical(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    sent = _seed(alice)
    converge([alice, bob], rounds=2)
    assert _bytes(bob) == sent == _bytes(alice)
    assert parse_memory(sent["deploy-freeze.md"].decode(), "x.md").layout == LAYOUT_METADATA
    _recall_and_manifest(bob)
    _check_clean(bob)


def test_rest_sync_keeps_metadata_memories_byte_identical(tmp_path: Path) -> None:
    store = open_storage(f"sqlite:///{tmp_path / 'server.db'}")
    tokens = [token_for(store, label=n) for n in ("alice", "bob")]
    with uvicorn_server(app_for(store)) as url:
        alice, bob = make_rest_team(tmp_path, url, tokens)
        sent = _seed(alice)
        for _ in range(2):
            for mate in (alice, bob):
                assert mate.sync().exit_code() == 0
        assert _bytes(bob) == sent == _bytes(alice)
        _recall_and_manifest(bob)
        _check_clean(bob)


@contextmanager
def _team(tmp_path: Path, backend: str, names: tuple[str, ...]) -> Iterator[list[Member]]:
    if backend == "git":
        yield list(make_team(tmp_path, names))
        return
    store = open_storage(f"sqlite:///{tmp_path / 'server.db'}")
    tokens = [token_for(store, label=n) for n in names]
    with uvicorn_server(app_for(store)) as url:
        yield list(make_rest_team(tmp_path, url, tokens, names))


def _converge(mates: list[Member], rounds: int) -> None:
    for _ in range(rounds):
        for mate in mates:
            mate.sync()


@pytest.mark.parametrize("backend", ["git", "rest"])
def test_index_prose_and_hook_edits_survive_sync(tmp_path: Path, backend: str) -> None:
    with _team(tmp_path, backend, ("alice", "bob", "carol")) as mates:
        _prose_and_hooks_survive(*mates)


def _prose_and_hooks_survive(alice: Member, bob: Member, carol: Member) -> None:
    _seed(alice)
    _converge([alice, bob, carol], rounds=2)
    # Bob adds prose and edits a hook; Carol writes a new memory; Alice deletes one.
    index = bob.read("MEMORY.md")
    index = index.replace("separate deploy step", "a separate step, before the app deploy")
    bob.write("MEMORY.md", index + "\nRunbooks live in the ops wiki.\n")
    carol.write(
        "api-style.md",
        "---\nname: API style\ndescription: snake_case JSON keys\nmetadata: \n"
        "  node_type: memory\n  type: feedback\n  modified: 2026-09-01T00:00:00.000Z\n---\nx\n",
    )
    (alice.team / "deploy-freeze.md").unlink()
    _converge([bob, carol, alice], rounds=4)
    texts = {m.name: m.read("MEMORY.md") for m in (alice, bob, carol)}
    assert len(set(texts.values())) == 1, texts
    final = texts["alice"]
    assert "Runbooks live in the ops wiki." in final
    assert "Shared notes. Ask in #ops before changing deploy rules." in final
    assert "> Keep entries short." in final
    assert "a separate step, before the app deploy" in final
    targets = [e.target for e in parse_index(final)]
    assert "api-style.md" in targets and "deploy-freeze.md" not in targets
    for mate in (alice, bob, carol):
        _check_clean(mate)


def test_conflict_copy_keeps_the_metadata_layout(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    _seed(alice)
    converge([alice, bob], rounds=2)
    base = alice.read("deploy-freeze.md")
    alice.write("deploy-freeze.md", base.replace("Friday 12:00 UTC", "Friday 11:00 UTC"))
    mine = base.replace("Friday 12:00 UTC", "Friday 13:00 UTC")
    bob.write("deploy-freeze.md", mine)
    alice.sync()
    report = bob.sync()
    (conflict,) = report.conflicts
    assert conflict.copy is not None
    assert bob.read(conflict.copy) == mine  # the local version, byte for byte
    assert parse_memory(bob.read(conflict.copy), conflict.copy).layout == LAYOUT_METADATA
