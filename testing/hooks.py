"""Test helpers for the hooks area: real git repositories, the real CLI, fake secrets."""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

from teamsync import _git as gitrun
from teamsync.config import Settings

REPO_ROOT = Path(__file__).resolve().parent.parent
PAYLOADS = REPO_ROOT / "tests" / "hooks" / "payloads"


class SessionPlaces:
    """What a Claude Code session's tests know of it: ``home``, ``project`` (where the
    session started) and ``memdir``; the environment a hook of it gets, and its
    settings. Mixed into each test module's session class."""

    home: Path
    project: Path
    memdir: Path

    @property
    def team(self) -> Path:
        return self.memdir / "team"

    def environ(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "CLAUDE_PROJECT_DIR": str(self.project),
        }

    def settings(self) -> Settings:
        return Settings.build(environ=self.environ(), cwd=self.project)


def teamsync_bin() -> str:
    """The ``teamsync`` console script of the interpreter running the tests."""
    candidate = Path(sys.executable).parent / "teamsync"
    return str(candidate) if candidate.exists() else "teamsync"


def fake_github_token(seed: int = 7) -> str:
    """A token shaped like a GitHub PAT, built from parts so no literal ships in the repo."""
    rng = random.Random(seed)
    body = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    return "gh" + "p_" + body


def fake_aws_key(seed: int = 11) -> str:
    """An AWS access key id shape, built from parts."""
    rng = random.Random(seed)
    return "AK" + "IA" + "".join(rng.choice(string.ascii_uppercase + "234567") for _ in range(16))


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    result = gitrun.run(args, cwd=cwd, env=os.environ if env is None else env)
    if check and not result.ok:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.text()


def make_repo(tmp_path: Path, name: str = "work") -> tuple[Path, Path]:
    """A work tree with one commit and a bare ``origin``; returns (work, remote)."""
    remote = tmp_path / f"{name}-remote.git"
    work = tmp_path / name
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(tmp_path, "init", "-q", str(work))
    (work / "README.md").write_text("hello\n", encoding="utf-8")
    git(work, "add", "README.md")
    git(work, "commit", "-q", "-m", "initial")
    git(work, "remote", "add", "origin", str(remote))
    git(work, "push", "-q", "origin", "main")
    return work, remote


def run_teamsync(
    args: list[str],
    *,
    cwd: Path,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``teamsync`` console script."""
    return subprocess.run(
        [teamsync_bin(), *args],
        cwd=cwd,
        input=input,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def load_payload(name: str, **replacements: str) -> str:
    """A recorded PreToolUse payload with ``{{NAME}}`` placeholders filled in (JSON-escaped)."""
    text = (PAYLOADS / name).read_text(encoding="utf-8")
    for key, value in replacements.items():
        text = text.replace("{{" + key + "}}", json.dumps(value)[1:-1])
    return text


def decision(stdout: str) -> dict[str, Any] | None:
    """The hookSpecificOutput of a guard answer, or None for 'no output' (allow)."""
    if not stdout.strip():
        return None
    data: dict[str, Any] = json.loads(stdout)["hookSpecificOutput"]
    return data


def env_with(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env
