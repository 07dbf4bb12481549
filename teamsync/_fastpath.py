"""The hook's fast path: a quiet call answered before anything of teamsync is imported.

Run by the hook entry :mod:`teamsync._hook` (loaded there as a top-level module,
so the ``teamsync`` package itself is not imported) and by the console script's
``teamsync guard`` (:mod:`teamsync.cli`). Imports only ``sys``, ``os`` (with
``stat``/``posixpath``) and ``_json``'s C scanner and string encoder; no module of
teamsync, so :mod:`teamsync.hooks.fastcache` (which writes the cache) imports it.

**The fast path** (:func:`try_fast`): for the common call, a Bash command (or any
tool the guard cannot model) that names nothing the text filter could act on, the
PreToolUse and PostToolUse steps are answered here with ``os`` and the C parts of
``json`` only, before anything of teamsync (or ``re``, ``json``, ``typing``,
``pathlib``, ``dataclasses``) is imported:

* PreToolUse: the command text is screened (:func:`screen`: no word the filter of
  :mod:`teamsync.hooks.bash` looks at, no character that could spell one); the
  call's places come from a cache the full guard wrote (``<state dir>/guard/
  fast.json``, :mod:`teamsync.hooks.fastcache`), each entry checked against the
  ``stat`` of everything it was derived from; the guarded files and git
  configuration must still have the stamps the full guard recorded (so the
  trusted copies are current). Then the same snapshot :func:`teamsync.hooks.
  verify.take` writes is written, and the call is allowed.
* PostToolUse / PostToolUseFailure: this call's snapshot, and no other pending
  one of the session; every team entry's ``lstat`` against it (same inode, status
  changed before the snapshot), every guarded and git configuration file's stamp
  (inode, size, mtime, ctime, mode) unchanged. Then the bookkeeping the full check
  does (the session's ``.last`` stamp, the snapshot removed) and exit 0.

Anything else (another tool, a trigger in the text, a cache entry missing or
stale, any change at all after the call, any error) is handed to the full guard
with the payload as read: the fast path fails closed to the full one, never to an
answer of its own. It can only ever allow (Pre) or report "nothing changed"
(Post) in the cases where the full guard, run on the same payload and state, does
exactly the same; ``tests/hooks/test_hooks_fast.py`` runs both and compares.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Mapping, Sequence
    from typing import Any

CACHE_VERSION = 1
CACHE_NAME = "fast.json"
KEY_ENV = (
    "TEAMSYNC_DIR",
    "CLAUDE_PROJECT_DIR",
    "HOME",
    "XDG_STATE_HOME",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_SYSTEM",
    "CLAUDE_CODE_REMOTE_MEMORY_DIR",
)
"""Every environment variable the guard's places are derived from (the cache key)."""
READ_ONLY_TOOLS = frozenset(
    {"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "Task", "ExitPlanMode"}
)
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
TRIGGERS = ("team", "memory", "allowlist", "hookspath")
"""Words the text filter acts on (``team`` covers ``teamsync`` and ``.teamsync``;
``hookspath`` is what its ``core.hooksPath`` check needs): a command or ``cwd``
holding one, in any case, goes to the full guard."""
BUDGET_S = 1.0
"""Seconds the fast path may take (a file system that hangs): then the full guard,
with its own budget, is asked."""
UNSURE = frozenset("\\$`{}*?[]%!~^")
"""Characters through which the shell (or ``printf``) can spell a word the text does
not show: escapes, expansions, globs, history. A command holding one goes to the
full guard."""
ORPHAN_MAX_AGE_S = 86_400.0
CTIME_SLACK_S = 2.0
_ID_OK = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


# --- JSON with the C scanner of ``_json`` only (no ``json`` package, no ``re``) ---


class _Context:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, str] = {}

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


def loads(text: str) -> object:
    """``json.loads`` for a ``str``, by the same C scanner; raises ``ValueError`` on
    anything ``json.loads`` would refuse."""
    import _json

    scan = _json.make_scanner(_Context())  # type: ignore[arg-type]
    space = " \t\n\r"
    start, end = 0, len(text)
    while start < end and text[start] in space:
        start += 1
    try:
        value, at = scan(text, start)
    except StopIteration:
        raise ValueError("not JSON") from None
    while at < end and text[at] in space:
        at += 1
    if at != end:
        raise ValueError("extra data after the JSON value")
    return value


def dumps(value: object) -> str:
    """A JSON text for dicts, lists, strings, ints, finite floats, booleans and None
    (``json.dumps``'s C encoder when this Python has it, else :func:`_dumps`)."""
    import _json

    make = getattr(_json, "make_encoder", None)
    if make is None:
        return _dumps(value)

    def refuse(o: object) -> object:
        raise ValueError(f"cannot write {type(o).__name__}")

    encode = make({}, refuse, _json.encode_basestring_ascii, None, ": ", ", ", False, False, False)
    return "".join(encode(value, 0))


def _dumps(value: object) -> str:
    """The same text, in Python."""
    import _json

    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("not a finite number")
        return float.__repr__(value)
    if isinstance(value, str):
        return str(_json.encode_basestring_ascii(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError("a key that is not a string")
            parts.append(_dumps(k) + ": " + _dumps(v))
        return "{" + ", ".join(parts) + "}"
    raise ValueError(f"cannot write {type(value).__name__}")


# --- stamps (the same lists teamsync.hooks.verify and .gitconf record) ---


def file_stamp(path: str) -> list[int] | None:
    """:func:`teamsync.hooks.verify._file_stamp`: ``stat`` (links followed), or None."""
    import os

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return _stamp(st)


def _stamp(st: os.stat_result) -> list[int]:
    import stat as s

    mode = st.st_mode
    kind = 0 if s.S_ISREG(mode) else 1 if s.S_ISLNK(mode) else 2
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, kind, mode & 0o7777]


def config_stamp(path: str) -> list[int] | None:
    """:func:`teamsync.hooks.gitconf._stamp`."""
    import os

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def git_entry(path: str) -> list[int | str] | None:
    """What the search for a git root sees of ``<dir>/.git``: absent (None), a
    directory (its inode) or a regular file (its stamp). A link or anything else
    raises ``ValueError``: no cache is kept for such a layout."""
    import os
    import stat as s

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    if s.S_ISDIR(st.st_mode):
        return ["d", st.st_ino]
    if s.S_ISREG(st.st_mode):
        return ["f", *_stamp(st)]
    raise ValueError(f"{path} is neither a directory nor a regular file")


def dep_value(kind: str, path: str) -> object:
    """The value a cache entry's dependency ``(kind, path)`` has now."""
    import os

    if kind == "S":
        return file_stamp(path)
    if kind == "R":
        return os.path.realpath(path)
    if kind == "G":
        return git_entry(path)
    raise ValueError(f"unknown dependency kind {kind!r}")


# --- the cache key, the session's names ---


def _abs_str(value: object) -> str | None:
    import os

    return value if isinstance(value, str) and os.path.isabs(value) else None


def project_of(environ: Mapping[str, str], cwd: str) -> str:
    """:func:`teamsync.hooks.places.session_project` as a string."""
    env = _abs_str(environ.get("CLAUDE_PROJECT_DIR"))
    return env if env is not None else cwd


def cache_key(environ: Mapping[str, str], payload: dict[str, Any], cwd: str) -> list[Any]:
    """What the places of a call are derived from, besides the files the entry stamps:
    the environment, the hook's start-up directory, the payload's ``cwd`` and
    ``transcript_path``, and the real paths of the directories the git root is
    searched from (a link moved anywhere above them changes the key)."""
    import os

    get = environ.get
    project = project_of(environ, cwd)
    payload_cwd = payload.get("cwd")
    transcript = payload.get("transcript_path")
    work = _abs_str(payload_cwd) or project
    return [
        CACHE_VERSION,
        cwd,
        [get(name) for name in KEY_ENV],
        payload_cwd if isinstance(payload_cwd, str) else None,
        transcript if isinstance(transcript, str) else None,
        os.path.realpath(project),
        os.path.realpath(work),
        os.path.abspath(project),
    ]


def state_dir(environ: Mapping[str, str]) -> str | None:
    """``Settings.state_dir`` as a string (None without ``HOME``: no fast path)."""
    import os

    get = environ.get
    home = get("HOME")
    if not home:
        return None
    value = get("XDG_STATE_HOME")
    if value and os.path.isabs(value):
        return os.path.join(value, "teamsync")
    return os.path.join(home, ".local/state", "teamsync")


def _ident(value: str, limit: int) -> str:
    return "".join(c if c in _ID_OK else "_" for c in value)[:limit]


def session(payload: dict[str, Any]) -> str:
    """:func:`teamsync.hooks.verify._session`."""
    return _ident(str(payload.get("session_id") or "none"), 80)


def snapshot_id(payload: dict[str, Any]) -> str:
    """:func:`teamsync.hooks.verify.snapshot_id`."""
    raw = payload.get("tool_use_id") or payload.get("session_id") or "call"
    return _ident(str(raw), 120)


# --- the screen ---


def screen(command: str, cwds: list[str]) -> bool:
    """True when the text filter of :mod:`teamsync.hooks.bash` certainly lets
    ``command`` (run in any of ``cwds``) through: plain ASCII, none of
    :data:`UNSURE`, and no :data:`TRIGGERS` word in the command (also with quotes
    removed) or in a working directory. False: ask the full guard."""
    if not command.isascii() or any(c in UNSURE for c in command):
        return False
    lowered = command.lower()
    plain = lowered.replace("'", "").replace('"', "")
    for word in TRIGGERS:
        if word in lowered or word in plain:
            return False
    for cwd in cwds:
        folded = cwd.lower()
        if not cwd.isascii() or any(word in folded for word in TRIGGERS):
            return False
    return True


# --- the cache ---


def lookup(state: str, key: list[Any]) -> dict[str, Any] | None:
    """The cache entry for ``key`` whose every dependency still has its recorded value."""
    import os

    try:
        with open(os.path.join(state, "guard", CACHE_NAME), encoding="utf-8") as handle:
            data = loads(handle.read())
    except OSError:
        return None
    if not isinstance(data, dict) or data.get("v") != CACHE_VERSION:
        return None
    entries = data.get("entries")
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("key") != key:
            continue
        deps = entry.get("deps")
        if not isinstance(deps, list):
            return None
        for dep in deps:
            kind, path, expected = dep
            if dep_value(kind, path) != expected:
                return None
        teams, guarded = entry.get("teams"), entry.get("guarded")
        if not isinstance(teams, list) or not all(isinstance(t, str) for t in teams):
            return None
        if not teams or not isinstance(guarded, dict):
            return None
        return entry
    return None


def _current(entry: dict[str, Any]) -> bool:
    """Whether the guarded files and git configuration still have the stamps recorded
    (the full guard's ``take`` would then copy nothing and ask git nothing)."""
    for path, item in entry["guarded"].items():
        if file_stamp(path) != item[0]:
            return False
    gitconfig = entry.get("gitconfig")
    if gitconfig is None:
        return True
    files, stamps = gitconfig["files"], gitconfig["stamps"]
    return bool({str(f): config_stamp(str(f)) for f in files} == stamps)


def names(team: str) -> dict[str, int]:
    """:func:`teamsync.hooks.verify.names`: ``key -> inode`` from the listing."""
    return {key: entry.inode() for key, entry in entries(team)}


def entries(team: str, *, strict: bool = False) -> list[tuple[str, os.DirEntry[str]]]:
    """``(key, entry)`` for every entry below ``team`` that is not a directory; links
    are entries, never followed. An unreadable directory or entry is passed over,
    or with ``strict`` raises (a missing ``team`` itself is empty either way)."""
    import os

    out = []
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            listing = os.scandir(os.path.join(team, rel) if rel else team)
        except FileNotFoundError:
            if strict and rel:
                raise
            continue
        except OSError:
            if strict:
                raise
            continue
        with listing:
            for entry in listing:
                key = f"{rel}/{entry.name}" if rel else entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(key)
                        continue
                except OSError:
                    if strict:
                        raise
                    continue
                out.append((key, entry))
    return out


def _write(path: str, text: str) -> None:
    """Replace ``path`` (its directory must exist) with a private file holding ``text``."""
    import os

    name = f".teamsync-tmp-{os.getpid()}-{os.urandom(6).hex()}"
    temp = os.path.join(os.path.dirname(path), name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o600)
    try:
        with open(fd, "w", encoding="utf-8", closefd=True) as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


# --- the two steps ---


def fast_pre(payload: dict[str, Any], environ: Mapping[str, str], cwd: str) -> bool:
    """The PreToolUse step; True when it answered (allow, snapshot written)."""
    import os
    import time

    tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(tool, str) or tool in EDIT_TOOLS or not isinstance(tool_input, dict):
        return False
    if tool in READ_ONLY_TOOLS:
        return True  # the full guard allows these at once too, with no snapshot
    project = project_of(environ, cwd)
    places_cwd = _abs_str(payload.get("cwd")) or project
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str) or not screen(command, [places_cwd, project, cwd]):
            return False
    state = state_dir(environ)
    if state is None:
        return False
    entry = lookup(state, cache_key(environ, payload, cwd))
    if entry is None or not _current(entry):
        return False
    snap = {
        "t": time.time(),
        "session": str(payload.get("session_id") or ""),
        "teams": {team: names(team) for team in entry["teams"]},
        "guarded": entry["guarded"],
        "gitconfig": entry.get("gitconfig"),
    }
    name = f"{session(payload)}~{snapshot_id(payload)}.json"
    _write(os.path.join(state, "guard", "pending", name), dumps(snap))
    return True


def fast_post(payload: dict[str, Any], environ: Mapping[str, str], cwd: str) -> bool:
    """The PostToolUse step; True when it answered (nothing changed, bookkeeping done)."""
    import os
    import time

    started = time.time()
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or tool in EDIT_TOOLS:
        return False
    if tool in READ_ONLY_TOOLS:
        return True  # the full check ignores these too
    state = state_dir(environ)
    if state is None:
        return False
    entry = lookup(state, cache_key(environ, payload, cwd))
    if entry is None:
        return False
    guard = os.path.join(state, "guard")
    pending = os.path.join(guard, "pending")
    prefix = session(payload) + "~"
    mine = prefix + snapshot_id(payload) + ".json"
    listed = os.listdir(pending)
    if mine not in listed:
        return False  # no snapshot of this call: the full check knows what to do
    for other in listed:
        if other == mine or not other.endswith(".json"):
            continue
        if other.startswith(prefix):
            return False  # an earlier call of the session was never checked
        if started - os.stat(os.path.join(pending, other)).st_mtime > ORPHAN_MAX_AGE_S:
            return False  # a stale one to drop: the full check does that
    with open(os.path.join(pending, mine), encoding="utf-8") as handle:
        snap = loads(handle.read())
    if not isinstance(snap, dict):
        return False
    t = float(snap["t"])
    if not started - ORPHAN_MAX_AGE_S <= t <= started + 1:
        return False
    base = t
    last = os.path.join(guard, f"{session(payload)}.last")
    try:
        with open(last, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        text = None
    if text is not None:
        try:
            previous = float(text)
        except ValueError:
            previous = None
        if previous is not None:
            if previous != previous or abs(previous) == float("inf"):
                return False
            base = min(base, previous)
    since = int((base - CTIME_SLACK_S) * 1e9)
    teams = snap.get("teams")
    if not isinstance(teams, dict) or sorted(teams) != sorted(entry["teams"]):
        return False
    for team, before in teams.items():
        if not isinstance(before, dict):
            return False
        for key, item in entries(team, strict=True):
            st = item.stat(follow_symlinks=False)
            if before.get(key) != st.st_ino or st.st_ctime_ns >= since:
                return False
    guarded = snap.get("guarded")
    if not isinstance(guarded, dict) or not guarded:
        return False
    for path, item in guarded.items():
        if file_stamp(path) != item[0]:
            return False
    gitconfig = snap.get("gitconfig")
    if gitconfig is not None:
        files, stamps = gitconfig["files"], gitconfig["stamps"]
        if {str(f): config_stamp(str(f)) for f in files} != stamps:
            return False
    _write(last, repr(started))
    os.unlink(os.path.join(pending, mine))
    return True


FAST_ARGS = {
    ("guard",): "PreToolUse",
    ("guard", "--event", "PreToolUse"): "PreToolUse",
    ("guard", "--event=PreToolUse"): "PreToolUse",
    ("guard", "--event", "PostToolUse"): "PostToolUse",
    ("guard", "--event=PostToolUse"): "PostToolUse",
    ("guard", "--event", "PostToolUseFailure"): "PostToolUseFailure",
    ("guard", "--event=PostToolUseFailure"): "PostToolUseFailure",
}


def answer(event: str, text: str, environ: Mapping[str, str], cwd: str) -> bool:
    """Whether the fast path answered ``event`` for the payload ``text`` (an error
    is a False: the full guard is asked)."""
    try:
        payload = loads(text)
        if not isinstance(payload, dict):
            return False
        if event == "PreToolUse":
            return fast_pre(payload, environ, cwd)
        return fast_post(payload, environ, cwd)
    except Exception:  # noqa: BLE001 - fail closed: the full guard decides
        return False


def try_fast(argv: Sequence[str]) -> bool:
    """For a hook command in :data:`FAST_ARGS`: read the payload, answer it fast if
    it can; otherwise put the payload back as ``sys.stdin`` for the full guard."""
    event = FAST_ARGS.get(tuple(argv))
    if event is None:
        return False
    import io
    import os

    try:
        text = sys.stdin.read()
    except Exception:  # noqa: BLE001 - the full guard reads (and judges) what is left
        return False
    import _signal  # type: ignore[import-not-found]

    def _late(signum: int, frame: object) -> None:
        raise TimeoutError("the fast path ran past its budget")

    timed = False
    try:
        _signal.signal(_signal.SIGALRM, _late)
        _signal.setitimer(_signal.ITIMER_REAL, BUDGET_S)
        timed = True
        done = answer(event, text, dict(os.environ), os.getcwd())
    except Exception:  # noqa: BLE001 - no working directory, no timer: the full guard decides
        done = False
    finally:
        if timed:
            _signal.setitimer(_signal.ITIMER_REAL, 0)
        try:
            _signal.signal(_signal.SIGALRM, _signal.SIG_DFL)
        except (ValueError, OSError):
            pass
    if not done:
        sys.stdin = io.StringIO(text)
    return done
