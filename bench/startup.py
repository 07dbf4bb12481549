"""Start-up cost of the hook-path commands, this tree against an older one, side by side.

    python bench/startup.py --base /path/to/older/checkout [--runs 21] [--bytecode none]

Runs ``teamsync --version``, a bare ``teamsync guard`` on a Write into team
memory, and ``teamsync scan --staged`` on a 10-file commit (clean, and with
one generic ``password = "…"`` candidate), alternating the two trees run by
run with the same interpreter (``PYTHONPATH`` picks the tree), and prints the
median wall and CPU time of each. The machine is shared: read the CPU column
and the ratio, and the load average printed beside them.

``--bytecode cached`` (the default) measures what an installed teamsync pays:
both trees are byte-compiled first, into a cache of the bench's own
(``PYTHONPYCACHEPREFIX``; neither tree is written to), as pip does at install
time, and one untimed run of each case warms it. ``--bytecode none`` sets
``PYTHONDONTWRITEBYTECODE=1`` with an empty cache prefix of its own (a
``__pycache__`` left in either tree is not read), so every run also compiles each
teamsync module it imports from source: the cost then grows with the size of
the source on the path, not with what the code does.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _staged_repo(root: Path, candidate: bool) -> Path:
    repo = root / ("candidate" if candidate else "clean")
    repo.mkdir()
    run = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    for i in range(10):
        text = f"def f{i}():\n    return {i}\n" * 20
        if candidate and i == 0:
            text += 'password = "' + "Zq8r" + "T2vLm9Xw" + '"\n'  # built here: the repo stays clean
        (repo / f"m{i}.py").write_text(text)
    run("add", ".")
    return repo


def _time(cmd: list[str], env: dict[str, str], cwd: Path, stdin: str | None) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, input=stdin, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _environ(mode: str, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if mode == "none":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        # an empty cache of the bench's own: a __pycache__ left in either tree is not read
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def _compile(trees: Mapping[str, str], env: dict[str, str]) -> None:
    for path in trees.values():
        cmd = [sys.executable, "-m", "compileall", "-q", str(Path(path) / "teamsync")]
        subprocess.run(cmd, env=env, check=True, capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="an older checkout of teamsync")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument(
        "--bytecode",
        choices=("cached", "none"),
        default="cached",
        help="cached: byte-compiled first, as installed (default); none: compile every run",
    )
    args = parser.parse_args()
    trees = {"base": os.path.abspath(args.base), "this": str(HERE)}
    work = Path(tempfile.mkdtemp(prefix="teamsync-startup-"))
    base_env = _environ(args.bytecode, work / "pycache")
    if args.bytecode == "cached":
        _compile(trees, base_env)
    memdir = work / "memory"
    (memdir / "team").mkdir(parents=True)
    payload = json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "cwd": str(work),
            "tool_input": {
                "file_path": str(memdir / "team" / "x.md"),
                "content": "---\nname: x\ndescription: y\ntype: project\n---\nA fact.\n",
            },
        }
    )
    py = sys.executable
    cases = {
        "--version": ([py, "-m", "teamsync", "--version"], work, None),
        "guard (Write into team/)": ([py, "-m", "teamsync", "guard"], work, payload),
        "scan --staged, 10 files, clean": (
            [py, "-m", "teamsync", "scan", "--staged"], _staged_repo(work, False), None),
        "scan --staged, one candidate": (
            [py, "-m", "teamsync", "scan", "--staged"], _staged_repo(work, True), None),
    }  # fmt: skip
    print(f"bytecode: {args.bytecode}, runs: {args.runs}")
    print(f"{'case':34} {'tree':5} {'wall ms':>9} {'CPU ms':>8}")
    for name, (cmd, cwd, stdin) in cases.items():
        samples: dict[str, list[tuple[float, float]]] = {t: [] for t in trees}
        envs = {
            tree: dict(base_env, PYTHONPATH=path, TEAMSYNC_DIR=str(memdir), HOME=str(work))
            for tree, path in trees.items()
        }
        if args.bytecode == "cached":
            for env in envs.values():  # warm the cache for the standard library too
                _time(cmd, env, cwd, stdin)
        for _ in range(args.runs):
            for tree in trees:
                samples[tree].append(_time(cmd, envs[tree], cwd, stdin))
        cpu = {}
        for tree in trees:
            wall = statistics.median(s[0] for s in samples[tree]) * 1000
            cpu[tree] = statistics.median(s[1] for s in samples[tree]) * 1000
            print(f"{name:34} {tree:5} {wall:9.1f} {cpu[tree]:8.1f}")
        print(f"{'':34} CPU ratio this/base {cpu['this'] / cpu['base']:.2f}")
    print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
