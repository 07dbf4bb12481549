"""``teamsync status --explain KEY`` reads the plan ``status`` shows: one answer per key."""

from __future__ import annotations

import json
from pathlib import Path

from testing.gitrepos import commit_files, fake_token, make_team


def test_explain_names_the_action_and_the_reason_of_each_key(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    token = fake_token()
    alice.write("fine.md", "fine\n")
    alice.write("leak.md", f"key = {token}\n")
    commit_files(alice.remote, {"theirs.md": b"theirs\n"})

    held = alice.cli("status", "--explain", "team/leak.md")
    assert held.returncode == 0, held.stderr
    assert "team/leak.md: hold back (gate-held)" in held.stdout
    assert "github-pat" in held.stdout and token not in held.stdout + held.stderr

    payload = json.loads(alice.cli("--json", "status", "--explain", "leak.md").stdout)
    assert payload["entry"]["action"] == "hold_back" and payload["entry"]["code"] == "gate-held"
    # status --json carries the same plan, entry for entry
    status = json.loads(alice.cli("--json", "status").stdout)
    by_key = {e["key"]: e for e in status["plan"]}
    assert by_key["leak.md"] == payload["entry"]
    pushed, pulled = by_key["fine.md"], by_key["theirs.md"]
    assert (pushed["action"], pushed["code"], pushed["phase"]) == ("push", "new-here", "the remote")
    assert (pulled["action"], pulled["code"]) == ("write_here", "new-there")

    missing = alice.cli("status", "--explain", "nowhere.md")
    assert missing.returncode == 1 and "no such memory" in missing.stderr

    alice.sync()
    assert bob.sync().written == ["fine.md", "theirs.md"]
    same = json.loads(bob.cli("--json", "status", "--explain", "fine.md").stdout)["entry"]
    assert (same["action"], same["code"]) == ("nothing", "in-sync")


def test_explain_in_push_mode_terms_a_merge_held_for_sync(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    alice.write("n.md", "one\ntwo\nthree\n")
    alice.sync()
    bob.sync()
    alice.write("n.md", "one\ntwo\nthree\nalice\n")
    alice.sync()
    bob.write("n.md", "bob\none\ntwo\nthree\n")
    report = bob.sync("push")
    assert [r.key for r in report.held_back] == ["n.md"]
    entry = report.plan.get("n.md")
    assert (entry.action, entry.code) == ("hold_back", "merge-in-sync-only")
    would = json.loads(bob.cli("--json", "status", "--explain", "n.md").stdout)["entry"]
    assert (would["action"], would["code"]) == ("merge", "merged")


def test_docs_list_every_action_and_reason_code() -> None:
    from teamsync.sync import decide

    doc = (Path(__file__).parents[2] / "docs/sync.md").read_text(encoding="utf-8")
    section = doc.split("## The plan of a round", 1)[1].split("\n## ", 1)[0]
    missing = [c for c in (*decide.ACTIONS, *decide.REASONS) if f"| `{c}` |" not in section]
    assert not missing
