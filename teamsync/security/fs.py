"""Safe filesystem access inside the team directory: the only way teamsync touches it.

:class:`SafeDir` opens the team directory once, by its real path, and keeps
that directory's file descriptor. Every operation then:

1. validates the key (:func:`teamsync.security.keys.validate_key`) before any
   filesystem call;
2. walks the key one segment at a time with
   ``os.open(seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, dir_fd=parent)``, so no
   symlink anywhere below the root is ever followed (a symlink, dangling
   symlink or loop raises :class:`~teamsync.errors.UnsafePath` with the reason);
3. writes through a temporary file created with ``O_CREAT | O_EXCL |
   O_NOFOLLOW`` in the destination's directory, ``fsync``, ``rename`` between
   the same directory fd, then ``fsync`` of the directory. The check and the
   write use the same open directory, so there is no check-then-write window:
   swapping a directory for a symlink makes the walk fail, and ``rename``
   replaces a link planted at the destination instead of writing through it.

The root itself may be a symlink (users legitimately symlink a whole memory
directory); it is resolved once, at construction, and :attr:`SafeDir.root` is
the real path. Nothing below the root may be a symlink. If the root is deleted
or moved while a :class:`SafeDir` is open, operations act on the directory that
was opened, not on whatever now has its name; open a new :class:`SafeDir`.

POSIX only: it needs ``dir_fd`` support (Linux, macOS, the BSDs).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from teamsync.errors import MemoryFormatError, UnsafePath
from teamsync.security.keys import MAX_DEPTH, TEMP_PREFIX, key_problem, validate_key

__all__ = ["TEMP_PREFIX", "SafeDir", "WalkItem"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC


@dataclass(frozen=True, slots=True)
class WalkItem:
    """One entry found by :meth:`SafeDir.walk`; ``problem`` is None for a usable file."""

    key: str
    problem: str | None
    opaque: bool = False
    """True when the entry may hide a subtree nobody could list (a symlink, a directory
    that cannot be entered or is nested too deeply, an entry that cannot be inspected):
    what lies below ``key/`` is unknown, not absent."""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "directory"),
        (stat.S_ISLNK, "symlink"),
        (stat.S_ISFIFO, "fifo"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return name
    return "regular file" if stat.S_ISREG(mode) else "special file"


def _link_problem(dir_fd: int, name: str, generic: str) -> str:
    """Classify the symlink ``name``: dangling, a loop, or ``generic``. Reads no content."""
    try:
        os.stat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return "dangling symlink"
    except OSError as exc:
        return "symlink loop" if exc.errno == errno.ELOOP else generic
    return generic


def _describe(dir_fd: int, name: str, expected: str) -> str:
    """Why ``name`` could not be opened as ``expected`` without following links."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return "changed while being opened"
    except OSError as exc:
        return f"cannot be inspected ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return _link_problem(dir_fd, name, "symlink on the path")
    return f"{name!r} is a {_kind(st.st_mode)}, not a {expected}"


def _not_found(key: str) -> FileNotFoundError:
    return FileNotFoundError(errno.ENOENT, "no such file in the team directory", key)


class SafeDir:
    """The team directory, accessed only through validated keys and no-follow opens."""

    def __init__(self, root: Path | str, *, create: bool = False) -> None:
        if not {os.open, os.stat, os.mkdir, os.rename, os.unlink} <= os.supports_dir_fd:
            raise UnsafePath(str(root), "this platform cannot open files relative to a directory")
        path = Path(root)
        if create:
            path.mkdir(parents=True, exist_ok=True)
        real = Path(os.path.realpath(path, strict=True))
        try:
            fd = os.open(real, _DIR_FLAGS)
        except NotADirectoryError as exc:
            raise UnsafePath(str(root), "the team directory is not a directory") from exc
        self.root: Path = real
        """The real path of the team directory, resolved once."""
        self._fd = fd
        self._finalizer = weakref.finalize(self, os.close, fd)

    def close(self) -> None:
        """Close the directory descriptor (also done when the object is collected)."""
        self._finalizer()

    def __enter__(self) -> SafeDir:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SafeDir({str(self.root)!r})"

    def _dup_root(self) -> int:
        if not self._finalizer.alive:
            raise ValueError(f"{self!r} is closed; open a new SafeDir")
        return os.dup(self._fd)

    # -- path walking -------------------------------------------------------------------

    def _open_dir(self, parent: int, name: str, key: str, create: bool) -> int:
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise _not_found(key) from None
        except OSError as exc:
            raise UnsafePath(key, _describe(parent, name, "directory")) from exc
        with contextlib.suppress(FileExistsError):  # a race or a dangling link: open decides
            os.mkdir(name, 0o777, dir_fd=parent)
            os.fsync(parent)
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise UnsafePath(key, _describe(parent, name, "directory")) from exc

    def _parent(self, key: str, *, create: bool) -> tuple[int, str]:
        """Validate ``key``; return an owned fd of its directory and the final name."""
        parts = validate_key(key).split("/")
        fd = self._dup_root()
        try:
            for seg in parts[:-1]:
                child = self._open_dir(fd, seg, key, create)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd, parts[-1]

    def _lstat_regular(self, dir_fd: int, name: str, key: str) -> os.stat_result | None:
        """lstat ``name``: None when absent, UnsafePath unless it is a regular file."""
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode):
            raise UnsafePath(key, _link_problem(dir_fd, name, "the file is a symlink"))
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(key, f"not a regular file ({_kind(st.st_mode)})")
        return st

    # -- reading ------------------------------------------------------------------------

    def read_bytes(self, key: str, *, max_bytes: int | None = None) -> bytes:
        """The content of the regular file at ``key``; never through a symlink.

        With ``max_bytes``, at most ``max_bytes + 1`` bytes are read and a larger
        file raises MemoryFormatError.
        """
        dir_fd, name = self._parent(key, create=False)
        try:
            before = self._lstat_regular(dir_fd, name, key)
            if before is None:
                raise _not_found(key)
            try:
                fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
            except FileNotFoundError:
                raise _not_found(key) from None
            except OSError as exc:
                raise UnsafePath(key, _describe(dir_fd, name, "regular file")) from exc
        finally:
            os.close(dir_fd)
        with os.fdopen(fd, "rb") as handle:
            after = os.fstat(handle.fileno())
            if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
                raise UnsafePath(key, "the file changed while being opened")
            data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
        if max_bytes is not None and len(data) > max_bytes:
            raise MemoryFormatError(key, f"file is over the {max_bytes:,}-byte limit")
        return data

    def read_text(self, key: str, *, max_bytes: int | None = None) -> str:
        """The UTF-8 text at ``key``; raises MemoryFormatError when it is not UTF-8."""
        data = self.read_bytes(key, max_bytes=max_bytes)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MemoryFormatError(key, "not valid UTF-8 text") from exc

    def exists(self, key: str) -> bool:
        """True for a regular file; False when absent; UnsafePath for links and oddities."""
        return self.stat(key) is not None

    def stat(self, key: str) -> os.stat_result | None:
        """lstat of the regular file at ``key`` (None when absent); links are refused."""
        try:
            dir_fd, name = self._parent(key, create=False)
        except FileNotFoundError:
            return None
        try:
            return self._lstat_regular(dir_fd, name, key)
        finally:
            os.close(dir_fd)

    # -- writing ------------------------------------------------------------------------

    def write_text(self, key: str, text: str, *, mtime: float | None = None) -> None:
        """Atomically replace ``key`` with ``text`` (UTF-8); parents are created as needed."""
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise MemoryFormatError(key, "text holds lone surrogates, not valid Unicode") from exc
        self.write_bytes(key, data, mtime=mtime)

    def write_bytes(self, key: str, data: bytes, *, mtime: float | None = None) -> None:
        """Atomically replace ``key`` with ``data``: temp + fsync + rename + fsync(dir)."""
        dir_fd, name = self._parent(key, create=True)
        try:
            existing = self._lstat_regular(dir_fd, name, key)
            mode = None if existing is None else stat.S_IMODE(existing.st_mode)
            _replace(dir_fd, name, data, mode, mtime)
        finally:
            os.close(dir_fd)

    def delete(self, key: str) -> bool:
        """Remove the regular file at ``key``; False when it was absent. Links are refused."""
        try:
            dir_fd, name = self._parent(key, create=False)
        except FileNotFoundError:
            return False
        try:
            if self._lstat_regular(dir_fd, name, key) is None:
                return False
            try:
                os.unlink(name, dir_fd=dir_fd)
            except FileNotFoundError:
                return False
            os.fsync(dir_fd)
            return True
        finally:
            os.close(dir_fd)

    # -- listing ------------------------------------------------------------------------

    def walk(self) -> Iterator[WalkItem]:
        """Every file below the root, sorted; links and special files carry a problem."""
        for dir_fd, name, key, problem in _entries(self._dup_root(), "", 0):
            if name.startswith(TEMP_PREFIX):
                continue
            if problem is not None:
                yield WalkItem(key, problem, opaque=True)
            else:
                yield WalkItem(key, *_entry_problem(dir_fd, name, key))

    def cleanup_temp(self, older_than: float = 60.0) -> int:
        """Remove teamsync temp files (and links so named) older than ``older_than`` seconds."""
        removed = 0
        cutoff = time.time() - older_than
        for dir_fd, name, _key, problem in _entries(self._dup_root(), "", 0):
            if problem is not None or not name.startswith(TEMP_PREFIX):
                continue
            with contextlib.suppress(FileNotFoundError):
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode) or st.st_mtime > cutoff:
                    continue
                os.unlink(name, dir_fd=dir_fd)
                removed += 1
        return removed


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _replace(dir_fd: int, name: str, data: bytes, mode: int | None, mtime: float | None) -> None:
    """Write ``data`` to a fresh temp in ``dir_fd`` and rename it over ``name``."""
    tmp = TEMP_PREFIX + os.urandom(8).hex()
    fd = os.open(tmp, _TEMP_FLAGS, 0o666 if mode is None else mode, dir_fd=dir_fd)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            _write_all(fd, data)
            if mtime is not None:
                os.utime(fd, (mtime, mtime))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.fsync(dir_fd)


def _entry_problem(dir_fd: int, name: str, key: str) -> tuple[str | None, bool]:
    """(problem, opaque) of a non-directory entry found while walking (None: usable)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return "vanished while listing", False
    except OSError as exc:
        return f"cannot be inspected ({exc.strerror})", True
    if stat.S_ISLNK(st.st_mode):
        return _link_problem(dir_fd, name, "symlink (not followed)"), True
    if not stat.S_ISREG(st.st_mode):
        return f"not a regular file ({_kind(st.st_mode)})", False
    return key_problem(key), False


def _entries(dir_fd: int, prefix: str, depth: int) -> Iterator[tuple[int, str, str, str | None]]:
    """Yield ``(dir_fd, name, key, problem)`` for every non-directory entry, depth first.

    Takes ownership of ``dir_fd``. Directories are entered by no-follow opens;
    one that cannot be entered is yielded with a problem instead.
    """
    try:
        try:
            with os.scandir(dir_fd) as listing:
                names = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in listing)
        except OSError as exc:
            if not prefix:
                raise
            key = prefix[:-1]  # the problem entry is this directory itself
            yield dir_fd, key.rpartition("/")[2], key, f"cannot be listed ({exc.strerror})"
            return
        for name, is_dir in names:
            key = prefix + name
            if not is_dir:
                yield dir_fd, name, key, None
            elif depth + 2 > MAX_DEPTH:
                yield dir_fd, name, key, "directory nested too deeply"
            else:
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
                except OSError as exc:
                    yield dir_fd, name, key, f"cannot be listed ({exc.strerror})"
                    continue
                yield from _entries(child, key + "/", depth + 1)
    finally:
        os.close(dir_fd)
