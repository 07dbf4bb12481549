"""``teamsync recall``, ``extract`` and ``dream``: call the library, print through :class:`Output`.

JSON shapes (``--json``, one object on stdout):

* recall: ``{"memories": [{"path", "score", "stale", "stale_reasons", "type",
  "description", "age_days", "changed_at", "freshness_note", "why", "content",
  "truncated"}], "selector": "claude"|"hybrid"|"lexical", "notes": [...]}``;
  ``stale`` is true whenever a caveat is attached (2 days old or more, or code
  drift, see :mod:`teamsync.recall.drift`); ``stale_reasons`` names each one.
  ``why`` says what cleared the relevance floor (the bm25 terms and their share
  of the query, the embedding similarity, or the Claude model that chose it).
  ``memories`` may be empty: nothing was relevant enough.
* extract: ``{"new_messages", "written", "proposed": {path: content},
  "refused": [{"path", "reason"}], "turns", "capped", "notes"}``.
* dream: ``{"ran", "skipped", "refused", "summary", "writes": [{"path",
  "reason"}], "deletions": [{"path", "reason"}], "backup", "problems"}``.

Exit codes: 0 done (including "nothing to do"), 1 a refused dream plan or any
other :class:`~teamsync.errors.TeamsyncError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from teamsync.config import Settings
from teamsync.output import Output

if TYPE_CHECKING:
    from teamsync.recall.dream import DreamResult
    from teamsync.recall.llm import Claude
    from teamsync.recall.recall import Recalled


def _memory_json(m: Recalled) -> dict[str, Any]:
    return {
        "path": m.path,
        "score": m.score,
        "stale": m.stale,
        "stale_reasons": list(m.stale_reasons),
        "type": m.type,
        "description": m.description,
        "age_days": m.age_days,
        "changed_at": m.changed_at,
        "freshness_note": m.freshness,
        "why": m.why,
        "content": m.content,
        "truncated": m.truncated,
    }


def _age(days: int) -> str:
    return {0: "today", 1: "yesterday"}.get(days, f"{days} days old")


def _show(output: Output, m: Recalled, explain: bool) -> None:
    kind = m.type or "untyped"
    output.info(f"── {m.path}  [{kind} · {_age(m.age_days)} · score {m.score:g}]")
    if explain:
        output.info(f"   why: {m.why}")
    for reason in m.stale_reasons:
        output.warn(f"{m.path} may be stale: {reason}")
    if m.freshness:
        output.info(f"   note: {m.freshness}")
    output.info(m.content.rstrip("\n"))
    if m.truncated:
        output.info(m.truncated)
    output.info("")


def warm_in_background(settings: Settings) -> bool:
    """After a pull: refresh the recall caches in a detached ``teamsync recall --warm``, so the
    next query embeds nothing. Only for a directory whose vector cache exists already (someone
    uses hybrid recall there); never waits for the child, never fails the pull."""
    import subprocess
    import sys

    from teamsync.memdir.paths import memory_dir
    from teamsync.recall.vectors import default_vectors_path

    memdir = memory_dir(settings)
    state = settings.state_dir / "recall"
    digest = default_vectors_path(settings.state_dir, memdir).name[: len("vectors-") + 16]
    if not state.is_dir() or not any(p.name.startswith(digest) for p in state.iterdir()):
        return False
    try:
        subprocess.Popen(
            [sys.executable, "-m", "teamsync", "--dir", str(memdir), "--quiet", "recall", "--warm"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return False
    return True


def run_warm(settings: Settings, output: Output) -> int:
    """Build or update the recall caches now (``teamsync recall --warm``)."""
    from teamsync.recall.recall import warm

    done = warm(settings)
    if settings.json:
        output.emit(
            {
                "model": done.model,
                "memories": done.memories,
                "reread": done.reread,
                "embedded": done.embedded,
                "seconds": round(done.seconds, 3),
            }
        )
        return 0
    model = f"embedded {done.embedded} with {done.model}" if done.model else "no embedding model"
    output.info(
        f"recall caches ready: {done.memories} memories, {done.reread} re-read, {model} "
        f"({done.seconds:.1f} s)"
    )
    return 0


def run_recall(
    settings: Settings,
    output: Output,
    *,
    query: str,
    limit: int = 5,
    offline: bool = False,
    explain: bool = False,
    model: str | None = None,
    claude: Claude | None = None,
    mode: str = "auto",
) -> int:
    """Print the memories relevant to ``query``."""
    from teamsync.recall.recall import recall

    result = recall(
        settings, query, limit=limit, offline=offline, claude=claude, model=model, mode=mode
    )
    for note in result.notes:
        output.warn(note)
    if settings.json:
        output.emit(
            {
                "memories": [_memory_json(m) for m in result.memories],
                "selector": result.selector,
                "notes": result.notes,
            }
        )
        return 0
    if not result.memories:
        output.info(f"No memory is relevant enough ({result.selector} selection).")
        return 0
    noun = "memory" if len(result.memories) == 1 else "memories"
    output.info(f"{len(result.memories)} {noun} ({result.selector} selection):\n")
    for memory in result.memories:
        _show(output, memory, explain)
    return 0


def run_extract(
    settings: Settings,
    output: Output,
    *,
    transcript: Path,
    dry_run: bool = False,
    model: str | None = None,
    claude: Claude | None = None,
) -> int:
    """Extract memories from a transcript (or show what would be written)."""
    from teamsync.recall.extract import extract

    result = extract(settings, transcript, dry_run=dry_run, claude=claude, model=model)
    for note in result.notes:
        output.info(note)
    for path, reason in result.refused:
        output.warn(reason if reason.startswith("Refused") else f"{path}: {reason}")
    if settings.json:
        output.emit(
            {
                "new_messages": result.new_messages,
                "written": [] if dry_run else result.written,
                "proposed": result.proposed if dry_run else {},
                "refused": [{"path": p, "reason": r} for p, r in result.refused],
                "turns": result.turns,
                "capped": result.capped,
                "notes": result.notes,
            }
        )
        return 0
    if dry_run:
        for path, content in result.proposed.items():
            output.info(f"--- proposed {path} ---\n{content.rstrip()}\n")
        output.info(f"dry run: {len(result.proposed)} file(s) proposed, nothing written")
    elif result.written:
        output.success(f"wrote {len(result.written)} memory file(s): " + ", ".join(result.written))
    elif result.refused:
        output.info(f"no memory written; {len(result.refused)} write(s) refused")
    elif result.new_messages:
        output.info("nothing worth remembering in the new messages")
    return 0


def _dream_payload(result: DreamResult) -> dict[str, Any]:
    plan = result.plan
    return {
        "ran": result.ran,
        "skipped": result.skipped,
        "refused": None,
        "summary": plan.summary if plan else None,
        "writes": [{"path": k, "reason": r} for k, (_, r) in (plan.writes if plan else {}).items()],
        "deletions": [
            {"path": k, "reason": r} for k, r in (plan.deletions if plan else {}).items()
        ],
        "backup": str(result.backup) if result.backup else None,
        "problems": result.problems,
    }


def run_dream(
    settings: Settings,
    output: Output,
    *,
    force: bool = False,
    dry_run: bool = False,
    model: str | None = None,
    claude: Claude | None = None,
) -> int:
    """Consolidate the memories; 1 when the plan was refused."""
    from teamsync.errors import PlanRefused
    from teamsync.recall.dream import dream

    try:
        result = dream(settings, force=force, dry_run=dry_run, claude=claude, model=model)
    except PlanRefused as exc:
        output.error(str(exc))
        output.emit({"ran": False, "skipped": None, "refused": str(exc)})
        return 1
    payload = _dream_payload(result)
    if settings.json:
        output.emit(payload)
        return 0
    if result.skipped:
        output.info(f"not consolidating: {result.skipped}")
    for item in payload["writes"]:
        output.info(f"write  {item['path']}: {item['reason']}")
    for item in payload["deletions"]:
        output.info(f"delete {item['path']}: {item['reason']}")
    if result.ran:
        output.success(f"consolidated: {payload['summary'] or 'nothing to change'}")
    if result.backup:
        output.info(f"pre-images kept in {result.backup}")
    for problem in result.problems:
        output.warn(problem)
    return 0
