"""The hook's fast path (:mod:`teamsync._fastpath`) against the full guard, run side by side.

* The screen never lets through a command the full text filter denies: every Bash
  command in the suite (every string in ``tests/hooks`` and ``tests/security``, the
  recorded payloads, issue 23's thirty shapes), the 192 shapes of
  ``bench/guard_shapes.json`` and generated spellings of the filter's words, each
  judged by both in several working directories.
* The fast PostToolUse never says "unchanged" when a memory, the allowlist or a
  policy file changed: each change (same size and mtime included, a new inode, a
  link) is made after a fast PreToolUse, and the fast check must hand over; the
  full check then acts.
* A cache entry is used only while it still gives what a fresh resolution gives.
* The real installed command: the fast path answers a quiet call without
  importing teamsync, and a call that wrote a secret through a script still ends
  with the secret quarantined and the model told.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from teamsync import _fastpath
from teamsync.hooks.bash import judge_bash
from teamsync.hooks.claude_settings import hook_entry
from teamsync.hooks.guard import evaluate
from teamsync.hooks.places import resolve
from teamsync.hooks.policy import HOOK_MARKER, guarded_files
from teamsync.hooks.verify import check
from testing.hooks import SessionPlaces, fake_github_token, git

ROOT = Path(__file__).resolve().parents[2]
TOKEN = fake_github_token(41)


# --- the commands ---


def _strings_in(path: Path) -> list[str]:
    """Every string literal of a test module (f-strings with their holes filled)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            parts = [
                v.value if isinstance(v, ast.Constant) else "/tmp/p/memory/team"
                for v in node.values
            ]
            out.append("".join(str(p) for p in parts))
    return out


def _verify_shapes() -> list[str]:
    spec = importlib.util.spec_from_file_location(
        "_verify_shapes", ROOT / "tests" / "hooks" / "test_hooks_verify.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    out = []
    for _name, setup, command in module.SHAPES:
        for text in (setup, command):
            out.append(text.replace("{T}", "/tmp/p/memory/team").replace("{P}", "/tmp/p/proj"))
            out.append(text.replace("{T}", "../x").replace("{P}", "."))
    return out


def _blind_shapes() -> list[str]:
    data = json.loads((ROOT / "bench" / "guard_shapes.json").read_text(encoding="utf-8"))
    out = []
    for shape in data:
        for field in ("setup", "command"):
            text = str(shape.get(field) or "")
            for memdir in ("/tmp/p/memory", "/tmp/p/m", "."):
                out.append(
                    text.replace("{token}", TOKEN).replace("{memdir}", memdir)
                    .replace("{project}", "/tmp/p/proj").replace("{home}", "/tmp/p/home")
                )  # fmt: skip
    return out


def _generated() -> list[str]:
    """The filter's words spelled every way its text checks see them."""
    words = ["team", "TEAM", "Team", "memory", "allowlist", ".teamsync", "teamsync allow",
             "core.hooksPath", "hookspath", "config"]  # fmt: skip
    out = []
    for word in words:
        for i in range(1, len(word)):
            head, tail = word[:i], word[i:]
            for glue in ("''", '""', "'", '"', "\\", "\\\n", "$''", "${x}", "*", "?", "{,}"):
                out.append(f"echo x > {head}{glue}{tail}/a.md")
                out.append(f"git {head}{glue}{tail} x")
        out += [f"echo {word}", f"cat {word}/x", f"cd /tmp/{word} && ls", f"{word}"]
    out += ["git config core.hooks''Path /dev/null", "git config core.hooksPath x",
            "teams''ync al''low abc --reason r", "script -qc 'teamsync allow x' /dev/null",
            "ls -la", "pytest -q tests/ && git status --short", "make -j2", "npm test",
            "python3 tools/note.py", "echo hello > notes.md", "git log --oneline -5"]  # fmt: skip
    return out


def _payload_commands() -> list[str]:
    out = []
    for path in sorted((ROOT / "tests" / "hooks" / "payloads").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        command = data.get("tool_input", {}).get("command")
        if isinstance(command, str):
            out.append(command.replace("{{TEAM}}", "/tmp/p/memory/team"))
    return out


def all_commands() -> list[str]:
    texts: list[str] = []
    for folder in ("hooks", "security"):
        for path in sorted((ROOT / "tests" / folder).glob("*.py")):
            texts += _strings_in(path)
    texts += _verify_shapes() + _blind_shapes() + _generated() + _payload_commands()
    return list(dict.fromkeys(t for t in texts if t))


# --- a session ---


class Session(SessionPlaces):
    """A project (git, one commit), its Claude Code memory dir with 40 memories, HOME."""

    def __init__(self, root: Path, wait: float = 0.2) -> None:
        self.root = root
        self.home = root / "home"
        self.project = root / "proj"
        (self.project / "sub").mkdir(parents=True)
        self.home.mkdir()
        git(root, "init", "-q", str(self.project))
        git(self.project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
            "--allow-empty", "-m", "init")  # fmt: skip
        self.memdir = resolve(self.settings(), {}).memdir
        for n in range(40):
            folder = self.team / f"area{n % 4}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"m{n}.md").write_text(f"memory {n}: run tests first\n", encoding="utf-8")
        (self.team / "notes.md").write_text(
            "registry notes: " + "kept short; " * 8 + "\n", encoding="utf-8"
        )
        (self.project / ".teamsync").mkdir()
        (self.project / ".teamsync" / "allowlist.json").write_text("[]\n", encoding="utf-8")
        (self.memdir / "teamsync.yaml").write_text("backend: git\n", encoding="utf-8")
        claude = self.project / ".claude"
        claude.mkdir()
        (claude / "settings.json").write_text('{"hooks": {"x": "teamsync guard"}}\n')
        hooks = self.project / ".git" / "hooks"
        hooks.mkdir(exist_ok=True)
        (hooks / "pre-commit").write_bytes(b"#!/bin/sh\n" + HOOK_MARKER + b"\nexit 0\n")
        self.n = 0
        old = time.time() - 10  # older than the check's ctime slack, as in a session
        for path in [*self.team.rglob("*"), self.memdir / "teamsync.yaml"]:
            os.utime(path, (old, old))
        time.sleep(wait)

    def payload(self, command: str = "ls -la", cwd: Path | None = None, **extra: Any) -> str:
        self.n += 1
        return json.dumps({"session_id": "sess", "tool_use_id": f"toolu_{self.n}",
                           "cwd": str(cwd or self.project), "tool_name": "Bash",
                           "tool_input": {"command": command}, **extra})  # fmt: skip

    def fast(self, event: str, text: str) -> bool:
        return _fastpath.answer(event, text, self.environ(), str(self.project))

    def full_pre(self, text: str) -> str | None:
        return evaluate(self.settings(), text, io.StringIO())

    def full_post(self, text: str) -> list[str]:
        payload = json.loads(text)
        return check(resolve(self.settings(), payload), payload)


CTIME_WAIT = _fastpath.CTIME_SLACK_S + 0.2
"""What a real process needs to wait (the tests in process set the slack to 0)."""


@pytest.fixture(autouse=True)
def no_slack(monkeypatch: pytest.MonkeyPatch) -> None:
    """In process, both checks count a status change from 50 ms before the snapshot on,
    not 2 s (the same rule with another constant; 50 ms covers the kernel's coarse file
    clock), so a session need not wait 2 s to settle."""
    import teamsync.hooks.verify as verify

    monkeypatch.setattr(_fastpath, "CTIME_SLACK_S", 0.05)
    monkeypatch.setattr(verify, "CTIME_SLACK_S", 0.05)


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Session:
    """One session whose cache the full guard has written (a full Pre and Post)."""
    s = Session(tmp_path_factory.mktemp("fast"), wait=CTIME_WAIT)
    text = s.payload()
    assert s.full_pre(text) is None
    assert s.full_post(text) == []
    return s


@pytest.fixture
def session(tmp_path: Path) -> Session:
    s = Session(tmp_path)
    text = s.payload()
    assert s.full_pre(text) is None and s.full_post(text) == []
    return s


# --- the screen ---


def test_the_screen_never_passes_what_the_text_filter_denies(warm: Session) -> None:
    commands = all_commands()
    assert len(commands) > 1500
    settings = warm.settings()
    cwds = [warm.project, warm.project / "sub", warm.memdir, warm.team, warm.root]
    passed = handed = 0
    for cwd in cwds:
        places = resolve(settings, {"cwd": str(cwd)})
        for command in commands:
            if _fastpath.screen(command, [places.cwd, str(warm.project), str(warm.project)]):
                passed += 1
                assert judge_bash(places, command) is None, (command, cwd)
            else:
                handed += 1
    assert sum(judge_bash(resolve(settings, {}), c) is not None for c in commands[::5]) > 50
    assert handed > 3000  # the filter's own cases all go to it
    assert passed > 300  # and the screen lets ordinary commands through


def test_the_fast_pre_allows_only_what_the_full_guard_allows(warm: Session) -> None:
    """The whole PreToolUse: the fast answer (allow) against the full evaluation."""
    fast = 0
    for command in all_commands()[::11]:
        for cwd in (warm.project, warm.project / "sub"):
            text = warm.payload(command, cwd)
            if warm.fast("PreToolUse", text):
                fast += 1
                assert warm.full_pre(text) is None, command
                json.loads(text)  # the snapshot of this call is written: drop it
                warm.full_post(text)
    assert fast > 25


def test_the_screen_hands_over_every_trigger_and_unsure_character() -> None:
    for command in ["cat Team/x", "echo > MEMORY.md", "x allowlist", "git config core.hooks''Path a",
                    "echo \\x74eam", "echo $HOME", "echo `id`", "ls *.md", "ls ?",
                    "echo {a,b}", "printf %s x", "echo ~", "echo !!", "ls [ab]",
                    "echo caf\u00e9"]:  # fmt: skip
        assert not _fastpath.screen(command, ["/tmp/p"]), command
    assert not _fastpath.screen("ls", ["/home/x/.claude/projects/p/memory"])
    assert not _fastpath.screen("ls", ["/srv/team"])
    assert _fastpath.screen("ls -la && pytest -q tests/", ["/home/x/proj"])


# --- the check after ---


def _same_size_same_mtime(path: Path, data: bytes) -> None:
    st = path.stat()
    assert len(data) == st.st_size
    path.write_bytes(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns and path.stat().st_size == st.st_size


def _renamed_in(path: Path) -> None:
    """The same bytes and mtime under a new inode."""
    st = path.stat()
    other = path.with_name(path.name + ".new")
    shutil.copy2(path, other)
    os.replace(other, path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _changes(s: Session) -> dict[str, Any]:
    notes = s.team / "notes.md"
    allow = s.project / ".teamsync" / "allowlist.json"
    config = s.memdir / "teamsync.yaml"
    claude = s.project / ".claude" / "settings.json"
    hook = s.project / ".git" / "hooks" / "pre-commit"
    outside = s.root / "outside.md"
    return {
        "a new memory holding a secret": lambda: (s.team / "new.md").write_text(TOKEN + "\n"),
        "a secret in a memory, same size, same mtime": lambda: _same_size_same_mtime(
            notes, (TOKEN + "\n").ljust(notes.stat().st_size, "x").encode()[: notes.stat().st_size]
        ),
        "a memory replaced under a new inode, same bytes and mtime": lambda: _renamed_in(
            s.team / "area1" / "m1.md"
        ),
        "a memory's mode changed": lambda: os.chmod(s.team / "area2" / "m2.md", 0o600),
        "a hard link into team/": lambda: (
            outside.write_text(TOKEN),
            os.link(outside, s.team / "area0" / "linked.md"),
        ),
        "a symlink in team/": lambda: os.symlink(outside, s.team / "area3" / "l.md"),
        "a folder moved into team/": lambda: _moved_folder(s),
        "the allowlist, same size, same mtime": lambda: _same_size_same_mtime(allow, b"[1]"),
        "the allowlist under a new inode": lambda: _renamed_in(allow),
        "a new allowlist in the memory dir": lambda: (s.memdir / "allowlist.json").write_text("[]"),
        "teamsync.yaml, same size, same mtime": lambda: _same_size_same_mtime(
            config, b"backend: gix\n"
        ),
        "the Claude Code settings": lambda: claude.write_text('{"disableAllHooks": true}\n'),
        "the git hook, same size, same mtime": lambda: _same_size_same_mtime(
            hook, hook.read_bytes().replace(b"exit 0", b"exit 1")
        ),
        "core.hooksPath set": lambda: git(s.project, "config", "core.hooksPath", "/dev/null"),
    }


def _moved_folder(s: Session) -> None:
    folder = s.root / "staged"
    folder.mkdir()
    (folder / "x.md").write_text(TOKEN + "\n")
    old = time.time() - 100
    os.utime(folder / "x.md", (old, old))
    os.rename(folder, s.team / "staged")


class _Dummy:
    """Stands for a session where only the names of the changes are wanted."""

    team = memdir = project = root = home = Path("/nonexistent")


def _change_names() -> list[str]:
    return list(_changes(_Dummy()))  # type: ignore[arg-type]


@pytest.mark.parametrize("change", _change_names())
def test_the_fast_post_never_says_unchanged_after_a_change(session: Session, change: str) -> None:
    text = session.payload("python3 tools/note.py")
    assert session.fast("PreToolUse", text)  # the cache holds: the snapshot is the fast one
    _changes(session)[change]()
    assert not session.fast("PostToolUse", text)
    assert not session.fast("PostToolUseFailure", text)
    messages = session.full_post(text)  # the full check, handed the same call, acts
    if change not in ("a memory replaced under a new inode, same bytes and mtime",
                      "a memory's mode changed", "the allowlist under a new inode"):  # fmt: skip
        assert messages, change
        assert TOKEN not in " ".join(messages)


def test_an_unchanged_call_is_answered_fast_and_kept_as_the_full_check_keeps_it(
    session: Session,
) -> None:
    state = session.settings().state_dir / "guard"
    for _ in range(3):
        text = session.payload("make -j2")
        assert session.fast("PreToolUse", text)
        assert list((state / "pending").glob("*.json"))
        assert session.fast("PostToolUse", text)
        assert not list((state / "pending").glob("*.json"))
        assert float((state / "sess.last").read_text()) <= time.time()
    # and the full check, on the same state, finds nothing either
    text = session.payload("make -j2")
    assert session.fast("PreToolUse", text)
    assert session.full_post(text) == []


def test_a_call_the_pre_step_never_saw_goes_to_the_full_check(session: Session) -> None:
    text = session.payload("make")
    assert not session.fast("PostToolUse", text)  # no snapshot of this call
    first, second = session.payload("make"), session.payload("make")
    assert session.fast("PreToolUse", first) and session.fast("PreToolUse", second)
    assert not session.fast("PostToolUse", second)  # an earlier call was never checked


def test_a_process_left_running_is_seen_from_the_last_check(session: Session) -> None:
    """A write between two calls (after the last check, before this snapshot)."""
    text = session.payload("make")
    assert session.fast("PreToolUse", text) and session.fast("PostToolUse", text)
    (session.team / "bg.md").write_text(TOKEN + "\n")
    text = session.payload("make")
    assert session.fast("PreToolUse", text)
    assert not session.fast("PostToolUse", text)
    assert session.full_post(text)


# --- the cache ---


def _fresh(s: Session, text: str) -> tuple[list[str], list[list[Any]]]:
    payload = json.loads(text)
    places = resolve(s.settings(), payload)
    return [str(t) for t in places.teams], [[g.path, g.kind] for g in guarded_files(places)]


def _entry(s: Session, text: str) -> dict[str, Any] | None:
    state = _fastpath.state_dir(s.environ())
    assert state is not None
    return _fastpath.lookup(
        state, _fastpath.cache_key(s.environ(), json.loads(text), str(s.project))
    )


def _layout_changes(s: Session) -> dict[str, Any]:
    sub = s.project / "sub"
    return {
        "a .git made in the cwd": lambda: git(sub, "init", "-q", "."),
        "team/ becomes a link to another team": lambda: (
            s.team.rename(s.root / "elsewhere"),
            os.symlink(s.root / "elsewhere", s.team),
        ),
        "a settings file without teamsync's hooks": lambda: (
            s.project / ".claude" / "settings.json"
        ).write_text("{}\n"),
        "the git hook no longer teamsync's": lambda: (
            s.project / ".git" / "hooks" / "pre-commit"
        ).write_text("#!/bin/sh\n"),
        "a user settings file with teamsync's hooks": lambda: (
            (s.home / ".claude").mkdir(exist_ok=True),
            (s.home / ".claude" / "settings.json").write_text('{"x": "teamsync"}'),
        ),
        "the trusted copies' index removed": lambda: (
            s.settings().state_dir / "guard" / "trusted" / "index.json"
        ).unlink(),
    }


@pytest.mark.parametrize("change", list(_layout_changes(_Dummy())))  # type: ignore[arg-type]
def test_a_cache_entry_is_used_only_while_it_gives_what_a_fresh_resolution_gives(
    session: Session, change: str
) -> None:
    text = session.payload("ls", cwd=session.project / "sub")
    assert session.full_pre(text) is None and session.full_post(text) == []
    entry = _entry(session, text)
    assert entry is not None
    teams, guarded = _fresh(session, text)
    assert entry["teams"] == teams and sorted(entry["guarded"]) == sorted(p for p, _ in guarded)
    _layout_changes(session)[change]()
    entry = _entry(session, text)
    teams, guarded = _fresh(session, text)
    if entry is not None:  # still used: then it must be what the full guard computes
        assert entry["teams"] == teams, change
        assert sorted(entry["guarded"]) == sorted(p for p, _ in guarded), change
        assert not session.fast("PreToolUse", text) or all(
            _fastpath.file_stamp(p) == v[0] for p, v in entry["guarded"].items()
        )
    # the full guard then writes an entry that holds again
    assert session.full_pre(text) is None
    session.full_post(text)
    again = _entry(session, text)
    if again is not None:
        assert again["teams"] == _fresh(session, text)[0]


def test_a_broken_cache_hands_over(session: Session) -> None:
    cache = session.settings().state_dir / "guard" / _fastpath.CACHE_NAME
    for broken in ["", "{", '{"v": 1, "entries": [{"key": 1}]}', "[]", '{"v": 99}', "\x00"]:
        cache.write_text(broken)
        assert not session.fast("PreToolUse", session.payload())
    cache.unlink()
    assert not session.fast("PreToolUse", session.payload())


def test_other_tools_and_odd_payloads_hand_over() -> None:
    env, cwd = {"HOME": "/nonexistent"}, "/tmp"
    for text in ["", "{", "[]", '{"tool_name": "Write", "tool_input": {}}',
                 '{"tool_name": "Edit", "tool_input": {}}', '{"tool_name": "Bash"}',
                 '{"tool_name": "Bash", "tool_input": {"command": 3}}',
                 '\ufeff{"tool_name": "Bash", "tool_input": {"command": "ls"}}',
                 '{"tool_name": "Bash", "tool_input": {"command": "ls"}} x']:  # fmt: skip
        assert not _fastpath.answer("PreToolUse", text, env, cwd), text
        assert not _fastpath.answer("PostToolUse", text, env, cwd) or "Read" in text
    read = '{"tool_name": "Read", "tool_input": {"file_path": "/x"}}'
    assert _fastpath.answer("PreToolUse", read, env, cwd) and _fastpath.answer(
        "PostToolUse", read, env, cwd
    )


def test_the_json_reader_and_writer_agree_with_json() -> None:
    for value in [{"a": [1, 2.5, None, True, 'x\u00e9\n"\\']}, [], {}, "s", 0, -3, 1e100]:
        text = json.dumps(value)
        assert _fastpath.loads(text) == value
        assert json.loads(_fastpath.dumps(value)) == value
    for bad in ["", " ", "{", "[1,]", "1 2", "{'a': 1}", "NaNx"]:
        with pytest.raises(ValueError):
            _fastpath.loads(bad)


# --- the real command ---


def _run(entry: list[str], text: str, env: dict[str, str], cwd: Path,
         *, importtime: bool = False) -> subprocess.CompletedProcess[str]:  # fmt: skip
    cmd = [sys.executable, "-I", "-S", *(["-X", "importtime"] if importtime else []), *entry]
    return subprocess.run(cmd, input=text, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip


@pytest.fixture
def real(tmp_path: Path) -> Session:
    """A session settled for a real process (2 s of ctime slack)."""
    return Session(tmp_path, wait=CTIME_WAIT)


def test_the_installed_command_answers_a_quiet_call_without_teamsync(real: Session) -> None:
    session = real
    env = session.environ()
    pre, post = [hook_entry(), "guard"], [hook_entry(), "guard", "--event", "PostToolUse"]
    warmup = session.payload("ls")
    assert _run(pre, warmup, env, session.project).stdout == ""
    assert _run(post, warmup, env, session.project).stdout == ""
    text = session.payload("pytest -q tests/ && git status --short")
    for step in (pre, post):
        proc = _run(step, text, env, session.project, importtime=True)
        assert proc.returncode == 0 and proc.stdout == ""
        imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()]
        assert "os" in imported and "_json" in imported
        for heavy in ("teamsync", "json", "re", "typing", "pathlib", "dataclasses", "shlex"):
            assert heavy not in imported, (step, heavy)


def test_the_installed_command_still_catches_a_secret_written_by_a_script(
    real: Session,
) -> None:
    session = real
    env = session.environ()
    script = session.project / "tools" / "note.py"
    script.parent.mkdir()
    target = session.team / "area0" / "fresh.md"
    script.write_text(f"open({str(target)!r}, 'w').write({TOKEN[:9]!r} + {TOKEN[9:]!r})\n")
    pre, post = [hook_entry(), "guard"], [hook_entry(), "guard", "--event", "PostToolUse"]
    warmup = session.payload("ls")  # the first call is a full one: it writes the cache
    assert _run(pre, warmup, env, session.project).stdout == ""
    assert _run(post, warmup, env, session.project).stdout == ""
    text = session.payload("python3 tools/note.py")
    proc = _run(pre, text, env, session.project, importtime=True)
    assert proc.stdout == "" and "teamsync.hooks.guard" not in proc.stderr  # the fast path
    subprocess.run(["python3", "tools/note.py"], cwd=session.project, check=True)
    proc = _run(post, text, env, session.project)
    answer = json.loads(proc.stdout)
    assert answer["decision"] == "block" and "quarantine" in answer["reason"]
    assert TOKEN not in proc.stdout and TOKEN not in proc.stderr
    assert not target.exists()


def test_the_console_script_takes_the_fast_path_too(real: Session) -> None:
    session = real
    teamsync = str(Path(sys.executable).parent / "teamsync")
    env = session.environ()
    text = session.payload("ls")
    proc = subprocess.run([teamsync, "guard"], input=text, env=env, cwd=session.project,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == ""
    assert list((session.settings().state_dir / "guard" / "pending").glob("*.json"))
    proc = subprocess.run([teamsync, "guard", "--event", "PostToolUse"], input=text, env=env,
                          cwd=session.project, capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == ""
    assert not list((session.settings().state_dir / "guard" / "pending").glob("*.json"))
