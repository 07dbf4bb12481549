"""Where the memory lives: Claude Code's layout, or ``--dir`` / ``TEAMSYNC_DIR``.

Claude Code keeps one memory per repository at
``~/.claude/projects/<sanitize_path(canonical git root)>/memory/`` with the shared
part in ``team/``. ``CLAUDE_CODE_REMOTE_MEMORY_DIR`` replaces ``~/.claude`` as the
base, as in Claude Code. Every worktree of a repository resolves to the main
checkout, read straight from the ``.git`` file, ``commondir`` and the back-link
(no GitPython, no subprocess, so it costs a few ``stat`` calls).

Names longer than 200 characters are cut and get ``-<hash>`` appended. The hash
here is djb2 in base 36 over UTF-16 code units: exactly what Claude Code computes
when it runs under Node. Under Bun (the packaged binary) Claude Code uses
``Bun.hash`` instead, so for such very long project paths the directory names
can differ; pass ``--dir`` in that case.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from teamsync.limits import INDEX_NAME

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Protocol

MAX_SANITIZED_LENGTH = 200


if TYPE_CHECKING:

    class Places(Protocol):
        """What the resolution reads: :class:`teamsync.config.Settings` is one (the CLI's fast
        no-op path passes a lighter one, built before dataclasses are imported)."""

        @property
        def dir(self) -> Path | None: ...

        @property
        def cwd(self) -> Path: ...

        @property
        def environ(self) -> Mapping[str, str]: ...

        @property
        def home(self) -> Path: ...


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", errors="surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def djb2_base36(text: str) -> str:
    """``Math.abs(djb2Hash(text)).toString(36)`` as Claude Code computes it under Node."""
    value = 0
    for unit in _utf16_units(text):
        value = ((value << 5) - value + unit) & 0xFFFFFFFF
    if value >= 0x80000000:
        value -= 0x100000000
    value = abs(value)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if value == 0:
            return out


def sanitize_path(name: str) -> str:
    """Every non-ASCII-alphanumeric UTF-16 code unit becomes ``-``; long names are cut and hashed."""
    sanitized = "".join(
        char if char.isascii() and char.isalnum() else "-" * (2 if ord(char) > 0xFFFF else 1)
        for char in name
    )
    if len(sanitized) <= MAX_SANITIZED_LENGTH:
        return sanitized
    return f"{sanitized[:MAX_SANITIZED_LENGTH]}-{djb2_base36(name)}"


def _find_git_root(start: Path) -> Path | None:
    for candidate in (start, *start.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def _read_line(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read(4096).strip()
    except (OSError, UnicodeDecodeError):
        return None


def _main_checkout(git_root: Path) -> Path:
    """For a linked worktree, the main checkout; otherwise ``git_root`` itself."""
    dot_git = git_root / ".git"
    if not dot_git.is_file():
        return git_root
    pointer = _read_line(dot_git)
    if pointer is None or not pointer.startswith("gitdir:"):
        return git_root
    worktree_git = (git_root / pointer.removeprefix("gitdir:").strip()).resolve()
    common = _read_line(worktree_git / "commondir")
    if not common:
        return git_root  # a submodule or a plain gitfile: its own root
    common_dir = (worktree_git / common).resolve()
    if worktree_git.parent != common_dir / "worktrees":
        return git_root
    backlink = _read_line(worktree_git / "gitdir")
    if backlink is None or Path(backlink).resolve() != dot_git.resolve():
        return git_root
    if common_dir.name != ".git":
        return git_root  # a worktree of a bare repository
    return common_dir.parent


def canonical_git_root(cwd: Path) -> Path | None:
    """The main checkout of the repository containing ``cwd`` (NFC), or None outside git."""
    root = _find_git_root(Path(os.path.realpath(cwd)))
    if root is None:
        return None
    return Path(unicodedata.normalize("NFC", str(_main_checkout(root))))


def memory_dir(settings: Places) -> Path:
    """``--dir`` / ``TEAMSYNC_DIR`` when set, else Claude Code's per-project memory directory."""
    if settings.dir is not None:
        return settings.dir if settings.dir.is_absolute() else settings.cwd / settings.dir
    remote = settings.environ.get("CLAUDE_CODE_REMOTE_MEMORY_DIR")
    base = Path(remote) if remote and os.path.isabs(remote) else settings.home / ".claude"
    project = canonical_git_root(settings.cwd)
    if project is None:
        project = Path(unicodedata.normalize("NFC", os.path.realpath(settings.cwd)))
    return base / "projects" / sanitize_path(str(project)) / "memory"


def team_dir(settings: Places) -> Path:
    """The shared part: ``<memory dir>/team``."""
    return memory_dir(settings) / "team"


_EXPECTS = "--dir expects the memory directory that holds MEMORY.md and team/"


def _holds_markdown(directory: Path) -> bool:
    try:
        return any(p.suffix == ".md" for p in directory.iterdir())
    except OSError:
        return False


def _is_memory_dir(directory: Path) -> bool:
    """Plainly a memory directory: it holds an index or a sync configuration, or it is
    named ``memory`` as in Claude Code's layout."""
    return (
        directory.name == "memory"
        or (directory / INDEX_NAME).is_file()
        or (directory / "teamsync.yaml").is_file()
    )


def _is_team_dir(directory: Path, *, weak: bool) -> bool:
    """``directory`` (named ``team``) is the shared part of a memory directory.

    Its parent is plainly a memory directory; or it already holds memories (an
    index, or with ``weak`` any ``*.md``) but neither a ``team/`` of its own nor
    a sync configuration, so it cannot be a memory directory that syncs. A
    ``team`` folder that does not exist yet counts only by its parent.
    """
    if directory.name != "team":
        return False
    if _is_memory_dir(directory.parent):
        return True
    if not directory.is_dir() or (directory / "team").is_dir():
        return False
    if (directory / "teamsync.yaml").exists():
        return False
    if (directory / INDEX_NAME).is_file():
        return True
    return weak and (_holds_markdown(directory) or _holds_markdown(directory.parent))


def dir_mistake(memdir: Path) -> str | None:
    """One line when ``memdir`` is a ``team/`` directory, or a folder inside one: it names
    the memory directory to pass instead (the team folder's parent)."""
    absolute = Path(os.path.abspath(memdir))
    # a memory dir of its own (an index, a configuration, a team/) under a team folder stays
    inside_weak = not (_is_memory_dir(absolute) or (absolute / "team").is_dir())
    chain = [*reversed(absolute.parents), absolute]  # outermost first: team/team names the top
    for place in chain:
        if not _is_team_dir(place, weak=place == absolute or inside_weak):
            continue
        if place == absolute:
            return f"{memdir} is a team/ directory; {_EXPECTS}: pass --dir {place.parent}"
        return (
            f"{memdir} is inside the team/ directory {place}; {_EXPECTS}: pass --dir {place.parent}"
        )
    return None


def working_memory_dir(settings: Places) -> Path:
    """:func:`memory_dir` for a command that works on it: a ``team/`` directory given as
    ``--dir`` is refused with one line that names the directory to pass instead."""
    memdir = memory_dir(settings)
    mistake = dir_mistake(memdir)
    if mistake is not None:
        from teamsync.errors import ConfigError

        raise ConfigError(mistake)
    return memdir


def empty_dir_hint(memdir: Path) -> str | None:
    """One line when ``memdir`` holds no memory at all (no ``*.md``, no ``team/``)."""
    if not memdir.is_dir() or (memdir / "team").is_dir() or _holds_markdown(memdir):
        return None
    return (
        f"{memdir} holds no memory files; {_EXPECTS} "
        "(Claude Code's is ~/.claude/projects/<project>/memory/)"
    )
