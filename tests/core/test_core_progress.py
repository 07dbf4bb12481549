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
