"""Issue 23, "What was seen", each payload as a test: denied before, or caught after.

Every Bash shape runs for real: the PreToolUse hook (``run_event``, the code the
``teamsync guard`` console script runs), then ``bash -c`` when it allowed the call,
then the PostToolUse hook. Each ends with no secret in ``team/`` and, where the
model was not stopped before, with Claude Code's blocking PostToolUse answer
naming the rule, never the secret.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from teamsync.commands.guard import run_event
from teamsync.config import Settings
from teamsync.memdir.paths import memory_dir
from testing.hooks import SessionPlaces, fake_github_token, git, make_repo, run_teamsync

TOKEN = fake_github_token(23)
HALF = len(TOKEN) // 2
A, B = TOKEN[:HALF], TOKEN[HALF:]
NO_HINTS = ("allow", "pragma", "baseline", "ignore", "bypass")


@dataclass
class Box(SessionPlaces):
    """One session: a project (no git), its Claude Code memory dir, a HOME."""

    root: Path
    home: Path
    project: Path
    memdir: Path

    def hook(self, event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        out, err = io.StringIO(), io.StringIO()
        assert run_event(self.settings(), event, io.StringIO(json.dumps(payload)), out, err) == 0
        return json.loads(out.getvalue()) if out.getvalue().strip() else None

    def secrets_in_team(self) -> list[str]:
        found = []
        for path in self.team.rglob("*"):
            if path.is_file() and not path.is_symlink():
                if TOKEN in path.read_bytes().decode("utf-8", "replace"):
                    found.append(str(path.relative_to(self.team)))
        return found


def make_box(tmp_path: Path) -> Box:
    home, project = tmp_path / "home", tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    home.mkdir()
    settings = Settings.build(environ={"HOME": str(home)}, cwd=project)
    memdir = memory_dir(settings)
    (memdir / "team").mkdir(parents=True)
    (memdir / "team" / "notes.md").write_text("registry notes\n", encoding="utf-8")
    return Box(tmp_path, home, project, memdir)


@pytest.fixture
def box(tmp_path: Path) -> Box:
    return make_box(tmp_path)


def bash_call(box: Box, command: str, cwd: Path | None = None, n: int = 0) -> tuple[str, str]:
    """Pre → bash -c → Post; returns (layer that caught it, the message the model got)."""
    here = cwd or box.project
    payload = {"session_id": "s", "tool_use_id": f"toolu_{n}", "cwd": str(here),
               "tool_name": "Bash", "tool_input": {"command": command}}  # fmt: skip
    pre = box.hook("PreToolUse", {**payload, "hook_event_name": "PreToolUse"})
    if pre is not None:
        return "denied", str(pre["hookSpecificOutput"]["permissionDecisionReason"])
    subprocess.run(["bash", "-c", command], cwd=here, env=box.environ(), capture_output=True,
                   timeout=30, check=False)  # fmt: skip
    post = box.hook("PostToolUse", {**payload, "hook_event_name": "PostToolUse"})
    if post is not None:
        assert post["decision"] == "block"
        return "caught", str(post["reason"])
    return "missed", ""


def octal(text: str) -> str:
    return "".join(f"\\{ord(c):03o}" for c in text)


def hexed(text: str) -> str:
    return "".join(f"\\x{ord(c):02x}" for c in text)


# (name, setup run before the call, the model's command); {T} is the team dir, {P} the project
SHAPES: list[tuple[str, str, str]] = [
    ("printf octal", "", f"printf '{octal(TOKEN)}\\n' > {{T}}/x.md"),
    ("echo -e hex", "", f"echo -e '{hexed(TOKEN[:3])}{TOKEN[3:]}' > {{T}}/x.md"),
    ("printf %s%s halves", "", f"printf '%s%s\\n' {A} {B} > {{T}}/x.md"),
    ("brace expansion", "", f"echo {{{{{A},}}}}{B} > {{T}}/x.md"),
    ("backslash-newline", "", f"echo {A}\\\n{B} > {{T}}/x.md"),
    ("heredoc <<\\EOF", "", f"cat > {{T}}/x.md <<\\EOF\ntoken {TOKEN}\nEOF"),
    ("sort -o", f"echo {TOKEN} > {{P}}/s.txt", "sort -o {T}/x.md s.txt"),
    ("uniq IN OUT", f"echo {TOKEN} > {{P}}/s.txt", "uniq s.txt {T}/x.md"),
    (
        "find -exec cp",
        f"echo {TOKEN} > {{P}}/s.txt",
        "find . -name s.txt -exec cp {{}} {T}/x.md \\;",
    ),
    ("xargs cp", f"echo {TOKEN} > {{P}}/s.txt", "echo s.txt | xargs -I@ cp @ {T}/x.md"),
    (
        "git checkout other work tree",
        f"git init -q {{P}}/o && mkdir -p {{P}}/o/team && echo {TOKEN} > {{P}}/o/team/x.md && "
        "git -C {P}/o add -A && git -C {P}/o -c user.name=t -c user.email=t@t commit -qm x",
        "git --git-dir={P}/o/.git --work-tree={T}/.. checkout -- team/x.md",
    ),
    (
        "git apply",
        f"printf -- '--- /dev/null\\n+++ b/team/x.md\\n@@ -0,0 +1 @@\\n+{TOKEN}\\n' > {{P}}/p.diff",
        "cd {T}/.. && git apply {P}/p.diff",
    ),
    (
        "patch",
        f"printf -- '--- /dev/null\\n+++ x.md\\n@@ -0,0 +1 @@\\n+{TOKEN}\\n' > {{P}}/p.diff",
        "patch -s -d {T} -p0 < p.diff",
    ),
    (
        "tar -x -C",
        f"mkdir -p {{P}}/t/team && echo {TOKEN} > {{P}}/t/team/x.md && tar -C {{P}}/t -cf {{P}}/a.tar team",
        "tar -x -C {T}/.. -f a.tar",
    ),
    ("perl open", "", f'perl -e \'open(F, ">{{T}}/x.md"); print F "{A}" . "{B}\\n"\''),
    ("cp -t", f"echo {TOKEN} > {{P}}/x.md", "cp -t {T} x.md"),
    ("mv -t", f"echo {TOKEN} > {{P}}/x.md", "mv -t {T} x.md"),
    ("install -t", f"echo {TOKEN} > {{P}}/x.md", "install -m 644 -t {T} x.md"),
    ("cp /dev/stdin", "", f"echo {TOKEN} | cp /dev/stdin {{T}}/x.md"),
    ("append then cp", "echo note > {P}/s.md", f"echo {TOKEN} >> s.md; cp s.md {{T}}/x.md"),
    ("cd -", "", f"cd {{T}} && cd /tmp && cd - >/dev/null && echo {TOKEN} > x.md"),
    ("CDPATH", "", f"CDPATH={{T}}/.. cd team >/dev/null && echo {TOKEN} > x.md"),
    ("pushd", "", f"pushd {{T}} >/dev/null && echo {TOKEN} > x.md"),
    ("HOME=…; cd", "", f"HOME={{T}}; cd; echo {TOKEN} > x.md"),
    ("symlink elsewhere", "ln -s {T} {P}/notes", f"echo {TOKEN} > notes/x.md"),
    ("hard link elsewhere", "ln {T}/notes.md {P}/n.md", f"echo {TOKEN} >> n.md"),
    ("command creating a link", "", f"ln -s {{T}} {{P}}/d && echo {TOKEN} > d/x.md"),
    ("python exec fromhex", "", "python3 -c \"exec(bytes.fromhex('{HEX}'))\""),
    ("awk print >", "", f'awk \'BEGIN {{{{ print "{A}" "{B}" > "{{T}}/x.md" }}}}\''),
    ("process substitution", "", f"echo {TOKEN} > >(cat > {{T}}/x.md); sleep 0.2"),
]


def _fill(text: str, box: Box) -> str:
    code = f"open({str(box.team / 'x.md')!r}, 'w').write({A!r} + {B!r})"
    return (
        text.replace("{T}", str(box.team))
        .replace("{P}", str(box.project))
        .replace("{HEX}", code.encode().hex())
        .replace("{{", "{")
        .replace("}}", "}")
    )


def test_the_thirty_shapes_are_listed() -> None:
    assert len(SHAPES) == 30 and len({name for name, _, _ in SHAPES}) == 30


@pytest.mark.parametrize(("name", "setup", "command"), SHAPES, ids=[s[0] for s in SHAPES])
def test_shell_write_shape_leaves_no_secret_in_team(
    box: Box, name: str, setup: str, command: str
) -> None:
    if setup:
        done = subprocess.run(["bash", "-c", _fill(setup, box)], cwd=box.project,
                              env=box.environ(), capture_output=True, text=True, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
    layer, message = bash_call(box, _fill(command, box))
    assert box.secrets_in_team() == []
    assert layer in ("denied", "caught"), f"{name}: {layer}"
    assert TOKEN not in message and A not in message and B not in message
    assert not any(word in message.lower() for word in NO_HINTS), message
    if layer == "caught":
        assert "github-pat" in message and "quarantine" in message
        quarantined = list((box.home / ".local" / "state" / "teamsync" / "quarantine").rglob("*"))
        assert any(p.is_file() or p.is_symlink() for p in quarantined)
    if name == "hard link elsewhere":  # the team file itself held the secret
        assert not (box.team / "notes.md").exists()


def test_a_clean_bash_write_is_left_alone(box: Box) -> None:
    layer, _ = bash_call(box, f"printf 'deploys run from CI\\n' > {box.team}/ci.md")
    assert layer == "missed"  # nothing to catch: the memory stays
    assert (box.team / "ci.md").read_text() == "deploys run from CI\n"


def test_post_without_a_snapshot_still_checks_recent_changes(box: Box) -> None:
    (box.team / "late.md").write_text(f"{TOKEN}\n", encoding="utf-8")
    post = box.hook("PostToolUse", {"session_id": "s", "tool_use_id": "toolu_none",
                                    "tool_name": "Bash", "tool_input": {"command": "true"},
                                    "cwd": str(box.project)})  # fmt: skip
    assert post is not None and "github-pat" in post["reason"]
    assert box.secrets_in_team() == []


def test_a_failed_call_is_checked_by_the_next_post(box: Box) -> None:
    payload = {"session_id": "s", "tool_use_id": "toolu_f", "cwd": str(box.project),
               "tool_name": "Bash", "tool_input": {"command": "make"}}  # fmt: skip
    assert box.hook("PreToolUse", payload) is None
    (box.team / "x.md").write_text(f"{TOKEN}\n", encoding="utf-8")  # then the tool fails
    later = {**payload, "tool_use_id": "toolu_g", "tool_input": {"command": "ls"}}
    assert box.hook("PreToolUse", later) is None
    post = box.hook("PostToolUse", later)
    assert post is not None and "github-pat" in post["reason"]
    assert box.secrets_in_team() == []


# --- 3. policy files -------------------------------------------------------------------


def _write(box: Box, path: Path | str, content: str, cwd: Path | None = None) -> str | None:
    payload = {"session_id": "s", "tool_use_id": "toolu_w", "cwd": str(cwd or box.project),
               "tool_name": "Write", "tool_input": {"file_path": str(path), "content": content}}  # fmt: skip
    pre = box.hook("PreToolUse", payload)
    return None if pre is None else str(pre["hookSpecificOutput"]["permissionDecisionReason"])


def _install_settings(box: Box) -> Path:
    path = box.project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": '
                    '"command", "command": "teamsync guard"}]}]}}\n', encoding="utf-8")  # fmt: skip
    return path


def test_policy_files_are_denied_by_write_and_by_echo(box: Box) -> None:
    yaml_path = box.memdir / "teamsync.yaml"
    yaml_path.write_text("version: 1\nbackend: git\n", encoding="utf-8")
    settings_path = _install_settings(box)
    before = {p: p.read_bytes() for p in (yaml_path, settings_path)}
    reasons = [
        _write(box, yaml_path, "version: 1\nbackend: git\nmass_change_share: 1\n"),
        bash_call(box, f"echo 'mass_change_share: 1' >> {yaml_path}", n=1)[1],
        _write(box, settings_path, "{}\n"),
        bash_call(box, f"echo '{{}}' > {settings_path}", n=2)[1],
    ]
    for reason in reasons:
        assert reason is not None and "kept by people" in reason
    assert {p: p.read_bytes() for p in before} == before


def test_a_policy_file_changed_anyway_is_put_back(box: Box) -> None:
    settings_path = _install_settings(box)
    original = settings_path.read_bytes()
    head, tail = str(settings_path).rsplit("settings", 1)
    code = f"p = '{head}set' + 'tings{tail}'; open(p, 'w').write('{{}}')"
    layer, message = bash_call(box, f'python3 -c "{code}"', n=3)
    assert layer == "caught" and "put back" in message
    assert settings_path.read_bytes() == original


# --- 4. the session's project, not cwd -------------------------------------------------


def test_cwd_in_a_subdirectory_still_guards_the_session_memory(box: Box) -> None:
    sub = box.project / "sub"
    reason = _write(box, box.team / "a.md", f"token {TOKEN}\n", cwd=sub)
    assert reason is not None and "github-pat" in reason
    layer, _ = bash_call(box, f"echo {TOKEN} > {box.team}/a.md", cwd=sub, n=4)
    assert layer in ("denied", "caught") and box.secrets_in_team() == []


def test_cwd_at_the_memory_dir_guards_a_relative_write(box: Box) -> None:
    reason = _write(box, "team/x.md", f"token {TOKEN}\n", cwd=box.memdir)
    assert reason is not None and "github-pat" in reason


# --- 5. Claude Code's own file-tool behaviours ----------------------------------------


def test_a_tilde_path_is_expanded_like_claude_code(box: Box) -> None:
    shown = "~/" + str((box.team / "x.md").relative_to(box.home))
    reason = _write(box, shown, f"token {TOKEN}\n")
    assert reason is not None and "github-pat" in reason


def test_an_edit_matching_through_curly_quotes_is_judged_as_applied(box: Box) -> None:
    (box.team / "notes.md").write_text(f"id {A}\u201cPLACEHOLDER\u201d end\n", encoding="utf-8")
    payload = {"session_id": "s", "tool_use_id": "toolu_e", "cwd": str(box.project),
               "tool_name": "Edit", "tool_input": {"file_path": str(box.team / "notes.md"),
                                                   "old_string": '"PLACEHOLDER"',
                                                   "new_string": B}}  # fmt: skip
    pre = box.hook("PreToolUse", payload)
    assert pre is not None and "github-pat" in pre["hookSpecificOutput"]["permissionDecisionReason"]
    missing = {**payload, "tool_input": {**payload["tool_input"], "old_string": "absent"}}
    pre = box.hook("PreToolUse", missing)
    assert pre is not None and "unknown" in pre["hookSpecificOutput"]["permissionDecisionReason"]


def test_a_write_to_a_hard_link_outside_team_is_a_team_write(box: Box) -> None:
    os.link(box.team / "notes.md", box.project / "n.md")
    reason = _write(box, box.project / "n.md", f"token {TOKEN}\n")
    assert reason is not None and "hard link to a team memory file" in reason


def test_post_checks_the_file_an_edit_actually_wrote(box: Box) -> None:
    (box.team / "x.md").write_text(f"{TOKEN}\n", encoding="utf-8")  # however it got there
    payload = {"session_id": "s", "tool_use_id": "toolu_p", "cwd": str(box.project),
               "tool_name": "Edit", "tool_input": {"file_path": str(box.team / "x.md"),
                                                   "old_string": "a", "new_string": "b"}}  # fmt: skip
    post = box.hook("PostToolUse", payload)
    assert post is not None and "github-pat" in post["reason"]
    assert box.secrets_in_team() == []


# --- 2. the allowlist chain, ending with push to a real bare git remote --------------------


def test_allowlist_chain_ends_with_the_memory_held_back(tmp_path: Path) -> None:
    from teamsync.security.secrets import scan_text

    project, _ = make_repo(tmp_path, "proj")
    home = tmp_path / "home"
    home.mkdir()
    remote = tmp_path / "memory.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    memdir = memory_dir(Settings.build(environ={"HOME": str(home)}, cwd=project))
    (memdir / "team").mkdir(parents=True)
    box = Box(tmp_path, home, project, memdir)
    env = {**os.environ, **box.environ(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    assert run_teamsync(["init", "--git", str(remote)], cwd=project, env=env).returncode == 0
    content = f"fixture {TOKEN}\n"
    [finding] = scan_text(content, "x.md")
    # 1. the Write of a memory with a token is denied
    assert "github-pat" in (_write(box, box.team / "x.md", content) or "")
    # 2. the model's `allow`, however quoted, is denied; its allowlist write is put back
    reason = bash_call(box, f"teams''ync al''low {finding.fingerprint} --reason 'a fixture'")[1]
    assert "kept by people" in reason
    allowlist = project / ".teamsync" / "allowlist.json"
    doc = json.dumps({"version": 1, "fingerprints": [{"fingerprint": finding.fingerprint,
                                                      "reason": "fixture"}]})  # fmt: skip
    code = (f"import os; p = os.path.join('.teams' + 'ync', 'allow' + 'list.json'); "
            f"os.makedirs(os.path.dirname(p), exist_ok=True); open(p, 'w').write({doc!r})")  # fmt: skip
    layer, message = bash_call(box, f'python3 -c "{code}"', n=5)
    assert layer == "caught" and "allowlist" in message and not allowlist.exists()
    # 3. even with the allowlist in the work tree (written outside any hook), uncommitted:
    allowlist.parent.mkdir(exist_ok=True)
    allowlist.write_text(doc, encoding="utf-8")
    assert "github-pat" in (_write(box, box.team / "x.md", content) or "")
    (box.team / "x.md").write_text(content, encoding="utf-8")  # past every hook
    pushed = run_teamsync(["--json", "push"], cwd=project, env=env)
    assert pushed.returncode == 1, pushed.stdout + pushed.stderr
    assert [h["key"] for h in json.loads(pushed.stdout)["held_back"]] == ["x.md"]
    history = subprocess.run(["git", "--git-dir", str(remote), "log", "--all", "-p"],
                             capture_output=True, text=True, check=False).stdout  # fmt: skip
    assert TOKEN not in history
    # once committed (reviewed), the same entry counts
    git(project, "add", ".teamsync/allowlist.json")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "allowlist")
    assert _write(box, box.team / "x.md", content) is None
    assert run_teamsync(["push"], cwd=project, env=env).returncode == 0


# --- the server side: teamsync pre-receive ----------------------------------------------


def test_pre_receive_reads_the_allowlist_from_the_protected_branch(tmp_path: Path) -> None:
    from teamsync.security.secrets import scan_text
    from testing.hooks import teamsync_bin

    work, server = make_repo(tmp_path, "srv")
    hook = server / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\nexec {teamsync_bin()} pre-receive --branch teamsync/memory\n")
    hook.chmod(0o755)
    git(work, "switch", "-q", "--orphan", "teamsync/memory")
    (work / "x.md").write_text(f"fixture {A}\nand {B}\n", encoding="utf-8")
    git(work, "add", "x.md")
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "clean")
    assert subprocess.run(["git", "-C", str(work), "push", "-q", "origin", "teamsync/memory"],
                          capture_output=True, check=False).returncode == 0  # fmt: skip
    (work / "x.md").write_text(f"fixture {TOKEN}\n", encoding="utf-8")
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "token")
    [finding] = scan_text(f"fixture {TOKEN}\n", "x.md")
    doc = json.dumps({"version": 1, "fingerprints": [{"fingerprint": finding.fingerprint,
                                                      "reason": "fixture"}]})  # fmt: skip
    (work / ".teamsync").mkdir()
    (work / ".teamsync" / "allowlist.json").write_text(doc)  # the pusher's own allowlist
    git(work, "add", ".teamsync")
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "self-allow")
    refused = subprocess.run(["git", "-C", str(work), "push", "origin", "teamsync/memory"],
                             capture_output=True, text=True, check=False)  # fmt: skip
    assert refused.returncode != 0 and "github-pat" in refused.stderr
    assert TOKEN not in refused.stderr
    # the CI job on the memory branch: the same check, the push range on stdin
    before = git(work, "rev-parse", "origin/teamsync/memory")
    line = f"{before} {git(work, 'rev-parse', 'HEAD')} refs/heads/teamsync/memory\n"
    ci = run_teamsync(["pre-receive", "--allowlist-ref", "main"], cwd=work, input=line)
    assert ci.returncode == 1 and "github-pat" in ci.stderr and TOKEN not in ci.stderr
    # reviewed and merged into the protected default branch: then it counts
    git(work, "switch", "-q", "main")
    (work / ".teamsync").mkdir(exist_ok=True)
    (work / ".teamsync" / "allowlist.json").write_text(doc)
    git(work, "add", ".teamsync")
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "reviewed")
    git(work, "push", "-q", "origin", "main")
    ci = run_teamsync(["pre-receive", "--allowlist-ref", "main"], cwd=work, input=line)
    assert ci.returncode == 0, ci.stderr
    accepted = subprocess.run(["git", "-C", str(work), "push", "origin", "teamsync/memory"],
                              capture_output=True, text=True, check=False)  # fmt: skip
    assert accepted.returncode == 0, accepted.stderr


def test_the_guard_imports_stay_light_on_post(box: Box) -> None:
    code = (
        "import io, json, sys; from teamsync.commands.guard import run_event; "
        "from teamsync.config import Settings; "
        f"p = json.dumps({{'tool_name': 'Bash', 'session_id': 's', 'tool_use_id': 't', "
        f"'tool_input': {{'command': 'ls'}}, 'cwd': {str(box.project)!r}}}); "
        "s = Settings.build(); "
        "run_event(s, 'PreToolUse', io.StringIO(p), io.StringIO(), io.StringIO()); "
        "run_event(s, 'PostToolUse', io.StringIO(p), io.StringIO(), io.StringIO()); "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('yaml', 'git', 'httpx2', 'anthropic', 'detect_secrets', 'click', 'hashlib'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **box.environ()},
                          cwd=box.project, capture_output=True, text=True, check=True)  # fmt: skip
    assert json.loads(done.stdout) == []


def test_a_directory_prepared_earlier_and_moved_in_whole_is_checked(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from teamsync.hooks import verify

    monkeypatch.setattr(verify, "CTIME_SLACK_S", 0.0)  # its files' ctime predates the call
    (box.project / "prep" / "sub").mkdir(parents=True)
    (box.project / "prep" / "sub" / "x.md").write_text(f"{TOKEN}\n", encoding="utf-8")
    time.sleep(0.05)
    code = f"import os; os.rename({str(box.project / 'prep')!r}, {str(box.team / 'prep')!r})"
    layer, message = bash_call(box, f"python3 -c \"exec(bytes.fromhex('{code.encode().hex()}'))\"")
    assert layer == "caught" and "github-pat" in message  # the check after saw it
    assert box.secrets_in_team() == []


def test_orphaned_snapshots_cost_one_pass_and_still_put_policy_back(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    from teamsync.hooks import verify

    settings_path = _install_settings(box)
    original = settings_path.read_bytes()
    base = {"session_id": "s", "cwd": str(box.project), "tool_name": "Bash"}
    for n in range(20):  # twenty calls whose PostToolUse never came (the tool failed)
        assert box.hook("PreToolUse", {**base, "tool_use_id": f"o{n}",
                                       "tool_input": {"command": "make"}}) is None  # fmt: skip
        if n == 3:
            settings_path.write_text("{}\n", encoding="utf-8")  # during a failed call
    walks: list[str] = []
    real_walk = verify.walk
    monkeypatch.setattr(verify, "walk", lambda team: walks.append(team) or real_walk(team))
    post = box.hook(
        "PostToolUse", {**base, "tool_use_id": "o19", "tool_input": {"command": "make"}}
    )
    assert post is not None and "put back" in post["reason"]
    assert settings_path.read_bytes() == original
    assert len(walks) == len(set(walks))  # each team directory walked once, not once per snapshot


def test_a_write_between_calls_is_caught_by_the_next_check(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from teamsync.hooks import verify

    monkeypatch.setattr(verify, "CTIME_SLACK_S", 0.0)
    assert bash_call(box, "true", n=30)[0] == "missed"
    (box.team / "later.md").write_text(f"{TOKEN}\n", encoding="utf-8")  # a process left running
    time.sleep(0.05)
    layer, message = bash_call(box, "true", n=31)
    assert layer == "caught" and "later.md" in message and box.secrets_in_team() == []


# --- core.hooksPath: where git looks for the pre-commit gate ---------------------------


def _git_box(box: Box, hooks_path: str | None = None) -> Box:
    """The project as a git repository with teamsync's git hooks installed for real
    (in ``hooks_path`` when a person set ``core.hooksPath`` first)."""
    env = {**box.environ(), "GIT_CONFIG_NOSYSTEM": "1"}
    git(box.project, "init", "-q", env=env)
    git(box.project, "config", "user.email", "t@example.com", env=env)
    git(box.project, "config", "user.name", "t", env=env)
    if hooks_path is not None:
        git(box.project, "config", "core.hooksPath", hooks_path, env=env)
    done = run_teamsync(["install-hooks"], cwd=box.project, env=env)
    assert done.returncode == 0, done.stderr
    return box


def _hooks_path(box: Box) -> str | None:
    return git(box.project, "config", "--get", "core.hooksPath", env=box.environ(), check=False)


def _commit_with_token_refused(box: Box) -> bool:
    (box.project / "leak.txt").write_text(f"token {TOKEN}\n", encoding="utf-8")
    env = box.environ()
    git(box.project, "add", "leak.txt", env=env)
    proc = subprocess.run(["git", "commit", "-qm", "leak"], cwd=box.project, env=env,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    return proc.returncode != 0 and "github" in (proc.stdout + proc.stderr).lower()


def test_setting_core_hooks_path_is_denied_before(box: Box) -> None:
    _git_box(box)
    for n, command in enumerate(
        ["git config core.hooksPath /dev/null", "git config --unset core.hooks''Path"]
    ):
        layer, message = bash_call(box, command, n=n)
        assert layer == "denied" and "core.hooksPath" in message and "kept by people" in message
    assert bash_call(box, "git config --get core.hooksPath", n=9)[0] == "missed"  # a read
    assert bash_call(box, "grep -rn hooksPath . || true", n=8)[0] == "missed"  # a mention
    assert _hooks_path(box) in (None, "")


def test_a_hooks_path_set_past_the_filter_is_put_back_and_the_gate_holds(box: Box) -> None:
    _git_box(box)
    layer, message = bash_call(box, "k=core.hooks; git config ${k}Path /tmp/no-hooks", n=1)
    assert layer == "caught" and "core.hooksPath" in message and "unset again" in message
    assert _hooks_path(box) in (None, "")
    assert _commit_with_token_refused(box)


def test_an_edit_of_git_config_keeps_the_unrelated_change(box: Box) -> None:
    """The model edits .git/config by hand: the hooksPath line it added goes, the remote
    it added in the same call (a legitimate, unrelated change) stays."""
    _git_box(box)
    config = box.project / ".git" / "config"
    code = f"open('{config}', 'a').write('[core]\\n\\thooks' + 'Path = /tmp/elsewhere\\n')"
    command = f'git remote add other /tmp/other.git && python3 -c "{code}"'
    layer, message = bash_call(box, command, n=2)
    assert layer == "caught" and "put back core.hooksPath" in message
    assert _hooks_path(box) in (None, "")
    env = box.environ()
    assert git(box.project, "config", "--get", "remote.other.url", env=env) == "/tmp/other.git"


def test_an_unset_hooks_path_is_set_back(box: Box) -> None:
    """teamsync's hooks live in the person's core.hooksPath directory; unsetting it
    sends git back to .git/hooks, where no gate is. It is set back."""
    _git_box(box, hooks_path=".githooks")
    assert "teamsync-managed-hook" in (box.project / ".githooks" / "pre-commit").read_text()
    layer, message = bash_call(box, "git config --unset core.$(echo hooks)Path", n=3)
    assert layer == "caught" and "`.githooks` again" in message
    assert _hooks_path(box) == ".githooks"
    assert _commit_with_token_refused(box)


def test_a_removed_pre_commit_hook_is_put_back(box: Box) -> None:
    for n, (hooks_path, where) in enumerate([(None, ".git/hooks"), (".githooks", ".githooks")]):
        project = box.project
        if n:
            subprocess.run(["rm", "-rf", str(project / ".git")], check=True)
        _git_box(box, hooks_path)
        hook = project / where / "pre-commit"
        original = hook.read_bytes()
        layer, message = bash_call(box, f"rm -f {hook}", n=10 + n)
        assert layer == "caught" and "put back" in message
        assert hook.read_bytes() == original and os.access(hook, os.X_OK)


def test_a_persons_hooks_path_change_between_calls_stands(box: Box) -> None:
    _git_box(box)
    assert bash_call(box, "true", n=1)[0] == "missed"
    git(box.project, "config", "core.hooksPath", ".git/hooks", env=box.environ())  # the person
    assert bash_call(box, "git status --short", n=2) == ("missed", "")
    assert _hooks_path(box) == ".git/hooks"


def test_a_failed_bash_call_is_checked_at_once_on_post_tool_use_failure(box: Box) -> None:
    """Claude Code sends PostToolUseFailure, not PostToolUse, when the command fails: a
    write made before the failure is quarantined then, and the model told in the
    event's additionalContext."""
    command = f"printf '%s%s\\n' {A} {B} > {box.team}/x.md; exit 3"
    payload = {"session_id": "s", "tool_use_id": "toolu_f", "cwd": str(box.project),
               "tool_name": "Bash", "tool_input": {"command": command}}  # fmt: skip
    assert box.hook("PreToolUse", payload) is None
    proc = subprocess.run(["bash", "-c", command], cwd=box.project, env=box.environ(),
                          capture_output=True, timeout=30, check=False)  # fmt: skip
    assert proc.returncode == 3 and box.secrets_in_team() == ["x.md"]
    failure = {**payload, "hook_event_name": "PostToolUseFailure",
               "error": "Command exited with non-zero status code 3", "is_interrupt": False}  # fmt: skip
    answer = box.hook("PostToolUseFailure", failure)
    assert answer is not None
    context = answer["hookSpecificOutput"]
    assert context["hookEventName"] == "PostToolUseFailure"
    assert "quarantine" in context["additionalContext"] and TOKEN not in json.dumps(answer)
    assert box.secrets_in_team() == []
    assert box.hook("PostToolUseFailure", {**failure, "tool_use_id": "toolu_g"}) is None


def test_post_tool_use_failure_runs_through_the_console_script(box: Box) -> None:
    """The click-free fast path takes the event too (what the settings file runs)."""
    payload = {"session_id": "s2", "tool_use_id": "toolu_h", "cwd": str(box.project),
               "tool_name": "Bash", "tool_input": {"command": "false"},
               "error": "exit 1"}  # fmt: skip
    done = run_teamsync(["guard", "--event", "PostToolUseFailure"], cwd=box.project,
                        input=json.dumps(payload), env=box.environ())  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "", done.stderr
