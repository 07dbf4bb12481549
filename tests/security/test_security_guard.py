"""The write guard: key, size and whole-content secret checks before any byte is written."""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest

from teamsync.errors import KeyRejected, MemoryFormatError, SecretFound
from teamsync.memdir import format as memdir_format
from teamsync.security import guard
from teamsync.security.fs import SafeDir
from teamsync.security.guard import guard_write, safe_write


def _fake_github_token(seed: int) -> str:
    """A well-formed, random, fake GitHub token, assembled at runtime (never in the source)."""
    rng = random.Random(seed)
    body = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    return "gh" + "p_" + body


MEMORY = "---\nname: db\ndescription: where the test database lives\ntype: project\n---\n"


@pytest.fixture
def team(tmp_path: Path) -> SafeDir:
    return SafeDir(tmp_path / "team", create=True)


def test_clean_memory_is_written(team: SafeDir) -> None:
    safe_write(team, "notes/db.md", MEMORY + "Use the staging DB.\n", mtime=1_700_000_000)
    assert team.read_text("notes/db.md").endswith("Use the staging DB.\n")
    stat = team.stat("notes/db.md")
    assert stat is not None and stat.st_mtime == 1_700_000_000


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("../escape.md", "contains '..' segment"),
        ("%2e%2e/escape.md", "URL-encoded traversal"),
        ("notes/db.txt", "not a memory file (must end in .md)"),
        ("notes/.md", "not a memory file (must end in .md)"),
    ],
)
def test_bad_keys_are_refused_before_writing(team: SafeDir, key: str, reason: str) -> None:
    with pytest.raises(KeyRejected) as info:
        safe_write(team, key, MEMORY)
    assert info.value.reason == reason
    assert list(team.walk()) == []


def test_non_memory_files_need_an_explicit_opt_out(team: SafeDir) -> None:
    safe_write(team, "notes/data.json", "{}", memory=False)
    assert team.read_text("notes/data.json") == "{}"


def test_size_limit_counts_utf8_bytes(team: SafeDir) -> None:
    assert guard.MAX_MEMORY_BYTES == memdir_format.MAX_MEMORY_BYTES == 250_000
    guard_write("big.md", "a" * 250_000)
    with pytest.raises(MemoryFormatError, match="250,001 bytes"):
        guard_write("big.md", "a" * 250_001)
    with pytest.raises(MemoryFormatError, match="250,002 bytes"):
        safe_write(team, "big.md", "é" * 125_001)  # 125,001 characters, 250,002 bytes
    assert not team.exists("big.md")


def test_lone_surrogates_are_refused(team: SafeDir) -> None:
    with pytest.raises(MemoryFormatError, match="lone surrogates"):
        safe_write(team, "a.md", "text \udcff")
    assert not team.exists("a.md")


def test_secret_anywhere_in_the_content_is_refused_and_never_echoed(team: SafeDir) -> None:
    token = _fake_github_token(1)
    safe_write(team, "notes/db.md", MEMORY + "old and clean\n")
    content = MEMORY + "filler line\n" * 5000 + f"deploy with {token}\n"
    with pytest.raises(SecretFound) as info:
        safe_write(team, "notes/db.md", content)
    error = info.value
    assert error.path == "notes/db.md"
    assert [f.line for f in error.findings] == [5006]
    for text in (str(error), repr(error), repr(error.findings), repr(error.args)):
        assert token not in text and token[4:20] not in text
    assert team.read_text("notes/db.md") == MEMORY + "old and clean\n"
    assert [w.key for w in team.walk()] == ["notes/db.md"]


def test_baseline_fingerprint_allows_a_known_finding(team: SafeDir) -> None:
    content = MEMORY + f"CI token: {_fake_github_token(2)}\n"
    with pytest.raises(SecretFound) as info:
        guard_write("ci.md", content)
    baseline = frozenset(f.fingerprint for f in info.value.findings)
    safe_write(team, "ci.md", content, baseline=baseline)
    assert team.read_text("ci.md") == content


@pytest.mark.parametrize(
    "pragma", ["<!-- teamsync: allow -->", "# pragma: allowlist secret", "teamsync: allow"]
)
def test_inline_pragma_does_not_open_the_memory_gate(team: SafeDir, pragma: str) -> None:
    content = MEMORY + f"fixture token {_fake_github_token(3)}  {pragma}\n"
    with pytest.raises(SecretFound) as info:
        safe_write(team, "fixture.md", content)
    assert not team.exists("fixture.md")
    assert "allow" not in str(info.value)  # no refusal says how to get past the gate
    assert "secret manager" in str(info.value)
    # the reviewed allowlist (fingerprints a person recorded) is what lets it through
    safe_write(
        team, "fixture.md", content, baseline=frozenset(f.fingerprint for f in info.value.findings)
    )
    assert team.exists("fixture.md")


def test_key_is_checked_before_content(team: SafeDir) -> None:
    with pytest.raises(KeyRejected):
        guard_write("../x.md", f"{_fake_github_token(4)}\n")


def _base64(seed: int) -> str:
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "+/"
    return "\n".join("".join(rng.choice(alphabet) for _ in range(64)) for _ in range(12))


def _verdict(key: str, text: str, allowlist: frozenset[str]) -> tuple[str, str] | None:
    try:
        guard_write(key, text, baseline=allowlist)
    except (KeyRejected, MemoryFormatError, SecretFound) as exc:
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("filler", [0, 1200], ids=["small-pass", "large-pass"])
def test_guard_many_decides_exactly_as_guard_write_per_item(filler: int) -> None:
    """One scanner pass over many texts: the same refusals, reasons and findings (a large
    pass runs Hyperscan from its first text, a small one the sized default)."""
    token = _fake_github_token(7)
    allowed = guard.guard_many([("a.md", MEMORY + f"token {_fake_github_token(8)}\n", True)])
    [listed] = allowed.refused["a.md"].findings  # type: ignore[union-attr]
    allowlist = frozenset({listed.fingerprint})
    items = {
        "clean.md": MEMORY + "Use the staging DB.\n",
        "token.md": MEMORY + f"the deploy token is {token}\n",
        "allowed.md": MEMORY + f"token {_fake_github_token(8)}\n",
        "generic.md": MEMORY + 'db_password = "Xk9#mQ2$vL7pR4wZ"\n',
        "pem.md": MEMORY
        + "-----BEGIN RSA PRIVATE KEY-----\n"
        + _base64(3)
        + "\n"
        + "-----END RSA PRIVATE KEY-----\n",
        "big.md": "x" * (memdir_format.MAX_MEMORY_BYTES + 1),
        "lone.md": "\udcff",
        "../up.md": "x",
        "notes.txt": "x",
        f"{token}.md": "named for a token",
    }
    for text in list(items.values())[:5]:  # each text also under a second name, in one pass
        items[f"dup/{len(items)}.md"] = text
    for i in range(filler):
        items[f"filler/{i}.md"] = MEMORY + f"fact {i}: the build needs flag -O{i % 3}.\n" * 8
    verdicts = guard.guard_many([(k, t, True) for k, t in items.items()], baseline=allowlist)
    expected = {k: _verdict(k, t, allowlist) for k, t in items.items()}
    got = {k: (type(e).__name__, str(e)) for k, e in verdicts.refused.items()}
    assert got == {k: v for k, v in expected.items() if v is not None}
    assert {"token.md", "generic.md", "pem.md", "big.md", "lone.md"} <= got.keys()
    assert "allowed.md" not in got and "clean.md" not in got
    # only content with no finding at all may be remembered as vetted (not the allowlisted one)
    assert verdicts.clean == {"clean.md", "dup/10.md"} | {f"filler/{i}.md" for i in range(filler)}


def test_guard_many_skips_only_the_scan_of_vetted_content() -> None:
    token = _fake_github_token(9)
    verdicts = guard.guard_many(
        [
            ("skipped.md", MEMORY + f"the token is {token}\n", False),
            ("big.md", "x" * (memdir_format.MAX_MEMORY_BYTES + 1), False),
            (f"{token}.md", "clean", False),
        ]
    )
    assert set(verdicts.refused) == {"big.md", f"{token}.md"}  # size and name rules still apply
    assert verdicts.clean == set()  # nothing scanned, nothing newly vetted


def test_the_scanner_identity_covers_its_sources() -> None:
    identity = guard.scanner_identity()
    assert identity is not None and identity.startswith("scan-v1:")
    assert set(guard.SCANNER_SOURCES) <= {p.name for p in Path(guard.__file__).parent.glob("*.py")}


def test_the_scanner_identity_changes_with_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another Python (its ``re`` and Unicode tables run the rules) must rescan vetted content."""
    import sys
    import unicodedata

    identity = guard.scanner_identity.__wrapped__  # the cached one holds for a process
    before = identity()
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    other_python = identity()
    monkeypatch.undo()
    monkeypatch.setattr(unicodedata, "unidata_version", "0.0.0")
    other_unicode = identity()
    assert len({before, other_python, other_unicode}) == 3
    assert before == guard.scanner_identity()
