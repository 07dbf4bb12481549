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

Many files at once (a sync pull) go through :meth:`SafeDir.batch` instead, so
durability costs one barrier per batch rather than two ``fsync`` per file,
with the same guarantee (a file is visible under its final name only with its
whole content, and only once that content is durable):

1. **stage**: each file is written to its own fresh temp in its destination
   directory (same no-follow walk, same ``O_EXCL`` temp), without ``fsync``;
2. **durable**: one ``syncfs`` per filesystem holding staged temps (Linux)
   makes all their data durable at once; where ``syncfs`` is missing, each temp
   was fsynced when it was staged;
3. **place**: each temp is renamed over its final name, relative to the same
   directory descriptor it was created in (the caller re-checks the destination
   first);
4. **finish**: every directory that gained or lost a name is fsynced, so the
   renames and deletions are durable before the caller records them.

A failed barrier raises: the caller must not record anything as written. A
crash at any point leaves only complete files under their final names, plus
temps that :meth:`SafeDir.walk` never lists and :meth:`SafeDir.cleanup_temp`
removes.

POSIX only: it needs ``dir_fd`` support (Linux, macOS, the BSDs).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import stat
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from teamsync.errors import MemoryFormatError, UnsafePath
from teamsync.security.keys import MAX_DEPTH, TEMP_PREFIX, key_problem, validate_key

__all__ = ["TEMP_PREFIX", "SafeDir", "WalkItem", "WriteBatch"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC
SYNCFS_MIN_FILES = 8
"""A :class:`WriteBatch` of fewer files fsyncs each temp instead of one ``syncfs``."""


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
            except PermissionError as exc:
                why = (exc.strerror or "permission denied").lower()
                raise UnsafePath(key, f"cannot be read ({why}); check its permissions") from exc
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

    def batch(self, files: int = SYNCFS_MIN_FILES) -> WriteBatch:
        """A :class:`WriteBatch` for about ``files`` writes, made durable together.

        Under :data:`SYNCFS_MIN_FILES` files, each temp is fsynced instead of the
        filesystem-wide barrier (cheaper for a handful, on a busy disk).
        """
        return WriteBatch(self, per_file=files < SYNCFS_MIN_FILES)

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


class WriteBatch:
    """Writes and deletes in one :class:`SafeDir`, made durable together (module docstring).

    Use: :meth:`stage` every file, :meth:`durable`, then :meth:`place` (or
    :meth:`discard`) each and :meth:`delete` what goes, then :meth:`finish`.
    Leaving the ``with`` block removes every temp that was not placed and closes
    the directories. Each key's directory is walked once (no-follow, as every
    SafeDir operation) and its descriptor kept for the batch, so a temp and its
    rename always use the same open directory.
    """

    def __init__(self, d: SafeDir, *, per_file: bool = False) -> None:
        self._d = d
        self._dirs: dict[str, int] = {}
        """parent path ("" for the root) -> an owned descriptor of that directory."""
        self._staged: dict[str, tuple[int, str, str]] = {}
        """key -> (directory fd, temp name, final name)."""
        self._touched: set[int] = set()
        self._valid: set[str] = set()
        self._syncfs = None if per_file else _syncfs_function(os.fspath(d.root))

    def __enter__(self) -> WriteBatch:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def directories(self) -> int:
        """How many directory descriptors the batch holds open."""
        return len(self._dirs)

    def _dir(self, key: str, *, create: bool) -> tuple[int, str]:
        if key not in self._valid:  # each key is validated once per batch, before any call
            self._valid.add(validate_key(key))
        parent, _, name = key.rpartition("/")
        fd = self._dirs.get(parent)
        if fd is None:
            fd, name = self._d._parent(key, create=create)
            self._dirs[parent] = fd
        return fd, name

    def stat(self, key: str) -> os.stat_result | None:
        """lstat of the regular file at ``key`` (None when absent); links are refused."""
        try:
            dir_fd, name = self._dir(key, create=False)
        except FileNotFoundError:
            return None
        return self._d._lstat_regular(dir_fd, name, key)

    def stage(self, key: str, data: bytes, *, mtime: float | None = None) -> os.stat_result:
        """Write ``data`` to a fresh temp beside ``key`` (not visible as ``key`` yet).

        Returns the temp's stat (size, mtime and inode stay the same once placed).
        An existing file keeps its permission bits; a link at ``key`` is refused.
        """
        if key in self._staged:
            raise ValueError(f"{key!r} is already staged in this batch")
        dir_fd, name = self._dir(key, create=True)
        existing = self._d._lstat_regular(dir_fd, name, key)
        mode = None if existing is None else stat.S_IMODE(existing.st_mode)
        tmp = TEMP_PREFIX + os.urandom(8).hex()
        fd = os.open(tmp, _TEMP_FLAGS, 0o666 if mode is None else mode, dir_fd=dir_fd)
        self._staged[key] = (dir_fd, tmp, name)
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            _write_all(fd, data)
            if mtime is not None:
                os.utime(fd, (mtime, mtime))
            if self._syncfs is None:
                os.fsync(fd)  # no filesystem-wide barrier here: each temp is made durable now
            return os.fstat(fd)
        except BaseException:
            self.discard(key)
            raise
        finally:
            os.close(fd)

    def stage_text(self, key: str, text: str, *, mtime: float | None = None) -> os.stat_result:
        """:meth:`stage` the UTF-8 encoding of ``text``."""
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise MemoryFormatError(key, "text holds lone surrogates, not valid Unicode") from exc
        return self.stage(key, data, mtime=mtime)

    def durable(self) -> None:
        """Make every staged temp's content durable (one ``syncfs`` per filesystem)."""
        if self._syncfs is None or not self._staged:
            return
        fds = {dir_fd for dir_fd, _, _ in self._staged.values()}
        devices: dict[int, int] = {}
        for fd in fds:
            devices.setdefault(os.fstat(fd).st_dev, fd)
        for fd in devices.values():
            self._syncfs(fd)

    def place(self, key: str, *, new: bool = False) -> None:
        """Rename the staged temp over ``key``; refused (and discarded) if ``key`` became a link.

        ``new=True`` (the plan saw no file at ``key``) never replaces one: the temp is
        linked to ``key``, which fails with :class:`FileExistsError` if a file appeared
        there since the plan (a user's new memory is never overwritten). Where the
        filesystem has no hard links, it falls back to the rename after one more check.
        """
        dir_fd, tmp, name = self._staged[key]
        try:
            self._d._lstat_regular(dir_fd, name, key)
            if not (new and self._link_new(dir_fd, tmp, name, key)):
                os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            self.discard(key)
            raise
        del self._staged[key]
        self._touched.add(dir_fd)

    def _link_new(self, dir_fd: int, tmp: str, name: str, key: str) -> bool:
        """Link ``tmp`` to the new name ``name`` and drop ``tmp``; False if links are unsupported."""
        try:
            os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
                raise
            if self._d._lstat_regular(dir_fd, name, key) is not None:
                raise FileExistsError(errno.EEXIST, "a file appeared at this name", key) from None
            return False
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        return True

    def discard(self, key: str) -> None:
        """Remove ``key``'s staged temp (nothing happens to ``key`` itself)."""
        staged = self._staged.pop(key, None)
        if staged is not None:
            with contextlib.suppress(OSError):
                os.unlink(staged[1], dir_fd=staged[0])

    def delete(self, key: str) -> bool:
        """Remove the regular file at ``key``; False when it was absent. Links are refused."""
        try:
            dir_fd, name = self._dir(key, create=False)
        except FileNotFoundError:
            return False
        if self._d._lstat_regular(dir_fd, name, key) is None:
            return False
        try:
            os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            return False
        self._touched.add(dir_fd)
        return True

    def finish(self) -> None:
        """Make every placement and deletion durable: fsync each directory that changed."""
        for fd in sorted(self._touched):
            os.fsync(fd)
        self._touched.clear()

    def close(self) -> None:
        """Remove unplaced temps and close the directories (placements are kept)."""
        for key in list(self._staged):
            self.discard(key)
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()
        self._touched.clear()


SYNCFS_FILESYSTEMS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "tmpfs", "overlay"})
"""Local filesystems whose ``syncfs`` writes their data to the device (or memory) itself.
A FUSE or network filesystem (sshfs, SMB, NFS) may not ask its server to flush, so
there every temp is fsynced instead."""


def _syncfs_function(root: str) -> Callable[[int], None] | None:
    """``syncfs(fd)`` raising OSError on failure, or None where it is not a barrier to
    rely on: not Linux, ``TEAMSYNC_NO_SYNCFS`` set, a kernel before 5.8 (``syncfs``
    did not report write-back errors), or ``root`` on a filesystem not known to flush."""
    if not sys.platform.startswith("linux") or os.environ.get("TEAMSYNC_NO_SYNCFS"):
        return None
    if not _kernel_reports_syncfs_errors() or _fs_type(root) not in SYNCFS_FILESYSTEMS:
        return None
    return _load_syncfs()


@functools.cache
def _kernel_reports_syncfs_errors() -> bool:
    release = os.uname().release.split(".")
    try:
        return (int(release[0]), int(release[1].split("-")[0])) >= (5, 8)
    except (IndexError, ValueError):
        return False


@functools.cache
def _fs_type(path: str) -> str | None:
    """The type of the filesystem mounted deepest above ``path`` (``/proc/self/mountinfo``)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    real = os.path.realpath(path)
    best, kind = -1, None
    for line in lines:
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5 or not right:
            continue
        point = _unescape_mount(fields[4])
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= best:  # a later mount over the same point wins
            best, kind = len(point), right.split()[0]
    return kind


def _unescape_mount(field: str) -> str:
    """A mountinfo path with its octal escapes (``\\040`` for a space) decoded."""
    if "\\" not in field:
        return field
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


@functools.cache
def _load_syncfs() -> Callable[[int], None] | None:
    import ctypes

    try:
        raw = ctypes.CDLL(None, use_errno=True).syncfs  # the C library this process runs on
    except (OSError, AttributeError):
        return None
    raw.argtypes = [ctypes.c_int]
    raw.restype = ctypes.c_int

    def syncfs(fd: int) -> None:
        if raw(fd) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"syncfs failed: {os.strerror(code)}")

    return syncfs


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
