"""A file teamsync cannot read, a team/ it cannot write: what `status` and `pull` say.

Permission bits do not bind root, so under root the CLI runs as ``nobody``
(``setpriv``) with the same Python minor version; otherwise it runs as is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.gitrepos import memory, seed_remote

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PY = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")


@pytest.fixture
def sandbox() -> Iterator[tuple[Path, list[str], dict[str, str]]]:
    """(a directory, the command prefix running teamsync, its environment)."""
    base = Path(tempfile.mkdtemp(prefix="teamsync-perm-"))
    base.chmod(0o755)
    (base / "home").mkdir()
    (base / "home" / ".gitconfig").write_text(
        "[user]\n\tname = N\n\temail = n@example.invalid\n[safe]\n\tdirectory = *\n"
        "[init]\n\tdefaultBranch = main\n",
        encoding="utf-8",
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(base / "home"), "GIT_CONFIG_NOSYSTEM": "1"}
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None or not SYSTEM_PY.exists():
            pytest.skip("running as root without setpriv or a system Python to drop privileges")
        site = next(Path(sys.prefix, "lib").glob("python3*/site-packages"))
        env["PYTHONPATH"] = f"{ROOT}:{site}"
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(SYSTEM_PY)]
    else:
        prefix = [sys.executable]
    try:
        yield base, [*prefix, "-m", "teamsync"], env
    finally:
        subprocess.run(["chmod", "-R", "u+rwX", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)


def _run(
    cmd: list[str], env: dict[str, str], cwd: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def _own(base: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "65534:65534", str(base)], check=True)


def test_status_on_an_unreadable_file_does_not_say_up_to_date(
    sandbox: tuple[Path, list[str], dict[str, str]],
) -> None:
    base, cmd, env = sandbox
    seed_remote(subprocess_bare(base), {"a.md": memory("A", "alpha\n")})
    _own(base)
    assert _run(cmd, env, base, "--dir", "mem", "init", "--git", "remote.git").returncode == 0
    assert _run(cmd, env, base, "--dir", "mem", "sync").returncode == 0
    target = base / "mem" / "team" / "a.md"
    target.write_text(memory("A", "alpha, edited\n"), encoding="utf-8")
    target.chmod(0)
    done = _run(cmd, env, base, "--dir", "mem", "status")
    assert done.returncode == 1
    assert "Up to date" not in done.stdout
    assert "Not in sync: 1 file(s) cannot be synced" in done.stdout
    assert "team/a.md" in done.stderr and "cannot be read (permission denied)" in done.stderr
    assert "not a regular file" not in done.stderr


def test_a_read_only_team_dir_gives_one_summary_line(
    sandbox: tuple[Path, list[str], dict[str, str]],
) -> None:
    base, cmd, env = sandbox
    seed_remote(subprocess_bare(base), {f"m{i}.md": memory(f"M{i}", f"{i}\n") for i in range(5)})
    _own(base)
    assert _run(cmd, env, base, "--dir", "mem", "init", "--git", "remote.git").returncode == 0
    (base / "mem" / "team").chmod(0o555)
    done = _run(cmd, env, base, "--dir", "mem", "pull")
    assert done.returncode == 1
    warnings = [ln for ln in done.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1, done.stderr
    assert "5 file(s) in team/ could not be written or removed (permission denied)" in warnings[0]
    assert "chmod -R u+w" in warnings[0]
    assert ".teamsync-tmp" not in done.stderr  # no temp-file names
    assert list((base / "mem" / "team").iterdir()) == []


def subprocess_bare(base: Path) -> Path:
    remote = base / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    return remote
