"""A model-based fuzzer for sync: 3-4 teammates, either backend, one oracle.

Operations are plain tuples ``(name, *args)`` so a failing run can be replayed
and shrunk (:func:`shrink`, a delta-debugging loop: drop chunks of operations
while the same violation still shows). The hypothesis state machine in
``tests/sync/test_sync_fuzz.py`` drives the same :class:`World` and gets
hypothesis' own shrinker; ``bench/sync_fuzz.py`` runs seeded campaigns.

The oracle: every line anyone writes carries a unique token ``t<N>``. A token
stops being owed only when a teammate removes it from a file it is looking
at (an edit, a rewrite, a delete). After everyone syncs a few rounds:

- *lost*: every owed token is in some file (merged in, or in a conflict copy);
- *diverged*: every teammate holds exactly the remote's files;
- *failed* / *refused*: no sync raised, and no sync refused anything (a
  ``push`` holding back a file the remote changed too, for ``sync`` to merge,
  is by design and counted apart);
- *gone* (issue 31): every memory keeps an identity through renames, a line
  ``id-<N>`` written when it is created, kept by every edit, rewrite and rename.
  An identity stops being owed only when a teammate deletes a file holding it;
  after convergence every owed identity is in some memory on the remote, under
  whatever name. It is checked apart from the line tokens, so a memory lost
  under every name is reported as such even when its text lives on elsewhere.
  ``rename_back`` renames a file to a name its memory had before (possibly
  given by another teammate): the rename-back sequences of issue 31.

Case-only and NFKC-only renames (``case_renames=True``, the default) cover
issue 18 §1, including a rename racing a teammate's edit of the old name
(:mod:`teamsync.sync.renames`); ``bench/sync_fuzz.py --no-case-renames``
leaves them out.
"""

from __future__ import annotations

import random
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from teamsync.errors import TeamsyncError
from teamsync.security.keys import fold_key
from teamsync.server.storage import Storage, open_storage
from teamsync.sync.engine import SyncReport
from testing.casefold import sync_case_insensitive
from testing.gitrepos import Member, bump_mtime, make_team, remote_files
from testing.memory_backend import MemoryRemote, make_memory_team
from testing.server import app_for, make_rest_team, token_for, uvicorn_server

Op = tuple[Any, ...]
NAMES = ("alice", "bob", "carol", "dave")
KEYS = (
    "plan.md",
    "Deploy.md",
    "notes/api.md",
    "notes/db.md",
    "a/b/c/d/e/f/deep.md",
    "x.md",
    "\ufb01le.md",
)
CASE_PAIRS = (("Deploy.md", "deploy.md"), ("\ufb01le.md", "file.md"))
"""Case-only and NFKC-only renames (``ﬁle.md`` and ``file.md`` fold alike)."""
INDEX = "MEMORY.md"
PUSH_HOLDS = "changed on the remote too: run `teamsync sync` to merge"
PUSH_FOLLOWS = "run `teamsync sync` to follow the rename"
"""``push`` never moves a local file: a teammate's rename is left for ``sync`` (issue 31)."""
_TOKEN = re.compile(r"\bt\d+\b")
_ID = re.compile(r"\bid-\d+\b")


@dataclass
class Stats:
    steps: int = 0
    syncs: int = 0
    together: int = 0
    conflicts: int = 0
    merges: int = 0
    recovered: int = 0
    refusals: int = 0
    renames_back: int = 0
    gone: int = 0
    """Memories (identities) lost under every name, at the final check."""
    stops: int = 0
    """Syncs a guard stopped (the mass-change guard, by design: others deleted much)."""
    confirmed: int = 0
    """Final-round syncs run again with ``yes`` after a mass-change stop, as a user
    reading the stop's message would; the lost/gone oracle still judges the result."""
    violations: list[str] = field(default_factory=list)

    COUNTS = (
        "steps", "syncs", "together", "conflicts", "merges", "recovered", "refusals",
        "renames_back", "gone", "stops", "confirmed",
    )  # fmt: skip

    def add(self, other: Stats) -> None:
        for name in self.COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.violations.extend(other.violations)


class RestHost:
    """One real ``teamsync serve`` app on loopback shared by many worlds (one repo each)."""

    def __init__(self, storage: Storage, url: str) -> None:
        self.storage, self.url, self.count = storage, url, 0

    def new_repo(self) -> str:
        self.count += 1
        return f"acme/fuzz-{self.count}"


@contextmanager
def rest_host(root: Path) -> Iterator[RestHost]:
    storage = open_storage(f"sqlite:///{root / 'fuzz-server.sqlite3'}")
    try:
        with uvicorn_server(app_for(storage)) as url:
            yield RestHost(storage, url)
    finally:
        storage.close()


class World:
    """Teammates over one remote, and the oracle's bookkeeping."""

    def __init__(
        self,
        kind: str,
        root: Path,
        mates: int,
        host: RestHost | None = None,
        *,
        casefold: int = 0,
    ) -> None:
        """``casefold``: the first that many teammates sync through a case-insensitive
        view of their directory (:mod:`testing.casefold`, as on macOS or Windows)."""
        self.kind, self.root, self.casefold = kind, root, casefold
        names = NAMES[:mates]
        self.repo: str | None = None
        self.host = host
        self.memory: MemoryRemote | None = None
        if kind == "git":
            self.mates: list[Member] = list(make_team(root, names))
            self.remote: Path | None = self.mates[0].remote  # type: ignore[attr-defined]
        elif kind == "memory":  # the contract's in-memory backend
            memory_mates = make_memory_team(root, names)
            self.mates, self.remote = list(memory_mates), None
            self.memory = memory_mates[0].remote
        else:
            assert host is not None
            self.repo = host.new_repo()
            tokens = [token_for(host.storage, self.repo, label=n) for n in names]
            self.mates = list(make_rest_team(root, host.url, tokens, names, repo=self.repo))
            self.remote = None
        self.counter = 0
        self.owed: set[str] = set()
        self.ids: dict[str, list[str]] = {}
        """Owed identity -> every name it was given, in order."""
        self.away: dict[int, int] = {}
        """Teammate -> syncs it skips (offline)."""
        self.stats = Stats()
        self.log: list[Op] = []

    # -- helpers ----------------------------------------------------------------------
    def _token(self) -> str:
        self.counter += 1
        return f"t{self.counter}"

    def _files(self, m: int) -> dict[str, bytes]:
        team = self.mates[m].team
        return {
            p.relative_to(team).as_posix(): p.read_bytes()
            for p in sorted(team.rglob("*"))
            if p.is_file()
        }

    def _pick(self, m: int, pick: int, *, index: bool = False) -> str | None:
        keys = [k for k in self._files(m) if index or k != INDEX]
        return keys[pick % len(keys)] if keys else None

    def _put(self, m: int, key: str, data: bytes) -> None:
        path = self.mates[m].team / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        bump_mtime(path)

    def _forget(self, data: bytes) -> None:
        self.owed.difference_update(_TOKEN.findall(data.decode("utf-8", "replace")))

    def _ident(self, data: bytes) -> str | None:
        found = _ID.findall(data.decode("utf-8", "replace"))
        return found[0] if found else None

    def _renamed(self, data: bytes, new: str) -> None:
        ident = self._ident(data)
        if ident is not None and ident in self.ids and self.ids[ident][-1] != new:
            self.ids[ident].append(new)

    def _line(self, crlf: bool) -> bytes:
        token = self._token()
        self.owed.add(token)
        return f"line {token}{chr(13) if crlf else ''}\n".encode()

    # -- operations ---------------------------------------------------------------------
    def apply(self, op: Op) -> None:
        self.log.append(op)
        self.stats.steps += 1
        getattr(self, "op_" + op[0])(*op[1:])

    def op_create(self, m: int, k: int, crlf: bool) -> None:
        key = KEYS[k % len(KEYS)]
        files = self._files(m)
        if key in files or any(fold_key(f) == fold_key(key) for f in files):
            return
        head = f"---\r\nname: {key}\r\n---\r\n" if crlf else f"---\nname: {key}\n---\n"
        self.counter += 1
        ident = f"id-{self.counter}"
        self.ids[ident] = [key]
        mark = f"{ident}{chr(13) if crlf else ''}\n".encode()
        self._put(m, key, head.encode() + mark + self._line(crlf))

    def op_empty(self, m: int, k: int) -> None:
        key = KEYS[k % len(KEYS)]
        if not any(fold_key(f) == fold_key(key) for f in self._files(m)):
            self._put(m, key, b"")

    def op_append(self, m: int, pick: int) -> None:
        key = self._pick(m, pick)
        if key is not None:
            old = self._files(m)[key]
            crlf = b"\r\n" in old
            sep = b"" if not old or old.endswith(b"\n") else b"\n"
            self._put(m, key, old + sep + self._line(crlf))

    def op_edit(self, m: int, pick: int, pos: int) -> None:
        key = self._pick(m, pick)
        if key is None:
            return
        lines = self._files(m)[key].split(b"\n")
        spots = [
            i for i, line in enumerate(lines) if _TOKEN.search(line.decode("utf-8", "replace"))
        ]
        if not spots:
            return
        i = spots[pos % len(spots)]
        self._forget(lines[i])
        crlf = lines[i].endswith(b"\r")
        lines[i] = self._line(crlf).rstrip(b"\n")
        self._put(m, key, b"\n".join(lines))

    def op_rewrite(self, m: int, pick: int) -> None:
        key = self._pick(m, pick)
        if key is not None:
            old = self._files(m)[key]
            self._forget(old)
            ident = self._ident(old)
            mark = f"{ident}\n".encode() if ident is not None else b""
            self._put(m, key, f"---\nname: {key}\n---\n".encode() + mark + self._line(False))

    def op_delete(self, m: int, pick: int) -> None:
        key = self._pick(m, pick, index=True)
        if key is not None:
            data = self._files(m)[key]
            self._forget(data)
            ident = self._ident(data)
            if ident is not None:
                self.ids.pop(ident, None)  # an explicit delete: the only way a memory goes
            (self.mates[m].team / key).unlink()

    def op_rename(self, m: int, pick: int, k: int) -> None:
        key, new = self._pick(m, pick), KEYS[k % len(KEYS)]
        files = self._files(m)
        if key is None or any(fold_key(f) == fold_key(new) for f in files):
            return
        data = files[key]
        (self.mates[m].team / key).unlink()
        self._put(m, new, data)
        self._renamed(data, new)

    def op_rename_back(self, m: int, pick: int) -> None:
        """Rename a file to the name its memory had before this one (whoever gave it)."""
        files = self._files(m)
        movable = []
        for key, data in files.items():
            ident = self._ident(data)
            names = self.ids.get(ident or "", [])
            earlier = [n for n in names[:-1] if n != key] if names and names[-1] == key else []
            if key != INDEX and earlier:
                movable.append((key, earlier[-1]))
        if not movable:
            return
        key, new = movable[pick % len(movable)]
        if any(fold_key(f) == fold_key(new) and f != key for f in files):
            return
        data = files[key]
        (self.mates[m].team / key).unlink()
        self._put(m, new, data)
        self._renamed(data, new)
        self.stats.renames_back += 1

    def op_handoff(self, m: int, other: int, pick: int, k: int) -> None:
        """Teammate ``m`` renames a memory (case-only for a name of a case pair when ``k``
        is odd, else to ``KEYS[k]``) and syncs; teammate ``other`` syncs, renames it back
        to the name it had before, and syncs (a rename back by another teammate)."""
        key = self._pick(m, pick)
        pair = next((p for p in CASE_PAIRS if key in p), None)
        if pair is not None and k % 2:
            self.op_case_rename(m, CASE_PAIRS.index(pair))
        else:
            self.op_rename(m, pick, k)
        self.op_sync(m, "sync")
        self.op_sync(other, "sync")
        self.op_rename_back(other, pick)
        self.op_sync(other, "sync")

    def op_offline(self, m: int, syncs: int) -> None:
        """Teammate ``m`` is away: its next ``syncs`` syncs do not happen."""
        self.away[m] = syncs

    def op_case_rename(self, m: int, which: int = 0) -> None:
        files = self._files(m)
        a, b = CASE_PAIRS[which % len(CASE_PAIRS)]
        for old, new in ((a, b), (b, a)):
            if old in files:
                (self.mates[m].team / old).unlink()
                self._put(m, new, files[old])
                self._renamed(files[old], new)
                return

    def op_index_edit(self, m: int, pick: int) -> None:
        key = self._pick(m, pick)
        old = self._files(m).get(INDEX, b"")
        target = key or "plan.md"
        line = f"- [{target}]({target}) - {self._token()}\n".encode()
        self._put(m, INDEX, old + (b"" if not old or old.endswith(b"\n") else b"\n") + line)

    def op_sync(self, m: int, mode: str, *, yes: bool = False) -> SyncReport | None:
        if self.away.get(m, 0) > 0:
            self.away[m] -= 1
            return None
        if m < self.casefold:
            return self._record(m, lambda: sync_case_insensitive(self.mates[m], mode, yes=yes))  # type: ignore[arg-type]
        return self._record(m, lambda: self.mates[m].sync(mode, yes=yes))  # type: ignore[arg-type]

    def op_together(self, ms: Sequence[int]) -> None:
        """Several teammates sync at the same moment (threads released by a barrier)."""
        chosen = sorted(set(ms))
        if len(chosen) < 2:
            return
        self.stats.together += 1
        gate = threading.Barrier(len(chosen))

        def go(m: int) -> None:
            gate.wait()
            self.op_sync(m, "sync")

        threads = [threading.Thread(target=go, args=(m,)) for m in chosen]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)

    def _record(self, m: int, call: Callable[[], SyncReport]) -> SyncReport | None:
        self.stats.syncs += 1
        try:
            report = call()
        except TeamsyncError as exc:
            self.stats.violations.append(f"failed: {self.mates[m].name}: {exc}")
            return None
        if report.stop is not None:
            self.stats.stops += 1
        self.stats.conflicts += len(report.conflicts)
        self.stats.merges += len(report.merged)
        self.stats.recovered += len(report.recovered)
        for r in report.rejected + report.held_back:
            self.stats.refusals += 1
            # push leaves a both-sides change for sync to merge, and a rename to follow
            if r.reason != PUSH_HOLDS and not r.reason.endswith(PUSH_FOLLOWS):
                self.stats.violations.append(f"refused: {r.key}: {r.reason}")
        return report

    # -- the oracle -----------------------------------------------------------------------
    def remote_files(self) -> dict[str, str]:
        if self.remote is not None:
            return remote_files(self.remote)
        if self.memory is not None:
            return self.memory.files()
        assert self.host is not None and self.repo is not None
        state = self.host.storage.state(self.repo, contents=True)
        return dict(state.entries or {}) if state is not None else {}

    def check(self, rounds: int = 3) -> list[str]:
        """Converge everyone, then the oracle's verdicts (empty: all good)."""
        self.away.clear()  # everyone is back for the final rounds
        for _ in range(rounds):
            for m in range(len(self.mates)):
                report = self.op_sync(m, "sync")
                if report is not None and report.stop is not None:
                    if report.stop.kind != "mass_change":
                        self.stats.violations.append(
                            f"stopped: {self.mates[m].name}: {report.stop.kind}"
                        )
                        continue
                    self.stats.confirmed += 1
                    self.op_sync(m, "sync", yes=True)
        found: list[str] = list(self.stats.violations)
        remote = {k: v.encode() for k, v in self.remote_files().items()}
        for m, mate in enumerate(self.mates):
            mine = self._files(m)
            if mine != remote:
                found.append(
                    f"diverged: {mate.name} differs from the remote: {_diff(mine, remote)}"
                )
        text = "\n".join(
            d.decode("utf-8", "replace")
            for m in range(len(self.mates))
            for d in self._files(m).values()
        )
        lost = sorted(self.owed - set(_TOKEN.findall(text)), key=lambda t: int(t[1:]))
        if lost:
            found.append(f"lost: {len(lost)} written lines never reached anyone: {lost[:10]}")
        held = {
            i
            for k, d in remote.items()
            if k != INDEX
            for i in _ID.findall(d.decode("utf-8", "replace"))
        }
        gone = sorted(set(self.ids) - held, key=lambda i: int(i[3:]))
        self.stats.gone = len(gone)
        if gone:
            names = "; ".join(f"{i} as {' -> '.join(self.ids[i])}" for i in gone[:5])
            found.append(f"gone: {len(gone)} memories under no name on the remote: {names}")
        self.stats.violations = found
        return found


def _diff(mine: dict[str, bytes], remote: dict[str, bytes]) -> str:
    """Which keys differ, for a divergence's message (names only, never contents)."""
    only_here = sorted(mine.keys() - remote.keys())
    only_there = sorted(remote.keys() - mine.keys())
    changed = sorted(k for k in mine.keys() & remote.keys() if mine[k] != remote[k])
    return (
        f"only here {only_here[:5]}, only on the remote {only_there[:5]}, other bytes {changed[:5]}"
    )


def random_op(
    rng: random.Random, mates: int, *, case_renames: bool = True, renames: bool = False
) -> Op:
    """One operation, weighted roughly like real use (many edits and syncs); with
    ``renames``, renames, hand-offs and renames back by other teammates are frequent."""
    m = rng.randrange(mates)
    case = 2 if case_renames else 0
    weights = (
        [10, 1, 8, 4, 2, 3, 6, case * 2, 1, 14, 3, 6, 10, 4]
        if renames
        else [10, 2, 12, 8, 3, 5, 6, case, 3, 20, 6, 4, 2, 1]
    )
    choice = rng.choices(
        ["create", "empty", "append", "edit", "rewrite", "delete", "rename", "case_rename",
         "index_edit", "sync", "together", "rename_back", "handoff", "offline"],
        weights=weights,
    )[0]  # fmt: skip
    pick = rng.randrange(1000)
    if choice == "offline":
        return ("offline", m, rng.randint(1, 8))
    if choice == "handoff":
        other = rng.choice([i for i in range(mates) if i != m])
        return ("handoff", m, other, pick, rng.randrange(len(KEYS)))
    if choice == "create":
        return ("create", m, rng.randrange(len(KEYS)), rng.random() < 0.2)
    if choice == "empty":
        return ("empty", m, rng.randrange(len(KEYS)))
    if choice in ("append", "rewrite", "delete", "index_edit", "rename_back"):
        return (choice, m, pick)
    if choice == "edit":
        return ("edit", m, pick, rng.randrange(1000))
    if choice == "rename":
        return ("rename", m, pick, rng.randrange(len(KEYS)))
    if choice == "case_rename":
        return ("case_rename", m, rng.randrange(len(CASE_PAIRS)))
    if choice == "sync":
        return ("sync", m, rng.choice(["sync", "sync", "sync", "pull", "push"]))
    return ("together", tuple(rng.sample(range(mates), rng.randint(2, mates))))


def replay(
    kind: str, ops: Sequence[Op], mates: int, host: RestHost | None, casefold: int = 0
) -> World:
    root = Path(tempfile.mkdtemp(prefix=f"fuzz-{kind}-"))
    world = World(kind, root, mates, host, casefold=casefold)
    try:
        for op in ops:
            world.apply(op)
        world.check()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return world


def shrink(
    kind: str,
    ops: Sequence[Op],
    mates: int,
    host: RestHost | None,
    *,
    budget: int = 200,
    seconds: float = 600.0,
    casefold: int = 0,
) -> list[Op]:
    """Delta debugging: the shortest prefix-free subsequence that still shows a violation
    of the same kind (``lost``, ``gone``, ``diverged``, ``failed``, ``refused``)."""

    def kinds(w: World) -> set[str]:
        return {v.split(":", 1)[0] for v in w.stats.violations}

    target = kinds(replay(kind, ops, mates, host, casefold))
    if not target:
        return list(ops)
    current, chunk, tries = list(ops), max(1, len(ops) // 2), 0
    stop = time.monotonic() + seconds

    def more() -> bool:
        return tries < budget and time.monotonic() < stop

    while chunk >= 1 and more():
        i, shrunk = 0, False
        while i < len(current) and more():
            candidate = current[:i] + current[i + chunk :]
            tries += 1
            if candidate and kinds(replay(kind, candidate, mates, host, casefold)) & target:
                current, shrunk = candidate, True
            else:
                i += chunk
        if not shrunk:
            chunk //= 2
    return current
