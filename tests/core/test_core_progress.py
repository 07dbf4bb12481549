"""The sync progress bar on a real terminal (a pty): counts and percent, and the
summary on its own line after the bar."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from teamsync.cli.sync import ProgressBar
from testing.gitrepos import TEAMSYNC, make_remote, memory, seed_remote


def _on_a_terminal(args: list[str], cwd: Path) -> tuple[str, str]:
    """Run with stderr on a pty; (what the terminal showed, stdout)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    out = proc.communicate(timeout=120)[0]
    os.close(master)
    return shown.decode("utf-8", "replace"), out.decode()


def test_pull_bar_shows_counts_and_ends_its_line(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    seed_remote(remote, {f"m{i:03}.md": memory(f"M{i}", f"{i}\n") for i in range(300)})
    mem = str(tmp_path / "mem")
    init = subprocess.run([TEAMSYNC, "--dir", mem, "init", "--git", str(remote)],
                          capture_output=True, text=True)  # fmt: skip
    assert init.returncode == 0, init.stderr
    shown, out = _on_a_terminal([TEAMSYNC, "--dir", mem, "pull"], tmp_path)
    assert "Syncing" in shown and "0/300" in shown and "300/300" in shown and "100%" in shown
    assert shown.rstrip("\r\n").endswith("\x1b[?25h")  # the bar's line is ended ...
    assert shown.endswith("\n")
    assert out == "300 written here.\n"  # ... and the summary is a line of its own


def test_no_bar_off_a_terminal_or_for_small_runs(tmp_path: Path) -> None:
    import io

    bar = ProgressBar(stream=io.StringIO())
    bar.start(1000)
    bar.advance(10)
    bar.close()
    assert bar.stream.getvalue() == ""  # type: ignore[attr-defined]


def test_a_big_git_push_writes_its_blobs_in_one_pack(tmp_path: Path) -> None:
    """6,000 blobs: one `git fast-import` (a pack), not one process or loose file per blob."""
    remote = make_remote(tmp_path)
    mem = tmp_path / "mem"
    team = mem / "team"
    team.mkdir(parents=True)
    texts = {f"d{i % 7}/m{i:04}.md": memory(f"M{i}", f"body {i} é ✓") for i in range(6000)}
    texts["edge.md"] = memory("Edge", "no newline at the end, data 3\nblob\nmark :1")
    for key, text in texts.items():
        (team / key).parent.mkdir(exist_ok=True)
        (team / key).write_text(text, encoding="utf-8")
    assert subprocess.run([TEAMSYNC, "--dir", str(mem), "init", "--git", str(remote)],
                          capture_output=True).returncode == 0  # fmt: skip
    done = subprocess.run([TEAMSYNC, "--dir", str(mem), "push"], capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "6001 pushed.\n"
    cache = next((Path(os.environ["HOME"]) / ".cache" / "teamsync" / "git").glob("*/objects"))
    loose = [p for p in cache.glob("??/*") if p.is_file()]
    assert len(loose) < 50, len(loose)  # trees only; the 6,001 blobs are packed
    listed = subprocess.run(["git", "--git-dir", str(remote), "ls-tree", "-r", "--name-only",
                             "teamsync/memory"], capture_output=True, text=True, check=True)  # fmt: skip
    assert len(listed.stdout.splitlines()) == 6001
    for key in ("edge.md", "d3/m0003.md"):
        shown = subprocess.run(["git", "--git-dir", str(remote), "show", f"teamsync/memory:{key}"],
                               capture_output=True, check=True).stdout  # fmt: skip
        assert shown.decode("utf-8") == texts[key]


def test_progress_flag_prints_counts_off_a_terminal_and_leaves_json_alone(tmp_path: Path) -> None:
    import json

    remote = make_remote(tmp_path)
    files = {f"m{i:04}.md": memory(f"M{i}", f"{i}\n") for i in range(1500)}
    seed_remote(remote, files)
    mem = str(tmp_path / "mem")
    init = subprocess.run([TEAMSYNC, "--dir", mem, "init", "--git", str(remote)],
                          capture_output=True, text=True)  # fmt: skip
    assert init.returncode == 0, init.stderr
    done = subprocess.run([TEAMSYNC, "--dir", mem, "--json", "pull", "--progress"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "Scanning: 0/1500 (0%)" in lines and "Scanning: 1500/1500 (100%)" in lines
    assert "Syncing: 0/1500 (0%)" in lines and "Syncing: 1500/1500 (100%)" in lines
    assert sorted(json.loads(done.stdout)["written"]) == sorted(files)  # stdout: the JSON only
    other = str(tmp_path / "mem2")
    assert subprocess.run([TEAMSYNC, "--dir", other, "init", "--git", str(remote)],
                          capture_output=True).returncode == 0  # fmt: skip
    quiet = subprocess.run([TEAMSYNC, "--dir", other, "pull"], capture_output=True, text=True,
                           timeout=300)  # fmt: skip
    assert quiet.returncode == 0 and quiet.stdout == "1500 written here.\n"
    assert quiet.stderr == ""  # no flag and no terminal: no progress
