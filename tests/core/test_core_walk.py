"""The one path-based walker (teamsync._walk) and what its callers see through it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import teamsync
from teamsync._walk import walk
from testing.hooks import fake_github_token


def _tree(root: Path) -> None:
    for rel in ("b.md", "a.md", "sub/c.md", ".hidden/d.md", ".teamsync-tmp-x", "sub/deep/e.md"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    os.symlink(root / "a.md", root / "link.md")
    os.symlink(root / "sub", root / "linkdir")


def test_files_first_by_name_no_dot_dirs_no_temp_no_link_followed(tmp_path: Path) -> None:
    _tree(tmp_path)
    keys = [key for key, _ in walk(tmp_path)]
    assert keys == ["a.md", "b.md", "link.md", "linkdir", "sub/c.md", "sub/deep/e.md"]


def test_filters_are_parameters(tmp_path: Path) -> None:
    _tree(tmp_path)
    keys = {key for key, _ in walk(tmp_path, skip_dir=lambda n: False, skip_temp=False)}
    assert {".hidden/d.md", ".teamsync-tmp-x"} <= keys


def test_a_directory_that_cannot_be_listed_is_reported_when_asked(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x\n")
    (tmp_path / "gone").mkdir()
    seen: list[str] = []
    listing = walk(tmp_path, onerror=lambda d, exc: seen.append(d))
    assert next(listing)[0] == "a.md"  # the root is listed: gone/ is queued
    (tmp_path / "gone").rmdir()  # and vanishes before its own listing
    assert list(listing) == [] and seen == [str(tmp_path / "gone")]


def test_a_very_deep_tree_does_not_exhaust_the_stack(tmp_path: Path) -> None:
    path = str(tmp_path)
    for _ in range(400):
        path = os.path.join(path, "d")
        os.mkdir(path)
    Path(path, "bottom.md").write_text("x\n")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)  # far shallower than the tree: a recursive walk would fail
    try:
        (key,) = [key for key, _ in walk(tmp_path)]
    finally:
        sys.setrecursionlimit(limit)
    assert key.endswith("/bottom.md") and key.count("/") == 400


def test_the_scanner_sees_a_file_named_like_a_teamsync_temp_file(tmp_path: Path) -> None:
    (tmp_path / ".teamsync-tmp-notes").write_text(f"token: {fake_github_token()}\n")
    findings = teamsync.scan_paths(["."], cwd=tmp_path)
    assert [f.rule for f in findings] == ["github-pat"]
