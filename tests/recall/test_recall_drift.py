"""Code-drift freshness against a real git checkout (and a plain directory)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from teamsync.recall.drift import Checkout, citations, drift_reasons
from teamsync.recall.recall import recall
from testing.recall import git, memory, put, settings_for

DAY = 86_400.0
T0 = 1_767_225_600  # 2026-01-01T00:00:00Z


def _commit(repo: Path, message: str, when: float) -> None:
    stamp = f"@{int(when)} +0000"
    git(repo, "add", "-A")
    git(
        repo,
        "commit",
        "-q",
        "-m",
        message,
        env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp},
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    put(root, "src/pay/retry.py", "".join(f"line {i}\n" for i in range(50)))
    put(root, "src/pay/ledger.py", "x = 1\n")
    put(root, "config/settings.toml", "a = 1\n")
    _commit(root, "initial", T0)
    put(root, "src/pay/ledger.py", "x = 2\n")
    _commit(root, "ledger change", T0 + 10 * DAY)
    return root


def test_citations_recognise_paths_and_skip_urls_domains_and_globs() -> None:
    text = (
        "See src/pay/retry.py:42, retry.py#L7 and `config/settings.toml`. Not these: "
        "https://github.com/o/r/blob/main/src/a.py, grafana.internal/d/x.json, perf/*.js, "
        "ops@example.com, ../outside/x.py, wiki/payments/runbooks, version 1.2.3."
    )
    found = [(c.path, c.line, c.bare) for c in citations(text)]
    assert found == [
        ("src/pay/retry.py", 42, False),
        ("config/settings.toml", None, False),
    ]
    assert [(c.path, c.line) for c in citations("bare ledger.py:3 only")] == [("ledger.py", 3)]


def test_missing_path_marks_the_memory_stale(repo: Path) -> None:
    reasons = drift_reasons("Retries live in src/pay/gone.py.", T0 + 20 * DAY, Checkout.find(repo))
    assert reasons == ["cites src/pay/gone.py, which no longer exists"]


def test_file_changed_after_the_memory(repo: Path) -> None:
    checkout = Checkout.find(repo / "src")  # any directory inside the work tree
    assert checkout.git and checkout.root == repo.resolve()
    reasons = drift_reasons("The ledger lives in src/pay/ledger.py", T0 + 5 * DAY, checkout)
    assert reasons == [
        "cites src/pay/ledger.py, changed since (last commit 2026-01-11; memory last changed 2026-01-06)"
    ]
    assert drift_reasons("The ledger lives in src/pay/ledger.py", T0 + 11 * DAY, checkout) == []


def test_line_past_the_end_and_bare_names(repo: Path) -> None:
    checkout = Checkout.find(repo)
    assert drift_reasons("see src/pay/retry.py:40", T0 + DAY, checkout) == []
    assert drift_reasons("see src/pay/retry.py:400", T0 + DAY, checkout) == [
        "cites src/pay/retry.py:400, but the file is shorter now"
    ]
    assert drift_reasons("bare ledger.py is the one", T0 + 5 * DAY, checkout)[0].startswith(
        "cites src/pay/ledger.py, changed since"
    )
    assert drift_reasons("old helper vanished.py:3", T0, checkout) == [
        "cites vanished.py, which no longer exists"
    ]


def test_untracked_files_use_mtime(repo: Path) -> None:
    new = put(repo, "src/pay/draft.py", "pass\n")
    os.utime(new, (T0 + 30 * DAY, T0 + 30 * DAY))
    reasons = drift_reasons("draft in src/pay/draft.py", T0 + 2 * DAY, Checkout.find(repo))
    assert reasons == [
        "cites src/pay/draft.py, changed since (modified 2026-01-31; memory last changed 2026-01-03)"
    ]


def test_outside_git_only_paths_into_this_tree_are_judged(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    put(plain, "lib/util.py", "pass\n")
    checkout = Checkout.find(plain)
    assert not checkout.git
    assert drift_reasons(
        "see lib/util.py and lib/gone.py and other/x.py and a.py", time.time() + 60, checkout
    ) == ["cites lib/gone.py, which no longer exists"]


def test_memory_files_cited_by_path_are_not_code(tmp_path: Path, repo: Path) -> None:
    memdir = tmp_path / "memory"
    put(memdir, "team/other.md", memory("o", "other"))
    assert drift_reasons("see team/other.md", T0, Checkout.find(repo), memdir=memdir) == []


def test_recall_reports_drift_as_stale(tmp_path: Path, repo: Path) -> None:
    memdir = tmp_path / "memory"
    body = "Retry policy: see src/pay/retry.py:12 and src/pay/removed.py.\n"
    put(memdir, "team/project_retry.md", memory("retry", "payment retry policy", body=body))
    (hit,) = recall(settings_for(memdir, cwd=repo / "src"), "payment retry", offline=True).memories
    assert hit.stale
    assert hit.stale_reasons == ("cites src/pay/removed.py, which no longer exists",)
