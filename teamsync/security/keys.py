"""Key validation: the one pure function every gate calls before touching a file.

A *key* is a relative POSIX path inside ``team/`` (``notes/db.md``). Keys come
from the network (the REST server, a git remote), from disk and from users, so
every gate (pull, push, scan, the server, the guard) calls :func:`key_problem`
or :func:`validate_key` before any filesystem call. The checks reject, never
repair: a key that needs fixing is refused with a short reason.

Checks, in order (the first failing one is the reason):

1. not a string, empty, more than :data:`MAX_KEY_LENGTH` characters;
2. ``.git`` in any segment, in every spelling that opens it somewhere: any
   case, ignorable code points inside (HFS+), trailing dots or spaces and
   ``::$INDEX_ALLOCATION`` streams (Windows), the ``GIT~1`` short name (NTFS),
   dotless ``ı``;
3. NUL, C0/C1 control characters and DEL, lone surrogates (undecodable names),
   Unicode line/paragraph separators, bidi controls (U+202A-U+202E,
   U+2066-U+2069, U+200E/F, U+061C), then every other invisible code point:
   Unicode's Default_Ignorable_Code_Point set (ZWJ, ZWNJ, soft hyphen,
   U+206A-U+206F, Hangul fillers, variation selectors, tags), every format
   character (category Cf) and every space but ASCII's (Zs);
4. longer than :data:`MAX_KEY_LENGTH` UTF-8 bytes;
5. URL encoding (``%xx`` and IIS ``%uXXXX``), decoded repeatedly until stable
   (at most :data:`MAX_DECODE_ROUNDS` rounds): overlong UTF-8 (``%c0%ae``), or a
   decoded form holding ``..``/``.`` segments, a new ``/``, a backslash, a
   colon (drive letter), a control or an invisible character;
6. NFKC normalization that yields ``/``, ``\\``, NUL, ``..`` or ``.`` that the
   key did not have (fullwidth ``．．／＼``), or a drive letter (``a：b``);
7. UNC prefixes, absolute paths, drive letters, backslashes, colons (NTFS
   alternate data streams);
8. per segment: empty (``a//b``, trailing ``/``), ``.`` and ``..``, longer than
   :data:`MAX_SEGMENT_LENGTH` bytes, ending in a dot or space, characters
   Windows forbids, Windows device names (``CON``, ``con.md``, ``COM¹``),
   and teamsync's temp-file prefix; more than :data:`MAX_DEPTH` segments;
9. not NFC-normalized (so two spellings of one name cannot both exist).

Limits: 255 bytes per segment is NAME_MAX on ext4, XFS, btrfs and APFS, and
255 UTF-8 bytes never exceed NTFS's 255 UTF-16 units, so every accepted
segment can be created everywhere. 1024 bytes for the whole key is macOS's
PATH_MAX; memory names are short slugs, and the bound keeps the work per key
(and the directories :mod:`teamsync.security.fs` walks) small. teamsync opens
paths one segment at a time relative to a directory fd, so the team
directory's own prefix does not count against it.

Collisions (keys equal after NFKC + case folding, which would overwrite each
other on macOS and Windows) and prefix clashes (``MEMORY.md`` beside
``MEMORY.md/x.md``) are properties of a *set* of keys: :func:`find_collisions`,
:func:`find_prefix_clashes`, :func:`key_clashes` and :func:`keys_problems`.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import unquote_to_bytes

from teamsync.errors import KeyRejected
from teamsync.limits import TEMP_PREFIX as TEMP_PREFIX

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Final

MAX_KEY_LENGTH: Final = 1024
"""Maximum UTF-8 bytes in a key (macOS PATH_MAX)."""
MAX_SEGMENT_LENGTH: Final = 255
"""Maximum UTF-8 bytes in one path segment (NAME_MAX on common file systems)."""
MAX_DEPTH: Final = 32
"""Maximum number of segments in a key."""
MAX_DECODE_ROUNDS: Final = 4
"""URL-decoding rounds before a still-changing key is refused as nested too deeply."""
"""Prefix of teamsync's own temporary files; no key may use it."""

_BAD_CHAR = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e"
    r"\u2060\u2066-\u2069\ufeff\U000e0000-\U000e007f\ud800-\udfff]"
)
_IGNORABLE = re.compile(
    # Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): drawn as
    # nothing, and HFS+ skips several of them when it compares names (so
    # '.g\u200cit' is '.git' there, CVE-2014-9390). Plus the Braille blank U+2800.
    r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    r"\u202a-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    r"\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_PCT_U = re.compile(r"%[uU]([0-9A-Fa-f]{4})")
_OVERLONG = re.compile(
    rb"[\xc0\xc1][\x80-\xbf]|\xe0[\x80-\x9f][\x80-\xbf]|\xf0[\x80-\x8f][\x80-\xbf]{2}"
)
_DRIVE = re.compile(r"[A-Za-z]:")
_WINDOWS_FORBIDDEN = re.compile(r'[<>"|?*]')
_NTFS_SHORT_GIT = re.compile(r"git~[0-9]+")
_RESERVED: Final = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{dev}{n}" for dev in ("COM", "LPT") for n in (*"0123456789", "¹", "²", "³")}
)


def _invisible_problem(key: str) -> str | None:
    """Reject default-ignorable, format (Cf) and non-ASCII space characters."""
    if key.isascii():
        return None
    if _IGNORABLE.search(key):
        return "contains an invisible character"
    for char in key:
        if ord(char) > 0x7F:
            category = unicodedata.category(char)
            if category == "Cf":
                return "contains an invisible character"
            if category == "Zs":
                return "contains a non-ASCII space"
    return None


def _char_problem(key: str) -> str | None:
    """Reject NUL, controls, surrogates and invisible or direction-changing characters."""
    match = _BAD_CHAR.search(key)
    if match is None:
        return _invisible_problem(key)
    char = match.group()
    code = ord(char)
    if code == 0:
        return "contains NUL"
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return "contains a control character"
    if 0xD800 <= code <= 0xDFFF:
        return "contains a lone surrogate (name is not valid UTF-8)"
    if char in "\u2028\u2029":
        return "contains a line or paragraph separator"
    if char in "\u061c\u200e\u200f" or 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069:
        return "contains a bidi control character"
    return "contains an invisible character"


def _decoded_problem(original: str, decoded: str) -> str | None:
    """Judge one URL-decoded form of ``original``."""
    if _BAD_CHAR.search(decoded) or _invisible_problem(decoded):
        return "URL-encoded control or invisible character"
    for form in (decoded, unicodedata.normalize("NFKC", decoded)):
        if any(c in form for c in "\\\x00:") or form.count("/") != original.count("/"):
            return "URL-encoded traversal"
        if any(seg in (".", "..") for seg in form.split("/")):
            return "URL-encoded traversal"
    return None


def _url_problem(key: str) -> str | None:
    """Decode ``%xx``/``%uXXXX`` until stable (bounded) and check every round."""
    if "%" not in key:
        return None
    current = key
    for _ in range(MAX_DECODE_ROUNDS):
        unicode_decoded = _PCT_U.sub(lambda m: chr(int(m.group(1), 16)), current)
        raw = unquote_to_bytes(unicode_decoded.encode("utf-8", "surrogatepass"))
        if _OVERLONG.search(raw):
            return "URL-encoded overlong UTF-8"
        decoded = raw.decode("utf-8", "replace")
        if decoded == current:
            return None
        problem = _decoded_problem(key, decoded)
        if problem is not None:
            return problem
        current = decoded
    return "URL encoding nested too deeply"


def _nfkc_problem(key: str) -> str | None:
    """Reject keys whose NFKC form gains a separator, NUL or a dot segment."""
    if key.isascii():
        return None
    nfkc = unicodedata.normalize("NFKC", key)
    if nfkc == key:
        return None
    for char, label in (("\x00", "NUL"), ("/", "'/'"), ("\\", "'\\'")):
        if nfkc.count(char) > key.count(char):
            return f"NFKC normalization yields {label}"
    if nfkc[1:2] == ":":  # 'a：b' becomes the drive-relative 'a:b'
        return "NFKC normalization yields a drive letter"
    for new, old in zip(nfkc.split("/"), key.split("/"), strict=False):
        if ".." in new and ".." not in old:
            return "NFKC normalization yields '..'"
        if new == "." and old != ".":
            return "NFKC normalization yields '.'"
    return _url_problem(nfkc)


def _shape_problem(key: str) -> str | None:
    """Reject UNC, absolute, drive-letter, backslash and colon forms."""
    if key.startswith(("//", "\\\\")):
        return "UNC prefix"
    if key.startswith(("/", "\\")):
        return "absolute path"
    if _DRIVE.match(key):
        return "drive letter"
    if "\\" in key:
        return "contains a backslash"
    if ":" in key:
        return "contains ':' (NTFS alternate data stream)"
    return None


def _segment_problem(seg: str) -> str | None:
    """Reject one non-empty path segment that is unsafe or unportable."""
    if seg == "..":
        return "contains '..' segment"
    if seg == ".":
        return "contains '.' segment"
    if len(seg) * 4 > MAX_SEGMENT_LENGTH and len(seg.encode("utf-8")) > MAX_SEGMENT_LENGTH:
        return f"segment longer than {MAX_SEGMENT_LENGTH} bytes"
    if seg.endswith((".", " ")):
        return "segment ends with a dot or space"
    forbidden = _WINDOWS_FORBIDDEN.search(seg)
    if forbidden is not None:
        return f"contains {forbidden.group()!r}, which Windows forbids"
    stem = seg.split(".", 1)[0].rstrip(" ").upper()
    if stem in _RESERVED:
        return f"Windows-reserved name {stem!r}"
    if seg.startswith(TEMP_PREFIX):
        return f"uses teamsync's temp-file prefix {TEMP_PREFIX!r}"
    return None


def _git_alias_problem(key: str) -> str | None:
    """Reject ``.git`` and every spelling that opens it on some file system.

    HFS+ skips ignorable code points (``.g\u200cit``), Windows strips trailing
    dots and spaces (``.git.``) and reads ``.git::$INDEX_ALLOCATION`` as the
    directory itself, NTFS gives ``.git`` the 8.3 short name ``GIT~1``, and NTFS
    upper-cases ``ı`` to ``I``. Checked first, so the reason names ``.git``.
    """
    for seg in key.split("/"):
        if len(seg) > 64:  # '.git' with any alias suffix is short; longer ones fail elsewhere
            continue
        if seg.isascii():
            folded = seg.lower()
            if "git" not in folded:
                continue
            folded = folded.split(":", 1)[0].rstrip(". ")
        else:
            folded = fold_key(_IGNORABLE.sub("", seg).split(":", 1)[0].rstrip(". "))
        if folded == ".git":
            return "reserved name '.git'"
        if _NTFS_SHORT_GIT.fullmatch(folded):
            return "reserved name '.git' (its NTFS short name)"
    return None


def _segments_problem(key: str) -> str | None:
    segments = key.split("/")
    if len(segments) > MAX_DEPTH:
        return f"nested more than {MAX_DEPTH} levels deep"
    for index, seg in enumerate(segments):
        if not seg:
            last = index == len(segments) - 1
            return "ends with '/'" if last else "contains an empty segment ('//')"
        problem = _segment_problem(seg)
        if problem is not None:
            return problem
    return None


def key_problem(key: str) -> str | None:
    """Return why ``key`` is unacceptable, or ``None`` when it is a safe key.

    Pure and deterministic; never touches the filesystem.
    """
    if not isinstance(key, str):
        return "not a string"
    if not key:
        return "empty key"
    if len(key) > MAX_KEY_LENGTH:
        return f"key longer than {MAX_KEY_LENGTH} bytes"
    problem = _git_alias_problem(key) or _char_problem(key)
    if problem is not None:
        return problem
    if len(key) > MAX_KEY_LENGTH or len(key.encode("utf-8")) > MAX_KEY_LENGTH:
        return f"key longer than {MAX_KEY_LENGTH} bytes"
    for check in (_url_problem, _nfkc_problem, _shape_problem, _segments_problem):
        problem = check(key)
        if problem is not None:
            return problem
    if not key.isascii() and not unicodedata.is_normalized("NFC", key):
        return "not NFC-normalized"
    return None


def validate_key(key: str) -> str:
    """Return ``key`` unchanged when acceptable; raise :class:`KeyRejected` otherwise."""
    problem = key_problem(key)
    if problem is not None:
        raise KeyRejected(repr(key) if not isinstance(key, str) else key, problem)
    return key


_TURKIC = str.maketrans({"\u0131": "i"})
"""Dotless ı: NTFS upper-cases it to I, full case folding leaves it alone."""


def fold_key(key: str) -> str:
    """The collision class of ``key``: Unicode compatibility caseless matching, plus Turkic i.

    ``NFKC(casefold(NFKC(casefold(NFD(key)))))`` (Unicode D146 with NFKC in
    place of NFKD, so the class reads naturally), where full case folding maps
    ``ß`` to ``ss``, ``ſ`` to ``s``, ``ﬁ`` to ``fi``, final ``ς`` to ``σ``. Then
    the Turkic special cases: dotless ``ı`` and dotted ``İ`` (which folds to
    ``i`` + U+0307) both join ``i``, as NTFS's upcase table has them.
    """
    if key.isascii():
        return key.lower()
    nfd = unicodedata.normalize("NFD", key).casefold()
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", nfd).casefold())
    folded = folded.translate(_TURKIC).replace("i\u0307", "i")
    return unicodedata.normalize("NFKC", folded)


def find_collisions(keys: Iterable[str]) -> list[list[str]]:
    """Groups (sorted, deterministic) of distinct keys that are equal after :func:`fold_key`."""
    groups: dict[str, set[str]] = {}
    for key in keys:
        groups.setdefault(fold_key(key), set()).add(key)
    return sorted(sorted(group) for group in groups.values() if len(group) > 1)


def find_prefix_clashes(keys: Iterable[str]) -> list[tuple[str, str]]:
    """Sorted ``(file, nested)`` pairs where ``nested`` needs ``file``'s name as a folder.

    ``MEMORY.md`` beside ``MEMORY.md/x.md`` (or ``memory.md/x.md``, compared
    after :func:`fold_key`): one file system cannot hold both, and writing the
    second turns the first into a directory or fails.
    """
    folded: dict[str, set[str]] = {}
    for key in keys:
        folded.setdefault(fold_key(key), set()).add(key)
    pairs: list[tuple[str, str]] = []
    for fkey, originals in folded.items():
        parts = fkey.split("/")
        for depth in range(1, len(parts)):
            for file in folded.get("/".join(parts[:depth]), ()):
                pairs.extend((file, nested) for nested in originals)
    return sorted(pairs)


def key_clashes(keys: Iterable[str]) -> dict[str, str]:
    """Every key of a set that cannot coexist with another key of it, with the reason.

    Two kinds: keys equal after :func:`fold_key` (one file on macOS and
    Windows), and a file whose name another key needs as a folder
    (:func:`find_prefix_clashes`). Every member is named: which one should
    win cannot be decided safely.
    """
    unique = set(keys)
    out: dict[str, str] = {}
    for group in find_collisions(unique):
        for key in group:
            others = ", ".join(repr(k) for k in group if k != key)
            out[key] = f"collides with {others} after case folding or normalization"
    for file, nested in find_prefix_clashes(unique):
        out.setdefault(file, f"is a file, but {nested!r} needs it as a folder")
        out.setdefault(nested, f"needs {file!r} as a folder, but it is a file")
    return out


def clashes_with(new: Iterable[str], keys: Iterable[str]) -> list[tuple[str, str]]:
    """Sorted ``(key, other)`` pairs where a key of ``new`` clashes with ``other`` in ``keys``.

    ``keys`` is the whole set after a change (``new`` included); clashes among
    the other keys alone are not reported, so old data does not block new work.
    """
    fresh, every = set(new), set(keys)
    pairs: set[tuple[str, str]] = set()
    for group in find_collisions(every):
        pairs.update(
            (key, other) for key in group if key in fresh for other in group if other != key
        )
    for file, nested in find_prefix_clashes(every):
        if file in fresh:
            pairs.add((file, nested))
        if nested in fresh:
            pairs.add((nested, file))
    return sorted(pairs)


def keys_problems(keys: Iterable[str]) -> dict[str, str]:
    """Every rejected key of a set with its reason, collisions and prefix clashes included.

    Every member of a colliding group is rejected: which spelling should win
    cannot be decided safely.
    """
    unique = set(keys)
    problems = {key: p for key in unique if (p := key_problem(key)) is not None}
    valid = [key for key in unique if key not in problems]
    problems.update(key_clashes(valid))
    return problems


def is_memory_key(key: str) -> bool:
    """True when ``key`` names a memory file: its last segment is ``<stem>.md``."""
    return key.endswith(".md") and len(key.rsplit("/", 1)[-1]) > len(".md")


def is_memory_path(path: str) -> bool:
    """A path inside a ``memory/team`` directory (Claude Code's layout), where pragmas never count."""
    parts = posixpath.normpath(path.replace("\\", "/")).split("/")
    return any(a == "memory" and b == "team" for a, b in zip(parts, parts[1:], strict=False))
