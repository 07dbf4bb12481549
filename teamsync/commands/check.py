"""``teamsync check [--fix]``: lint the memory directory, optionally regenerating its indexes.

Prints one line per problem (``path: kind: message``) and a summary line; with
``--json``, one object ``{"problems": [{"path", "kind", "message"}]}`` (plus
``"fixed"``, the indexes rewritten, under ``--fix``). Returns 1 when problems
remain, 0 when the directory is clean.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from teamsync.config import Settings
from teamsync.memdir.lint import Problem, check_memdir, fix_memdir
from teamsync.memdir.paths import memory_dir
from teamsync.output import Output, printable


def _summary(problems: list[Problem], memories: int, memdir: Path) -> str:
    if not problems:
        return f"ok: {memories} memory files in {memdir}, no problems"
    kinds = ", ".join(
        f"{count} {kind}" for kind, count in sorted(Counter(p.kind for p in problems).items())
    )
    noun = "problem" if len(problems) == 1 else "problems"
    return f"{len(problems)} {noun} ({kinds}) in {memories} memory files under {memdir}"


def run_check(settings: Settings, output: Output, *, fix: bool = False) -> int:
    """Lint (and with ``fix`` repair the indexes of) the memory directory; 1 when problems remain."""
    memdir = memory_dir(settings)
    fixed: list[str] = []
    if fix:
        result = fix_memdir(memdir)
        fixed, problems, memories = result.written, result.problems, result.memories
        for index in result.written:
            output.success(f"rewrote {index}")
        for index in result.unchanged:
            output.info(f"{index} already up to date")
        if result.left_out:
            output.warn(
                f"{len(result.left_out)} memory files do not fit in the index limits "
                "(200 lines, 25,000 bytes); consolidate them"
            )
    else:
        report = check_memdir(memdir)
        problems, memories = report.problems, report.memories
    if settings.json:
        payload: dict[str, object] = {
            "problems": [{"path": p.path, "kind": p.kind, "message": p.message} for p in problems]
        }
        if fix:
            payload["fixed"] = fixed
        output.emit(payload)
    else:
        for problem in problems:
            output.info(printable(f"{problem.path}: {problem.kind}: {problem.message}"))
        summary = printable(_summary(problems, memories, memdir))
        (output.info if problems else output.success)(summary)
    return 1 if problems else 0
