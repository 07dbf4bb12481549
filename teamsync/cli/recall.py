"""``teamsync recall``, ``extract`` and ``dream``: click only; the work is in
:mod:`teamsync.commands.recall`."""

from __future__ import annotations

from pathlib import Path

import click

from teamsync.cli._common import AppContext, finish, pass_app

_MODEL_HELP = "Claude model (default: TEAMSYNC_MODEL, else a current Sonnet)."


@click.command()
@click.argument("query", nargs=-1)
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(1, 50),
    default=5,
    show_default=True,
    help="At most this many memories (fewer, or none, when fewer are relevant).",
)
@click.option("--offline", is_flag=True, help="Never call Claude: rank on this machine.")
@click.option(
    "--mode",
    type=click.Choice(["auto", "hybrid", "lexical"]),
    default="auto",
    show_default=True,
    help="Offline ranker: hybrid (bm25 + local embeddings, needs teamsync[embed]), "
    "lexical (bm25), or auto (hybrid when installed).",
)
@click.option("--explain", is_flag=True, help="Say why each memory was chosen.")
@click.option("--model", default=None, help=_MODEL_HELP)
@click.option(
    "--warm",
    is_flag=True,
    help="Build or update the offline caches (index and vectors) now, and exit: no QUERY.",
)
@pass_app
def recall(
    app: AppContext,
    query: tuple[str, ...],
    limit: int,
    offline: bool,
    mode: str,
    explain: bool,
    model: str | None,
    warm: bool,
) -> None:
    """Show the memories relevant to QUERY, with freshness and code-drift notes.

    With ANTHROPIC_API_KEY set (and no --offline), Claude picks from up to 200
    memory headers; otherwise, or if that call fails, an offline ranking is
    used. Only memories that clear a relevance floor are shown. Each memory is
    capped at 200 lines / 4 KB.

    \b
    Examples:
      teamsync recall how do we deploy
      teamsync recall --offline -n 3 release checklist
      teamsync recall --warm
    """
    from teamsync.commands.recall import run_recall, run_warm

    if warm:
        if query:
            raise click.UsageError("--warm takes no QUERY")
        finish(run_warm(app.settings, app.output))
        return
    if not query:
        raise click.UsageError("Missing argument 'QUERY...'.")

    code = run_recall(
        app.settings,
        app.output,
        query=" ".join(query),
        limit=limit,
        offline=offline,
        mode=mode,
        explain=explain,
        model=model,
    )
    finish(code)


@click.command()
@click.argument(
    "transcript", type=click.Path(exists=True, dir_okay=False, readable=True, path_type=Path)
)
@click.option("--dry-run", is_flag=True, help="Print the proposed files; write nothing.")
@click.option("--model", default=None, help=_MODEL_HELP)
@pass_app
def extract(app: AppContext, transcript: Path, dry_run: bool, model: str | None) -> None:
    """Save what is worth remembering from a Claude Code TRANSCRIPT (JSONL).

    Only messages after the previous run's cursor are read. Claude gets at most
    5 turns and four tools confined to the memory directory; every write is
    scanned for secrets. Needs ANTHROPIC_API_KEY.

    \b
    Examples:
      teamsync extract --dry-run ~/.claude/projects/P/SESSION.jsonl
    """
    from teamsync.commands.recall import run_extract

    finish(
        run_extract(app.settings, app.output, transcript=transcript, dry_run=dry_run, model=model)
    )


@click.command()
@click.option("--force", is_flag=True, help="Skip the 24 h / 5 extractions gate.")
@click.option("--dry-run", is_flag=True, help="Show the validated plan; change nothing.")
@click.option("--model", default=None, help=_MODEL_HELP)
@pass_app
def dream(app: AppContext, force: bool, dry_run: bool, model: str | None) -> None:
    """Consolidate memories: merge duplicates, resolve contradictions.

    Runs at most once per 24 h and after 5 extractions unless --force. Refuses
    a plan that removes over 25% of the memories or any without a reason;
    pre-images are backed up first. Needs ANTHROPIC_API_KEY.

    \b
    Examples:
      teamsync dream --dry-run
      teamsync dream --force
    """
    from teamsync.commands.recall import run_dream

    finish(run_dream(app.settings, app.output, force=force, dry_run=dry_run, model=model))
