"""Scan gates: pragmas in team memory, the reviewed allowlist, names, and commit provenance."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from teamsync.commands.allow import AllowRequest, run_allow
from teamsync.config import Settings
from teamsync.errors import UsageError
from teamsync.output import Output
from teamsync.security.allowlist import load_allowlist
from testing.scan import PLANTS, fake_env, git

TEAMSYNC = str(Path(sys.executable).parent / "teamsync")


def _scan(cwd: Path, *args: str) -> tuple[int, dict[str, object], str]:
    proc = subprocess.run(
        [TEAMSYNC, "--json", "scan", *args], cwd=cwd, env=fake_env({"HOME": str(cwd)}),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stdout + proc.stderr


def _text_scan(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TEAMSYNC, "scan", *args], cwd=cwd, env=fake_env({"HOME": str(cwd)}),
        capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    git(path, "config", "user.email", "t@example.invalid")
    git(path, "config", "user.name", "T")
    (path / "README.md").write_text("# repo\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "init")
    return path


TOKEN_LINE = PLANTS["github-pat"](random.Random(31))
PRAGMA = "  <!-- teamsync: allow -->"


def test_pragma_counts_in_ordinary_code_but_not_in_memory_paths(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "fixture.md").write_text(TOKEN_LINE + PRAGMA + "\n")
    team = repo / "memory" / "team"
    team.mkdir(parents=True)
    (team / "x.md").write_text(TOKEN_LINE + PRAGMA + "\n")
    code, payload, _ = _scan(repo, "src", "memory")
    assert code == 1
    assert [f["path"] for f in payload["findings"]] == ["memory/team/x.md"]  # type: ignore[index]


@pytest.mark.parametrize("flag", ["--ignore-inline-allow", "--memory"])
def test_ci_switches_turn_pragmas_off_everywhere(repo: Path, flag: str) -> None:
    (repo / "code.md").write_text(TOKEN_LINE + PRAGMA + "\n")
    assert _scan(repo, "code.md")[0] == 0
    code, payload, _ = _scan(repo, flag, "code.md")
    assert code == 1 and len(payload["findings"]) == 1  # type: ignore[arg-type]


def test_staged_memory_file_with_a_pragma_is_refused(repo: Path) -> None:
    team = repo / "memory" / "team"
    team.mkdir(parents=True)
    (team / "x.md").write_text(TOKEN_LINE + PRAGMA + "\n")
    git(repo, "add", "memory/team/x.md")
    assert _scan(repo, "--staged")[0] == 1


def test_reviewed_allowlist_is_honoured_and_needs_a_person(repo: Path) -> None:
    team = repo / "memory" / "team"
    team.mkdir(parents=True)
    (team / "x.md").write_text(TOKEN_LINE + "\n")
    code, payload, _ = _scan(repo, "memory")
    assert code == 1
    fp = str(payload["findings"][0]["fingerprint"])  # type: ignore[index]
    settings = Settings.build(cwd=repo, environ={"HOME": str(repo), "USER": "rev"})
    out = Output(out=io.StringIO(), err=io.StringIO())
    request = AllowRequest(
        fingerprints=(fp,), reason="revoked test fixture token", rule="github-pat"
    )
    with pytest.raises(UsageError, match="person at a terminal"):
        run_allow(settings, out, request, confirm=None)  # a tool, not a person
    assert run_allow(settings, out, request, confirm=lambda q: False) == 1
    assert load_allowlist(repo, None) == frozenset()
    assert run_allow(settings, out, request, confirm=lambda q: True) == 0
    stored = json.loads((repo / ".teamsync" / "allowlist.json").read_text())
    assert stored["fingerprints"][0]["reason"] == "revoked test fixture token"
    assert stored["fingerprints"][0]["added_by"] == "rev"
    assert TOKEN_LINE.split()[1] not in json.dumps(stored)
    assert _scan(repo, "memory")[0] == 0


def test_allow_takes_the_prefix_the_text_scan_prints(repo: Path) -> None:
    """Issue 24 §13: the 16 digits a text scan prints, pasted into allow, make the scan pass."""
    import re

    team = repo / "memory" / "team"
    team.mkdir(parents=True)
    (team / "x.md").write_text(TOKEN_LINE + "\n")
    printed = _text_scan(repo, "memory")
    assert printed.returncode == 1
    (prefix,) = re.findall(r"fingerprint ([0-9a-f]{16})…", printed.stdout + printed.stderr)
    full = str(_scan(repo, "memory")[1]["findings"][0]["fingerprint"])  # type: ignore[index]
    assert len(full) == 32 and full.startswith(prefix)
    settings = Settings.build(cwd=repo, environ={"HOME": str(repo), "USER": "rev"})
    out = Output(out=io.StringIO(), err=io.StringIO())
    asked: list[str] = []

    def yes(question: str) -> bool:
        asked.append(question)
        return True

    request = AllowRequest(fingerprints=(prefix,), reason="revoked test fixture token")
    assert run_allow(settings, out, request, confirm=yes) == 0
    assert prefix in asked[0]
    assert load_allowlist(repo, None) == frozenset({full})  # the full one, never the prefix
    assert _text_scan(repo, "memory").returncode == 0
    removed = AllowRequest(fingerprints=(full[:20],), remove=True)
    assert run_allow(settings, out, removed, confirm=lambda q: True) == 0
    assert load_allowlist(repo, None) == frozenset()


def test_allow_refuses_a_prefix_it_cannot_pin_down(repo: Path) -> None:
    from teamsync.commands.allow import match_fingerprints
    from teamsync.security.allowlist import Entry, save_entries

    settings = Settings.build(cwd=repo, environ={"HOME": str(repo)})
    out = Output(out=io.StringIO(), err=io.StringIO())
    unknown = AllowRequest(fingerprints=("0123456789abcdef",), reason="not a secret at all")
    with pytest.raises(UsageError, match="no fingerprint in a scan of the project .* starts"):
        run_allow(settings, out, unknown, confirm=lambda q: True)
    assert not (repo / ".teamsync" / "allowlist.json").exists()
    twins = {"ab" * 8 + "0" * 16: "a.md:3 github-pat", "ab" * 8 + "1" * 16: "b.md:9 aws-key"}
    with pytest.raises(UsageError) as caught:
        match_fingerprints(settings, AllowRequest(fingerprints=("ab" * 8,)), [], lambda: twins)
    message = str(caught.value)
    assert "ambiguous: 2 fingerprints" in message
    assert all(fp in message for fp in twins) and "b.md:9 aws-key" in message
    path = repo / ".teamsync" / "allowlist.json"
    path.parent.mkdir()
    save_entries(path, [Entry(fp, "reviewed fixture") for fp in twins])
    remove = AllowRequest(fingerprints=("ab" * 8,), remove=True)
    with pytest.raises(UsageError, match="ambiguous: 2 fingerprints in the allowlist"):
        run_allow(settings, out, remove, confirm=lambda q: True)
    assert load_allowlist(repo, None) == frozenset(twins)
    one = AllowRequest(fingerprints=("ab" * 8 + "1",), remove=True)
    assert run_allow(settings, out, one, confirm=lambda q: True) == 0
    assert load_allowlist(repo, None) == frozenset({"ab" * 8 + "0" * 16})


def test_allow_cli_refuses_without_a_terminal(repo: Path) -> None:
    proc = subprocess.run(
        [TEAMSYNC, "allow", "0123456789abcdef", "--reason", "not a secret at all"],
        cwd=repo, env=fake_env({"HOME": str(repo)}), capture_output=True, text=True,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert proc.returncode != 0 and "terminal" in proc.stderr
    assert not (repo / ".teamsync" / "allowlist.json").exists()


def test_secret_in_a_file_name_is_found_and_never_printed(repo: Path) -> None:
    token = TOKEN_LINE.split()[1]
    team = repo / "memory" / "team"
    team.mkdir(parents=True)
    (team / f"{token}.md").write_text("a clean memory\n")
    code, payload, raw = _scan(repo, "memory")
    assert code == 1 and token not in raw
    assert payload["findings"] == [  # type: ignore[comparison-overlap]
        {"path": "memory/team/<github-pat>.md", "line": 0, "rule": "github-pat",
         "fingerprint": payload["findings"][0]["fingerprint"]}  # type: ignore[index]
    ]  # fmt: skip
    text = _text_scan(repo, "memory")
    assert "memory/team/<github-pat>.md:name: github-pat" in text.stdout
    assert token not in text.stdout + text.stderr


def test_git_range_findings_carry_the_commit_that_added_the_line(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "notes.md").write_text("intro\n" + TOKEN_LINE + "\n")
    git(repo, "add", "notes.md")
    git(repo, "commit", "-q", "-m", "add")
    added = git(repo, "rev-parse", "HEAD").strip()
    (repo / "notes.md").write_text("intro\nremoved again\n")
    git(repo, "commit", "-qam", "remove")
    head = git(repo, "rev-parse", "HEAD").strip()
    code, payload, _ = _scan(repo, "--git-range", f"{base}..{head}")
    assert code == 1
    [finding] = payload["findings"]  # type: ignore[misc]
    assert finding["commit"] == added and finding["line"] == 2
    text = _text_scan(repo, "--git-range", f"{base}..{head}")
    assert f"added in commit {added[:12]}" in text.stdout
    sarif = json.loads(
        _text_scan(repo, "--git-range", f"{base}..{head}", "--format", "sarif").stdout
    )
    [result] = sarif["runs"][0]["results"]
    assert result["partialFingerprints"]["teamsyncCommit/v1"] == added
    assert result["properties"]["commit"] == added
