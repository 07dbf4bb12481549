"""``teamsync check [--fix]``: lint the memory directory, optionally regenerating its indexes.

Prints one line per problem (``path: kind: message``), one per note (milder
findings that do not fail the check: legacy files, dangling wiki links) and a
summary line; with ``--json``, one object ``{"problems": [{"path", "kind",
"message"}], "notes": [...]}`` (under ``--fix`` also ``"fixed"``, the indexes
rewritten, ``"backups"``, where their old bytes were kept, and ``"past_limit"``,
the memories whose entries a loader would not load). Returns 1 when problems remain, 0 when the directory is clean.
``--dir`` pointed at a ``team/`` directory itself is refused with a one-line
explanation; a directory holding no memory at all gets one as a warning.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from teamsync.config import Settings
from teamsync.errors import ConfigError
from teamsync.memdir.lint import FixResult, LintReport, Problem, check_memdir, fix_memdir
from teamsync.memdir.paths import dir_mistake, empty_dir_hint, memory_dir
from teamsync.output import Output
from teamsync.security.names import printable


def _summary(problems: list[Problem], memories: int, memdir: Path, notes: int = 0) -> str:
    extra = f" ({notes} note{'s' if notes != 1 else ''})" if notes else ""
    if not problems:
        return f"ok: {memories} memory files in {memdir}, no problems{extra}"
    kinds = ", ".join(
        f"{count} {kind}" for kind, count in sorted(Counter(p.kind for p in problems).items())
    )
    noun = "problem" if len(problems) == 1 else "problems"
    return f"{len(problems)} {noun} ({kinds}) in {memories} memory files under {memdir}{extra}"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _fix(memdir: Path, settings: Settings, output: Output) -> tuple[FixResult, LintReport]:
    result = fix_memdir(memdir, backup_dir=settings.state_dir / "index-backups")
    for index in result.written:
        added = sum(1 for k in result.added if k.startswith("team/") == index.startswith("team/"))
        removed = sum(1 for r in result.removed if r.startswith(index + ":"))
        same = sum(1 for r in result.collapsed if r.startswith(index + ":"))
        output.success(
            f"updated {index}: {_count(added, 'entry', 'entries')} added, "
            f"{_count(removed, 'dead entry', 'dead entries')} removed"
            + (
                f", {_count(same, 'identical repeat', 'identical repeats')} collapsed"
                if same
                else ""
            )
        )
    for backup in result.backups:
        output.info(printable(f"kept the previous index as {backup}"))
    for index in result.unchanged:
        output.info(f"{index} already up to date")
    if result.left_out:
        output.warn(
            f"{len(result.left_out)} entries are past the index load limit (200 lines, "
            "25,000 bytes) and Claude Code would not load them; consolidate the index"
        )
    return result, LintReport(result.problems, result.memories, result.notes)


def _as_json(p: Problem) -> dict[str, str]:
    return {"path": p.path, "kind": p.kind, "message": p.message}


def run_check(
    settings: Settings, output: Output, *, fix: bool = False, missing_ok: bool = False
) -> int:
    """Lint (and with ``fix`` repair the indexes of) the memory directory; 1 when problems remain.

    ``missing_ok``: no memory directory at all is a pass, with a note (the
    ``teamsync-check`` pre-commit hook, for contributors who have none).
    """
    memdir = memory_dir(settings)
    if missing_ok and not memdir.is_dir():
        output.info(f"teamsync: no memory directory at {memdir}; nothing to check.")
        output.emit({"problems": [], "skipped": f"no memory directory at {memdir}"})
        return 0
    mistake = dir_mistake(memdir)
    if mistake is not None:
        raise ConfigError(mistake)
    fixed: FixResult | None = None
    if fix:
        fixed, report = _fix(memdir, settings, output)
    else:
        report = check_memdir(memdir)
    problems, memories = report.problems, report.memories
    hint = empty_dir_hint(memdir) if memories == 0 else None
    if settings.json:
        payload: dict[str, object] = {
            "problems": [_as_json(p) for p in problems],
            "notes": [_as_json(p) for p in report.notes]
            + ([] if hint is None else [{"path": ".", "kind": "empty", "message": hint}]),
        }
        if fixed is not None:
            payload["fixed"] = fixed.written
            payload["backups"] = [str(b) for b in fixed.backups]
            payload["past_limit"] = fixed.left_out
        output.emit(payload)
    else:
        if hint is not None:
            output.warn(printable(hint))
        for problem in problems:
            output.info(printable(f"{problem.path}: {problem.kind}: {problem.message}"))
        for note in report.notes:
            output.info(printable(f"{note.path}: {note.kind} (note): {note.message}"))
        summary = printable(_summary(problems, memories, memdir, len(report.notes)))
        (output.info if problems else output.success)(summary)
    return 1 if problems else 0
