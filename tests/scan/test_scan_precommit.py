"""The hooks through the real pre-commit framework, in temporary git repositories.

The shipped manifest uses ``language: python``: pre-commit then pip-installs
teamsync and its dependencies into a fresh virtualenv, which needs the network.
Tests may not touch the network, so the test builds a hooks repository whose
manifest is the shipped one with ``language: system`` (the ids, entries,
args, file filters and ``pass_filenames`` stay exactly as shipped) and runs it
with the project's installed ``teamsync`` on PATH. That exercises everything
pre-commit does with our hooks except the pip install.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
import yaml

from testing.scan import PLANTS, fake_env, git

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def hooks_repo(tmp_path: Path) -> tuple[Path, str]:
    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {hook["id"] for hook in manifest} == {"teamsync-secrets", "teamsync-check"}
    assert all(hook["language"] == "python" for hook in manifest)
    for hook in manifest:
        hook["language"] = "system"
    repo = tmp_path / "hooks"
    repo.mkdir()
    (repo / ".pre-commit-hooks.yaml").write_text(yaml.safe_dump(manifest))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "hooks")
    return repo, git(repo, "rev-parse", "HEAD").strip()


def _env(tmp_path: Path) -> dict[str, str]:
    return fake_env({"PRE_COMMIT_HOME": str(tmp_path / "pc-cache"), "PRE_COMMIT_COLOR": "never"})


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _work_repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q")
    return work


@pytest.mark.slow
def test_try_repo_secret_hook_refuses_secret_and_passes_clean(
    tmp_path: Path, hooks_repo: tuple[Path, str]
) -> None:
    repo, _ = hooks_repo
    work, env = _work_repo(tmp_path), _env(tmp_path)
    secret_line = PLANTS["anthropic-api-key"](random.Random(1))
    (work / "note.md").write_text("# note\n" + secret_line + "\n")
    (work / "clean.md").write_text("# clean\n")
    git(work, "add", ".")
    try_repo = ["pre-commit", "try-repo", str(repo), "teamsync-secrets"]
    bad = _run([*try_repo, "--files", "note.md", "clean.md"], work, env)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "note.md:2: anthropic-api-key" in bad.stdout
    assert secret_line.split("=", 1)[1] not in bad.stdout + bad.stderr
    good = _run([*try_repo, "--files", "clean.md"], work, env)
    assert good.returncode == 0, good.stdout + good.stderr


@pytest.mark.slow
def test_installed_hook_refuses_a_commit_with_a_secret(
    tmp_path: Path, hooks_repo: tuple[Path, str]
) -> None:
    repo, rev = hooks_repo
    work, env = _work_repo(tmp_path), _env(tmp_path)
    config = {"repos": [{"repo": str(repo), "rev": rev, "hooks": [{"id": "teamsync-secrets"}]}]}
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    assert _run(["pre-commit", "install"], work, env).returncode == 0
    (work / "clean.md").write_text("# clean\nnothing secret\n")
    git(work, "add", ".")
    ok = _run(["git", "commit", "-m", "clean"], work, env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (work / "leak.md").write_text(PLANTS["aws-access-token"](random.Random(2)) + "\n")
    git(work, "add", "leak.md")
    refused = _run(["git", "commit", "-m", "leak"], work, env)
    assert refused.returncode != 0
    assert "leak.md:1: aws-access-token" in refused.stdout + refused.stderr
    assert git(work, "log", "--format=%s").split() == ["clean"]


@pytest.mark.slow
def test_check_hook_lints_the_memory_dir_given_in_args(
    tmp_path: Path, hooks_repo: tuple[Path, str]
) -> None:
    repo, rev = hooks_repo
    work, env = _work_repo(tmp_path), _env(tmp_path)
    hook = {"id": "teamsync-check", "args": ["--dir", "memory", "check"]}
    config = {"repos": [{"repo": str(repo), "rev": rev, "hooks": [hook]}]}
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    memory = work / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("- [Gone](gone.md) — a dead link\n")
    git(work, "add", ".")
    bad = _run(["pre-commit", "run", "teamsync-check", "--all-files"], work, env)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "dead-link" in bad.stdout
    (memory / "a.md").write_text("---\nname: a\ndescription: A thing\ntype: project\n---\nbody\n")
    (memory / "MEMORY.md").write_text("- [A](a.md) — A thing\n")
    git(work, "add", ".")
    good = _run(["pre-commit", "run", "teamsync-check", "--all-files"], work, env)
    assert good.returncode == 0, good.stdout + good.stderr


def test_manifest_and_project_config_are_valid() -> None:
    env = fake_env()
    for cmd in (
        ["validate-manifest", ".pre-commit-hooks.yaml"],
        ["validate-config", ".pre-commit-config.yaml"],
    ):
        proc = _run(["pre-commit", *cmd], ROOT, env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    ids = {hook["id"] for repo in config["repos"] for hook in repo["hooks"]}
    assert {"ruff", "ruff-format", "teamsync-secrets"} <= ids
