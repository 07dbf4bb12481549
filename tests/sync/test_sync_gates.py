"""Every byte passes the gates: secrets, hostile remotes, odd local files, modes, retries."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from teamsync.memdir.freshness import changed_at
from teamsync.sync.base import Applied, ChangeSet, ForwardingBackend, PreconditionFailed
from teamsync.sync.git import GitBackend
from teamsync.wire import redact_url
from testing.gitrepos import (
    commit_files,
    converge,
    fake_token,
    git,
    make_team,
    remote_files,
    temp_files,
)


def test_pulled_secret_is_not_written_and_reported_without_text(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    token = fake_token()
    commit_files(alice.remote, {"leak.md": f"token: {token}\n".encode(), "fine.md": b"ok\n"})
    report = bob.sync()
    assert bob.files() == {"fine.md": "ok\n"}
    [rejected] = report.rejected
    assert rejected.key == "leak.md" and "github-pat" in rejected.reason
    assert token not in json.dumps(report.to_json())
    result = bob.cli("--json", "pull")
    assert result.returncode == 1
    assert token not in result.stdout + result.stderr
    assert "github-pat" in result.stdout


def test_pushed_secret_is_held_back_and_the_rest_goes_on(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    token = fake_token()
    alice.write("leak.md", f"key = {token}\n")
    alice.write("fine.md", "fine\n")
    result = alice.cli("--json", "sync")
    assert result.returncode == 1
    payload = json.loads(result.stdout)
    assert payload["pushed"] == ["fine.md"]
    assert [h["key"] for h in payload["held_back"]] == ["leak.md"]
    assert token not in result.stdout + result.stderr
    assert remote_files(alice.remote) == {"fine.md": "fine\n"}


def test_hostile_remote_entries_are_refused_never_written(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    alice.write("fine.md", "fine\n")
    alice.sync()
    assert bob.sync().written == ["fine.md"]  # bob's cache now holds a verdict on a clean tree
    base = ["--git-dir", str(alice.remote)]
    blob = git(*base, "hash-object", "-w", "--stdin", stdin=b"inner\n")
    inner = git(*base, "mktree", stdin=f"100644 blob {blob}\tx.md\n".encode())
    commit_files(
        alice.remote,
        {
            "link.md": b"/etc/passwd",
            "sub.md": b"1234567890" * 4,
            "huge.md": b"x" * 250_001,
            "fine.md": b"fine\n",
            "binary.md": b"\xff\xfe\x00bad",
            "notes.txt": b"not markdown\n",
        },
        modes={"link.md": "120000", "sub.md": "160000"},
    )
    head = git(*base, "rev-parse", "teamsync/memory")
    tree = git(*base, "rev-parse", f"{head}^{{tree}}")
    listing = git(*base, "ls-tree", tree).splitlines()
    listing.append(f"040000 tree {inner}\t..")
    crafted = git(*base, "mktree", "--missing", stdin=("\n".join(listing) + "\n").encode())
    commit = git(*base, "commit-tree", crafted, "-p", head, "-m", "hostile")
    git(*base, "update-ref", "refs/heads/teamsync/memory", commit)

    report = bob.sync()
    reasons = {r.key: r.reason for r in report.rejected}
    assert set(reasons) == {"link.md", "sub.md", "huge.md", "binary.md", "notes.txt", "../x.md"}
    assert "symlink" in reasons["link.md"] and "submodule" in reasons["sub.md"]
    assert "250,000" in reasons["huge.md"]
    assert bob.files() == {"fine.md": "fine\n"}
    assert not (tmp_path / "x.md").exists() and not (bob.memdir / "x.md").exists()
    assert not any(p.is_symlink() for p in bob.team.rglob("*"))
    assert report.exit_code() == 1
    # Pushing on top of the hostile tree still works and carries its entries untouched.
    bob.write("mine.md", "mine\n")
    assert bob.sync().pushed == ["mine.md"]
    after = git(*base, "ls-tree", "teamsync/memory")
    assert "120000" in after and "160000" in after and "\t..\n" in after + "\n"


def test_local_oddities_are_reported_not_synced(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    alice.write("notes.txt", "not markdown\n")
    alice.write("good.md", "good\n")
    (alice.team / "big.md").write_bytes(b"y" * 250_001)
    os.symlink("/etc/hostname", alice.team / "link.md")
    report = alice.sync()
    assert report.pushed == ["good.md"]
    assert {r.key for r in report.rejected} == {"notes.txt", "big.md"}
    assert [r.key for r in report.unknown] == ["link.md"]  # a link is unknown, never followed
    assert "symlink" in report.unknown[0].reason and report.exit_code() == 1
    assert set(remote_files(alice.remote)) == {"good.md"}


def test_pull_does_not_push_and_push_does_not_pull(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    alice.write("a.md", "a\n")
    alice.sync()
    bob.write("b.md", "b\n")
    report = bob.sync("pull")
    assert report.written == ["a.md"] and not report.pushed
    assert set(remote_files(alice.remote)) == {"a.md"}
    alice.write("a2.md", "a2\n")
    alice.sync()
    report = bob.sync("push")
    assert report.pushed == ["b.md"] and not report.written
    assert "a2.md" not in bob.files()


def test_push_holds_back_keys_changed_on_both_sides(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    alice.write("n.md", "base\n")
    converge([alice, bob], rounds=1)
    alice.write("n.md", "alice\n")
    alice.sync()
    bob.write("n.md", "bob\n")
    report = bob.sync("push")
    assert [h.key for h in report.held_back] == ["n.md"] and report.exit_code() == 1
    assert remote_files(alice.remote) == {"n.md": "alice\n"}
    assert bob.read("n.md") == "bob\n"


def test_dry_run_and_status_change_nothing(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    alice.write("a.md", "a\n")
    alice.sync()
    bob.write("b.md", "b\n")
    before = (bob.files(), remote_files(alice.remote))
    report = bob.sync(dry_run=True)
    assert report.written == ["a.md"] and report.pushed == ["b.md"] and report.dry_run
    assert (bob.files(), remote_files(alice.remote)) == before
    result = bob.cli("status")
    assert result.returncode == 0, result.stderr
    assert "Local changes to push" in result.stdout and "b.md" in result.stdout
    assert "Remote changes to pull" in result.stdout and "a.md" in result.stdout
    assert (bob.files(), remote_files(alice.remote)) == before


def test_pulled_memories_keep_their_age(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    old = 1_600_000_000
    commit_files(alice.remote, {"old.md": b"old fact\n"}, message="old")
    base = ["--git-dir", str(alice.remote)]
    head = git(*base, "rev-parse", "teamsync/memory")
    tree = git(*base, "rev-parse", f"{head}^{{tree}}")
    dated = git(
        *base, "commit-tree", tree, "-m", "old",
        env={"GIT_COMMITTER_DATE": f"{old} +0000", "GIT_AUTHOR_DATE": f"{old} +0000"},
    )  # fmt: skip
    git(*base, "update-ref", "refs/heads/teamsync/memory", dated)
    bob.sync()
    path = bob.team / "old.md"
    assert int(path.stat().st_mtime) == old
    assert int(changed_at(bob.settings.state_dir, path)) == old


def test_commits_carry_identity_and_list_keys(tmp_path: Path) -> None:
    alice, _ = make_team(tmp_path)
    alice.write("one.md", "1\n")
    alice.write("two.md", "2\n")
    alice.sync()
    log = git(
        "--git-dir", str(alice.remote), "log", "-1", "--format=%an <%ae>%n%B", "teamsync/memory"
    )
    assert log.startswith("Alice <alice@example.invalid>")
    assert "M one.md" in log and "M two.md" in log
    # an orphan branch that holds only memory files
    assert git("--git-dir", str(alice.remote), "rev-list", "--count", "teamsync/memory") == "1"


class _RacingBackend(ForwardingBackend):
    """A real GitBackend; before its first push, a teammate pushes too. Every other
    member of the contract (the force-push check among them) reaches the GitBackend."""

    def __init__(self, inner: GitBackend, race: object) -> None:
        super().__init__(inner)
        self.race, self.raced = race, 0

    def apply(self, changes: ChangeSet) -> Applied | PreconditionFailed:
        if not self.raced:
            self.raced += 1
            self.race()  # type: ignore[operator]
        return self.inner.apply(changes)


def test_non_fast_forward_push_is_retried_after_reconciling(tmp_path: Path) -> None:
    from teamsync.commands.sync import remote_id
    from teamsync.security.fs import SafeDir
    from teamsync.sync.config import load_config
    from teamsync.sync.engine import run_sync
    from teamsync.sync.state import BaseStore

    alice, bob = make_team(tmp_path)
    alice.write("n.md", "one\ntwo\nthree\n")
    converge([alice, bob], rounds=1)
    alice.write("n.md", "ONE\ntwo\nthree\n")
    bob.write("n.md", "one\ntwo\nTHREE\n")
    settings = bob.settings
    config = load_config(bob.memdir)
    backend = _RacingBackend(
        GitBackend(
            config.url, branch=config.branch, cache_dir=settings.cache_dir, environ=settings.environ
        ),
        alice.sync,
    )
    team = SafeDir(bob.team)
    state = BaseStore.open(settings.state_dir, team.root, remote_id(config))
    try:
        report = run_sync(team, backend, state, mode="sync", dry_run=False, who="bob", now=0.0)
    finally:
        state.close()
        backend.close()
    assert backend.raced == 1
    assert report.merged == ["n.md"] and report.pushed == ["n.md"]
    assert remote_files(alice.remote) == {"n.md": "ONE\ntwo\nTHREE\n"}
    assert not temp_files(bob.team)


def test_urls_are_sanitized() -> None:
    url = (
        "https://bob:" + "s3cr3t" + "@example.com/x.git"
    )  # built from parts: the repo's own scan stays clean
    assert redact_url(url) == "https://***@example.com/x.git"
    assert (
        redact_url("fatal: unable to access 'https://tok@h/r/'")
        == "fatal: unable to access 'https://***@h/r/'"
    )
    assert redact_url("git@github.com:o/r.git") == "git@github.com:o/r.git"
    pg = "postgresql://app:" + "pa/ss@wd" + "@db.internal:5432/memory"  # "/" and "@" inside
    assert redact_url(pg) == "postgresql://***@db.internal:5432/memory"
    both = redact_url(f"from {url} to 'https://x-access-token:" + "t0k3n" + "@h/r'")
    assert both == "from https://***@example.com/x.git to 'https://***@h/r'"
    assert redact_url("sqlite:///home/u/db.sqlite3") == "sqlite:///home/u/db.sqlite3"


def test_unreachable_remote_fails_cleanly_without_credentials(tmp_path: Path) -> None:
    (alice,) = make_team(tmp_path, ("alice",))
    missing = f"file://user:hunter2@{tmp_path}/nowhere.git"
    result = alice.cli("init", "--git", missing)
    assert result.returncode == 1
    assert "hunter2" not in result.stdout + result.stderr
    assert result.stderr.startswith("error: git fetch")


def _state_bytes(mate: object) -> bytes:
    """Every byte teamsync keeps under the teammate's state dir (SQLite, WAL, logs)."""
    root = mate.settings.state_dir  # type: ignore[attr-defined]
    return b"".join(p.read_bytes() for p in sorted(Path(root).rglob("*")) if p.is_file())


def test_secret_on_both_sides_is_never_recorded_in_the_base_store(tmp_path: Path) -> None:
    # A file held back for a secret must never have its content stored as a merge base,
    # even when the remote already holds the very same text (adopt: local == remote).
    alice, _ = make_team(tmp_path)
    token = fake_token()
    text = f"token: {token}\n"
    alice.write("leak.md", text)
    commit_files(alice.remote, {"leak.md": text.encode(), "fine.md": b"ok\n"})
    report = alice.sync()
    assert [h.key for h in report.held_back] == ["leak.md"]
    assert token not in json.dumps(report.to_json())
    assert alice.files()["fine.md"] == "ok\n"
    assert token.encode() not in _state_bytes(alice)


def test_pulled_secret_is_never_recorded_in_the_base_store(tmp_path: Path) -> None:
    alice, bob = make_team(tmp_path)
    token = fake_token()
    commit_files(alice.remote, {"leak.md": f"token: {token}\n".encode(), "fine.md": b"ok\n"})
    bob.sync()
    bob.sync("pull")
    assert token.encode() not in _state_bytes(bob)


def test_git_errors_from_a_remote_cannot_drive_the_terminal(tmp_path: Path) -> None:
    from teamsync.errors import BackendError
    from teamsync.sync.gitcmd import GitRunner

    url = "https://u:" + "hunter2x" + "@host/x.git"  # built at run time: the repo scan stays clean
    stderr = f"remote: \x1b]0;pwned\x07\x1b[2Jrejected by {url}\u202e\n"
    with pytest.raises(BackendError) as info:
        GitRunner(tmp_path / "cache.git").fail("push", stderr)
    message = str(info.value)
    assert "rejected by https://***@host/x.git" in message and "hunter2x" not in message
    assert not any(c in message for c in "\x1b\x07\u202e"), message


def test_a_pull_records_an_earlier_content_time_and_drops_a_stale_record(tmp_path: Path) -> None:
    """The mtime says the remote's change time; only an earlier ``metadata.modified``
    needs a record (it then outlives a touch), and a stale record never outlives a pull."""
    from teamsync.memdir.freshness import record_change
    from teamsync.sync.base import checksum

    alice, bob = make_team(tmp_path)
    dated = (
        "---\nname: Dated\ndescription: an old fact\nmetadata:\n  type: project\n"
        "  modified: 2020-09-13T12:26:40.000Z\n---\nold fact\n"
    )
    plain = "plain fact\n"
    # a record this machine kept from an earlier life of the key, with the same content
    record_change(bob.settings.state_dir, bob.team / "plain.md", checksum(plain), 1_000_000_000.0)
    commit_files(alice.remote, {"dated.md": dated.encode(), "plain.md": plain.encode()})
    bob.sync()
    state = bob.settings.state_dir
    plain_path, dated_path = bob.team / "plain.md", bob.team / "dated.md"
    pulled_at = plain_path.stat().st_mtime
    assert changed_at(state, plain_path) == pulled_at  # the stale record is gone
    os.utime(dated_path, (2_000_000_000, 2_000_000_000))  # touched, content unchanged
    assert int(changed_at(state, dated_path)) == 1_600_000_000  # the record keeps its age
