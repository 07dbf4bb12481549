"""A sync that settles in one round (issue 24 §4–§5), on git and on REST.

The ping-pong repro: a file held back for a secret made each side remove and
re-add its index entry, pushing ``MEMORY.md`` on every sync (6 commits in 3
rounds), and the holder's own line for the file was lost on both sides.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing.gitrepos import Member, fake_token, memory
from testing.teams import BACKENDS, team

INDEX = "# Index\n\n- [Ok](ok.md) — fine\n- [My leak note](leak.md) — my own words\n"


def _hold_a_leak(mate: Member) -> None:
    """A clean memory, one holding a secret, and the user's own line for each."""
    mate.write("ok.md", memory("Ok", "ok\n"))
    mate.write("leak.md", memory("Leak", f"token {fake_token()}\n"))
    mate.write("MEMORY.md", INDEX)


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_held_back_file_does_not_ping_pong_the_index(tmp_path: Path, kind: str) -> None:
    with team(kind, tmp_path) as t:
        alice, bob = t.mates
        _hold_a_leak(alice)
        first = alice.sync()
        assert sorted(first.pushed) == ["MEMORY.md", "ok.md"]
        assert [h.key for h in first.held_back] == ["leak.md"] and first.exit_code() == 1
        assert "leak.md" not in t.remote_files()["MEMORY.md"]
        bob.sync()
        after_one = t.remote_files()
        for _ in range(3):
            for mate in (alice, bob):
                report = mate.sync()
                assert report.pushed == [] and report.written == [], mate.name
        assert t.remote_files() == after_one
        # The holder's own line is kept byte for byte; nothing about the file was sent.
        assert alice.read("MEMORY.md") == INDEX
        assert "leak" not in bob.read("MEMORY.md") and "leak.md" not in bob.files()
        assert "leak" not in t.remote_files()["MEMORY.md"]


@pytest.mark.parametrize("kind", BACKENDS)
def test_the_withheld_line_survives_a_teammates_index_edit(tmp_path: Path, kind: str) -> None:
    with team(kind, tmp_path) as t:
        alice, bob = t.mates
        _hold_a_leak(alice)
        alice.sync()
        bob.sync()
        bob.write("MEMORY.md", bob.read("MEMORY.md") + "Bob's prose line.\n")
        assert bob.sync().pushed == ["MEMORY.md"]
        assert alice.sync().pushed == []  # pulls; nothing of its own to send
        assert alice.read("MEMORY.md") == INDEX + "Bob's prose line.\n"
        alice.write("MEMORY.md", alice.read("MEMORY.md").replace("fine", "fine, said alice"))
        assert alice.sync().pushed == ["MEMORY.md"]
        bob.sync()
        assert bob.read("MEMORY.md") == (
            "# Index\n\n- [Ok](ok.md) — fine, said alice\nBob's prose line.\n"
        )
        for mate in (alice, bob):
            assert mate.sync().pushed == [] and mate.sync().written == []
        assert "My leak note" in alice.read("MEMORY.md")


@pytest.mark.parametrize("kind", BACKENDS)
def test_the_sender_lists_what_it_sends_so_the_receiver_has_nothing_to_add(
    tmp_path: Path, kind: str
) -> None:
    """§4: the receiving clone added entries the sender's index lacked and pushed them back."""
    with team(kind, tmp_path) as t:
        alice, bob = t.mates
        alice.write("a.md", memory("A", "a\n"))
        alice.write("b.md", memory("B", "b\n"))
        alice.write("MEMORY.md", "# Notes\n\n- [A](a.md) — a\n- [Gone](gone.md) — dead\nprose\n")
        report = alice.sync()
        assert "MEMORY.md" in report.written and "MEMORY.md" in report.pushed
        index = t.remote_files()["MEMORY.md"]
        assert "(b.md)" in index and "gone.md" not in index and "prose\n" in index
        before = t.remote_files()
        assert bob.sync().pushed == []
        for mate in (alice, bob):
            report = mate.sync()
            assert report.pushed == [] and report.written == []
        assert t.remote_files() == before
        assert alice.files() == bob.files()


BROKEN = '---\nname: Deploys\ndescription: "word" more text\ntype: project\n---\nbody\n'


@pytest.mark.parametrize("kind", BACKENDS)
def test_broken_frontmatter_is_held_back_with_its_line_and_column_until_fixed(
    tmp_path: Path, kind: str
) -> None:
    """§16: the file was pushed with exit 0 and "while parsing a block mapping"."""
    with team(kind, tmp_path) as t:
        alice, bob = t.mates
        alice.write("ok.md", memory("Ok", "ok\n"))
        alice.write("deploys.md", BROKEN)
        index = "# Index\n\n- [Ok](ok.md) — fine\n- [Deploys](deploys.md) — how we ship\n"
        alice.write("MEMORY.md", index)
        check = alice.cli("check")
        assert check.returncode == 1
        assert "deploys.md: frontmatter: frontmatter is not valid YAML at line 3, column 21" in (
            check.stdout + check.stderr
        )
        done = alice.cli("--json", "sync")
        assert done.returncode == 1, done.stderr
        payload = json.loads(done.stdout)
        (held,) = payload["held_back"]
        assert held["key"] == "deploys.md"
        assert "line 3, column 21" in held["reason"] and "fix the frontmatter" in held["reason"]
        assert "deploys.md" not in t.remote_files()
        assert "deploys" not in t.remote_files()["MEMORY.md"]
        assert alice.read("MEMORY.md") == index
        bob.sync()
        assert "deploys.md" not in bob.files() and "deploys" not in bob.read("MEMORY.md")
        for mate in (alice, bob):
            report = mate.sync()
            assert report.pushed == [] and report.written == []
        alice.write("deploys.md", BROKEN.replace('"word" more text', "how we ship"))
        fixed = alice.sync()
        assert sorted(fixed.pushed) == ["MEMORY.md", "deploys.md"] and fixed.exit_code() == 0
        bob.sync()
        assert bob.read("MEMORY.md") == index
