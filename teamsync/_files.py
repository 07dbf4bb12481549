"""The one atomic file writer for everything teamsync keeps *outside* ``team/``.

State records, caches, the sync configuration, baselines, Claude Code settings
and git hooks are written with :func:`write_atomic`: a uniquely named temporary
file beside the target (two writers never share one), flushed and fsynced,
then renamed over the target, and the directory fsynced so the rename itself
survives a crash. Readers see the old file or the new one, never a torn one.

Files *inside* the team directory go through
:class:`teamsync.security.fs.SafeDir` instead, which adds the no-follow and
containment checks a synced directory needs.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from teamsync.limits import TEMP_PREFIX

__all__ = ["backup_beside", "write_atomic"]


def write_atomic(
    path: Path,
    data: str | bytes,
    *,
    mode: int | None = None,
    new_mode: int = 0o600,
    durable: bool = True,
) -> None:
    """Replace ``path`` with ``data`` atomically (UTF-8 for ``str``).

    ``mode`` sets the file's permission bits (``0o755`` for a hook script);
    otherwise an existing file keeps its bits and a new one gets ``new_mode``
    (private by default: most of what teamsync keeps is per-user state).
    ``durable=False`` skips the fsyncs, for scratch files that only need
    atomicity (a debounce timestamp).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = new_mode
    fd, temp = _create_temp(path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            if durable:
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    if durable:
        _fsync_dir(path.parent)


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _create_temp(directory: Path) -> tuple[int, str]:
    """A new private file beside the target, as ``tempfile.mkstemp`` makes one
    (``O_EXCL``, no link followed, mode 0600) without importing :mod:`tempfile`,
    which costs the hook a few milliseconds on every call."""
    for _ in range(100):
        temp = os.path.join(directory, f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}")
        try:
            return os.open(temp, _TEMP_FLAGS, 0o600), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {directory}")


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be fsynced
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def backup_beside(path: Path) -> Path:
    """Copy ``path`` to ``<name>.bak-<UTC stamp>[-n]`` beside it (never over an older backup)."""
    import shutil
    import time

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    backup = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while backup.exists():
        backup = path.with_name(f"{path.name}.bak-{stamp}-{n}")
        n += 1
    shutil.copy2(path, backup)
    return backup
