"""Push and pull ignore inline allow comments; the reviewed allowlist is honoured; names are content."""

from __future__ import annotations

import json
from pathlib import Path

from teamsync.security.allowlist import Entry, save_entries
from teamsync.security.secrets import scan_text
from testing.gitrepos import commit_files, fake_token, make_team, remote_files

PRAGMA = " <!-- teamsync: allow -->"


def test_push_refuses_a_secret_behind_an_inline_allow_comment(tmp_path: Path) -> None:
    alice, _ = make_team(tmp_path)
    token = fake_token()
    alice.write("leak.md", f"token: {token}{PRAGMA}\n")
    result = alice.cli("--json", "push")
    assert result.returncode == 1
    payload = json.loads(result.stdout)
    assert [h["key"] for h in payload["held_back"]] == ["leak.md"]
    assert token not in result.stdout + result.stderr
    assert "leak.md" not in remote_files(alice.remote)


def test_pull_refuses_a_remote_secret_behind_an_inline_allow_comment(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    token = fake_token()
    commit_files(alice.remote, {"leak.md": f"token: {token}{PRAGMA}\n".encode()})
    report = bob.sync()
    assert "leak.md" not in bob.files()
    assert [r.key for r in report.rejected] == ["leak.md"]


def test_reviewed_allowlist_lets_a_confirmed_false_positive_through(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    token = fake_token()
    text = f"fixture token (revoked): {token}\n"
    [finding] = scan_text(text, "fixture.md")
    for mate in (alice, bob):
        save_entries(
            mate.memdir / "allowlist.json", [Entry(finding.fingerprint, "revoked fixture")]
        )
    alice.write("fixture.md", text)
    assert alice.cli("--json", "push").returncode == 0
    assert remote_files(alice.remote)["fixture.md"] == text
    bob.sync()
    assert bob.files()["fixture.md"] == text


def test_a_remote_path_holding_a_secret_is_refused_and_never_printed(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    token = fake_token()
    commit_files(alice.remote, {f"{token}.md": b"a clean memory\n", "fine.md": b"fine\n"})
    result = bob.cli("--json", "pull")
    assert result.returncode == 1
    assert token not in result.stdout + result.stderr
    payload = json.loads(result.stdout)
    assert [r["key"] for r in payload["rejected"]] == ["<github-pat>.md"]
    assert bob.files() == {"fine.md": "fine\n"}
    text = bob.cli("pull")
    assert token not in text.stdout + text.stderr and "<github-pat>.md" in text.stdout + text.stderr
