"""Does a sync settle on memory directories we did not write? (issue 24 §4)

Takes a directory holding recall sets (``recall_<lang>.json``: ``memories`` with
``path``, ``name``, ``description``, ``type``, ``body``) and the indexes written
for them (``MEMORY_<lang>.md``). Each language is rendered into one memory
directory (a file with frontmatter per memory under ``team/``, and the index as
``team/MEMORY.md``, byte for byte), then synced between two clones, over a bare
git remote and over a real ``teamsync serve`` (uvicorn on loopback, SQLite):

1. alice (who has the directory) syncs, then bob (empty) syncs;
2. a second round (alice, bob): is it a no-op (nothing written, pushed, deleted
   or merged; on REST, the requests each sync sent);
3. bob edits one memory and appends a prose line to the index, syncs; alice
   syncs; a round after that: a no-op again?

Per directory and backend it prints: files that arrived byte-identical, the
second round (no-op or not), the lines of the original index kept (in order) on
both sides, what sync added to the index, what was held back, the teammate's
edit and prose line arriving, and the round after it.

    .venv/bin/python bench/settle_real.py /work/sealed/recall-cjk [--backend git,rest]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teamsync.server.storage import open_storage  # noqa: E402
from testing.counting import Counter  # noqa: E402
from testing.gitrepos import Member, make_team  # noqa: E402
from testing.server import app_for, make_rest_team, token_for, uvicorn_server  # noqa: E402


def scalar(value: str) -> str:
    """A frontmatter value as a team writes it: plain, or JSON-quoted when YAML needs it."""
    plain = " ".join(str(value).split())
    risky = plain[:1] in '{}[]*&#!|>%@`\'""' or ": " in plain or " #" in plain
    return json.dumps(plain, ensure_ascii=False) if risky or not plain else plain


def render(m: dict[str, Any]) -> str:
    head = (
        f"name: {scalar(m.get('name') or '')}\ndescription: {scalar(m.get('description') or '')}\n"
    )
    head += f"type: {m.get('type') or 'project'}\n"
    return f"---\n{head}---\n\n{m.get('body', '').rstrip()}\n"


def key_of(m: dict[str, Any]) -> str:
    path = str(m["path"])
    return path.removeprefix("team/")


def lay_out(member: Member, memories: list[dict[str, Any]], index: bytes) -> dict[str, bytes]:
    files = {key_of(m): render(m).encode("utf-8") for m in memories}
    files["MEMORY.md"] = index
    for key, data in files.items():
        path = member.team / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def tree(member: Member) -> dict[str, bytes]:
    root = member.team
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def kept_in_order(original: bytes, final: bytes) -> tuple[int, int]:
    """(kept, total): the original index's non-blank lines found in ``final`` in order."""
    want = [line.rstrip("\r") for line in original.decode("utf-8").split("\n") if line.strip()]
    have = [line.rstrip("\r") for line in final.decode("utf-8").split("\n")]
    pos, kept = 0, 0
    for line in want:
        try:
            pos = have.index(line, pos) + 1
            kept += 1
        except ValueError:
            continue
    return kept, len(want)


def quiet(report: Any) -> bool:
    return not (report.pushed or report.written or report.deleted or report.merged)


@contextmanager
def pair(kind: str, root: Path) -> Iterator[tuple[list[Member], Counter | None]]:
    if kind == "git":
        yield list(make_team(root)), None
        return
    storage = open_storage(f"sqlite:///{root / 'server.sqlite3'}")
    counter = Counter(app_for(storage))
    try:
        with uvicorn_server(counter) as url:
            tokens = [token_for(storage), token_for(storage)]
            yield list(make_rest_team(root, url, tokens)), counter
    finally:
        storage.close()


def measure(kind: str, memories: list[dict[str, Any]], index: bytes) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, pair(kind, Path(tmp)) as (mates, counter):
        alice, bob = mates
        original = lay_out(alice, memories, index)
        first = [alice.sync(), bob.sync()]
        held = sorted({h.key for r in first for h in r.held_back})
        requests: list[int] = []
        second = []
        for mate in (alice, bob):
            if counter is not None:
                counter.reset()
            second.append(mate.sync())
            if counter is not None:
                requests.append(len(counter.log))
        a, b = tree(alice), tree(bob)
        files = [k for k in original if k != "MEMORY.md" and k not in held]
        identical = sum(1 for k in files if b.get(k) == original[k] == a.get(k))
        kept_a = kept_in_order(index, a.get("MEMORY.md", b""))
        kept_b = kept_in_order(index, b.get("MEMORY.md", b""))
        added = len(b.get("MEMORY.md", b"").decode().splitlines()) - len(
            index.decode().splitlines()
        )
        # a teammate's edit and prose line
        target = sorted(files)[0]
        bob.write(target, bob.read(target) + "Edited by bob.\n")
        prose = "Bob's prose line for the team.\n"
        (bob.team / "MEMORY.md").write_bytes((bob.team / "MEMORY.md").read_bytes() + prose.encode())
        bob.sync()
        alice.sync()
        arrived = "Edited by bob." in alice.read(target) and prose in alice.read("MEMORY.md")
        after = [alice.sync(), bob.sync()]
        return {
            "files": f"{identical}/{len(files)}",
            "index_same": a.get("MEMORY.md") == b.get("MEMORY.md"),
            "second_noop": all(quiet(r) for r in second),
            "requests": requests,
            "kept_alice": kept_a,
            "kept_bob": kept_b,
            "lines_added": added,
            "held": held,
            "edit_arrived": arrived,
            "after_noop": all(quiet(r) for r in after),
            "exit": [r.exit_code() for r in first],
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--backend", default="git,rest")
    args = parser.parse_args()
    rows = []
    for source in sorted(args.directory.glob("recall_*.json")):
        lang = source.stem.removeprefix("recall_")
        index_path = args.directory / f"MEMORY_{lang}.md"
        data = json.loads(source.read_text(encoding="utf-8"))
        index = index_path.read_bytes() if index_path.exists() else b""
        for kind in args.backend.split(","):
            rows.append((lang, kind, measure(kind, data["memories"], index)))
    print(f"settle on {args.directory}")
    print(
        "| set | backend | files byte-identical | index same both sides | 2nd round no-op "
        "| requests (REST, per sync) | index lines kept alice / bob | lines sync added "
        "| held back | edit + prose arrived | round after no-op | exit (round 1) |"
    )
    print("|" + "---|" * 12)
    for lang, kind, r in rows:
        ka, kb = r["kept_alice"], r["kept_bob"]
        print(
            f"| {lang} | {kind} | {r['files']} | {r['index_same']} | {r['second_noop']} "
            f"| {r['requests'] or '-'} | {ka[0]}/{ka[1]} / {kb[0]}/{kb[1]} | {r['lines_added']} "
            f"| {', '.join(r['held']) or '-'} | {r['edit_arrived']} | {r['after_noop']} "
            f"| {r['exit']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
