"""The hook applies the one write policy, fails closed, judges Bash, and never hints at a bypass."""

from __future__ import annotations

import io
import json
import random
import string
from pathlib import Path

import pytest

from teamsync.config import Settings
from teamsync.hooks import guard as hook
from teamsync.security.allowlist import Entry, save_entries
from teamsync.security.guard import write_problem
from testing.hooks import decision, fake_github_token, run_teamsync

TOKEN = fake_github_token(21)


def _password(seed: int) -> str:
    rng = random.Random(seed)
    return "Qz7" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(11))


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    memdir = tmp_path / "memory"
    (memdir / "team").mkdir(parents=True)
    (memdir / "team" / "notes.md").write_text("notes\n", encoding="utf-8")
    return memdir


def run(memdir: Path, payload: dict[str, object] | str, **env: str) -> str | None:
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    settings = Settings.build(
        dir=str(memdir), environ={"HOME": str(memdir.parent), **env}, cwd=memdir.parent
    )
    out, err = io.StringIO(), io.StringIO()
    assert hook.run_guard(settings, io.StringIO(raw), out, err) == 0
    verdict = decision(out.getvalue())
    return None if verdict is None else str(verdict["permissionDecisionReason"])


def write(cwd: Path, path: str, content: str) -> dict[str, object]:
    return {
        "cwd": str(cwd),
        "tool_name": "Write",
        "tool_input": {"file_path": path, "content": content},
    }


def bash(cwd: Path, command: str) -> dict[str, object]:
    return {"cwd": str(cwd), "tool_name": "Bash", "tool_input": {"command": command}}


NO_BYPASS_WORDS = ("allow", "pragma", "baseline", "ignore")


def assert_no_bypass_hint(reason: str) -> None:
    lowered = reason.lower()
    assert not any(word in lowered for word in NO_BYPASS_WORDS), reason
    assert TOKEN not in reason


# --- inline allow comments do not open the gate ----------------------------------------


@pytest.mark.parametrize(
    "pragma",
    [
        "<!-- teamsync: allow -->",
        "# pragma: allowlist secret",
        "<!-- teamsync: allow-next-line -->",
    ],
)
def test_inline_allow_comment_is_refused_at_the_hook(memdir: Path, pragma: str) -> None:
    line = f"token: {TOKEN} {pragma}" if "next" not in pragma else f"{pragma}\ntoken: {TOKEN}"
    reason = run(memdir, write(memdir, str(memdir / "team" / "x.md"), line + "\n"))
    assert reason is not None and "github-pat" in reason
    assert "secret manager" in reason
    assert_no_bypass_hint(reason)


def test_reviewed_allowlist_is_honoured_by_the_hook(memdir: Path) -> None:
    content = f"token: {TOKEN}\n"
    problem = write_problem("x.md", content)
    assert problem is not None
    from teamsync.security.secrets import scan_text

    fp = scan_text(content, "x.md")[0].fingerprint
    save_entries(memdir / "allowlist.json", [Entry(fp, "test fixture, revoked", rule="github-pat")])
    assert run(memdir, write(memdir, str(memdir / "team" / "x.md"), content)) is None


def test_the_model_cannot_write_the_allowlist(memdir: Path) -> None:
    reason = run(memdir, write(memdir, str(memdir / "allowlist.json"), '{"version": 1}'))
    assert reason is not None and "kept by people" in reason
    reason = run(memdir, bash(memdir, "echo '{}' > allowlist.json"))
    assert reason is not None and "kept by people" in reason
    reason = run(memdir, bash(memdir, "teamsync allow 0123abcd --reason 'not a secret'"))
    assert reason is not None and "kept by people" in reason


# --- fail closed -------------------------------------------------------------------------


def test_internal_error_with_a_relative_path_is_a_deny(
    memdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(hook, "classify", broken)
    reason = run(memdir, write(memdir, "team/x.md", "hello\n"))
    assert reason is not None and "internal error (RuntimeError)" in reason
    assert len(reason.splitlines()) == 1


def test_running_past_the_budget_is_a_deny(memdir: Path) -> None:
    payload = write(memdir, "team/x.md", "hello\n" * 1000)
    reason = run(memdir, payload, TEAMSYNC_GUARD_BUDGET="0.000001")
    assert reason is not None and "budget" in reason


def test_off_the_main_thread_the_guard_still_judges_and_leaves_sigalrm_alone(
    memdir: Path,
) -> None:
    import signal
    import threading

    before = signal.getsignal(signal.SIGALRM)
    reasons: dict[str, str | None] = {}

    def judge() -> None:  # no budget timer can be set here; the verdicts must not change
        reasons["secret"] = run(memdir, write(memdir, "team/x.md", f"token {TOKEN}\n"))
        reasons["clean"] = run(memdir, write(memdir, "team/x.md", "hello\n"))

    thread = threading.Thread(target=judge)
    thread.start()
    thread.join(timeout=60)
    assert reasons["secret"] is not None and "github-pat" in reasons["secret"]
    assert reasons["clean"] is None
    assert signal.getsignal(signal.SIGALRM) is before


@pytest.mark.parametrize(
    "raw",
    [
        '{"tool_name": "Write", "tool_input": {"file_path": "team/x.md", "content": ',
        '["Write", "team/x.md"]',
        '{"tool_name": "Edit", "tool_input": "team/x.md"}',
        '{"tool_name": "NotebookEdit", "cwd": "/x/memory", "tool_input": {}}',
    ],
)
def test_unreadable_payloads_aimed_at_memory_are_denied(memdir: Path, raw: str) -> None:
    reason = run(memdir, raw)
    assert reason is not None and len(reason.splitlines()) == 1


# --- the two divergences from the library guard -----------------------------------------


def test_team_dot_md_is_refused_by_hook_and_library(memdir: Path) -> None:
    assert write_problem(".md", "hello\n") is not None
    reason = run(memdir, write(memdir, "team/.md", "hello\n"))
    assert reason is not None and "not a memory file" in reason


def test_lone_surrogate_is_refused_by_hook_and_library(memdir: Path) -> None:
    assert write_problem("x.md", "bad \udc80\n") is not None
    head = json.dumps({"cwd": str(memdir), "tool_name": "Write"})[:-1]
    raw = head + ', "tool_input": {"file_path": "team/x.md", '
    reason = run(memdir, raw + '"content": "bad \\udc80"}}')
    assert reason is not None and "surrogate" in reason


def test_secret_in_the_file_name_is_refused_and_not_repeated(memdir: Path) -> None:
    reason = run(memdir, write(memdir, f"team/{TOKEN}.md", "hello\n"))
    assert reason is not None and "github-pat" in reason and TOKEN not in reason
    assert not (memdir / "team" / f"{TOKEN}.md").exists()


def test_notebook_edit_into_team_memory_is_refused(memdir: Path) -> None:
    payload = {
        "cwd": str(memdir),
        "tool_name": "NotebookEdit",
        "tool_input": {"notebook_path": str(memdir / "team" / "n.ipynb"), "new_source": "x"},
    }
    assert run(memdir, payload) is not None


# --- Bash --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo token: {TOKEN} > team/x.md",
        "echo token: {TOKEN} >> team/notes.md",
        "printf 'token: {TOKEN}' > team/x.md",
        "echo token: {TOKEN} | tee team/x.md",
        "echo token: {TOKEN} | tee -a team/notes.md >/dev/null",
        "cat > team/x.md <<'EOF'\nline one\ntoken: {TOKEN}\nEOF",
        "cat <<EOF > team/x.md\ntoken: {TOKEN}\nEOF",
        "cp /tmp/h12-src.md team/x.md",
        "mv /tmp/h12-src.md team/",
        "cd team && echo token: {TOKEN} > x.md",
    ],
)
def test_bash_redirects_into_team_memory_are_judged(
    memdir: Path, tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src.md"
    source.write_text(f"token: {TOKEN}\n", encoding="utf-8")
    command = command.replace("/tmp/h12-src.md", str(source)).replace("{TOKEN}", TOKEN)
    reason = run(memdir, bash(memdir, command))
    assert reason is not None and "github-pat" in reason, command
    assert_no_bypass_hint(reason)


@pytest.mark.parametrize(
    "command",
    [
        'echo "$TOKEN" > team/x.md',
        "curl -s https://example.invalid/notes > team/x.md",
        "python3 make_notes.py team/x.md",
        "echo hi > team/$NAME.md",
        "sed -i s/a/b/ team/notes.md",
        "dd if=/dev/zero of=team/x.md",
        "python3 -c \"open('team/x.md', 'w').write('hi')\"",
        "python3 - <<'EOF'\nopen('team/x.md', 'w').write('hi')\nEOF",
    ],
)
def test_bash_writes_the_guard_cannot_see_are_refused(memdir: Path, command: str) -> None:
    reason = run(memdir, bash(memdir, command))
    assert reason is not None and "cannot see" in reason, command


@pytest.mark.parametrize(
    "command",
    [
        "echo 'deploys run from CI' > team/deploys.md",
        "cat team/notes.md | grep notes",
        "ls -la team && git status",
        "rm team/notes.md",
        "echo {TOKEN} > /tmp/elsewhere.txt",
        "pytest -q tests/",
    ],
)
def test_bash_clean_or_unrelated_commands_pass(memdir: Path, command: str) -> None:
    assert run(memdir, bash(memdir, command.replace("{TOKEN}", TOKEN))) is None, command


def test_bash_through_the_real_subprocess(memdir: Path, tmp_path: Path) -> None:
    payload = json.dumps(bash(memdir, f"echo token: {TOKEN} > team/x.md"))
    env = {"TEAMSYNC_DIR": str(memdir), "HOME": str(tmp_path)}
    proc = run_teamsync(["guard"], cwd=tmp_path, env=env, input=payload)
    verdict = decision(proc.stdout)
    assert proc.returncode == 0 and verdict is not None
    assert verdict["permissionDecision"] == "deny" and TOKEN not in proc.stdout + proc.stderr


# --- languages ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "비밀번호: {v}",
        "密码：{v}",
        "パスワード: {v}",
        "senha `{v}`",
        "la contraseña es {v}",
        "şifre: {v}",
        "mật khẩu là {v}",
        "пароль: {v}",
        "Das Passwort lautet {v}",
        "le mot de passe est {v}",
        "The staging database password is {v}.",
    ],
)
def test_each_language_label_is_denied_at_the_hook(memdir: Path, template: str) -> None:
    value = _password(len(template))
    reason = run(memdir, write(memdir, "team/x.md", "# notes\n" + template.format(v=value) + "\n"))
    assert reason is not None and "generic-secret (line 2)" in reason and value not in reason
