"""SafeDir on a real filesystem: symlinks, loops, races, atomicity, walking."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from teamsync.errors import KeyRejected, MemoryFormatError, UnsafePath
from teamsync.security.fs import TEMP_PREFIX, SafeDir, WalkItem


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A team directory and a sibling 'outside' directory holding a precious file."""
    team = tmp_path / "memory" / "team"
    team.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.md").write_text("do not touch\n", encoding="utf-8")
    return team, outside


def _outside_unchanged(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["precious.md"]
    assert (outside / "precious.md").read_text(encoding="utf-8") == "do not touch\n"


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


# -- basics ---------------------------------------------------------------------------------


def test_write_read_round_trip_creates_parents(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    with SafeDir(team) as d:
        d.write_text("notes/deep/café.md", "hé\n")
        d.write_text("日本語.md", "こんにちは")
        assert d.read_text("notes/deep/café.md") == "hé\n"
        assert d.read_bytes("日本語.md") == "こんにちは".encode()
        assert (team / "notes" / "deep" / "café.md").read_text(encoding="utf-8") == "hé\n"
        assert d.exists("日本語.md") and not d.exists("nope.md") and not d.exists("no/pe.md")


def test_write_leaves_no_temp_and_sets_mtime(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    d = SafeDir(team)
    d.write_text("a.md", "one")
    d.write_text("a.md", "two", mtime=1_600_000_000.5)
    assert [p.name for p in team.iterdir()] == ["a.md"]
    assert (team / "a.md").read_text(encoding="utf-8") == "two"
    assert (team / "a.md").stat().st_mtime == pytest.approx(1_600_000_000.5)
    stat = d.stat("a.md")
    assert stat is not None and stat.st_size == 3


def test_overwrite_keeps_permissions(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    d = SafeDir(team)
    d.write_text("a.md", "one")
    os.chmod(team / "a.md", 0o600)
    d.write_text("a.md", "two")
    assert (team / "a.md").stat().st_mode & 0o777 == 0o600


def test_invalid_key_rejected_before_any_filesystem_call(layout: tuple[Path, Path]) -> None:
    team, outside = layout
    d = SafeDir(team)
    for key in ("../outside/x.md", "/etc/x.md", "a\\b.md", "%2e%2e/x.md", "notes/"):
        with pytest.raises(KeyRejected):
            d.write_text(key, "x")
        with pytest.raises(KeyRejected):
            d.read_text(key)
    assert list(team.iterdir()) == []
    _outside_unchanged(outside)


def test_missing_files(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    d = SafeDir(team)
    with pytest.raises(FileNotFoundError):
        d.read_text("missing.md")
    with pytest.raises(FileNotFoundError):
        d.read_text("missing/dir.md")
    assert d.delete("missing.md") is False
    assert d.delete("missing/dir.md") is False


def test_delete(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    d = SafeDir(team)
    d.write_text("n/a.md", "x")
    assert d.delete("n/a.md") is True
    assert not (team / "n" / "a.md").exists()
    assert d.delete("n/a.md") is False


def test_root_symlink_is_resolved_once(tmp_path: Path) -> None:
    real = tmp_path / "real-team"
    real.mkdir()
    link = tmp_path / "team"
    link.symlink_to(real)
    d = SafeDir(link)
    assert d.root == real.resolve()
    d.write_text("a.md", "x")
    assert (real / "a.md").read_text(encoding="utf-8") == "x"


def test_root_missing_created_or_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        SafeDir(tmp_path / "nope")
    created = SafeDir(tmp_path / "new" / "team", create=True)
    assert created.root.is_dir()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(UnsafePath, match="not a directory"):
        SafeDir(tmp_path / "file")


def test_read_text_rejects_invalid_utf8(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    (team / "bin.md").write_bytes(b"\xff\xfe")
    with pytest.raises(MemoryFormatError, match="not valid UTF-8"):
        SafeDir(team).read_text("bin.md")


def test_max_bytes_bounds_reads(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    (team / "big.md").write_bytes(b"x" * 1001)
    d = SafeDir(team)
    assert len(d.read_bytes("big.md", max_bytes=1001)) == 1001
    with pytest.raises(MemoryFormatError, match="over the 1,000-byte limit"):
        d.read_text("big.md", max_bytes=1000)


def test_closed_safedir_refuses_work(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    d = SafeDir(team)
    d.close()
    d.close()  # idempotent
    with pytest.raises(ValueError, match="is closed"):
        d.write_text("a.md", "x")
    with pytest.raises(ValueError, match="is closed"):
        list(d.walk())


def test_parent_that_is_a_file_is_refused(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    (team / "notes").write_text("x", encoding="utf-8")
    with pytest.raises(UnsafePath, match="regular file, not a directory"):
        SafeDir(team).write_text("notes/a.md", "x")


# -- symlinks -------------------------------------------------------------------------------


def test_escaping_directory_symlink(layout: tuple[Path, Path]) -> None:
    team, outside = layout
    (team / "notes").symlink_to(outside, target_is_directory=True)
    d = SafeDir(team)
    with pytest.raises(UnsafePath, match="symlink on the path"):
        d.write_text("notes/evil.md", "pwned")
    with pytest.raises(UnsafePath, match="symlink on the path"):
        d.read_text("notes/precious.md")
    with pytest.raises(UnsafePath, match="symlink on the path"):
        d.delete("notes/precious.md")
    with pytest.raises(UnsafePath):
        d.exists("notes/precious.md")
    _outside_unchanged(outside)


def test_symlink_at_final_component(layout: tuple[Path, Path]) -> None:
    team, outside = layout
    (team / "a.md").symlink_to(outside / "precious.md")
    d = SafeDir(team)
    with pytest.raises(UnsafePath, match="the file is a symlink"):
        d.read_text("a.md")
    with pytest.raises(UnsafePath, match="the file is a symlink"):
        d.write_text("a.md", "pwned")
    with pytest.raises(UnsafePath, match="the file is a symlink"):
        d.delete("a.md")
    assert (team / "a.md").is_symlink()
    _outside_unchanged(outside)


def test_dangling_symlink(layout: tuple[Path, Path]) -> None:
    team, outside = layout
    (team / "dir").symlink_to(outside / "not-yet")
    (team / "a.md").symlink_to(outside / "not-yet.md")
    d = SafeDir(team)
    with pytest.raises(UnsafePath, match="dangling symlink"):
        d.write_text("dir/x.md", "pwned")
    with pytest.raises(UnsafePath, match="dangling symlink"):
        d.write_text("a.md", "pwned")
    with pytest.raises(UnsafePath, match="dangling symlink"):
        d.read_text("a.md")
    _outside_unchanged(outside)


def test_symlink_loop(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    (team / "loop1").symlink_to("loop2")
    (team / "loop2").symlink_to("loop1")
    d = SafeDir(team)
    with pytest.raises(UnsafePath, match="symlink loop"):
        d.write_text("loop1/x.md", "x")
    with pytest.raises(UnsafePath, match="symlink loop"):
        d.read_text("loop2")


def test_internal_symlink_is_refused_too(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    (team / "real").mkdir()
    (team / "alias").symlink_to("real")
    with pytest.raises(UnsafePath, match="symlink on the path"):
        SafeDir(team).write_text("alias/x.md", "x")
    assert list((team / "real").iterdir()) == []


def test_directory_swapped_for_symlink_between_check_and_write(layout: tuple[Path, Path]) -> None:
    team, outside = layout
    d = SafeDir(team)
    d.write_text("notes/a.md", "old")
    assert d.exists("notes/a.md")  # the "check"
    (team / "notes" / "a.md").unlink()
    (team / "notes").rmdir()
    (team / "notes").symlink_to(outside, target_is_directory=True)  # the swap
    with pytest.raises(UnsafePath, match="symlink on the path"):
        d.write_text("notes/a.md", "pwned")  # the write
    _outside_unchanged(outside)


def test_concurrent_swapping_never_writes_outside(layout: tuple[Path, Path]) -> None:
    team, outside = layout
    d = SafeDir(team)
    stop = threading.Event()
    real, parked, link = team / "notes", team / "parked", team / "link"

    swaps = 0

    def swapper() -> None:
        nonlocal swaps
        link.symlink_to(outside, target_is_directory=True)
        while not stop.is_set():
            shutil.rmtree(parked, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.rename(real, parked)  # the writer may recreate notes/ at any moment
            try:
                os.rename(link, real)  # notes -> outside
            except OSError:
                continue
            swaps += 1
            os.rename(real, link)
            time.sleep(0.0002)  # let some writes land in a real notes/

    thread = threading.Thread(target=swapper)
    thread.start()
    written = refused = 0
    start = time.monotonic()
    try:  # at least 0.4 s; longer (up to 5 s) on a loaded machine until both outcomes occurred
        while time.monotonic() - start < 0.4 or (
            time.monotonic() - start < 5 and not (written and refused and swaps > 10)
        ):
            try:
                d.write_text("notes/race.md", "payload")
                written += 1
            except (UnsafePath, FileNotFoundError, OSError):
                refused += 1
    finally:
        stop.set()
        thread.join()
    assert written > 0 and refused > 0 and swaps > 10
    _outside_unchanged(outside)


# -- atomicity ------------------------------------------------------------------------------


@pytest.mark.parametrize("failing", ["fsync", "rename", "write"])
def test_failed_write_keeps_old_content_and_no_temp(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    team, _ = layout
    d = SafeDir(team)
    d.write_text("notes/a.md", "old content")

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError(5, "injected I/O error")

    monkeypatch.setattr(os, failing, boom)
    with pytest.raises(OSError, match="injected"):
        d.write_text("notes/a.md", "new content " * 1000)
    monkeypatch.undo()
    assert (team / "notes" / "a.md").read_text(encoding="utf-8") == "old content"
    assert [p.name for p in (team / "notes").iterdir()] == ["a.md"]


def test_no_descriptor_leaks(layout: tuple[Path, Path]) -> None:
    team, outside = layout
    (team / "link").symlink_to(outside)
    d = SafeDir(team)
    before = _open_fds()
    for i in range(50):
        d.write_text(f"n/{i % 5}/a.md", "x")
        d.read_text(f"n/{i % 5}/a.md")
        with pytest.raises(UnsafePath):
            d.write_text("link/x.md", "x")
        with pytest.raises(FileNotFoundError):
            d.read_text("n/none.md")
        list(d.walk())
    assert _open_fds() == before
    d.close()
    assert _open_fds() == before - 1


# -- walking --------------------------------------------------------------------------------


def test_walk_reports_links_and_specials_without_following(layout: tuple[Path, Path]) -> None:
    team, outside = layout
    d = SafeDir(team)
    d.write_text("b.md", "x")
    d.write_text("notes/a.md", "x")
    (team / "escape").symlink_to(outside, target_is_directory=True)
    (team / "dangling.md").symlink_to(outside / "gone.md")
    (team / "loop").symlink_to("loop")
    os.mkfifo(team / "pipe.md")
    (team / "CON.md").write_text("x", encoding="utf-8")
    (team / f"{TEMP_PREFIX}abc").write_text("partial", encoding="utf-8")
    os.close(os.open(os.fsencode(team) + b"/bad\xff.md", os.O_CREAT | os.O_WRONLY, 0o644))
    assert list(d.walk()) == [
        WalkItem("CON.md", "Windows-reserved name 'CON'"),
        WalkItem("b.md", None),
        WalkItem("bad\udcff.md", "contains a lone surrogate (name is not valid UTF-8)"),
        WalkItem("dangling.md", "dangling symlink", opaque=True),  # links may hide a tree
        WalkItem("escape", "symlink (not followed)", opaque=True),
        WalkItem("loop", "symlink loop", opaque=True),
        WalkItem("notes/a.md", None),
        WalkItem("pipe.md", "not a regular file (fifo)"),
    ]


def test_reading_a_fifo_does_not_block(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    os.mkfifo(team / "pipe.md")
    with pytest.raises(UnsafePath, match="fifo"):
        SafeDir(team).read_text("pipe.md")
    with pytest.raises(UnsafePath, match="fifo"):
        SafeDir(team).write_text("pipe.md", "x")


def test_directory_at_key_is_refused(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    (team / "dir.md").mkdir()
    d = SafeDir(team)
    with pytest.raises(UnsafePath, match="directory"):
        d.write_text("dir.md", "x")
    with pytest.raises(UnsafePath, match="directory"):
        d.delete("dir.md")


def test_cleanup_temp_removes_only_stale_temps(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    d = SafeDir(team)
    d.write_text("n/a.md", "keep")
    stale = team / "n" / f"{TEMP_PREFIX}old"
    stale.write_text("partial", encoding="utf-8")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    fresh = team / f"{TEMP_PREFIX}new"
    fresh.write_text("in progress", encoding="utf-8")
    assert d.cleanup_temp() == 1
    assert not stale.exists() and fresh.exists()
    assert d.cleanup_temp(older_than=-1) == 1
    assert not fresh.exists()
    assert [w.key for w in d.walk()] == ["n/a.md"]


_segment = st.text(alphabet="abcxyzé日-_ 0", min_size=1, max_size=8).filter(
    lambda s: not s.endswith(" ")
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(_segment, min_size=1, max_size=3).map("/".join), max_size=6))
def test_written_keys_are_exactly_what_walk_finds(tmp_path: Path, keys: list[str]) -> None:
    team = tmp_path / f"t{time.monotonic_ns()}"
    d = SafeDir(team, create=True)
    written: dict[str, str] = {}
    for key in keys:
        try:
            d.write_text(key + ".md", key)
        except UnsafePath:  # a file where a directory is needed
            continue
        written[key + ".md"] = key
    assert {w.key: w.problem for w in d.walk()} == dict.fromkeys(written)
    assert all(d.read_text(k) == v for k, v in written.items())
    d.close()


# -- batches: stage, one barrier, place, directory fsyncs ------------------------------------


@pytest.mark.parametrize("per_file", [False, True], ids=["syncfs", "fsync-each"])
def test_a_batch_is_invisible_until_placed_then_exact(
    layout: tuple[Path, Path], per_file: bool
) -> None:
    team, _ = layout
    (team / "old.md").write_text("old\n", encoding="utf-8")
    os.chmod(team / "old.md", 0o640)
    d = SafeDir(team)
    fds = _open_fds()
    with d.batch(2 if per_file else 100) as batch:
        st_new = batch.stage_text("notes/new.md", "new ✓\n", mtime=1_600_000_000.0)
        batch.stage_text("old.md", "replaced\n")
        # staged: nothing under a final name, nothing walk() lists
        assert not (team / "notes/new.md").exists()
        assert (team / "old.md").read_text(encoding="utf-8") == "old\n"
        assert [i.key for i in d.walk()] == ["old.md"]
        assert len(list(team.rglob(TEMP_PREFIX + "*"))) == 2
        batch.durable()
        batch.place("notes/new.md")
        batch.place("old.md")
        assert batch.delete("gone.md") is False
        batch.finish()
    assert _open_fds() == fds
    assert (team / "notes/new.md").read_text(encoding="utf-8") == "new ✓\n"
    placed = os.stat(team / "notes/new.md")
    assert (placed.st_ino, placed.st_mtime_ns, placed.st_size) == (
        st_new.st_ino, st_new.st_mtime_ns, st_new.st_size
    )  # fmt: skip
    assert placed.st_mtime == 1_600_000_000.0
    assert (team / "old.md").read_text(encoding="utf-8") == "replaced\n"
    assert (os.stat(team / "old.md").st_mode & 0o777) == 0o640  # the file keeps its bits
    assert not list(team.rglob(TEMP_PREFIX + "*"))


def test_a_batch_left_unplaced_leaves_no_trace(layout: tuple[Path, Path]) -> None:
    team, _ = layout
    d = SafeDir(team)
    with pytest.raises(RuntimeError), d.batch() as batch:
        batch.stage_text("a.md", "a\n")
        batch.stage_text("b/c.md", "c\n")
        batch.durable()
        batch.place("a.md")
        raise RuntimeError("crash before the rest")
    assert [i.key for i in d.walk()] == ["a.md"]
    assert not list(team.rglob(TEMP_PREFIX + "*"))


def test_a_batch_refuses_links_planted_between_stage_and_place(layout: tuple[Path, Path]) -> None:
    team, outside = layout
    d = SafeDir(team)
    with d.batch() as batch:
        batch.stage_text("x.md", "mine\n")
        os.symlink(outside / "precious.md", team / "x.md")
        batch.durable()
        with pytest.raises(UnsafePath):
            batch.place("x.md")
        os.symlink(outside / "precious.md", team / "y.md")
        with pytest.raises(UnsafePath):
            batch.delete("y.md")
        with pytest.raises(UnsafePath):
            batch.stage_text("y.md", "through the link?\n")
        batch.finish()
    assert os.path.islink(team / "x.md") and os.path.islink(team / "y.md")
    _outside_unchanged(outside)
    assert not list(team.rglob(TEMP_PREFIX + "*"))


def test_a_new_placement_never_replaces_a_file_that_appeared_since_the_plan(
    layout: tuple[Path, Path],
) -> None:
    team, _ = layout
    d = SafeDir(team)
    with d.batch() as batch:
        batch.stage_text("fresh.md", "pulled\n")
        batch.stage_text("race.md", "pulled\n")
        batch.durable()
        (team / "race.md").write_text("the user's new memory\n")  # written after the plan
        batch.place("fresh.md", new=True)
        with pytest.raises(FileExistsError):
            batch.place("race.md", new=True)
        batch.finish()
    assert (team / "fresh.md").read_text() == "pulled\n"
    assert (team / "race.md").read_text() == "the user's new memory\n"
    assert os.stat(team / "fresh.md").st_nlink == 1  # the temp's name is gone
    assert not list(team.rglob(TEMP_PREFIX + "*"))


def test_a_batch_never_walks_through_a_linked_folder(layout: tuple[Path, Path]) -> None:
    team, outside = layout
    os.symlink(outside, team / "notes")
    d = SafeDir(team)
    with d.batch() as batch:
        with pytest.raises(UnsafePath):
            batch.stage_text("notes/evil.md", "x\n")
        with pytest.raises(KeyRejected):
            batch.stage_text("../escape.md", "x\n")
        with pytest.raises(MemoryFormatError):
            batch.stage_text("bad.md", "\udcff")
    _outside_unchanged(outside)


def test_without_syncfs_each_temp_is_fsynced(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """TEAMSYNC_NO_SYNCFS (or a platform without syncfs) takes the per-file path."""
    team, _ = layout
    monkeypatch.setenv("TEAMSYNC_NO_SYNCFS", "1")
    d = SafeDir(team)
    with d.batch(500) as batch:
        assert batch._syncfs is None
        for i in range(20):
            batch.stage_text(f"m{i}.md", f"{i}\n")
        batch.durable()
        for i in range(20):
            batch.place(f"m{i}.md")
        batch.finish()
    assert sorted(p.name for p in team.iterdir()) == sorted(f"m{i}.md" for i in range(20))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="syncfs is Linux's")
def test_syncfs_is_trusted_only_on_local_filesystems(tmp_path: Path) -> None:
    from teamsync.security import fs

    kind = fs._fs_type(str(tmp_path))
    barrier = fs._syncfs_function(str(tmp_path))
    if kind in fs.SYNCFS_FILESYSTEMS and fs._kernel_reports_syncfs_errors():
        assert barrier is not None
    else:
        assert barrier is None
    assert fs._fs_type("/proc/self") == "proc"
    assert fs._syncfs_function("/proc/self") is None  # not a filesystem known to flush
    assert fs._unescape_mount(r"/mnt/with\040space") == "/mnt/with space"
