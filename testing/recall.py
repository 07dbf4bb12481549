"""Shared helpers for recall/extract/dream tests: settings, memories, transcripts, clients."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from teamsync import _git as gitrun
from teamsync.config import Settings
from teamsync.recall.llm import Claude
from testing.fake_anthropic import FakeAnthropic

REPO = Path(__file__).resolve().parent.parent


def memory(name: str, description: str, type: str = "project", body: str = "The fact.\n") -> str:
    """A memory file's text with safely quoted frontmatter."""
    return (
        f"---\nname: {json.dumps(name)}\ndescription: {json.dumps(description)}\n"
        f"type: {type}\n---\n\n{body}"
    )


def put(memdir: Path, key: str, text: str, *, mtime: float | None = None) -> Path:
    path = memdir / key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def settings_for(memdir: Path, cwd: Path | None = None, **env: str) -> Settings:
    """Settings for ``memdir`` with the test's (isolated) environment plus ``env``."""
    environ = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY",)}
    environ.update(env)
    return Settings.build(dir=memdir, environ=environ, cwd=cwd or memdir.parent)


def claude_for(fake: FakeAnthropic, *, model: str = "claude-sonnet-5-5") -> Claude:
    """A real SDK client wired to the fake (no retries, short timeout)."""
    return Claude(
        key="test-key", model=model, http_client=fake.http_client(), timeout=5.0, max_retries=0
    )


def transcript_line(uuid: str, role: str, content: Any, **extra: Any) -> str:
    record = {
        "type": role,
        "uuid": uuid,
        "parentUuid": None,
        "sessionId": "s1",
        "message": {"role": role, "content": content},
        **extra,
    }
    return json.dumps(record)


def write_transcript(
    path: Path, messages: list[tuple[str, str, Any]], *, append: bool = False
) -> Path:
    """Write (uuid, role, content) messages as Claude Code JSONL."""
    with open(path, "a" if append else "w", encoding="utf-8") as handle:
        for uuid, role, content in messages:
            handle.write(transcript_line(uuid, role, content) + "\n")
    return path


def teamsync(
    args: list[str], *, env: Mapping[str, str], cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the real ``teamsync`` console script."""
    exe = Path(sys.executable).parent / "teamsync"
    return subprocess.run(
        [str(exe), *args],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def git(repo: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    result = gitrun.run(args, cwd=repo, env={**os.environ, **(env or {})})
    if not result.ok:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.text()
