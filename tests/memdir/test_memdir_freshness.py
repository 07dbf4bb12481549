"""Freshness: whole days, the stale note from two days, and pulls that do not reset age."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from teamsync.memdir.freshness import (
    age_days,
    changed_at,
    checksum_bytes,
    freshness_note,
    record_change,
)
from teamsync.sync.base import checksum

DAY = 86_400.0


@pytest.mark.parametrize(
    ("delta", "days"), [(0, 0), (DAY - 1, 0), (DAY, 1), (2 * DAY + 5, 2), (-DAY, 0), (40 * DAY, 40)]
)
def test_age_days(delta: float, days: int) -> None:
    assert age_days(1_000_000.0, 1_000_000.0 + delta) == days


def test_note_starts_at_two_days() -> None:
    assert freshness_note(0) is None
    assert freshness_note(1) is None
    note = freshness_note(2)
    assert note is not None and "2 days old" in note and "Verify" in note
    assert "47 days old" in (freshness_note(47) or "")


def test_checksum_matches_the_sync_wire_checksum() -> None:
    assert checksum_bytes("héllo\n".encode()) == checksum("héllo\n")


def test_recorded_time_survives_a_pull_that_resets_mtime(tmp_path: Path) -> None:
    state = tmp_path / "state"
    memory = tmp_path / "team" / "m.md"
    memory.parent.mkdir()
    memory.write_text("fact\n", encoding="utf-8")  # a pull just wrote it: mtime is now
    remote_time = 1_600_000_000.0
    record_change(state, memory, checksum("fact\n"), remote_time)
    assert changed_at(state, memory) == remote_time
    assert changed_at(state, memory, checksum("fact\n")) == remote_time
    assert not list((state / "freshness").glob(".teamsync-tmp-*"))


def test_local_edit_falls_back_to_mtime(tmp_path: Path) -> None:
    state = tmp_path / "state"
    memory = tmp_path / "m.md"
    memory.write_text("fact\n", encoding="utf-8")
    record_change(state, memory, checksum("fact\n"), 1_600_000_000.0)
    memory.write_text("edited fact\n", encoding="utf-8")
    os.utime(memory, (1_700_000_000.0, 1_700_000_000.0))
    assert changed_at(state, memory) == 1_700_000_000.0
    assert changed_at(state, memory, checksum("edited fact\n")) == 1_700_000_000.0


def test_no_record_or_corrupt_record_uses_mtime(tmp_path: Path) -> None:
    state = tmp_path / "state"
    memory = tmp_path / "m.md"
    memory.write_text("x", encoding="utf-8")
    os.utime(memory, (1_234.0, 1_234.0))
    assert changed_at(state, memory) == 1_234.0
    record_change(state, memory, checksum("x"), 99.0)
    for record in (state / "freshness").iterdir():
        record.write_text("{not json", encoding="utf-8")
    assert changed_at(state, memory) == 1_234.0


def test_records_are_per_file(tmp_path: Path) -> None:
    state = tmp_path / "state"
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text("same", encoding="utf-8")
    b.write_text("same", encoding="utf-8")
    record_change(state, a, checksum("same"), 10.0)
    record_change(state, b, checksum("same"), 20.0)
    assert (changed_at(state, a), changed_at(state, b)) == (10.0, 20.0)


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        changed_at(tmp_path, tmp_path / "gone.md")
