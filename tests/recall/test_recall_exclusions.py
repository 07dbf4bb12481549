"""The extraction rules in code: each excluded kind proposed by a scripted model is refused.

The real SDK talks to the fake Messages API; the model "ignores" the prompt and
proposes a memory of every excluded kind. Nothing of the kind may reach the
disk, each refusal is reported with its reason, dry runs agree with real runs,
and an API failure after an accepted write leaves nothing written.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from teamsync.errors import LLMError
from teamsync.recall import state
from teamsync.recall.exclusions import check, fold, similarity
from teamsync.recall.extract import extract
from testing.fake_anthropic import FakeAnthropic, Status, result_text, text, tool_results, tool_use
from testing.recall import claude_for, memory, put, settings_for, write_transcript

GOOD = memory(
    "release freeze",
    "No merges to main from 2026-03-05 to 2026-03-09 (mobile branch cut)",
    "project",
    "No merges.\n\n**Why:** branch cut.\n\n**How to apply:** hold PRs.\n",
)
EXISTING = memory(
    "integration tests use a real Postgres",
    "Integration tests must run against a real Postgres instance, never mocks of the ORM",
    "feedback",
    "Integration tests spin up Postgres with testcontainers; mocking the session is not "
    "accepted.\n\n**Why:** the mocked suite passed while a migration broke production.\n\n"
    "**How to apply:** reuse the pg_container fixture.\n",
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src/billing").mkdir(parents=True)
    (root / "src/billing/invoice.py").write_text("def total():\n    return 1\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    put(root, "team/feedback_real-postgres.md", EXISTING)
    return root


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    return write_transcript(
        tmp_path / "s.jsonl", [("u1", "user", "remember this"), ("a1", "assistant", "ok")]
    )


EXCLUDED: dict[str, tuple[str, str]] = {
    "code": (
        "team/feedback_retry-pattern.md",
        memory(
            "retry helper",
            "How the retry helper is written",
            "feedback",
            "Use this:\n\n```python\ndef retry(fn):\n    return fn()\n```\n",
        ),
    ),
    "repo-paths": (
        "team/reference_invoice-code.md",
        memory(
            "invoice code",
            "Where the invoice total is computed",
            "reference",
            "The invoice total is implemented in src/billing/invoice.py.\n",
        ),
    ),
    "git-history": (
        "team/project_who-changed-auth.md",
        memory(
            "auth change",
            "Why the auth middleware changed",
            "project",
            "Reverted in commit 3f9a2c1d after the outage; see git log for details.\n",
        ),
    ),
    "fix-recipe": (
        "team/project_fix-flaky-build.md",
        memory(
            "flaky build",
            "The build failed on the cache step",
            "project",
            "The fix was to clear the cache.\n\n1. Run make clean\n2. Delete .cache\n",
        ),
    ),
    "transient": (
        "project_current-task.md",
        memory(
            "current task",
            "What is being done in this session",
            "project",
            "- [x] rename the parser\n- [ ] update the docs\n",
        ),
    ),
    "duplicate": (
        "team/feedback_postgres-not-mocks.md",
        memory(
            "integration tests use real Postgres",
            "Integration tests must run against a real Postgres instance, never ORM mocks",
            "feedback",
            "Integration tests spin up Postgres with testcontainers; mocking the session is not "
            "accepted.\n\n**Why:** the mocked suite passed while a migration broke production."
            "\n\n**How to apply:** reuse the pg_container fixture.\n",
        ),
    ),
    "user-in-team": (
        "team/user_role.md",
        memory("role", "The user is a data scientist", "user", "Knows pandas.\n"),
    ),
}


@pytest.mark.parametrize("kind", sorted(EXCLUDED))
@pytest.mark.parametrize("dry_run", [False, True])
def test_each_excluded_kind_is_refused_with_its_reason(
    memdir: Path, transcript: Path, repo: Path, kind: str, dry_run: bool
) -> None:
    key, content = EXCLUDED[kind]
    seen: list[str] = []

    def after_write(request: dict[str, Any]) -> dict[str, Any]:
        (result,) = tool_results(request)
        seen.append(result_text(result))
        assert result.get("is_error") is True
        return text("done")

    fake = FakeAnthropic([tool_use(("write_file", {"path": key, "content": content})), after_write])
    settings = settings_for(memdir, cwd=repo)
    result = extract(settings, transcript, claude=claude_for(fake), dry_run=dry_run)
    assert result.written == [] and result.proposed == {}
    assert not (memdir / key).exists()
    ((path, reason),) = result.refused
    assert path == key and f"Refused ({kind})" in reason
    assert seen == [reason]  # the model is told the same reason


def test_an_acceptable_memory_still_passes_every_rule(
    memdir: Path, transcript: Path, repo: Path
) -> None:
    fake = FakeAnthropic(
        [tool_use(("write_file", {"path": "team/project_freeze.md", "content": GOOD})), text("ok")]
    )
    result = extract(settings_for(memdir, cwd=repo), transcript, claude=claude_for(fake))
    assert result.written == ["team/project_freeze.md"] and result.refused == []
    # a path that does not exist in the checkout is not "derivable from the repository"
    note = memory(
        "n", "Runbook location", "reference", "The runbook is kept in wiki/ops/runbook.md.\n"
    )
    assert check("team/r.md", note, "reference", existing={}, checkout=repo) is None


def test_updating_the_same_memory_is_not_a_duplicate(memdir: Path) -> None:
    key = "team/feedback_real-postgres.md"
    assert check(key, EXISTING, "feedback", existing={key: EXISTING}, checkout=None) is None
    assert similarity(EXISTING, EXCLUDED["duplicate"][1]) >= 0.6
    assert similarity(EXISTING, GOOD) < 0.2


@pytest.mark.parametrize("dry_run", [False, True])
def test_case_and_normalisation_variant_names_are_refused(
    memdir: Path, transcript: Path, dry_run: bool
) -> None:
    put(memdir, "team/Café_notes.md", GOOD.replace("release freeze", "cafe"))
    variants = ["team/FEEDBACK_Real-Postgres.md", "team/CAFÉ_Notes.md", "team/cafe\u0301_notes.md"]
    calls = [("write_file", {"path": p, "content": GOOD}) for p in variants]
    fake = FakeAnthropic([tool_use(*calls), text("done")])
    result = extract(settings_for(memdir), transcript, claude=claude_for(fake), dry_run=dry_run)
    assert result.written == [] and result.proposed == {}
    assert [p for p, _ in result.refused] == variants
    assert "only by case or Unicode normalisation" in result.refused[0][1]
    assert "team/feedback_real-postgres.md" in result.refused[0][1]
    assert "team/Café_notes.md" in result.refused[1][1]
    assert "not NFC-normalized" in result.refused[2][1]  # the key gate refuses decomposed forms
    assert (memdir / "team/feedback_real-postgres.md").read_text() == EXISTING
    assert fold("team/Cafe\u0301.md") == fold("team/café.md")


def test_dot_folders_are_refused_in_dry_run_and_real_run(memdir: Path, transcript: Path) -> None:
    for dry_run in (True, False):
        fake = FakeAnthropic(
            [tool_use(("write_file", {"path": "team/.hidden/x.md", "content": GOOD})), text("ok")]
        )
        result = extract(settings_for(memdir), transcript, claude=claude_for(fake), dry_run=dry_run)
        assert result.proposed == {} and result.written == []
    assert not (memdir / "team/.hidden").exists()


def test_dry_run_refuses_what_the_real_run_refuses(
    memdir: Path, transcript: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (memdir / "team/linked").symlink_to(outside, target_is_directory=True)
    outcomes = []
    for dry_run in (True, False):
        fake = FakeAnthropic(
            [tool_use(("write_file", {"path": "team/linked/x.md", "content": GOOD})), text("ok")]
        )
        result = extract(settings_for(memdir), transcript, claude=claude_for(fake), dry_run=dry_run)
        outcomes.append((sorted(result.proposed), [p for p, _ in result.refused]))
    assert outcomes[0] == outcomes[1] == ([], ["team/linked/x.md"])
    assert list(outside.iterdir()) == []


def test_api_failure_after_an_accepted_write_writes_nothing(memdir: Path, transcript: Path) -> None:
    fake = FakeAnthropic(
        [tool_use(("write_file", {"path": "team/project_freeze.md", "content": GOOD})), Status(500)]
    )
    settings = settings_for(memdir)
    index_before = (memdir / "team/MEMORY.md").exists()
    with pytest.raises(
        LLMError, match="nothing was written and the transcript cursor is unchanged"
    ):
        extract(settings, transcript, claude=claude_for(fake))
    assert not (memdir / "team/project_freeze.md").exists()
    assert (memdir / "team/MEMORY.md").exists() == index_before
    root = state.state_root(settings.state_dir, memdir)
    assert state.load_cursor(root, transcript) is None
    # the retry extracts the same messages and now the index, file and cursor agree
    fake = FakeAnthropic(
        [tool_use(("write_file", {"path": "team/project_freeze.md", "content": GOOD})), text("ok")]
    )
    result = extract(settings, transcript, claude=claude_for(fake))
    assert result.new_messages == 2 and result.written == ["team/project_freeze.md"]
    assert "(project_freeze.md)" in (memdir / "team/MEMORY.md").read_text()
    assert state.load_cursor(root, transcript) is not None


def test_the_prompt_gives_todays_date(memdir: Path, transcript: Path) -> None:
    from datetime import UTC, datetime

    fake = FakeAnthropic([text("nothing to save")])
    extract(settings_for(memdir), transcript, claude=claude_for(fake))
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    assert f"Today's date is {today}." in fake.requests[0]["system"]
