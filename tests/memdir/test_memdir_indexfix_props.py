"""Property: ``check --fix`` keeps every line of any index it does not own, and is idempotent.

Indexes are drawn from every kind of line real ``MEMORY.md`` files hold
(headings, prose, bullets without links, entries in the three styles, dead
entries, backtick mentions, wiki links, code fences, HTML comments, quotes,
arbitrary text, LF or CRLF, a last line with or without its line end) and run
through the real :func:`fix_memdir` on a real directory.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from teamsync.memdir.format import MEMORY_TYPES
from teamsync.memdir.index import parse_index, scan_index, split_lines
from teamsync.memdir.indexfix import resolve
from teamsync.memdir.lint import fix_memdir

KEYS = ["deploys.md", "oncall.md", "api-style.md", "notes/db.md", "gone.md", "old.md"]
free_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00"), max_size=60
)
key = st.sampled_from(KEYS)
line = st.one_of(
    st.sampled_from(
        [
            "## Project",
            "## Feedback",
            "# Memory index",
            "### Misc notes",
            "",
            "```",
            "~~~",
            "<!-- a comment -->",
            "<!-- opened",
            "-->",
            "> a quoted note",
            "| file | type |",
            "|---|---|",
            "- a bullet without a link",
            "1. a numbered note",
        ]
    ),
    free_text,
    st.builds(lambda t: f"- {t}", free_text),
    st.builds(lambda k, h: f"- [{k[:-3]}]({k}) — {h}", key, free_text),
    st.builds(lambda k, h: f"* [{k}]({k}) - {h}", key, free_text),
    st.builds(lambda k: f"| [{k}]({k}) | project | summary |", key),
    st.builds(lambda k: f"### [{k[:-3]}]({k})", key),
    st.builds(lambda k, t: f"{t} see `{k}` {t}", key, free_text),
    st.builds(lambda k: f"Related: [[{k[:-3]}]] and [[nowhere]]", key),
)
index_text = st.builds(
    lambda lines, ends, last: "".join(
        text + ("" if (i == len(lines) - 1 and not last) else ends[i % len(ends)])
        for i, text in enumerate(lines)
    ),
    st.lists(line, max_size=40),
    st.lists(st.sampled_from(["\n", "\r\n"]), min_size=1, max_size=3),
    st.booleans(),
)
existing = st.dictionaries(
    st.sampled_from(KEYS[:4] + ["new-one.md", "new-two.md"]),
    st.sampled_from([*MEMORY_TYPES, "report", None]),
    max_size=6,
)


def _write(team: Path, files: dict[str, str | None], index: str) -> None:
    team.mkdir(parents=True)
    for name, kind in files.items():
        path = team / name
        path.parent.mkdir(parents=True, exist_ok=True)
        typed = f"type: {kind}\n" if kind else ""
        path.write_text(f"---\nname: {name[:-3]}\ndescription: about {name}\n{typed}---\nx\n")
    (team / "MEMORY.md").write_bytes(index.encode("utf-8"))


def _owned(text: str, present: set[str]) -> set[int]:
    """Line numbers the fix may remove: bullet or table entries whose every link is dead,
    and byte-identical repeats (line end aside) of an earlier entry line that stays."""
    owned, seen = set(), set()
    for line in scan_index(text):
        if line.kind not in ("bullet", "table") or not line.entries:
            continue
        if all(resolve(e.target) not in present for e in line.entries):
            owned.add(line.number)
        elif line.text.rstrip("\r\n") in seen:
            owned.add(line.number)
        else:
            seen.add(line.text.rstrip("\r\n"))
    return owned


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=index_text, files=existing)
def test_fix_keeps_every_line_it_does_not_own_in_order_and_is_idempotent(
    index: str, files: dict[str, str | None]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        memdir = Path(tmp) / "memory"
        team = memdir / "team"
        _write(team, files, index)
        fix_memdir(memdir, backup_dir=Path(tmp) / "state")
        after = (team / "MEMORY.md").read_bytes().decode("utf-8")

        removable = _owned(index, set(files))
        old = split_lines(index)
        new = split_lines(after)
        position = 0
        for number, text in enumerate(old, start=1):
            if number in removable:
                continue
            if number == len(old) and not text.endswith("\n"):
                # the last line may only gain a line end
                matches = [i for i in range(position, len(new)) if new[i].rstrip("\r\n") == text]
                assert matches, (text, after)
                position = matches[0] + 1
                continue
            assert text in new[position:], (number, text, after)
            position = new.index(text, position) + 1
        for line in scan_index(index):  # only entry lines ever go
            if line.number in removable:
                assert line.entries

        listed = {resolve(e.target) for e in parse_index(after)}
        listed |= {resolve(m) for ln in scan_index(after) for m in ln.mentions}
        assert set(files) <= listed

        second = fix_memdir(memdir, backup_dir=Path(tmp) / "state")
        assert "team/MEMORY.md" not in second.written
        assert (team / "MEMORY.md").read_bytes().decode("utf-8") == after
