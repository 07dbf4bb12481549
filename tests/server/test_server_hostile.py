"""The hostile-server suite: a server in the wire format that lies and attacks.

The client must write nothing outside team/, follow no symlink, report every
rejected key, exit 1, and still keep the valid entries.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.gitrepos import memory
from testing.hostile_server import Hostility, create_hostile_app
from testing.server import RestMate, make_rest_team, uvicorn_server

TOKEN = "tsm_0123456789ab_" + "s" * 43
GOOD = memory("Good", "a perfectly fine memory\n")

TRAVERSAL = [
    "../evil.md",
    "../../evil.md",
    "a/../../evil.md",
    "..%2fevil.md",
    "%2e%2e/evil.md",
    "%2e%2e%2fevil.md",
    "%252e%252e%252fevil.md",
    "..%5cevil.md",
    "..\\evil.md",
    "%c0%ae%c0%ae/evil.md",
    "\uff0e\uff0e\uff0fevil.md",
    "\uff0e\uff0e/evil.md",
    "a\uff0fevil.md",
    "/tmp/evil.md",
    "//server/share/evil.md",
    "\\\\server\\share\\evil.md",
    "C:/evil.md",
    "C:evil.md",
    "c:\\evil.md",
    "a\x00.md",
    "a\x1b[31m.md",
    "a\nb.md",
    "a\u202eevil.md",
    "",
    "evil.sh",
    ".git/config.md",
    # invisible code points and .git aliases (HFS+, Windows, NTFS 8.3)
    "a\u200db.md",
    "a\u200cb.md",
    "a\u00adb.md",
    "a\u3164b.md",
    "a\u206fb.md",
    ".g\u200cit/config.md",
    ".git./config.md",
    ".git::$INDEX_ALLOCATION/config.md",
    "GIT~1/config.md",
    ".gıt/config.md",
]


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[tuple[Hostility, RestMate, Path]]:
    h = Hostility()
    with uvicorn_server(create_hostile_app(h)) as url:
        (mate,) = make_rest_team(tmp_path, url, [TOKEN], ["victim"], init=False)
        mate.init()
        outside = tmp_path / "outside"
        outside.mkdir()
        yield h, mate, outside


def pull(mate: RestMate) -> tuple[int, dict[str, object], str]:
    done = mate.cli("--json", "pull", timeout=240)
    out = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, out, done.stderr


def rejected_keys(out: dict[str, object]) -> set[str]:
    return {r["key"] for r in out["rejected"]}  # type: ignore[index, union-attr]


def everything_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def test_traversal_keys_in_every_encoding(
    hostile: tuple[Hostility, RestMate, Path], tmp_path: Path
) -> None:
    h, mate, outside = hostile
    h.entries = {**{k: GOOD for k in TRAVERSAL}, "good.md": GOOD, "notes/fine.md": GOOD}
    before = everything_under(tmp_path) - everything_under(mate.team)
    code, out, err = pull(mate)
    assert code == 1, err
    assert set(mate.files()) == {"good.md", "notes/fine.md"}
    assert not (tmp_path / "evil.md").exists() and not Path("/tmp/evil.md").exists()
    after = everything_under(tmp_path) - everything_under(mate.team)
    stray = {p for p in after - before if not p.startswith(("home-victim/", "mem-victim/team"))}
    assert stray <= {"mem-victim/teamsync.yaml"}, stray
    assert rejected_keys(out) >= set(TRAVERSAL)


def test_case_colliding_keys_are_all_refused(hostile: tuple[Hostility, RestMate, Path]) -> None:
    h, mate, _ = hostile
    h.entries = {
        "Notes.md": GOOD,
        "notes.md": GOOD,
        "NOTES.md": GOOD,
        "caf\u00e9.md": GOOD,
        "cafe\u0301.md": GOOD,
        "good.md": GOOD,
        "RTK-\u0131.md": GOOD,
        "RTK-I.md": GOOD,
        "MEMORY.md": "# Index\n",
        "MEMORY.md/x.md": GOOD,
        "memory.md/y.md": GOOD,
    }
    code, out, _ = pull(mate)
    assert code == 1
    # the NFD spelling is refused on its own (keys must be NFC), so the NFC one survives
    assert set(mate.files()) == {"good.md", "caf\u00e9.md"}
    assert rejected_keys(out) >= {"Notes.md", "notes.md", "NOTES.md", "cafe\u0301.md"}
    assert rejected_keys(out) >= {"RTK-\u0131.md", "RTK-I.md", "MEMORY.md", "MEMORY.md/x.md"}
    assert not (mate.team / "MEMORY.md").exists() and "memory.md/y.md" in rejected_keys(out)


def test_planted_symlinks_are_never_followed(hostile: tuple[Hostility, RestMate, Path]) -> None:
    h, mate, outside = hostile
    os.symlink(outside / "target.md", mate.team / "dangling.md")
    os.symlink(outside / "dir", mate.team / "link")
    os.symlink(outside, mate.team / "escape")
    h.entries = {"dangling.md": GOOD, "link/evil.md": GOOD, "escape/evil.md": GOOD, "good.md": GOOD}
    code, out, _ = pull(mate)
    assert code == 1
    assert list(outside.iterdir()) == []
    assert os.path.islink(mate.team / "dangling.md") and not (outside / "target.md").exists()
    assert (mate.team / "good.md").read_text() == GOOD
    # the links are unknown ground: nothing is written at or below them, reported once each
    unknown = {u["key"] for u in out["unknown"]}  # type: ignore[union-attr]
    assert unknown == {"dangling.md", "link", "escape"}


def test_oversize_wrong_checksum_and_binary_entries(
    hostile: tuple[Hostility, RestMate, Path],
) -> None:
    h, mate, _ = hostile
    h.entries = {
        "big.md": "x" * 250_001,
        "lying.md": GOOD,
        "nul.md": "a\x00b",
        "num.md": 42,
        "good.md": GOOD,
    }
    h.wrong_checksums = frozenset({"lying.md"})
    code, out, _ = pull(mate)
    assert code == 1
    assert set(mate.files()) == {"good.md"}
    reasons = {r["key"]: r["reason"] for r in out["rejected"]}  # type: ignore[union-attr]
    assert {"big.md", "lying.md", "nul.md", "num.md"} <= set(reasons)
    assert "checksum" in reasons["lying.md"]


def test_a_hundred_thousand_entries_are_capped_by_the_backend(
    hostile: tuple[Hostility, RestMate, Path],
) -> None:
    from teamsync.sync.config import load_config
    from teamsync.sync.rest import from_config

    h, mate, _ = hostile
    h.entries = {f"m{i:06}.md": f"entry {i}\n" for i in range(100_000)}
    backend = from_config(load_config(mate.memdir), mate.settings)
    start = time.monotonic()
    snap = backend.snapshot()
    assert time.monotonic() - start < 30
    assert len(snap.checksums) == 5_000 and "m000000.md" in snap.checksums
    assert len(snap.rejected) == 95_000
    assert "limit of 5000 entries" in snap.rejected["m099999.md"]
    assert set(backend.fetch(["m000001.md", "m099999.md"])) == {"m000001.md"}
    backend.close()


@pytest.mark.slow
def test_a_hundred_thousand_entries_end_to_end(hostile: tuple[Hostility, RestMate, Path]) -> None:
    h, mate, _ = hostile
    h.entries = {f"m{i:06}.md": f"entry {i}\n" for i in range(100_000)}
    done = mate.cli("--json", "pull", timeout=40)
    assert done.returncode == 1, done.stderr
    files = mate.files()
    assert len(files) == 5_000 and "m000000.md" in files
    assert len(json.loads(done.stdout)["rejected"]) == 95_000


def test_a_response_that_never_ends_is_cut_off(hostile: tuple[Hostility, RestMate, Path]) -> None:
    h, mate, _ = hostile
    h.entries = {"good.md": GOOD}
    h.endless = True
    start = time.monotonic()
    code, _, err = pull(mate)
    assert code == 1 and "refused" in err
    assert time.monotonic() - start < 60
    assert mate.files() == {}
