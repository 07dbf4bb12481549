"""Every pinned reference to teamsync in the docs names something that exists (issue 24 §14).

The docs once pinned ``v0.1.0`` and the GitLab template ``v0.2.0`` while the
repository had no tags, so ``pre-commit`` failed with ``pathspec 'v0.1.0' did
not match``. The rules, for each ``rev:``, ``ref:``, ``uses: …/teamsync@``,
``teamsync.git@`` and ``git+…@`` (a pip requirement) in ``docs/``,
``README.md``, the GitLab template and ``action.yml``:

* ``<…>`` is a placeholder the reader fills in;
* a full 40-digit commit must be a commit of this repository, on the history
  checked out (an ancestor of ``HEAD``);
* ``vX.Y.Z`` must be a release: a dated ``## X.Y.Z - YYYY-MM-DD`` heading in
  CHANGELOG.md, no newer than the package version, and, in a clone that has
  tags, one of its tags. A fresh CI clone may have no tags at all, so their
  absence alone fails nothing; the CHANGELOG is in every clone;
* anything else (a branch, which moves; a short hash) is refused.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from teamsync._version import __version__

ROOT = Path(__file__).resolve().parents[2]
_REF = r"([^\s'\"`)]+)"
PATTERNS = (
    re.compile(r"^[\s#-]*rev:\s*" + _REF, re.MULTILINE),
    re.compile(r"^[\s#-]*ref:\s*" + _REF, re.MULTILINE),
    re.compile(r"uses:\s*[\w.-]+/teamsync@" + _REF),
    re.compile(r"teamsync(?:\.git)?@" + _REF),
    re.compile(r"git\+[^\s'\"`@]+@" + _REF),  # any pip requirement from git
)
PLACEHOLDER = re.compile(r"<[^>]*>?")
COMMIT = re.compile(r"[0-9a-f]{40}")
TAG = re.compile(r"v(\d+\.\d+\.\d+)")
RELEASE = re.compile(r"^## (\d+\.\d+\.\d+) - \d{4}-\d{2}-\d{2}\s*$", re.MULTILINE)


def _files(root: Path) -> list[Path]:
    return [
        *sorted((root / "docs").rglob("*.md")),
        root / "README.md",
        *sorted((root / "ci" / "gitlab").glob("*.yml")),
        root / "action.yml",
    ]


def references(root: Path) -> list[tuple[str, int, str]]:
    """(file, line, ref) for every pinned teamsync reference."""
    found = []
    for path in _files(root):
        text = path.read_text(encoding="utf-8")
        for pattern in PATTERNS:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start(1)) + 1
                found.append((str(path.relative_to(root)), line, match.group(1)))
    return sorted(set(found))


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def problem(root: Path, ref: str) -> str | None:
    """Why ``ref`` names nothing that exists in the repository at ``root`` (None: it does)."""
    if PLACEHOLDER.fullmatch(ref):
        return None
    if COMMIT.fullmatch(ref):
        if _git(root, "cat-file", "-e", f"{ref}^{{commit}}").returncode != 0:
            shallow = _git(root, "rev-parse", "--is-shallow-repository").stdout.strip()
            if shallow == "true":
                pytest.skip(f"a shallow clone: commit {ref} may be behind its boundary")
            return f"{ref} is not a commit of this repository"
        if _git(root, "merge-base", "--is-ancestor", ref, "HEAD").returncode != 0:
            return f"{ref} is not on the checked-out history"
        return None
    tag = TAG.fullmatch(ref)
    if tag is None:
        return f"{ref} is neither a full commit hash nor a vX.Y.Z release tag"
    version = tag.group(1)
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    if version not in RELEASE.findall(changelog):
        return f"{ref}: CHANGELOG.md has no dated release heading `## {version} - YYYY-MM-DD`"
    if _version(version) > _version(__version__):
        return f"{ref} is newer than the package version {__version__}"
    tags = _git(root, "tag", "--list").stdout.split()
    if tags and ref not in tags:
        return f"{ref} is not one of this clone's tags"
    return None


def test_every_pinned_reference_in_the_docs_exists() -> None:
    if _git(ROOT, "rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout: no history to check commits against")
    refs = references(ROOT)
    assert len(refs) >= 8  # pip (2), the action, GitLab (2), pre-commit (2), README
    bad = [f"{f}:{line}: {why}" for f, line, ref in refs if (why := problem(ROOT, ref))]
    assert bad == []


def test_no_reference_waits_for_a_tag_the_changelog_has_not_released() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    if RELEASE.findall(changelog):
        pytest.skip("a release exists: tags are checked above")
    tags = [ref for _, _, ref in references(ROOT) if TAG.fullmatch(ref)]
    assert tags == []
    assert "No release has been tagged yet" in (ROOT / "docs" / "ci.md").read_text("utf-8")


def _repo(tmp_path: Path, changelog: str, tags: tuple[str, ...]) -> tuple[Path, str]:
    root = tmp_path / "repo"
    root.mkdir(parents=True)
    (root / "CHANGELOG.md").write_text(changelog, encoding="utf-8")
    for args in (
        ("init", "-q"),
        ("add", "CHANGELOG.md"),
        ("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "c"),
    ):
        assert _git(root, *args).returncode == 0
    for tag in tags:
        assert _git(root, "tag", tag).returncode == 0
    return root, _git(root, "rev-parse", "HEAD").stdout.strip()


def test_the_checker_refuses_what_does_not_exist(tmp_path: Path) -> None:
    unreleased = "# Changelog\n\n## Unreleased\n\n## 0.1.0\n\n- First version number.\n"
    root, head = _repo(tmp_path, unreleased, ())
    assert problem(root, head) is None
    assert problem(root, "<commit>") is None
    assert "not a commit" in str(problem(root, "0" * 40))
    assert "no dated release heading" in str(problem(root, "v0.1.0"))  # issue 24 §14
    assert "neither" in str(problem(root, "main"))
    assert "neither" in str(problem(root, head[:12]))
    _git(root, "checkout", "-q", "--orphan", "other")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.invalid",
         "commit", "-qm", "side")  # fmt: skip
    assert "not on the checked-out history" in str(problem(root, head))


def test_a_release_tag_counts_from_the_changelog_when_the_clone_has_no_tags(
    tmp_path: Path,
) -> None:
    released = "# Changelog\n\n## 0.1.0 - 2026-12-01\n\n- First release.\n"
    root, _ = _repo(tmp_path, released, ())
    assert problem(root, "v0.1.0") is None  # a fresh clone without tags
    assert "no dated release heading" in str(problem(root, "v0.2.0"))
    tagged, _ = _repo(tmp_path / "t", released, ("v0.0.9",))
    assert "not one of this clone's tags" in str(problem(tagged, "v0.1.0"))
    _git(tagged, "tag", "v0.1.0")
    assert problem(tagged, "v0.1.0") is None
