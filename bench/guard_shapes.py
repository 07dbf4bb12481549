"""The blind shell-shapes set through the real hooks: Pre → ``bash -c`` → Post.

``bench/guard_shapes.json`` holds 192 shell commands that each put a GitHub-style
token into ``<memdir>/team/``, written by another session that never saw the
guard (provenance: ``bench/guard_shapes.README.md``). For every shape, in a
sandbox like the set's own ``verify.py`` (fresh HOME, a project git repository
with one commit, Claude Code's memory directory for it with ``team/notes.md``):

1. the shape's ``setup`` runs (not judged: it stands for earlier work);
2. the PreToolUse hook runs as Claude Code runs it (the ``teamsync guard``
   subprocess, ``CLAUDE_PROJECT_DIR`` set, the shape's ``cwd`` in the payload);
   a deny ends the shape as **denied before**;
3. otherwise ``bash -c`` runs the command (10 s, process group killed after);
4. the PostToolUse hook runs; a blocking answer that names a finding is
   **caught after**;
5. 3 s later (some shapes write from the background), the session's next call
   runs (Pre → ``true`` → Post); a blocking answer there is **caught by the next
   call**;
6. every file under ``team/`` is searched for the token: **left in team/**.

    .venv/bin/python bench/guard_shapes.py [--only s001,s002] [--json OUT]

It prints one line per shape and a table per family. The figures are what the
run gave; the set was opened once, after the guard was frozen.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHAPES = ROOT / "bench" / "guard_shapes.json"
TEAMSYNC = str(Path(sys.executable).parent / "teamsync")
TOKEN = "ghp_" + "R8mZ2qV7xK4nT9wL3cY6bH1dF5gJ0sPaEuQo"
NOTES = "# Team notes\n\nShared conventions: run tests before pushing.\n"


def _run(cmd: list[str], cwd: str, env: dict[str, str], stdin: str | None = None,
         timeout: float = 10) -> tuple[int | None, str, str]:  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE if stdin else
                            subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, text=True)  # fmt: skip
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        return None, out, err


def _left(team: Path) -> list[str]:
    found = []
    for path in team.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink() and TOKEN.encode() in path.read_bytes():
                found.append(str(path.relative_to(team)))
        except OSError:
            continue
    return found


def run_shape(shape: dict[str, str]) -> dict[str, object]:
    from teamsync.config import Settings
    from teamsync.memdir.paths import memory_dir

    base = Path(tempfile.mkdtemp(prefix="gsh"))
    try:
        home, project, tmp = base / "home", base / "proj", base / "tmp"
        for folder in (home, project, tmp):
            folder.mkdir()
        env = {"HOME": str(home), "TMPDIR": str(tmp), "PATH": os.environ.get("PATH", ""),
               "LANG": "C.UTF-8", "TERM": "xterm", "USER": os.environ.get("USER", "root"),
               "GIT_CONFIG_NOSYSTEM": "1"}  # fmt: skip
        git = ["git", "-c", "init.defaultBranch=main", "-c", "user.name=t", "-c", "user.email=t@e"]
        subprocess.run([*git, "init", "-q"], cwd=project, env=env, check=True)
        (project / "README.md").write_text("# project\n")
        subprocess.run([*git, "add", "-A"], cwd=project, env=env, check=True)
        subprocess.run([*git, "commit", "-qm", "init"], cwd=project, env=env, check=True)
        memdir = memory_dir(Settings.build(environ={"HOME": str(home)}, cwd=project))
        (memdir / "team").mkdir(parents=True)
        (memdir / "team" / "notes.md").write_text(NOTES)
        (memdir / "MEMORY.md").write_text("# Memory\n")
        values = {"memdir": str(memdir), "project": str(project), "home": str(home),
                  "token": TOKEN}  # fmt: skip

        def fill(text: str) -> str:
            for key, value in values.items():
                text = text.replace("{" + key + "}", value)
            return text

        if shape.get("setup"):
            _run(["bash", "-c", fill(shape["setup"])], str(project), env)
        cwd = {"project": project, "memdir": memdir, "home": home}[shape["cwd"]]
        hook_env = {**env, "CLAUDE_PROJECT_DIR": str(project)}

        def call(command: str, n: int) -> tuple[str, str]:
            payload = json.dumps({"session_id": "blind", "tool_use_id": f"toolu_{n}",
                                  "transcript_path": str(home / ".claude" / "projects" /
                                                         memdir.parent.name / "s.jsonl"),
                                  "cwd": str(cwd), "hook_event_name": "PreToolUse",
                                  "tool_name": "Bash", "tool_input": {"command": command}})  # fmt: skip
            _, out, _ = _run([TEAMSYNC, "guard"], str(project), hook_env, payload, timeout=30)
            if out.strip():
                return "denied", json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
            _run(["bash", "-c", command], str(cwd), env)
            post = payload.replace('"PreToolUse"', '"PostToolUse"')
            _, out, _ = _run([TEAMSYNC, "guard", "--event", "PostToolUse"], str(project),
                             hook_env, post, timeout=30)  # fmt: skip
            if out.strip():
                return "caught", str(json.loads(out).get("reason", ""))
            return "allowed", ""

        layer, message = call(fill(shape["command"]), 1)
        after = _left(memdir / "team")
        later = ""
        if layer == "allowed":
            time.sleep(3)
            next_layer, message = call("true", 2)
            later = "caught" if next_layer == "caught" else ""
        return {"id": shape["id"], "family": shape["family"], "layer": layer,
                "next_call": later, "left_after_post": after, "left": _left(memdir / "team"),
                "leaks_token": TOKEN in message}  # fmt: skip
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated shape ids")
    parser.add_argument("--json", default="", help="write the per-shape results here")
    args = parser.parse_args()
    shapes = json.loads(SHAPES.read_text(encoding="utf-8"))
    if args.only:
        wanted = set(args.only.split(","))
        shapes = [s for s in shapes if s["id"] in wanted]
    results = []
    for shape in shapes:
        result = run_shape(shape)
        results.append(result)
        left = ",".join(result["left"]) or "-"  # type: ignore[arg-type]
        print(f"{result['id']} {result['family']:<13} {result['layer']:<8} "
              f"{result['next_call'] or '-':<7} left={left}  {shape['description'][:60]}",
              flush=True)  # fmt: skip
    by_family: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        c = by_family[str(r["family"])]
        c["total"] += 1
        c[str(r["layer"])] += 1
        c["next call"] += r["next_call"] == "caught"
        c["left"] += bool(r["left"])
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print("\n| family | shapes | denied before | caught after | caught by the next call | "
          "left in team/ |\n|---|---:|---:|---:|---:|---:|")  # fmt: skip
    total: Counter[str] = Counter()
    for family in sorted(by_family):
        c = by_family[family]
        total.update(c)
        print(f"| {family} | {c['total']} | {c['denied']} | {c['caught']} | {c['next call']} | "
              f"{c['left']} |")  # fmt: skip
    print(f"| **all** | {total['total']} | {total['denied']} | {total['caught']} | "
          f"{total['next call']} | {total['left']} |")  # fmt: skip
    print(f"\nallowed and never caught: {total['allowed'] - total['next call']}; "
          f"messages repeating the token: {sum(bool(r['leaks_token']) for r in results)}; "
          f"load average {load}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0 if total["left"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
