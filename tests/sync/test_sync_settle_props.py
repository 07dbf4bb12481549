"""The settle property (issue 24 §4): whatever the teammates' directories looked like,
once each teammate has synced in turn (and the first once more, to receive the
others' changes), a second round changes nothing and sends nothing but the no-op.

Random directories: memories in the index or not, the teammate's own index
lines (titles, hooks, prose, headings, backtick mentions, dead entries), files
held back for a secret, CRLF in memories and indexes, the same name created on
both sides. Real git (a bare repository) and a real ``teamsync serve`` (uvicorn
on loopback, SQLite), every HTTP request counted.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from teamsync.memdir.index import scan_index, split_lines
from teamsync.memdir.indexfix import withheld_lines
from teamsync.server.storage import Storage, open_storage
from testing.counting import Counter
from testing.gitrepos import Member, git, make_team, remote_files
from testing.gitrepos import fake_token as _token
from testing.memory_backend import make_memory_team
from testing.server import app_for, make_rest_team, token_for, uvicorn_server

NAMES = ("deploys.md", "oncall.md", "notes/api_keys.md", "Runbook.md", "ci.md", "db_schema.md")
TYPES = ("project", "feedback", "reference", "user", "report")


@dataclass(frozen=True)
class Spec:
    """One memory: its body kind (clean or holding a secret), type and line ends."""

    secret: bool
    type: str
    crlf: bool
    words: str


@dataclass(frozen=True)
class Mate:
    files: dict[str, Spec]
    index: list[str] | None
    """The teammate's own MEMORY.md lines (None: no index), line ends from ``crlf``."""
    crlf: bool


def render(key: str, spec: Spec) -> str:
    stem = key.rsplit("/", 1)[-1].removesuffix(".md")
    body = f"token {_token()}\n" if spec.secret else f"{spec.words}\n"
    text = f"---\nname: {stem}\ndescription: {spec.words} about {stem}\ntype: {spec.type}\n---\n"
    text += body
    return text.replace("\n", "\r\n") if spec.crlf else text


def index_line(kind: str, key: str) -> str:
    return {
        "entry": f"- [{key.removesuffix('.md')}]({key}) — the team's own hook for {key}",
        "bare": f"* [{key}]({key})",
        "mention": f"See `{key}` for the details.",
        "prose-link": f"- Background notes. See [the {key} memory]({key}).",
        "dead": f"- [Gone]({key.replace('.md', '_gone.md')}) — removed long ago",
    }[kind]


words = st.sampled_from(["deploy freeze", "pager rota", "use snake_case names", "db: 5432"])


@st.composite
def mates(draw: st.DrawFn) -> Mate:
    keys = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=4))
    files = {
        key: draw(
            st.builds(
                Spec,
                st.integers(0, 4).map(lambda n: n == 0),
                st.sampled_from(TYPES),
                st.booleans(),
                words,
            )
        )
        for key in keys
    }
    index = None
    if draw(st.booleans()):
        index = ["# Team memory", ""]
        for key in keys:
            kind = draw(st.sampled_from(["entry", "bare", "mention", "prose-link", "none"]))
            if kind != "none":
                index.append(index_line(kind, key))
        if draw(st.booleans()):
            index.append(index_line("dead", draw(st.sampled_from(NAMES))))
        if draw(st.booleans()):
            index += ["", "## Project", "Prose the team wrote by hand."]
    return Mate(files, index, draw(st.booleans()))


def lay_out(member: Member, mate: Mate) -> None:
    for key, spec in mate.files.items():
        path = member.team / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(render(key, spec).encode("utf-8"))
    if mate.index is not None:
        nl = "\r\n" if mate.crlf else "\n"
        (member.team / "MEMORY.md").write_bytes((nl.join(mate.index) + nl).encode("utf-8"))


def files(member: Member) -> dict[str, str]:
    """key -> text under team/, line ends as they are on disk."""
    root = member.team
    return {
        p.relative_to(root).as_posix(): p.read_bytes().decode("utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def held(member: Member) -> set[str]:
    return {k for k, text in files(member).items() if _token() in text}


def shared(member: Member, remote: dict[str, str]) -> dict[str, str]:
    """What this teammate shares: its files without the held ones (a held file stays
    here, even under a name the remote has: a conflict held back), and its index
    without the entry lines of held files that the remote's index lacks."""
    mine = files(member)
    keep = held(member)
    out = {k: v for k, v in mine.items() if k not in keep}
    if "MEMORY.md" in out:
        lines = scan_index(mine["MEMORY.md"])
        texts = [line.text for line in lines]
        matcher = SequenceMatcher(None, split_lines(remote.get("MEMORY.md", "")), texts)
        theirs = {j + k for _, j, n in matcher.get_matching_blocks() for k in range(n)}
        drop = {p for p in withheld_lines(mine["MEMORY.md"], keep) if p not in theirs}
        out["MEMORY.md"] = "".join(t for p, t in enumerate(texts) if p not in drop)
    return out


def quiet(member: Member) -> None:
    """An immediate second sync by the same teammate is a no-op."""
    report = member.sync()
    assert (report.pushed, report.written, report.deleted, report.conflicts) == ([], [], [], [])


class Backend:
    """One remote per example: a fresh bare repository, or a fresh repository id on one server."""

    def __init__(self, kind: str, root: Path) -> None:
        self.kind, self.root, self.n = kind, root, 0
        self.counter: Counter | None = None
        self.url = ""
        self.storage: Storage | None = None

    def team(self, work: Path) -> list[Member]:
        self.n += 1
        if self.kind == "git":
            return list(make_team(work))
        if self.kind == "memory":
            return list(make_memory_team(work))
        assert self.storage is not None
        repo = f"acme/r{self.n}"
        tokens = [token_for(self.storage, repo), token_for(self.storage, repo)]
        return list(make_rest_team(work, self.url, tokens, repo=repo))

    def version(self, mates: list[Member]) -> str:
        if self.kind == "git":
            remote = mates[0].remote  # type: ignore[attr-defined]
            return git("--git-dir", str(remote), "for-each-ref", "--format=%(objectname)")
        if self.kind == "memory":
            head = mates[0].remote.head  # type: ignore[attr-defined]
            return repr(head.id if head is not None else None)
        assert self.storage is not None
        state = self.storage.state(mates[0].repo, contents=True)  # type: ignore[attr-defined]
        return repr(state.head if state is not None else None)

    def remote(self, mates: list[Member]) -> dict[str, str]:
        if self.kind == "git":
            return remote_files(mates[0].remote)  # type: ignore[attr-defined]
        if self.kind == "memory":
            return mates[0].remote.files()  # type: ignore[attr-defined,no-any-return]
        assert self.storage is not None
        state = self.storage.state(mates[0].repo, contents=True)  # type: ignore[attr-defined]
        return dict(state.entries or {}) if state is not None else {}


@pytest.fixture(scope="module", params=["git", "rest", "memory"])
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    root = tmp_path_factory.mktemp(f"settle-{request.param}")
    b = Backend(request.param, root)
    if request.param in ("git", "memory"):
        yield b
        return
    b.storage = open_storage(f"sqlite:///{root / 'server.sqlite3'}")
    b.counter = Counter(app_for(b.storage))
    try:
        with uvicorn_server(b.counter) as url:
            b.url = url
            yield b
    finally:
        b.storage.close()


@settings(
    max_examples=int(os.environ.get("SETTLE_EXAMPLES", "6")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(alice=mates(), bob=mates())
def test_a_second_round_changes_nothing(backend: Backend, alice: Mate, bob: Mate) -> None:
    with tempfile.TemporaryDirectory(dir=backend.root) as work:
        a, b = backend.team(Path(work))
        lay_out(a, alice)
        lay_out(b, bob)
        note(f"alice: {files(a)!r}")
        note(f"bob: {files(b)!r}")
        for member in (a, b, a):
            member.sync()
            note(f"after {member.name}: alice {files(a)!r} bob {files(b)!r}")
            quiet(member)
        version = backend.version([a, b])
        for member in (a, b):
            if backend.counter is not None:
                backend.counter.reset()
            before = files(member)
            report = member.sync()
            assert (report.pushed, report.written, report.deleted, report.merged) == ([],) * 4
            assert files(member) == before
            if backend.counter is not None:
                # the no-op: one conditional read of the listing (404 while nothing was shared)
                nothing = ("GET", 304 if backend.remote([a, b]) else 404)
                assert [(r.method, r.status) for r in backend.counter.log] == [nothing]
        assert backend.version([a, b]) == version
        remote = backend.remote([a, b])
        note(f"remote: {remote!r}")
        for member in (a, b):
            theirs = {k: v for k, v in remote.items() if k not in held(member)}
            assert shared(member, remote) == theirs, member.name
