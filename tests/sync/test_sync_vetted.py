"""Scan only content not already vetted: what this machine scanned clean is not scanned again,
everything else still is (real git remote, real engine, real scanner, real SQLite)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from teamsync.security import secrets
from teamsync.security.guard import scanner_identity
from teamsync.sync.base import checksum
from teamsync.sync.state import BaseStore
from testing.gitrepos import commit_files, fake_token, make_team, memory, seed_remote

FILES = {f"m{i:02d}.md": memory(f"M{i}", f"fact {i}\n") for i in range(40)}


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The paths the real scanner is given, in order (it still scans each)."""
    seen: list[str] = []
    real = secrets.Scanner.add

    def counting(self: secrets.Scanner, text: str, path: str, **kw: Any) -> None:
        seen.append(path)
        real(self, text, path, **kw)

    monkeypatch.setattr(secrets.Scanner, "add", counting)
    yield seen


def test_content_scanned_clean_here_is_not_scanned_again(tmp_path: Path, scans: list[str]) -> None:
    _, bob = make_team(tmp_path)
    seed_remote(bob.remote, FILES)
    assert bob.sync("status").exit_code() == 0
    assert sorted(scans) == sorted(FILES)  # the first look scans every text once
    scans.clear()
    bob.sync("status")
    report = bob.sync("pull")
    assert scans == []  # the same contents again: vetted here, not rescanned
    assert sorted(report.written) == sorted(FILES) and bob.files() == FILES

    secret = memory("Deploy", f"the deploy token is {fake_token()}\n")
    edited = FILES["m03.md"] + "one more line\n"
    commit_files(bob.remote, {"deploy.md": secret.encode(), "m03.md": edited.encode()})
    report = bob.sync("pull")
    assert sorted(scans) == ["deploy.md", "m03.md"]  # never-scanned content is scanned ...
    assert [r.key for r in report.rejected] == ["deploy.md"]  # ... and a secret still refused
    assert "deploy.md" not in bob.files() and bob.read("m03.md") == edited
    scans.clear()
    report = bob.sync("pull")
    assert scans == ["deploy.md"]  # a refused text is never remembered as vetted
    assert [r.key for r in report.rejected] == ["deploy.md"]


def test_a_push_after_a_status_scans_each_content_once(tmp_path: Path, scans: list[str]) -> None:
    alice, _ = make_team(tmp_path)
    for key, text in FILES.items():
        alice.write(key, text)
    assert alice.sync("status").exit_code() == 0
    assert alice.sync("push").exit_code() == 0
    assert sorted(scans) == sorted(FILES)  # status scanned them; the push did not again


def test_vetted_rows_belong_to_one_scanner(tmp_path: Path) -> None:
    store = BaseStore(tmp_path / "base.sqlite3")
    identity = scanner_identity()
    assert identity is not None
    sums = [checksum(t) for t in FILES.values()]
    store.remember_vetted(sums[:10], identity)
    assert store.vetted(sums, identity) == set(sums[:10])
    assert store.vetted(sums, "scan-v1:another-scanner") == set()
    store.remember_vetted(sums[10:12], "scan-v1:another-scanner")  # a new scanner: old rows go
    assert store.vetted(sums, identity) == set()
    store.close()
