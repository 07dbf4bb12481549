"""`--staged` and `--git-range` against real git repositories."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from testing.scan import PLANTS, fake_env, git

TEAMSYNC = str(Path(sys.executable).parent / "teamsync")


def _scan(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[int, dict[str, object]]:
    proc = subprocess.run(
        [TEAMSYNC, "--json", "scan", *args], cwd=cwd, env=env or fake_env(),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    (path / "README.md").write_text("# repo\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "init")
    return path


def test_staged_scans_the_index_not_the_work_tree(repo: Path) -> None:
    note = repo / "note.md"
    note.write_text("intro\n" + PLANTS["github-pat"](random.Random(1)) + "\n")
    git(repo, "add", "note.md")
    note.write_text("intro\nclean now, but the index still holds the token\n")
    code, payload = _scan(repo, "--staged")
    assert code == 1
    assert payload["findings"] == [
        {"path": "note.md", "line": 2, "rule": "github-pat",
         "fingerprint": payload["findings"][0]["fingerprint"]}  # type: ignore[index]
    ]  # fmt: skip
    assert _scan(repo, "note.md")[0] == 0  # the work tree is clean


def test_staged_clean_index_passes_even_if_work_tree_is_dirty(repo: Path) -> None:
    note = repo / "note.md"
    note.write_text("clean\n")
    git(repo, "add", "note.md")
    note.write_text("clean\n" + PLANTS["npm-access-token"](random.Random(2)) + "\n")
    (repo / "untracked.md").write_text(PLANTS["npm-access-token"](random.Random(3)) + "\n")
    code, payload = _scan(repo, "--staged")
    assert (code, payload["files_scanned"], payload["findings"]) == (0, 1, [])


def test_staged_in_subdirectory_reports_repo_paths_and_skips_deletions(repo: Path) -> None:
    sub = repo / "team" / "deep"
    sub.mkdir(parents=True)
    (sub / "k.md").write_text(PLANTS["stripe-access-token"](random.Random(4)) + "\n")
    git(repo, "add", "team")
    git(repo, "rm", "-q", "README.md")
    code, payload = _scan(sub, "--staged")
    assert code == 1
    assert [f["path"] for f in payload["findings"]] == ["team/deep/k.md"]  # type: ignore[index]


def test_staged_honours_git_index_file_from_a_hook(repo: Path) -> None:
    (repo / "a.md").write_text(PLANTS["pulumi-api-token"](random.Random(5)) + "\n")
    env = fake_env({"GIT_INDEX_FILE": str(repo / ".git" / "alt-index")})
    subprocess.run(["git", "add", "a.md"], cwd=repo, env=env, check=True)
    assert _scan(repo, "--staged", env=env)[0] == 1
    assert _scan(repo, "--staged")[0] == 0  # the default index never saw a.md


def test_git_range_scans_only_added_lines_with_new_line_numbers(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    old_secret = PLANTS["gitlab-pat"](random.Random(6))
    (repo / "old.md").write_text(old_secret + "\n")
    git(repo, "add", "old.md")
    git(repo, "commit", "-q", "-m", "old secret, before the range")
    start = git(repo, "rev-parse", "HEAD").strip()
    note = repo / "team.md"
    note.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    git(repo, "add", "team.md")
    git(repo, "commit", "-q", "-m", "ten lines")
    lines = note.read_text().splitlines()
    lines.insert(6, PLANTS["slack-bot-token"](random.Random(7)))
    note.write_text("\n".join(lines) + "\n")
    git(repo, "commit", "-q", "-am", "add a token at line 7")
    note.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    git(repo, "commit", "-q", "-am", "remove it again")
    head = git(repo, "rev-parse", "HEAD").strip()
    code, payload = _scan(repo, "--git-range", f"{start}..{head}")
    assert code == 1
    assert [(f["path"], f["line"], f["rule"]) for f in payload["findings"]] == [  # type: ignore[index]
        ("team.md", 7, "slack-bot-token")
    ]
    code, payload = _scan(repo, "--git-range", f"{base}..{start}")
    assert [(f["path"], f["line"]) for f in payload["findings"]] == [("old.md", 1)]  # type: ignore[index]


def test_git_range_private_key_block_and_context_lines(repo: Path) -> None:
    start = git(repo, "rev-parse", "HEAD").strip()
    readme = repo / "README.md"
    block = PLANTS["private-key"](random.Random(8))
    readme.write_text("# repo\n\nSee below.\n" + block + "\n")
    git(repo, "commit", "-q", "-am", "key")
    code, payload = _scan(repo, "--git-range", f"{start}..HEAD")
    assert code == 1
    expected_line = 4 + block[: block.index("-----")].count("\n")
    assert [(f["rule"], f["line"]) for f in payload["findings"]] == [("private-key", expected_line)]  # type: ignore[index]


def test_git_range_clean_and_bad_range(repo: Path) -> None:
    start = git(repo, "rev-parse", "HEAD").strip()
    (repo / "README.md").write_text("# repo\nmore words\n")
    git(repo, "commit", "-q", "-am", "words")
    assert _scan(repo, "--git-range", f"{start}..HEAD") == (0, {"files_scanned": 1, "findings": []})
    proc = subprocess.run(
        [TEAMSYNC, "scan", "--git-range", "nope..HEAD"], cwd=repo, env=fake_env(),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "git log failed" in proc.stderr


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads VmHWM from procfs")
def test_git_range_streams_a_large_added_file_in_bounded_windows(repo: Path) -> None:
    """46 MB added in one commit: findings exact and once each, never held whole."""
    rng = random.Random(11)
    start = git(repo, "rev-parse", "HEAD").strip()
    filler = "".join(f"filler line {i:07d} {'x' * 40}\n" for i in range(1000))  # 61 KB
    body, lines = [], 0
    planted: list[tuple[int, str, str]] = []
    for block in range(750):  # about 46 MB
        if block in (131, 134, 749):  # near the first cut (8 MiB), inside its overlap, the end
            kind = {131: "private-key", 134: "github-pat", 749: "slack-bot-token"}[block]
            text = PLANTS[kind](rng)
            planted.append((lines + 1 + text[: text.index("-----")].count("\n")
                            if kind == "private-key" else lines + 1, kind, text))  # fmt: skip
            body.append(text + "\n")
            lines += text.count("\n") + 1
        body.append(filler)
        lines += 1000
    (repo / "big.txt").write_text("".join(body))
    git(repo, "add", "big.txt")
    git(repo, "commit", "-q", "-m", "a large file")
    probe = (
        "import sys\n"
        "from teamsync.cli import main\n"
        "try:\n    code = main()\n"
        "finally:\n"
        "    hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')]\n"
        "    print('maxrss', hwm[0].split()[1], file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, "--json", "scan", "--git-range", f"{start}..HEAD"],
        cwd=repo, env=fake_env(), capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    found = [(f["line"], f["rule"]) for f in json.loads(proc.stdout)["findings"]]
    assert sorted(found) == sorted((line, kind) for line, kind, _ in planted)
    rss_kib = int(proc.stderr.rsplit("maxrss", 1)[1].split()[0])
    # holding the addition whole peaked at 275 MB; in 8 MiB windows it is about 60 MB
    assert rss_kib < 120 * 1024, f"peak RSS {rss_kib} KiB for a 46 MB addition"


def test_staged_blob_with_a_nul_byte_is_scanned(repo: Path) -> None:
    token = PLANTS["slack-bot-token"](random.Random(9))
    (repo / "data.bin").write_bytes(b"\x00binary prefix\n" + token.encode() + b"\n")
    git(repo, "add", "data.bin")
    code, payload = _scan(repo, "--staged")
    assert code == 1
    assert [(f["path"], f["line"]) for f in payload["findings"]] == [("data.bin", 2)]  # type: ignore[index]
