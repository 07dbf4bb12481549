"""Suite-wide isolation: no test reads or writes the real $HOME, git config or network."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Point HOME, the XDG dirs and git's global config at a fresh temporary home."""
    home = tmp_path_factory.mktemp("home")
    for var in (
        "TEAMSYNC_DIR",
        "TEAMSYNC_TOKEN",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "NO_COLOR",
    ):
        monkeypatch.delenv(var, raising=False)
    for var in ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Author")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "author@example.invalid")
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test Author\n\temail = author@example.invalid\n"
        '[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n',
        encoding="utf-8",
    )
    yield home
