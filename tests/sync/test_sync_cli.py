"""The sync commands through click's CliRunner and as real subprocesses."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from teamsync.cli import cli
from testing.gitrepos import TEAMSYNC, make_remote, make_team, remote_files


def test_init_writes_config_beside_team_never_inside(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    memdir = tmp_path / "mem"
    result = CliRunner().invoke(
        cli, ["--dir", str(memdir), "init", "--git", str(remote), "--branch", "team/mem"]
    )
    assert result.exit_code == 0, result.output
    config = yaml.safe_load((memdir / "teamsync.yaml").read_text())
    assert (
        config["backend"] == "git"
        and config["branch"] == "team/mem"
        and config["url"] == str(remote)
    )
    assert (memdir / "team").is_dir() and not list((memdir / "team").iterdir())
    assert "nothing there yet" in result.output


def test_init_resolves_relative_paths_and_needs_a_remote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_remote(tmp_path, "rel.git")
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["--dir", "mem", "init", "--git", "rel.git"])
    assert result.exit_code == 0, result.output
    assert yaml.safe_load((tmp_path / "mem/teamsync.yaml").read_text())["url"] == str(
        tmp_path / "rel.git"
    )
    assert runner.invoke(cli, ["--dir", "mem", "init"]).exit_code == 2


def test_commands_without_init_explain_what_to_do(tmp_path: Path) -> None:
    result = subprocess.run(
        [TEAMSYNC, "--dir", str(tmp_path), "sync"], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "teamsync init --git URL" in result.stderr


def test_json_shape_and_exit_codes(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    alice.write("n.md", "base\n")
    first = alice.cli("--json", "sync")
    assert first.returncode == 0, first.stderr
    payload = json.loads(first.stdout)
    assert {"written", "deleted", "conflicts", "rejected", "pushed", "held_back"} <= payload.keys()
    assert payload["pushed"] == ["n.md"]
    assert bob.cli("sync").returncode == 0
    alice.write("n.md", "alice\n")
    bob.write("n.md", "bob\n")
    assert alice.cli("push").returncode == 0
    dry = bob.cli("--json", "sync", "--dry-run")
    assert dry.returncode == 1 and json.loads(dry.stdout)["conflicts"][0]["key"] == "n.md"
    assert bob.read("n.md") == "bob\n"  # the dry run changed nothing
    real = bob.cli("sync")
    assert real.returncode == 1
    assert "kept your version as team/n.conflict-" in real.stderr
    assert "and the remote's in team/n.md" in real.stderr
    assert len(remote_files(alice.remote)) == 2


def test_status_does_not_offer_your_own_conflict_copy_and_prints_the_same_each_run(
    tmp_path: Path,
) -> None:
    """Issue 24 §17: the copy a sync would keep of your version is not a remote change, and
    its name's clock (which moved on every run) is shown as <time>."""
    alice, bob = make_team(tmp_path)
    alice.write("n.md", "base\n")
    assert alice.cli("sync").returncode == 0 and bob.cli("sync").returncode == 0
    alice.write("n.md", "alice\n")
    bob.write("n.md", "bob\n")
    assert alice.cli("push").returncode == 0
    runs = []
    for _ in range(2):
        runs.append(bob.cli("status"))
        time.sleep(1.05)  # conflict names carry whole seconds
    first, second = runs
    assert first.returncode == second.returncode == 1
    assert first.stdout == second.stdout, (first.stdout, second.stdout)
    pull = first.stdout.split("Remote changes to pull:\n", 1)[1].split("Would", 1)[0]
    assert pull.split() == ["n.md"]
    assert "n.md -> n.conflict-<time>-" in first.stdout
    payload = json.loads(bob.cli("--json", "status").stdout)
    assert payload["written"] == ["n.md"]
    assert payload["conflicts"][0]["copy"].startswith("n.conflict-<time>-")
    assert bob.files() == {"n.md": "bob\n"}  # status wrote nothing
    real = json.loads(bob.cli("--json", "sync").stdout)  # the real run names the real copy
    copy = real["conflicts"][0]["copy"]
    assert "<time>" not in copy and copy in real["written"] and copy in bob.files()


def test_runner_pull_push_status(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    runner = CliRunner()
    alice.write("a.md", "a\n")
    env = alice.environ
    pushed = runner.invoke(cli, ["--json", "push"], env=env)
    assert pushed.exit_code == 0, pushed.output
    assert json.loads(pushed.stdout)["pushed"] == ["a.md"]
    status = runner.invoke(cli, ["status"], env=bob.environ)
    assert status.exit_code == 0 and "Remote changes to pull" in status.output
    pulled = runner.invoke(cli, ["pull"], env=bob.environ)
    assert pulled.exit_code == 0 and "1 written here" in pulled.output
    assert runner.invoke(cli, ["status"], env=bob.environ).output.startswith("Up to date")


def test_progress_bar_on_a_terminal_for_big_runs(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    for i in range(60):
        alice.write(f"m{i}.md", f"memory {i}\n")
    assert alice.cli("sync").returncode == 0
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [TEAMSYNC, "pull"], env=bob.environ, stdout=subprocess.PIPE, stderr=slave
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    bar = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 0
    assert "Syncing" in bar and "100%" in bar
    quiet = bob.cli("pull")  # not a terminal: no bar
    assert "Syncing" not in quiet.stderr


def test_sync_modules_do_not_import_git_or_http_at_import_time() -> None:
    code = (
        "import sys, teamsync.cli.sync, teamsync.commands.sync, teamsync.sync.engine;"
        "print(sorted(m for m in ('git', 'httpx2', 'anthropic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_init_with_a_project_remote_name_uses_its_branch(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", str(remote)], check=True)
    memdir = tmp_path / "mem"
    result = subprocess.run(
        [TEAMSYNC, "--dir", str(memdir), "init", "--git", "origin"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load((memdir / "teamsync.yaml").read_text())
    assert config["url"] == str(remote) and config["branch"] == "teamsync/memory"
    (memdir / "team" / "a.md").write_text("a\n")
    sync = subprocess.run([TEAMSYNC, "--dir", str(memdir), "sync"], capture_output=True, text=True)
    assert sync.returncode == 0, sync.stderr
    assert remote_files(remote) == {"a.md": "a\n"}
    heads = subprocess.run(
        ["git", "--git-dir", str(remote), "branch", "--list"], capture_output=True, text=True
    )
    assert heads.stdout.split() == ["teamsync/memory"]  # only the dedicated branch was created


@pytest.mark.parametrize("mode", ["sync", "status"])
def test_hostile_key_names_cannot_drive_the_terminal(mode: str) -> None:
    # Refused keys come from the remote verbatim: printed, they must not carry escapes.
    import io

    from teamsync.commands.sync import _print
    from teamsync.output import Output
    from teamsync.sync.report import Rejection, SyncReport

    evil = "a\x1b]0;pwned\x07\x1b[2J\u202eevil.md"
    report = SyncReport(mode=mode)
    report.rejected.append(Rejection(evil, f"remote entry refused: bad {evil}"))
    report.held_back.append(Rejection(evil, "not pushed: \x1b[31mred"))
    report.written.append(evil)
    out, err = io.StringIO(), io.StringIO()
    _print(Output(out=out, err=err), report)
    shown = out.getvalue() + err.getvalue()
    assert "evil.md" in shown
    assert not any(c in shown for c in "\x1b\x07\u202e"), shown
