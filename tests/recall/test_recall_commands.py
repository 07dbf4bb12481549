"""The command layer: what recall/extract/dream print, and that secrets never reach the output."""

from __future__ import annotations

import dataclasses
import io
import json
import time
from pathlib import Path

from teamsync.commands.recall import run_dream, run_extract, run_recall
from teamsync.output import Output
from testing.fake_anthropic import FakeAnthropic, json_answer, text, tool_use
from testing.recall import claude_for, memory, put, settings_for, write_transcript


def _output(json_mode: bool = False) -> tuple[Output, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Output(json_mode=json_mode, out=out, err=err), out, err


def test_recall_prints_freshness_and_stale_warnings(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    old = time.time() - 5 * 86_400
    put(memdir, "team/p.md", memory("p", "retry policy", body="See lib/gone.py.\n"), mtime=old)
    (tmp_path / "lib").mkdir()
    output, out, err = _output()
    code = run_recall(
        settings_for(memdir, cwd=tmp_path), output, query="retry policy", offline=True
    )
    assert code == 0
    assert "── team/p.md  [project · 5 days old · score" in out.getvalue()
    assert "note: This memory is 5 days old." in out.getvalue()
    assert (
        "warning: team/p.md may be stale: cites lib/gone.py, which no longer exists"
        in err.getvalue()
    )


def test_recall_with_no_match_says_so(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    put(memdir, "a.md", memory("a", "alpha"))
    output, out, _ = _output()
    code = run_recall(settings_for(memdir), output, query="zzzz", offline=True, mode="lexical")
    assert code == 0
    assert out.getvalue().strip() == "No memory is relevant enough (lexical selection)."


def test_extract_output_never_contains_the_secret(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    secret = "gh" + "p_" + "Zq8rT2vLm9XwB4nK7pS1dF6gH3jY0uEcA5iO"
    transcript = write_transcript(
        tmp_path / "t.jsonl", [("u1", "user", "remember the deploy token")]
    )
    leaky = memory("token", "deploy token", "reference", f"token: {secret}\n")
    for json_mode in (False, True):
        fake = FakeAnthropic(
            [tool_use(("write_file", {"path": "team/token.md", "content": leaky})), text("ok")]
        )
        output, out, err = _output(json_mode)
        settings = settings_for(memdir, XDG_STATE_HOME=str(tmp_path / f"state-{json_mode}"))
        settings = dataclasses.replace(settings, json=json_mode)
        assert run_extract(settings, output, transcript=transcript, claude=claude_for(fake)) == 0
        assert secret not in out.getvalue() + err.getvalue()
        assert "github-pat" in err.getvalue()
        if not json_mode:
            assert "no memory written; 1 write(s) refused" in out.getvalue()
        if json_mode:
            payload = json.loads(out.getvalue())
            assert payload["written"] == [] and payload["refused"][0]["path"] == "team/token.md"
    assert not (memdir / "team/token.md").exists()


def test_dream_output_lists_the_plan_and_backup(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    for i in range(4):
        put(memdir, f"m{i}.md", memory(f"m{i}", f"memory {i}"))
    plan = {
        "summary": "dropped an obsolete note",
        "writes": [],
        "deletions": [{"path": "m3.md", "reason": "superseded by m2.md"}],
    }
    output, out, _ = _output()
    code = run_dream(
        settings_for(memdir),
        output,
        force=True,
        claude=claude_for(FakeAnthropic([json_answer(plan)])),
    )
    assert code == 0
    text_out = out.getvalue()
    assert "delete m3.md: superseded by m2.md" in text_out
    assert "consolidated: dropped an obsolete note" in text_out
    assert "pre-images kept in " in text_out and "dream-backups" in text_out
