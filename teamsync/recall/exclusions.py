"""The extraction rules, enforced in code: what a memory must never be.

The prompts tell the model what not to save (SPEC §1); this module checks
every proposed memory *after* the model and *before* any write, so a rule
holds even when the model ignores it. Each check is deterministic, reads only
the proposed text (and, for two of them, the existing memories and the
repository checkout), and answers a reason the model and the user are shown:

* ``user`` memories under ``team/`` (they are private by definition);
* code patterns: a fenced code block, or several lines that are source code;
* paths derivable from the repository: the memory says where something lives
  and the path it names exists in the checkout;
* git history: commit hashes, ``git log``/``blame`` output, who changed what;
* fix recipes: a stack trace, or "the fix was …"/"fixed by …" steps;
* transient task state: checklists, TODOs, "currently working on";
* duplicates: a memory whose words (descriptions and bodies) mostly repeat an
  existing memory under another name (Jaccard similarity of word sets).

The checks err on the side of letting a memory through: a refused memory is
lost knowledge, so each pattern needs a specific signal, not a keyword.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DUPLICATE_SIMILARITY = 0.6
CODE_LINES = 3

_FENCE = re.compile(r"^\s*(```|~~~)", re.M)
_CODE_LINE = re.compile(
    r"^\s*(def |class |import |from \S+ import |function |const |let |var |return\b|"
    r"if \(|for \(|#include|public |private |SELECT .+ FROM |\}\s*$|.*;\s*$|.*\)\s*\{\s*$|"
    r"@\w+\(|\w+\s*=\s*\w+\(.*\)\s*$)"
)
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.\w{1,8}|(?:[\w.-]+/){2,}[\w.-]*)")
_LOCATION = re.compile(
    r"\b(lives?|is|are|located|defined|implemented|found|sits?|kept|stored)\s+(in|at|under|inside)\b",
    re.I,
)
_COMMIT = re.compile(
    r"\b(commit|committed|reverted|cherry-picked|introduced in|merged in|sha)\b[^\n]{0,40}?\b[0-9a-f]{7,40}\b",
    re.I,
)
_GIT_CMD = re.compile(r"\bgit (log|blame|show|bisect|shortlog)\b", re.I)
_WHO_CHANGED = re.compile(
    r"\b\w+ (changed|rewrote|refactored|renamed|deleted|added|moved) [^\n]{0,60}\b(in|on) "
    r"(commit|PR|pull request|#\d+|\d{4}-\d{2}-\d{2})",
    re.I,
)
_TRACE = re.compile(
    r"^(Traceback \(most recent call last\)|\s+at [\w.$]+\(.*:\d+\)|\s+File \".+\", line \d+)", re.M
)
_FIX = re.compile(
    r"\b(the fix (is|was)|fixed (it |this |the \w+ )?by|to fix (it|this|the \w+)|"
    r"workaround:|steps to reproduce|how to fix)\b",
    re.I,
)
_STEPS = re.compile(
    r"^\s*\d+[.)]\s+(run|restart|delete|remove|clear|reinstall|rerun|set|edit)\b", re.M | re.I
)
_TRANSIENT = re.compile(
    r"(^\s*[-*] \[[ xX]\]|\bTODO\b|\bWIP\b|\bcurrently (working on|editing|debugging|fixing|"
    r"refactoring|implementing)\b|\bright now I\b|\bin this session\b|^\s*next steps?:|"
    r"\bwork in progress\b|\bI am (now )?(editing|working on|in the middle of)\b)",
    re.I | re.M,
)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Refusal:
    kind: str
    """one of: user-in-team, code, repo-paths, git-history, fix-recipe, transient, duplicate"""
    reason: str


def fold(key: str) -> str:
    """A key as a case-insensitive, normalisation-insensitive disk would see it."""
    return unicodedata.normalize("NFKC", key).casefold()


def _words(text: str) -> set[str]:
    """The content words of a memory: frontmatter values and body, not keys or stop words."""
    from teamsync.recall.tokens import STOP_WORDS, extract_fields

    fields = extract_fields(text)
    joined = f"{fields.name} {fields.description} {fields.body}".lower()
    return {w for w in _WORD.findall(joined) if len(w) > 2 and w not in STOP_WORDS}


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of two texts' word sets (words of three letters or more)."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def containment(part: str, whole: str) -> float:
    """The share of ``part``'s words that ``whole`` holds."""
    wa = _words(part)
    return len(wa & _words(whole)) / len(wa) if wa else 1.0


def _body(content: str) -> str:
    """Everything after the frontmatter (the frontmatter itself is checked by the format)."""
    if content.startswith("---"):
        end = content.find("\n---", 3)
        if end != -1:
            return content[end + 4 :]
    return content


def _code(body: str) -> str | None:
    if _FENCE.search(body):
        return "it holds a fenced code block; code is in the repository, not in memory"
    lines = [line for line in body.splitlines() if _CODE_LINE.match(line)]
    if len(lines) >= CODE_LINES:
        return f"{len(lines)} of its lines are source code; code patterns are derivable from the repository"
    return None


def _repo_paths(body: str, checkout: Path | None) -> str | None:
    if checkout is None:
        return None
    present = []
    for match in _PATH.finditer(body):
        candidate = match.group(1).rstrip("/.")
        try:
            if candidate and (checkout / candidate).exists():
                present.append(candidate)
        except (OSError, ValueError):
            continue
    if present and _LOCATION.search(body):
        names = ", ".join(sorted(set(present))[:3])
        return f"it says where code lives ({names}), which the repository itself shows"
    return None


def _git(body: str) -> str | None:
    if _COMMIT.search(body) or _GIT_CMD.search(body) or _WHO_CHANGED.search(body):
        return "it records git history (commits, who changed what); git already keeps that"
    return None


def _fix(body: str) -> str | None:
    if _TRACE.search(body):
        return "it holds a stack trace; a fix recipe belongs in the code or the commit message"
    if _FIX.search(body) or len(_STEPS.findall(body)) >= 2:
        return "it is a fix recipe or debugging steps; the fix is in the code"
    return None


def _transient(body: str) -> str | None:
    if _TRANSIENT.search(body):
        return "it is transient task state (a checklist, a TODO, what is being worked on now)"
    return None


def _duplicate(key: str, content: str, existing: Mapping[str, str]) -> str | None:
    for other, text in existing.items():
        if fold(other) == fold(key):
            continue
        score = similarity(content, text)
        if score >= DUPLICATE_SIMILARITY:
            return (
                f"it repeats {other} ({score:.0%} of their words are shared); "
                f"update {other} with edit_file instead"
            )
    return None


def check(
    key: str,
    content: str,
    kind: str | None,
    *,
    existing: Mapping[str, str],
    checkout: Path | None,
) -> Refusal | None:
    """The first rule ``content`` (a memory to be written at ``key``) breaks, or None."""
    if kind == "user" and key.startswith("team/"):
        return Refusal(
            "user-in-team",
            "a user memory is private: write it outside team/ (team/ is shared with everyone)",
        )
    body = _body(content)
    for name, found in (
        ("code", _code(body)),
        ("repo-paths", _repo_paths(body, checkout)),
        ("git-history", _git(body)),
        ("fix-recipe", _fix(body)),
        ("transient", _transient(body)),
        ("duplicate", _duplicate(key, content, existing)),
    ):
        if found is not None:
            return Refusal(name, found)
    return None
