"""Code-drift freshness: does a memory still describe the code it cites?

A memory that says "the retry lives in ``src/pay/retry.py:42``" is a claim
about the checkout. At recall time every cited repository path is checked
against the current checkout (the git work tree containing the working
directory, else the working directory itself):

* the path no longer exists -> stale, "cites src/x.py, which no longer exists";
* a cited line is past the end of the file -> stale;
* the file changed after the memory last changed (the file's last commit time
  from ``git log -1 --format=%ct``, or its mtime when it is not tracked) ->
  stale, naming both dates.

The memory's own time comes from :func:`teamsync.memdir.freshness.changed_at`
(the history sync records), not from its mtime. Citations are recognised
conservatively: ``dir/file.ext`` paths (not URLs or domains) and bare file
names with a code extension (``file.py:42``), which are looked up with
``git ls-files``. Memory files themselves (``*.md`` inside the memory
directory) are not treated as code.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from teamsync import _git as gitrun
from teamsync.errors import ToolMissing

MAX_CITATIONS = 8
TOLERANCE_SECONDS = 60.0
CODE_EXTENSIONS = (
    "py|pyi|ts|tsx|js|jsx|mjs|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|m|scala|sh|sql|"
    "yaml|yml|toml|json|ini|cfg|proto|tf|vue|svelte|lua|ex|exs|erl|hs|dart"
)
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://\S+|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_SLASHED = re.compile(
    r"(?<![\w/.~$@-])((?:\.?[\w-][\w.-]*/)+[\w.-]*\.[A-Za-z0-9]{1,8})(?::(\d+)(?:-\d+)?|#L(\d+))?"
)
_BARE = re.compile(
    rf"(?<![\w/.~$@-])([\w-]+\.(?:{CODE_EXTENSIONS}))(?::(\d+)(?:-\d+)?|#L(\d+))?(?![\w/])"
)
_DOMAIN_LIKE = re.compile(r"^[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}$")


@dataclass(frozen=True)
class Citation:
    path: str
    line: int | None
    bare: bool


@dataclass
class Checkout:
    """The code a memory is checked against: a git work tree or a plain directory."""

    root: Path
    git: bool
    _files: dict[str, list[str]] | None = field(default=None, repr=False)

    @classmethod
    def find(cls, cwd: Path) -> Checkout:
        out = _git(["rev-parse", "--show-toplevel"], cwd)
        if out:
            return cls(Path(out), True)
        return cls(cwd, False)

    def by_name(self, name: str) -> list[str]:
        """Tracked paths whose last component is ``name`` (git only)."""
        if self._files is None:
            self._files = {}
            listing = _git(["ls-files", "-z"], self.root, strip=False) if self.git else ""
            for rel in (listing or "").split("\0"):
                if rel:
                    self._files.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
        return self._files.get(name, [])

    def changed(self, rel: str) -> tuple[float, str]:
        """When ``rel`` last changed and how that was measured (``git`` or ``mtime``)."""
        if self.git:
            out = _git(["log", "-1", "--format=%ct", "--", rel], self.root)
            if out and out.isdigit():
                return float(out), "last commit"
        return (self.root / rel).stat().st_mtime, "modified"


def _git(args: list[str], cwd: Path, *, strip: bool = True) -> str | None:
    try:
        env = gitrun.clean_env(extra={"GIT_OPTIONAL_LOCKS": "0"})
        result = gitrun.run(args, cwd=cwd, env=env, timeout=10)
    except (ToolMissing, subprocess.SubprocessError):
        return None
    if not result.ok:
        return None
    out = result.stdout.decode("utf-8", "replace")
    return out.strip() if strip else out


def citations(text: str) -> list[Citation]:
    """Repository paths a memory cites, in order of appearance (at most :data:`MAX_CITATIONS`)."""
    cleaned = _URL.sub(" ", text)
    found: dict[str, Citation] = {}
    for match in _SLASHED.finditer(cleaned):
        path = match.group(1)
        first = path.split("/", 1)[0]
        if path.startswith("../") or (not first.startswith(".") and _DOMAIN_LIKE.match(first)):
            continue
        found.setdefault(path, Citation(path, _line(match), False))
    for match in _BARE.finditer(cleaned):
        name = match.group(1)
        if not any(c.path.endswith("/" + name) or c.path == name for c in found.values()):
            found.setdefault(name, Citation(name, _line(match), True))
    return list(found.values())[:MAX_CITATIONS]


def _line(match: re.Match[str]) -> int | None:
    value = match.group(2) or match.group(3)
    return int(value) if value else None


def _day(stamp: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(stamp))


def _line_count(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(1 for _ in handle)


def check_citation(cite: Citation, checkout: Checkout, memory_changed: float) -> str | None:
    """The reason ``cite`` makes the memory stale, or None when it still holds."""
    if cite.bare:
        candidates = checkout.by_name(cite.path) if checkout.git else []
        if not candidates and (checkout.root / cite.path).is_file():
            candidates = [cite.path]
        if not candidates:
            return f"cites {cite.path}, which no longer exists" if checkout.git else None
        rel = candidates[0]
    else:
        rel = cite.path
        if not checkout.git and not (checkout.root / rel.split("/", 1)[0]).exists():
            return None  # outside git, only judge paths into a tree that is actually here
        if not (checkout.root / rel).is_file():
            return f"cites {rel}, which no longer exists"
    if cite.line is not None and cite.line > _line_count(checkout.root / rel):
        return f"cites {rel}:{cite.line}, but the file is shorter now"
    stamp, how = checkout.changed(rel)
    if stamp > memory_changed + TOLERANCE_SECONDS:
        return (
            f"cites {rel}, changed since ({how} {_day(stamp)}; "
            f"memory last changed {_day(memory_changed)})"
        )
    return None


def drift_reasons(
    text: str, memory_changed: float, checkout: Checkout, *, memdir: Path | None = None
) -> list[str]:
    """Every reason the memory's citations make it stale (empty when none do)."""
    reasons: list[str] = []
    for cite in citations(text):
        if cite.path.endswith(".md") and memdir is not None and (memdir / cite.path).exists():
            continue
        try:
            reason = check_citation(cite, checkout, memory_changed)
        except OSError:
            reason = f"cites {cite.path}, which cannot be read"
        if reason:
            reasons.append(reason)
    return reasons
