"""Initial-pull part of ``bench/sync.py``: ``git clone`` beside ``teamsync pull`` on git and REST.

For each size, the same memory files are put on a bare git remote (one commit)
and on one real ``teamsync`` server app (SQLite storage) under uvicorn on
loopback. Each repetition then times, in turn and from a cold start (a fresh
HOME and memory directory, no cache, no state):

- ``git clone --single-branch`` of the remote;
- ``teamsync pull`` of a fresh teammate on the git backend (its cache clone
  included: it is made by that pull);
- ``teamsync pull`` of a fresh teammate on the REST backend, with the requests
  and bytes the server sent (:class:`testing.counting.Counter`).

Every command is a real subprocess, started on a synced filesystem. Wall
times are medians; CPU is the children's user + system time (``getrusage``).
Setting up each teammate (``init``) is not timed.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teamsync.server.storage import WriteRequest, open_storage  # noqa: E402
from testing.counting import Counter  # noqa: E402
from testing.gitrepos import BRANCH, TEAMSYNC, Teammate, make_remote, seed_remote  # noqa: E402
from testing.server import RestMate, app_for, token_for, uvicorn_server  # noqa: E402

REPO = "bench/initial"


def _home(root: Path, name: str) -> Path:
    home = root / f"home-{name}"
    home.mkdir(parents=True)
    (home / ".gitconfig").write_text(
        f"[user]\n\tname = {name}\n\temail = {name}@example.invalid\n", encoding="utf-8"
    )
    return home


def _timed(run: Callable[[], None]) -> tuple[float, float]:
    """(wall seconds, children's CPU seconds) of ``run``.

    The filesystem is synced first, untimed: the previous step's deletions (10,000
    files) must not be flushed by the barrier of the next pull and billed to it.
    """
    os.sync()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _run(cmd: list[str], env: Mapping[str, str]) -> None:
    done = subprocess.run(cmd, env=dict(env), capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr[-2000:]}")


def _check(team: Path, files: Mapping[str, str]) -> None:
    """The pull brought every file, byte for byte (a benchmark of a broken pull is no figure)."""
    got = {p.name: p.read_text(encoding="utf-8") for p in team.iterdir() if p.suffix == ".md"}
    if got != dict(files):
        raise RuntimeError(f"{team}: {len(got)} files, expected {len(files)} identical ones")


def bench_initial(
    sizes: list[int],
    repeat: int,
    work: Path,
    text: Callable[[int], str],
    old_tree: str | None = None,
) -> list[dict[str, Any]]:
    """One row per size: medians of ``repeat`` cold initial pulls, three ways (five with
    ``old_tree``: the same two pulls by the CLI of another source tree, via PYTHONPATH)."""
    trees = {"": str(Path(__file__).resolve().parent.parent)}
    if old_tree:
        trees["old_"] = old_tree
    storage = open_storage(f"sqlite:///{work / 'server.sqlite3'}")
    counter = Counter(app_for(storage, max_entries=20_000))
    rows: list[dict[str, Any]] = []
    with uvicorn_server(counter) as url:
        for n in sizes:
            root = work / f"n{n}"
            root.mkdir()
            files = {f"m{i:05d}.md": text(i) for i in range(n)}
            remote = make_remote(root)
            seed_remote(remote, files)
            repo = f"{REPO}-{n}"
            storage.write(repo, WriteRequest(upserts=files, max_entries=20_000), time.time())
            token = token_for(storage, repo)
            samples: dict[str, list[tuple[float, float]]] = {"clone": []}
            rest_calls: list[tuple[int, int]] = []
            for k in range(repeat):
                env = {**os.environ, "HOME": str(_home(root, f"clone{k}"))}
                dest = root / f"clone-{k}"
                clone = ["git", "clone", "-q", "--single-branch", "-b", BRANCH]
                clone += [f"file://{remote}", str(dest)]
                samples["clone"].append(_timed(lambda c=clone, e=env: _run(c, e)))
                shutil.rmtree(dest)

                for label, tree in trees.items():
                    tag = f"{label}{k}"
                    mate = Teammate(f"g{tag}", _home(root, f"git{tag}"), root / f"mem-git{tag}",
                                    remote)  # fmt: skip
                    mate.team.mkdir(parents=True)
                    mate.init()
                    shutil.rmtree(mate.home / ".cache", ignore_errors=True)  # a cold pull
                    genv = {**mate.environ, "PYTHONPATH": tree}
                    got = _timed(lambda e=genv: _run([TEAMSYNC, "pull"], e))
                    samples.setdefault(f"{label}git", []).append(got)
                    _check(mate.team, files)
                    shutil.rmtree(mate.memdir)

                    home = _home(root, f"rest{tag}")
                    rest = RestMate(f"r{tag}", home, root / f"mem-rest{tag}", url, token, repo)
                    rest.team.mkdir(parents=True)
                    rest.init()
                    counter.reset()
                    renv = {**rest.environ, "PYTHONPATH": tree}
                    got = _timed(lambda e=renv: _run([TEAMSYNC, "pull"], e))
                    samples.setdefault(f"{label}rest", []).append(got)
                    if not label:
                        rest_calls.append((counter.requests, counter.down))
                    _check(rest.team, files)
                    shutil.rmtree(rest.memdir)
            row: dict[str, Any] = {"files": n, "repeat": repeat}
            for name, got in samples.items():
                row[f"{name}_s"] = statistics.median(w for w, _ in got)
                row[f"{name}_cpu_s"] = statistics.median(c for _, c in got)
                row[f"{name}_samples"] = [[round(w, 3), round(c, 3)] for w, c in got]
            for name in ("git", "rest"):  # each pull against the clone of its own repetition
                pairs = zip(samples[name], samples["clone"], strict=True)
                row[f"{name}_paired_ratio"] = statistics.median(w / c for (w, _), (c, _) in pairs)
            row["rest_requests"] = statistics.median(r for r, _ in rest_calls)
            row["rest_bytes_down"] = statistics.median(b for _, b in rest_calls)
            rows.append(row)
            print(row, flush=True)
    storage.close()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    out = [
        "| files | git clone | teamsync pull (git) | ratio | teamsync pull (REST) | ratio "
        "| REST requests / bytes down | CPU: clone / git / REST |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        clone = r["clone_s"]
        out.append(
            f"| {r['files']:,} | {clone:.3f} s | {r['git_s']:.3f} s | {r['git_paired_ratio']:.2f}x "
            f"| {r['rest_s']:.3f} s | {r['rest_paired_ratio']:.2f}x "
            f"| {r['rest_requests']:.0f} / {r['rest_bytes_down']:,.0f} "
            f"| {r['clone_cpu_s']:.2f} / {r['git_cpu_s']:.2f} / {r['rest_cpu_s']:.2f} s |"
        )
    return "\n".join(out)


def old_table(rows: list[dict[str, Any]], old: str) -> str:
    """This tree's pulls beside the old tree's (``old``), when they were measured."""
    out = [
        f"| files | git: {old} | git: this tree | REST: {old} | REST: this tree "
        "| CPU git: old / new | CPU REST: old / new |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['files']:,} | {r['old_git_s']:.3f} s | {r['git_s']:.3f} s "
            f"| {r['old_rest_s']:.3f} s | {r['rest_s']:.3f} s "
            f"| {r['old_git_cpu_s']:.2f} / {r['git_cpu_s']:.2f} s "
            f"| {r['old_rest_cpu_s']:.2f} / {r['rest_cpu_s']:.2f} s |"
        )
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover - `make bench` runs every file of bench/
    print("run it through `python bench/sync.py --initial-only` (a full run includes it)")
