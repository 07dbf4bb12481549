"""`teamsync scan` through click and as a real subprocess: formats, exit codes, baseline, no leaks."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from teamsync.cli import cli
from teamsync.errors import SecretFound
from teamsync.security.secrets import scan_text
from testing.scan import PLANTS, fake_env

TEAMSYNC = str(Path(sys.executable).parent / "teamsync")


def _planted(tmp_path: Path) -> tuple[Path, list[str]]:
    """A memory-like tree holding one secret of every kind; returns (dir, secret texts)."""
    rng = random.Random(42)
    lines = {kind: PLANTS[kind](rng) for kind in PLANTS}
    team = tmp_path / "memory" / "team"
    team.mkdir(parents=True)
    body = "\n\n".join(f"## {kind}\n{line}" for kind, line in lines.items())
    (team / "all.md").write_text("---\nname: all\ntype: project\n---\n" + body + "\n")
    (team / "clean.md").write_text("# Clean\nNothing here.\n")
    (team / "blob.bin").write_bytes(b"\x00\x01binary")
    secrets = [_secret_part(line) for line in lines.values()]
    return tmp_path / "memory", secrets


def _secret_part(line: str) -> str:
    """The longest whitespace-free run of a plant: the secret (or most of it)."""
    runs = line.replace("\\n", " ").split()
    return max(runs, key=len)


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TEAMSYNC, *args], cwd=cwd, env=fake_env(), capture_output=True, text=True
    )


@pytest.mark.parametrize(
    "args",
    [
        ["scan", "memory"],
        ["--json", "scan", "memory"],
        ["scan", "--format", "json", "memory"],
        ["scan", "--format", "sarif", "memory"],
    ],
)
def test_no_output_format_contains_a_planted_secret(tmp_path: Path, args: list[str]) -> None:
    memdir, secrets = _planted(tmp_path)
    proc = _run(args, tmp_path)
    assert proc.returncode == 1
    everything = proc.stdout + proc.stderr
    assert "all.md" in everything
    for secret in secrets:
        assert len(secret) >= 8
        assert secret not in everything


def test_report_files_and_baseline_never_contain_a_secret(tmp_path: Path) -> None:
    memdir, secrets = _planted(tmp_path)
    for fmt in ("text", "json", "sarif"):
        proc = _run(["scan", "--format", fmt, "--output", f"r.{fmt}", "memory"], tmp_path)
        assert proc.returncode == 1
        report = (tmp_path / f"r.{fmt}").read_text()
        assert "all.md" in report
        assert not any(secret in report for secret in secrets)
    proc = _run(["scan", "--baseline", "b.json", "--update-baseline", "memory"], tmp_path)
    assert proc.returncode == 0
    baseline = (tmp_path / "b.json").read_text()
    assert len(json.loads(baseline)["fingerprints"]) == len(PLANTS)
    assert not any(secret in baseline + proc.stdout + proc.stderr for secret in secrets)


def test_exception_messages_and_reprs_hold_no_secret() -> None:
    rng = random.Random(7)
    plants = [PLANTS[kind](rng) for kind in PLANTS]
    findings = scan_text("\n".join(plants), "x.md")
    assert len(findings) == len(PLANTS)
    error = SecretFound("x.md", findings)
    rendered = str(error) + repr(error) + repr(findings) + repr(findings[0].as_dict())
    for plant in plants:
        assert _secret_part(plant) not in rendered


def test_scanner_and_candidate_reprs_hold_no_secret() -> None:
    from teamsync.security.secrets import Scanner, _Candidate

    value = PLANTS["generic-secret"](random.Random(4)).split(": ")[1]
    scanner = Scanner()
    scanner.add("db_password: " + value, "x.md")
    assert value not in repr(scanner) + repr(_Candidate("x.md", 1, "db_password", value))
    assert [f.rule for f in scanner.finish()] == ["generic-secret"]


def test_generic_failure_message_holds_no_secret() -> None:
    from teamsync.errors import TeamsyncError
    from teamsync.security._generic import detect

    value = PLANTS["generic-secret"](random.Random(3)).split(": ")[1]
    with pytest.raises(TeamsyncError) as info:
        detect([(None, "db_password", value)])  # type: ignore[list-item]
    assert value not in str(info.value) and info.value.__cause__ is None


def test_json_shape_and_exit_codes(tmp_path: Path) -> None:
    memdir, _ = _planted(tmp_path)
    runner = CliRunner()
    result = runner.invoke(cli, ["--json", "scan", str(memdir / "team")])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["files_scanned"] == 3  # all.md, clean.md and blob.bin: binaries are scanned too
    assert {tuple(sorted(f)) for f in payload["findings"]} == {
        ("fingerprint", "line", "path", "rule")
    }
    assert {f["rule"] for f in payload["findings"]} == set(PLANTS)
    clean = runner.invoke(cli, ["--json", "scan", str(memdir / "team" / "clean.md")])
    assert clean.exit_code == 0
    assert json.loads(clean.stdout) == {"files_scanned": 1, "findings": []}


def test_text_output_names_path_line_rule_and_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("x\n" + PLANTS["github-pat"](random.Random(1)) + "\n")
    proc = _run(["scan", "n.md"], tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.startswith("n.md:2: github-pat (fingerprint ")
    assert "reviewed allowlist" in proc.stdout and "secret manager" in proc.stdout
    assert "teamsync: allow" not in proc.stdout  # no report hints at an inline bypass


@pytest.mark.parametrize(
    "args",
    [
        ["scan", "--staged", "x.md"],
        ["scan", "--format", "yaml"],
        ["scan", "--update-baseline"],
        ["scan", "does-not-exist.md"],
        ["scan", "--git-range", "nodots"],
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "x.md").write_text("ok\n")
    proc = _run(args, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip()


def test_baseline_suppresses_known_and_reports_new(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_text(PLANTS["npm-access-token"](random.Random(1)) + "\n")
    assert (
        _run(["scan", "--baseline", "b.json", "--update-baseline", "n.md"], tmp_path).returncode
        == 0
    )
    assert _run(["scan", "--baseline", "b.json", "n.md"], tmp_path).returncode == 0
    note.write_text(note.read_text() + PLANTS["pulumi-api-token"](random.Random(1)) + "\n")
    proc = _run(["--json", "scan", "--baseline", "b.json", "n.md"], tmp_path)
    assert proc.returncode == 1
    assert [f["rule"] for f in json.loads(proc.stdout)["findings"]] == ["pulumi-api-token"]


def test_bad_baseline_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text('{"version": 99, "fingerprints": []}')
    (tmp_path / "n.md").write_text("ok\n")
    proc = _run(["scan", "--baseline", "b.json", "n.md"], tmp_path)
    assert proc.returncode == 1
    assert "version 99" in proc.stderr and "--update-baseline" in proc.stderr


def test_sarif_is_valid_2_1_0(tmp_path: Path) -> None:
    memdir, _ = _planted(tmp_path)
    proc = _run(["scan", "--format", "sarif", "memory"], tmp_path)
    log = json.loads(proc.stdout)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] == "teamsync"
    assert [r["id"] for r in rules] == sorted({r["id"] for r in rules})
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "memory/team/all.md"
        assert location["region"]["startLine"] >= 1
        assert len(result["partialFingerprints"]["teamsyncFingerprint/v1"]) == 32
        assert result["message"]["text"]


def test_skips_git_dirs_and_scans_huge_files_to_the_end(tmp_path: Path) -> None:
    secret = PLANTS["github-pat"](random.Random(2)) + "\n"
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(secret)
    (tmp_path / "huge.md").write_text("x" * (10 * 1024 * 1024 + 1) + "\n" + secret)
    proc = _run(["--json", "scan", "."], tmp_path)
    assert proc.returncode == 1
    payload = json.loads(proc.stdout)
    assert payload["files_scanned"] == 1
    assert [(f["path"], f["line"]) for f in payload["findings"]] == [("huge.md", 2)]
    assert "skipped" not in proc.stderr


def test_default_path_is_the_memory_dir(tmp_path: Path) -> None:
    memdir, _ = _planted(tmp_path)
    proc = _run(["--dir", str(memdir), "--json", "scan"], tmp_path / "memory" / "team")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["files_scanned"] == 3  # blob.bin is scanned too


def test_the_scanners_own_sources_scan_clean() -> None:
    root = Path(__file__).resolve().parents[2]
    mine = [
        "teamsync/security/rules.py", "teamsync/security/secrets.py", "teamsync/security/_generic.py",
        "teamsync/security/sources.py", "teamsync/security/baseline.py", "teamsync/security/sarif.py",
        "teamsync/commands/scan.py", "teamsync/cli/scan.py", "testing/scan.py", "tests/scan",
        "bench/scan.py", "docs/scanning.md", "docs/ci.md", ".pre-commit-hooks.yaml",
    ]  # fmt: skip
    proc = _run(["--json", "scan", *[p for p in mine if (root / p).exists()]], root)
    assert json.loads(proc.stdout)["findings"] == []
    assert proc.returncode == 0


def test_file_names_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """A hostile file name (from a checkout or a commit range) is escaped in text output."""
    name = "evil\x1b]52;c;aGk=\x07.md"
    (tmp_path / name).write_text("token: " + "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" + "\n")
    result = CliRunner().invoke(cli, ["scan", str(tmp_path)])
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "evil\\x1b]52;c;aGk=\\x07.md" in result.output


def _scan_with_an_unreadable_file(
    args: list[str], locked_name: str = "locked.md"
) -> subprocess.CompletedProcess[str]:
    """``teamsync ARGS tree`` over one clean file and one the scanning user cannot read.

    As root (CI), the scan runs as ``nobody`` (``setpriv``) so that mode 000 means
    unreadable; its HOME is one that user can read.
    """
    import os
    import shutil
    import tempfile

    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    if os.geteuid() != 0:
        prefix = []
    elif shutil.which("setpriv") is None:
        pytest.skip("needs setpriv to drop root")
    base = Path(tempfile.mkdtemp(prefix="teamsync-unreadable-"))
    try:
        base.chmod(0o755)
        tree = base / "tree"
        tree.mkdir()
        (tree / "clean.md").write_text("# Clean\nNothing here.\n")
        (base / "home").mkdir(mode=0o777)
        locked = tree / locked_name
        locked.write_text("# Locked\n")
        locked.chmod(0)
        return subprocess.run(
            [*prefix, TEAMSYNC, *args, "tree"], cwd=base,
            env={**fake_env(), "HOME": str(base / "home")},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        shutil.rmtree(base)


@pytest.mark.parametrize("fmt", [["scan"], ["--json", "scan"], ["scan", "--exit-code", "0"]])
def test_a_file_the_scan_cannot_read_fails_the_scan(fmt: list[str]) -> None:
    proc = _scan_with_an_unreadable_file(fmt)
    assert proc.returncode == 1, proc.stderr
    assert "tree/locked.md: not scanned: unreadable (Permission denied)" in proc.stderr
    assert "could not be read, so the scan cannot pass" in proc.stderr
    assert "no secrets found" not in proc.stdout + proc.stderr
    if "--json" in fmt:
        payload = json.loads(proc.stdout)
        assert payload["files_scanned"] == 1
        assert payload["unreadable"] == [
            {"path": "tree/locked.md", "reason": "unreadable (Permission denied)"}
        ]


@pytest.mark.skipif(not Path("/proc/self/mem").is_file(), reason="Linux procfs")
def test_a_read_error_mid_file_fails_the_scan(tmp_path: Path) -> None:
    proc = _run(["scan", "/proc/self/mem"], tmp_path)
    assert proc.returncode == 1
    assert "/proc/self/mem: not scanned: unreadable (Input/output error)" in proc.stderr


def test_a_nul_byte_does_not_hide_a_token_after_it(tmp_path: Path) -> None:
    token = PLANTS["github-pat"](random.Random(5))
    (tmp_path / "blob.dat").write_bytes(b"\x00\x01\x02header\n" + token.encode() + b"\n")
    proc = _run(["--json", "scan", "blob.dat"], tmp_path)
    assert proc.returncode == 1
    assert [(f["line"], f["rule"]) for f in json.loads(proc.stdout)["findings"]] == [
        (2, "github-pat")
    ]


def test_an_unreadable_file_named_with_a_secret_is_shown_redacted() -> None:
    token = _secret_part(PLANTS["github-pat"](random.Random(3)))
    proc = _scan_with_an_unreadable_file(["--json", "scan"], locked_name=f"{token}.md")
    assert proc.returncode == 1
    assert token not in proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["unreadable"][0]["path"] == "tree/<github-pat>.md"
