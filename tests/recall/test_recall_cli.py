"""The recall/extract/dream commands through click and as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from teamsync.cli import cli
from testing.fake_anthropic import FakeAnthropic, json_answer, text, tool_use
from testing.memdir import assert_current_layout
from testing.recall import REPO, memory, put, teamsync, write_transcript


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    put(root, "team/project_freeze.md", memory("freeze", "Merge freeze before the March release"))
    put(
        root,
        "feedback_tests.md",
        memory("tests", "Integration tests hit a real Postgres", "feedback"),
    )
    return root


def test_recall_json_shape(memdir: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "--dir",
            str(memdir),
            "--json",
            "recall",
            "--offline",
            "--mode",
            "lexical",
            "merge",
            "freeze",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["selector"] == "lexical" and payload["notes"] == []
    (first,) = payload["memories"][:1]
    assert {"path", "score", "stale"} <= set(first)
    assert first["path"] == "team/project_freeze.md" and first["stale"] is False
    assert isinstance(first["score"], float) and "Merge freeze" in first["content"]


def test_recall_human_output_with_explain(memdir: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "--dir",
            str(memdir),
            "recall",
            "--offline",
            "--mode",
            "lexical",
            "--explain",
            "-n",
            "1",
            "postgres",
        ],
    )
    assert result.exit_code == 0
    assert "1 memory (lexical selection)" in result.output
    assert "── feedback_tests.md  [feedback · today · score" in result.output
    assert (
        "why: bm25 " in result.output and "on postgres (covers 100% of the query" in result.output
    )


def test_recall_usage_errors(memdir: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["--dir", str(memdir), "recall"]).exit_code == 2
    assert runner.invoke(cli, ["--dir", str(memdir), "recall", "--limit", "0", "x"]).exit_code == 2
    assert (
        runner.invoke(
            cli, ["--dir", str(memdir), "extract", str(memdir / "missing.jsonl")]
        ).exit_code
        == 2
    )


def test_offline_recall_never_imports_anthropic(memdir: Path) -> None:
    code = (
        "import sys\n"
        "from teamsync.cli import main\n"
        "rc = main(['--dir', sys.argv[1], '--json', 'recall', '--offline', 'merge freeze'])\n"
        "print('ANTHROPIC_LOADED=' + str({'anthropic', 'httpx2'} & set(sys.modules) != set()))\n"
        "sys.exit(rc)\n"
    )
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test-not-used"}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(memdir)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("ANTHROPIC_LOADED=False")
    assert (
        json.loads(proc.stdout.rsplit("ANTHROPIC_LOADED", 1)[0])["memories"][0]["path"]
        == "team/project_freeze.md"
    )


def test_recall_subprocess_with_claude_over_loopback(memdir: Path) -> None:
    fake = FakeAnthropic([json_answer({"selected_memories": ["feedback_tests.md", "nope.md"]})])
    with fake.serve() as base_url:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "sk-test",
            "ANTHROPIC_BASE_URL": base_url,
            "TEAMSYNC_MODEL": "claude-haiku-5-5",
        }
        proc = teamsync(
            ["--dir", str(memdir), "--json", "recall", "which database in tests"], env=env
        )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["selector"] == "claude"
    assert [m["path"] for m in payload["memories"]] == ["feedback_tests.md"]
    assert "were not in its list" in proc.stderr
    assert fake.requests[0]["model"] == "claude-haiku-5-5"


def test_recall_subprocess_falls_back_when_the_api_fails(memdir: Path) -> None:
    fake = FakeAnthropic([text("not json")])
    with fake.serve() as base_url:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": base_url}
        proc = teamsync(["--dir", str(memdir), "recall", "merge freeze"], env=env)
    assert proc.returncode == 0
    assert "Claude recall failed" in proc.stderr and "fell back to offline ranking" in proc.stderr
    assert "team/project_freeze.md" in proc.stdout


def test_extract_and_dream_subprocess_end_to_end(memdir: Path, tmp_path: Path) -> None:
    transcript = write_transcript(
        tmp_path / "t.jsonl",
        [("u1", "user", "Staging resets nightly at 02:00 UTC."), ("a1", "assistant", "Got it.")],
    )
    staging = memory("staging", "Staging database resets nightly at 02:00 UTC", "reference")
    plan = {"summary": "nothing to merge", "writes": [], "deletions": []}
    fake = FakeAnthropic(
        [
            tool_use(("write_file", {"path": "team/reference_staging.md", "content": staging})),
            text("saved"),
            json_answer(plan),
        ]
    )
    with fake.serve() as base_url:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": base_url}
        dry = teamsync(
            ["--dir", str(memdir), "extract", "--dry-run", str(transcript)],
            env={**env, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"},
        )
        assert dry.returncode == 1 and "could not reach the Claude API" in dry.stderr
        done = teamsync(["--dir", str(memdir), "--json", "extract", str(transcript)], env=env)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["written"] == ["team/reference_staging.md"]
        skipped = teamsync(["--dir", str(memdir), "dream"], env=env)
        assert skipped.returncode == 0 and "not consolidating: 1 extraction(s)" in skipped.stdout
        forced = teamsync(["--dir", str(memdir), "--json", "dream", "--force"], env=env)
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["ran"] is True
    assert_current_layout((memdir / "team/reference_staging.md").read_text(), staging)
    assert "(reference_staging.md)" in (memdir / "team/MEMORY.md").read_text()


def test_extract_dry_run_prints_proposals(memdir: Path, tmp_path: Path) -> None:
    transcript = write_transcript(tmp_path / "t.jsonl", [("u1", "user", "We use Okta for SSO.")])
    content = memory("sso", "SSO goes through Okta", "project")
    fake = FakeAnthropic(
        [tool_use(("write_file", {"path": "team/project_sso.md", "content": content})), text("ok")]
    )
    with fake.serve() as base_url:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": base_url}
        proc = teamsync(["--dir", str(memdir), "extract", "--dry-run", str(transcript)], env=env)
    assert proc.returncode == 0, proc.stderr
    assert (
        "--- proposed team/project_sso.md ---" in proc.stdout
        and "SSO goes through Okta" in proc.stdout
    )
    assert "dry run: 1 file(s) proposed, nothing written" in proc.stdout
    assert not (memdir / "team/project_sso.md").exists()


def test_dream_refusal_exits_1_with_json(memdir: Path) -> None:
    plan = {
        "summary": "s",
        "writes": [],
        "deletions": [{"path": "feedback_tests.md", "reason": ""}],
    }
    fake = FakeAnthropic([json_answer(plan)])
    with fake.serve() as base_url:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": base_url}
        proc = teamsync(["--dir", str(memdir), "--json", "dream", "--force"], env=env)
    assert proc.returncode == 1
    assert "without a recorded reason" in json.loads(proc.stdout)["refused"]
    assert (memdir / "feedback_tests.md").exists()
