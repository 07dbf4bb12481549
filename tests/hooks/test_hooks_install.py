"""`teamsync install-hooks` and the git hook scripts, in real git repositories."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from testing.hooks import (
    REPO_ROOT,
    fake_aws_key,
    fake_github_token,
    git,
    make_repo,
    run_teamsync,
    teamsync_bin,
)

HOOKS = ("pre-commit", "pre-push", "post-merge", "post-checkout")
RESOURCES = REPO_ROOT / "teamsync" / "hooks" / "resources"
FOREIGN = '#!/bin/sh\necho foreign-ran >> "$(git rev-parse --git-dir)/foreign.log"\nexit ${FOREIGN_EXIT:-0}\n'


def install(
    work: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_teamsync(["install-hooks", *args], cwd=work, env=env)


def commit_file(
    work: Path, name: str, text: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    (work / name).parent.mkdir(parents=True, exist_ok=True)
    (work / name).write_text(text, encoding="utf-8")
    git(work, "add", name)
    return subprocess.run(
        ["git", "commit", "-q", "-m", f"add {name}"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_shipped_scripts_are_the_package_resources() -> None:
    for name in HOOKS:
        shipped, resource = REPO_ROOT / "hooks" / name, RESOURCES / name
        assert shipped.read_bytes() == resource.read_bytes(), name
        assert os.access(shipped, os.X_OK) and os.access(resource, os.X_OK)
    settings = (REPO_ROOT / "hooks" / "claude-code" / "settings.json").read_bytes()
    assert settings == (RESOURCES / "claude-code-settings.json").read_bytes()


@pytest.mark.parametrize("shell", ["sh", "dash", "bash"])
def test_scripts_parse_under_posix_shells(shell: str) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} not installed")
    for name in HOOKS:
        proc = subprocess.run([shell, "-n", str(RESOURCES / name)], capture_output=True, text=True)
        assert proc.returncode == 0, (name, proc.stderr)


def test_install_is_idempotent_and_marks_its_hooks(tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path)
    first = install(work)
    assert first.returncode == 0, first.stderr
    hooks_dir = work / ".git" / "hooks"
    contents = {}
    for name in HOOKS:
        path = hooks_dir / name
        assert path.stat().st_mode & stat.S_IXUSR
        text = path.read_text(encoding="utf-8")
        assert "# teamsync-managed-hook" in text
        assert f"TEAMSYNC_INSTALLED='{teamsync_bin()}'" in text
        contents[name] = text
    second = install(work)
    assert second.returncode == 0
    assert second.stdout.count("already installed") == len(HOOKS)
    assert {n: (hooks_dir / n).read_text(encoding="utf-8") for n in HOOKS} == contents
    assert not list(hooks_dir.glob("*.legacy"))


def test_planted_secret_commit_is_refused_and_clean_commit_allowed(tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path)
    assert install(work).returncode == 0
    head = git(work, "rev-parse", "HEAD")
    refused = commit_file(work, "config/settings.py", f'KEY = "{fake_aws_key()}"\n')
    assert refused.returncode != 0
    assert "commit refused" in refused.stderr
    assert fake_aws_key() not in refused.stdout + refused.stderr
    assert git(work, "rev-parse", "HEAD") == head
    git(work, "reset", "-q", "HEAD", "--", "config/settings.py")
    allowed = commit_file(work, "docs/usage.md", "Run `make test` before pushing.\n")
    assert allowed.returncode == 0, allowed.stderr
    assert git(work, "rev-parse", "HEAD") != head


def test_commit_all_uses_git_temporary_index(tmp_path: Path) -> None:
    """`git commit -a` scans through GIT_INDEX_FILE, which the hook must not strip."""
    work, _ = make_repo(tmp_path)
    assert install(work).returncode == 0
    (work / "README.md").write_text(f"token {fake_github_token()}\n", encoding="utf-8")
    proc = subprocess.run(
        ["git", "commit", "-qam", "edit"], cwd=work, capture_output=True, text=True
    )
    assert proc.returncode != 0 and "commit refused" in proc.stderr


def test_existing_hook_is_chained_and_restored(tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path)
    hook = work / ".git" / "hooks" / "pre-commit"
    hook.write_text(FOREIGN, encoding="utf-8")
    hook.chmod(0o755)
    out = install(work)
    assert out.returncode == 0 and "pre-commit.legacy" in out.stdout
    assert (work / ".git" / "hooks" / "pre-commit.legacy").read_text(encoding="utf-8") == FOREIGN
    assert commit_file(work, "a.md", "plain\n").returncode == 0
    assert (work / ".git" / "foreign.log").read_text(encoding="utf-8") == "foreign-ran\n"
    failing = commit_file(work, "b.md", "plain\n", env={**os.environ, "FOREIGN_EXIT": "3"})
    assert failing.returncode != 0  # the legacy hook's refusal still counts
    assert install(work).returncode == 0  # reinstalling keeps the chain, no double move
    assert (work / ".git" / "hooks" / "pre-commit.legacy").read_text(encoding="utf-8") == FOREIGN
    removed = install(work, "--uninstall")
    assert removed.returncode == 0 and "restored" in removed.stdout
    assert hook.read_text(encoding="utf-8") == FOREIGN
    assert not (work / ".git" / "hooks" / "pre-commit.legacy").exists()
    for name in HOOKS[1:]:
        assert not (work / ".git" / "hooks" / name).exists()


def test_uninstall_leaves_foreign_hooks_alone(tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path)
    hook = work / ".git" / "hooks" / "pre-push"
    hook.write_text(FOREIGN, encoding="utf-8")
    out = install(work, "--uninstall")
    assert out.returncode == 0 and "left alone" in out.stdout
    assert hook.read_text(encoding="utf-8") == FOREIGN


def test_core_hooks_path_inside_repo_is_followed(tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path)
    git(work, "config", "core.hooksPath", ".githooks")
    out = install(work)
    assert out.returncode == 0, out.stderr
    assert "core.hooksPath" in out.stdout
    assert all((work / ".githooks" / n).is_file() for n in HOOKS)
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
    refused = commit_file(work, "leak.txt", f"{fake_github_token()}\n")
    assert refused.returncode != 0 and "commit refused" in refused.stderr


def test_core_hooks_path_outside_repo_is_refused(tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path)
    shared = tmp_path / "global-hooks"
    git(work, "config", "core.hooksPath", str(shared))
    out = install(work)
    assert out.returncode == 1
    assert "core.hooksPath" in out.stderr and "outside this repository" in out.stderr
    assert not shared.exists()


def test_inherited_git_env_is_ignored(tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path)
    other, _ = make_repo(tmp_path, "other")
    env = {**os.environ, "GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other)}
    assert install(work, env=env).returncode == 0
    assert (work / ".git" / "hooks" / "pre-commit").is_file()
    assert not (other / ".git" / "hooks" / "pre-commit").exists()


def test_outside_a_repository_is_a_clear_error(tmp_path: Path) -> None:
    out = install(tmp_path)
    assert out.returncode == 1 and "not inside a git work tree" in out.stderr


def test_hooks_are_a_notice_only_noop_without_teamsync(tmp_path: Path) -> None:
    """The shipped (untemplated) scripts with no teamsync on PATH never break git."""
    work, _ = make_repo(tmp_path)
    for name in HOOKS:
        shutil.copy2(RESOURCES / name, work / ".git" / "hooks" / name)
    git_dir = Path(shutil.which("git") or "/usr/bin/git").parent
    env = {**os.environ, "PATH": f"{git_dir}:/usr/bin:/bin"}
    done = commit_file(work, "leak.txt", f"{fake_github_token()}\n", env=env)
    assert done.returncode == 0
    assert "teamsync: not installed" in done.stderr
    assert done.stderr.count("\n") == 1
    push = subprocess.run(
        ["git", "push", "-q", "origin", "main"], cwd=work, env=env, capture_output=True, text=True
    )
    assert push.returncode == 0 and "teamsync: not installed" in push.stderr
    checkout = subprocess.run(
        ["git", "checkout", "-q", "-b", "topic"], cwd=work, env=env, capture_output=True, text=True
    )
    assert checkout.returncode == 0 and "not installed" in checkout.stderr


def test_pre_push_scans_the_pushed_range(tmp_path: Path) -> None:
    work, remote = make_repo(tmp_path)
    assert install(work).returncode == 0
    env = {**os.environ, "TEAMSYNC_SKIP_HOOKS": "1"}  # plant the secret past pre-commit
    assert commit_file(work, "leak.txt", f"{fake_github_token()}\n", env=env).returncode == 0
    pushed = subprocess.run(
        ["git", "push", "origin", "main"], cwd=work, capture_output=True, text=True
    )
    assert pushed.returncode != 0 and "push refused" in pushed.stderr
    assert fake_github_token() not in pushed.stderr
    assert git(remote, "rev-parse", "main") != git(work, "rev-parse", "main")
    # A new branch carrying the same commit is scanned too (nothing of it is on a remote).
    new = subprocess.run(
        ["git", "push", "origin", "main:topic"], cwd=work, capture_output=True, text=True
    )
    assert new.returncode != 0 and "push refused" in new.stderr


def test_pre_push_allows_clean_pushes_new_branches_and_deletions(tmp_path: Path) -> None:
    work, remote = make_repo(tmp_path)
    assert install(work).returncode == 0
    assert commit_file(work, "notes.md", "clean\n").returncode == 0
    for args in (["main"], ["main:topic"], [":topic"]):
        proc = subprocess.run(
            ["git", "push", "origin", *args], cwd=work, capture_output=True, text=True
        )
        assert proc.returncode == 0, (args, proc.stderr)
    assert git(remote, "rev-parse", "main") == git(work, "rev-parse", "main")
    assert git(remote, "branch", "--list", "topic") == ""


def test_pre_push_new_root_history_is_scanned(tmp_path: Path) -> None:
    """A branch with no commit on any remote: the whole history is scanned."""
    work, _ = make_repo(tmp_path)
    assert install(work).returncode == 0
    git(work, "checkout", "-q", "--orphan", "fresh")
    git(work, "rm", "-q", "-r", "--cached", ".")
    env = {**os.environ, "TEAMSYNC_SKIP_HOOKS": "1"}
    assert commit_file(work, "leak.txt", f"{fake_github_token()}\n", env=env).returncode == 0
    assert commit_file(work, "later.md", "clean\n", env=env).returncode == 0
    proc = subprocess.run(
        ["git", "push", "origin", "fresh"], cwd=work, capture_output=True, text=True
    )
    assert proc.returncode != 0 and "push refused" in proc.stderr


def test_symlink_to_a_teamsync_script_counts_as_ours(tmp_path: Path) -> None:
    """A hook symlinked to the shipped script is replaced, not kept as a legacy hook."""
    work, _ = make_repo(tmp_path)
    hook = work / ".git" / "hooks" / "pre-commit"
    hook.symlink_to(REPO_ROOT / "hooks" / "pre-commit")
    assert install(work).returncode == 0
    assert not hook.is_symlink() and "TEAMSYNC_INSTALLED='/" in hook.read_text(encoding="utf-8")
    assert not (work / ".git" / "hooks" / "pre-commit.legacy").exists()
    assert (REPO_ROOT / "hooks" / "pre-commit").read_bytes() == (
        RESOURCES / "pre-commit"
    ).read_bytes()


def test_a_legacy_hook_that_is_ours_is_not_run_twice(tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path)
    assert install(work).returncode == 0
    hooks = work / ".git" / "hooks"
    shutil.copy2(hooks / "pre-commit", hooks / "pre-commit.legacy")
    done = commit_file(work, "ok.md", "plain\n")
    assert done.returncode == 0, done.stderr
    assert "it is a teamsync hook too" in done.stderr
