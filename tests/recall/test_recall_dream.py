"""dream(): the gate, the PID lock, the plan guard rails, backups and the index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from teamsync._lock import FileLock
from teamsync.errors import PlanRefused
from teamsync.recall import lock, state
from teamsync.recall.dream import dream
from testing.fake_anthropic import FakeAnthropic, json_answer, text
from testing.recall import claude_for, memory, put, settings_for


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    for i in range(8):
        put(root, f"team/project_{i}.md", memory(f"fact {i}", f"Project fact number {i}"))
    put(root, "feedback_a.md", memory("pnpm", "Use pnpm, not npm", "feedback"))
    put(root, "feedback_b.md", memory("pnpm again", "Always pnpm install", "feedback"))
    return root


MERGED = memory(
    "pnpm",
    "Use pnpm for the web workspace; always pnpm install, never npm",
    "feedback",
    "The fact.\n",
)


def merge_plan(**overrides: Any) -> dict[str, Any]:
    plan = {
        "summary": "merged the two pnpm memories",
        "writes": [
            {"path": "feedback_a.md", "content": MERGED, "reason": "merged feedback_b.md into it"}
        ],
        "deletions": [{"path": "feedback_b.md", "reason": "merged into feedback_a.md"}],
    }
    plan.update(overrides)
    return plan


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_gate_needs_24_hours_and_5_extractions(memdir: Path) -> None:
    settings = settings_for(memdir)
    root = state.state_root(settings.state_dir, memdir)
    fake = FakeAnthropic([json_answer(merge_plan())])
    skipped = dream(settings, claude=claude_for(fake))
    assert not skipped.ran and skipped.skipped is not None
    assert skipped.skipped.startswith("0 extraction(s) since the last consolidation (needs 5)")
    for _ in range(5):
        state.record_extraction(root, time.time())
    state.set_last_dream(root, time.time() - 3600)
    assert "1.0 h ago (needs 24 h)" in (dream(settings, claude=claude_for(fake)).skipped or "")
    assert fake.requests == []
    state.set_last_dream(root, time.time() - 25 * 3600)
    assert dream(settings, claude=claude_for(fake)).ran  # 5 extractions since, 25 h ago


def test_forced_dream_applies_the_plan_with_backup_and_index(memdir: Path) -> None:
    settings = settings_for(memdir)
    before_b = (memdir / "feedback_b.md").read_text()
    before_a = (memdir / "feedback_a.md").read_text()
    fake = FakeAnthropic([json_answer(merge_plan())])
    result = dream(settings, force=True, claude=claude_for(fake))
    assert result.ran and result.backup is not None
    assert (memdir / "feedback_a.md").read_text() == MERGED
    assert not (memdir / "feedback_b.md").exists()
    assert (result.backup / "feedback_b.md").read_text() == before_b
    assert (result.backup / "feedback_a.md").read_text() == before_a
    recorded = json.loads((result.backup / "plan.json").read_text())
    assert recorded["deletions"] == {"feedback_b.md": "merged into feedback_a.md"}
    index = (memdir / "MEMORY.md").read_text()
    assert "(feedback_a.md)" in index and "feedback_b.md" not in index
    assert "(project_0.md)" in (memdir / "team/MEMORY.md").read_text()
    assert result.problems == []
    request = fake.requests[0]
    assert request["output_config"]["format"]["type"] == "json_schema"
    assert "=== feedback_b.md ===" in request["messages"][0]["content"]
    assert state.last_dream(state.state_root(settings.state_dir, memdir)) is not None


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (
            merge_plan(
                deletions=[{"path": f"team/project_{i}.md", "reason": "dup"} for i in range(3)]
            ),
            "change 4 of 10 memories (1 write(s), 3 deletion(s)), more than the cap of 2",
        ),
        (
            merge_plan(deletions=[{"path": "feedback_b.md", "reason": "  "}]),
            "remove feedback_b.md without a recorded reason",
        ),
        (merge_plan(deletions=[{"path": "feedback_b.md"}]), "without a recorded reason"),
        (
            merge_plan(deletions=[{"path": "ghost.md", "reason": "gone"}]),
            "'ghost.md', which is not a memory",
        ),
        (merge_plan(writes=[{"path": "../x.md", "content": MERGED, "reason": "r"}]), "refused"),
        (
            merge_plan(writes=[{"path": "MEMORY.md", "content": "x", "reason": "r"}]),
            "MEMORY.md is maintained",
        ),
        (
            merge_plan(
                writes=[{"path": "feedback_a.md", "content": "no frontmatter", "reason": "r"}]
            ),
            "not a valid memory",
        ),
        (
            merge_plan(writes=[{"path": "feedback_a.md", "content": MERGED, "reason": ""}]),
            "rewrite feedback_a.md without a recorded reason",
        ),
        (
            merge_plan(deletions=[{"path": "feedback_a.md", "reason": "dup"}]),
            "both rewrites and deletes",
        ),
    ],
)
def test_guard_rails_refuse_the_whole_plan(
    memdir: Path, plan: dict[str, Any], message: str
) -> None:
    snapshot = {p: p.read_text() for p in memdir.rglob("*.md")}
    fake = FakeAnthropic([json_answer(plan)])
    with pytest.raises(PlanRefused, match=message.replace("(", r"\(").replace(")", r"\)")):
        dream(settings_for(memdir), force=True, claude=claude_for(fake))
    assert {p: p.read_text() for p in memdir.rglob("*.md")} == snapshot


def test_a_secret_in_a_merged_memory_is_refused(memdir: Path) -> None:
    token = "gh" + "p_" + "Zq8rT2vLm9XwB4nK7pS1dF6gH3jY0uEcA5iO"
    plan = merge_plan(
        writes=[{"path": "feedback_a.md", "content": MERGED + token + "\n", "reason": "r"}]
    )
    with pytest.raises(PlanRefused, match="holds a likely secret \\(github-pat\\)") as caught:
        dream(
            settings_for(memdir), force=True, claude=claude_for(FakeAnthropic([json_answer(plan)]))
        )
    assert token not in str(caught.value)
    assert token not in (memdir / "feedback_a.md").read_text()


def test_a_quarter_exactly_is_allowed(tmp_path: Path) -> None:
    root = tmp_path / "m"
    for i in range(4):
        put(root, f"m{i}.md", memory(f"m{i}", f"memory {i}"))
    plan = {
        "summary": "s",
        "writes": [],
        "deletions": [{"path": "m0.md", "reason": "obsolete since 2026-02"}],
    }
    result = dream(
        settings_for(root), force=True, claude=claude_for(FakeAnthropic([json_answer(plan)]))
    )
    assert result.ran and not (root / "m0.md").exists()


def test_malformed_answers_change_nothing(memdir: Path) -> None:
    from teamsync.errors import LLMError

    for step in (text("merge them please"), json_answer({"summary": "x"})):
        with pytest.raises(LLMError):
            dream(settings_for(memdir), force=True, claude=claude_for(FakeAnthropic([step])))
    assert (memdir / "feedback_b.md").exists()


def test_dry_run_validates_but_changes_nothing(memdir: Path) -> None:
    result = dream(
        settings_for(memdir),
        force=True,
        dry_run=True,
        claude=claude_for(FakeAnthropic([json_answer(merge_plan())])),
    )
    assert not result.ran and result.plan is not None and "feedback_b.md" in result.plan.deletions
    assert (memdir / "feedback_b.md").exists()


def test_a_live_lock_blocks_and_is_left_alone(memdir: Path) -> None:
    settings = settings_for(memdir)
    path = state.state_root(settings.state_dir, memdir) / "dream.lock"
    holder = FileLock(path)
    assert holder.try_acquire()
    try:
        fake = FakeAnthropic([json_answer(merge_plan())])
        with pytest.raises(lock.LockBusy, match=f"PID {os.getpid()}"):
            dream(settings, force=True, claude=claude_for(fake))
        assert fake.requests == [] and holder.locked
    finally:
        holder.release()


@pytest.mark.parametrize("kind", ["dead-pid", "garbage"])
def test_a_lock_file_left_by_a_dead_dream_does_not_block(memdir: Path, kind: str) -> None:
    settings = settings_for(memdir)
    path = state.state_root(settings.state_dir, memdir) / "dream.lock"
    path.parent.mkdir(parents=True)
    path.write_text({"dead-pid": f"{dead_pid()}\n", "garbage": "???"}[kind])
    result = dream(
        settings, force=True, claude=claude_for(FakeAnthropic([json_answer(merge_plan())]))
    )
    assert result.ran


def test_a_dream_killed_while_holding_the_lock_frees_it(memdir: Path, tmp_path: Path) -> None:
    settings = settings_for(memdir)
    path = state.state_root(settings.state_dir, memdir) / "dream.lock"
    path.parent.mkdir(parents=True)
    code = (
        "import sys, time; from pathlib import Path; from teamsync._lock import FileLock\n"
        "l = FileLock(Path(sys.argv[1])); assert l.try_acquire(); print('held', flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"held\n"
        with pytest.raises(lock.LockBusy, match=f"PID {child.pid}"):
            with lock.held(path):
                pass
    finally:
        child.kill()
        child.wait()
    with lock.held(path):  # SIGKILL released it: nothing to take over
        pass


@pytest.mark.parametrize("where", ["summary", "write reason", "deletion reason"])
def test_a_secret_in_the_plan_prose_is_refused_and_never_kept(memdir: Path, where: str) -> None:
    # The summary and reasons reach stdout, --json and the backup's plan.json: no secret there.
    token = "gh" + "p_" + "Zq8rT2vLm9XwB4nK7pS1dF6gH3jY0uEcA5iO"
    plan = merge_plan()
    if where == "summary":
        plan["summary"] = f"merged; the old one held {token}"
    elif where == "write reason":
        plan["writes"][0]["reason"] = f"merged, dropped {token}"
    else:
        plan["deletions"][0]["reason"] = f"held {token}"
    settings = settings_for(memdir)
    with pytest.raises(PlanRefused, match="holds a likely secret \\(github-pat\\)") as caught:
        dream(settings, force=True, claude=claude_for(FakeAnthropic([json_answer(plan)])))
    assert token not in str(caught.value)
    assert (memdir / "feedback_b.md").exists()
    kept = [p.read_bytes() for p in settings.state_dir.rglob("*") if p.is_file()]
    assert not any(token.encode() in b for b in kept)


PRIVATE = memory(
    "terse answers",
    "The user wants short answers without a closing recap",
    "feedback",
    "Answer briefly and skip the closing summary of the diff.\n",
)


def _refused(memdir: Path, plan: dict[str, Any], message: str) -> None:
    snapshot = {p: p.read_text() for p in memdir.rglob("*.md")}
    fake = FakeAnthropic([json_answer(plan)])
    with pytest.raises(PlanRefused, match=message):
        dream(settings_for(memdir), force=True, claude=claude_for(fake))
    assert {p: p.read_text() for p in memdir.rglob("*.md")} == snapshot


def test_dream_never_moves_a_private_memory_into_team(memdir: Path) -> None:
    put(memdir, "feedback_terse.md", PRIVATE)
    moved = {"path": "team/feedback_terse.md", "content": PRIVATE, "reason": "share it"}
    gone = {"path": "feedback_terse.md", "reason": "moved to team/feedback_terse.md"}
    _refused(
        memdir, merge_plan(writes=[moved], deletions=[gone]), "across the private/team boundary"
    )
    # a copy without the deletion is the same leak
    _refused(memdir, merge_plan(writes=[moved], deletions=[]), "across the private/team boundary")
    # "merged into" a team file is a move too
    shared = {"path": "team/project_0.md", "content": PRIVATE, "reason": "merged"}
    merged = {"path": "feedback_terse.md", "reason": "merged into team/project_0.md"}
    _refused(memdir, merge_plan(writes=[shared], deletions=[merged]), "boundary")


def test_the_cap_counts_writes_as_well_as_deletions(memdir: Path) -> None:
    rewrites = [
        {
            "path": f"team/project_{i}.md",
            "content": memory(f"fact {i}", f"Fact {i}, dated"),
            "reason": "dates",
        }
        for i in range(3)
    ]
    _refused(
        memdir, merge_plan(writes=rewrites, deletions=[]), "change 3 of 10 memories \\(3 write"
    )


def test_merged_into_must_name_a_file_that_exists_and_holds_the_content(memdir: Path) -> None:
    ghost = merge_plan(
        deletions=[{"path": "feedback_b.md", "reason": "merged into feedback_zz.md"}]
    )
    _refused(memdir, ghost, "merged into feedback_zz.md, which does not exist")
    thin = memory("pnpm", "Package manager", "feedback", "Web workspace.\n")
    lost = merge_plan(writes=[{"path": "feedback_a.md", "content": thin, "reason": "merged"}])
    _refused(memdir, lost, "feedback_a.md holds only \\d+% of its words")
    # merged into an existing, untouched file that already holds the content: fine
    put(memdir, "feedback_c.md", MERGED)
    ok = {
        "summary": "s",
        "writes": [],
        "deletions": [{"path": "feedback_b.md", "reason": "merged into feedback_c.md"}],
    }
    result = dream(
        settings_for(memdir), force=True, claude=claude_for(FakeAnthropic([json_answer(ok)]))
    )
    assert result.ran and not (memdir / "feedback_b.md").exists()


def test_case_variant_names_and_user_memories_in_team_are_refused(memdir: Path) -> None:
    variant = merge_plan(writes=[{"path": "Feedback_A.md", "content": MERGED, "reason": "r"}])
    _refused(memdir, variant, "differs from feedback_a.md only by case")
    user = memory("role", "The user is a data scientist", "user")
    _refused(
        memdir,
        merge_plan(
            writes=[{"path": "team/user_role.md", "content": user, "reason": "r"}], deletions=[]
        ),
        "user memory into team/",
    )


def test_a_failure_part_way_restores_every_pre_image(memdir: Path) -> None:
    from teamsync.errors import SecurityError

    before = {p: p.read_text() for p in memdir.rglob("*.md")}
    other = memory("other", "Something else entirely", "project", "Unrelated body.\n")
    plan = {
        "summary": "s",
        "writes": [
            {"path": "feedback_a.md", "content": MERGED, "reason": "dates"},
            # passes validation, fails on disk: its parent is a file
            {"path": "team/project_0.md/inner.md", "content": other, "reason": "r"},
        ],
        "deletions": [],
    }
    fake = FakeAnthropic([json_answer(plan)])
    with pytest.raises(SecurityError):
        dream(settings_for(memdir), force=True, claude=claude_for(fake))
    assert {p: p.read_text() for p in memdir.rglob("*.md")} == before


def test_the_dream_prompt_gives_todays_date(memdir: Path) -> None:
    from datetime import UTC, datetime

    fake = FakeAnthropic([json_answer({"summary": "", "writes": [], "deletions": []})])
    dream(settings_for(memdir), force=True, claude=claude_for(fake))
    assert (
        f"Today's date is {datetime.now(UTC).strftime('%Y-%m-%d')}." in fake.requests[0]["system"]
    )
