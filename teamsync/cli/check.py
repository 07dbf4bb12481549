"""``teamsync check [--fix]``: click only; the work is :func:`teamsync.commands.check.run_check`."""

from __future__ import annotations

import click

from teamsync.cli._common import AppContext, finish, pass_app


@click.command()
@click.option(
    "--fix",
    is_flag=True,
    help="Regenerate MEMORY.md and team/MEMORY.md from the frontmatter "
    "(never touches a memory file).",
)
@click.option(
    "--missing-ok",
    is_flag=True,
    help="Pass, with a note, when the memory directory does not exist (for shared hooks).",
)
@pass_app
def check(app: AppContext, fix: bool, missing_ok: bool) -> None:
    """Lint the memory directory: index links, orphans, duplicates, frontmatter, limits.

    Exit 1 when problems remain, 0 when clean.

    \b
    Examples:
      teamsync check
      teamsync check --fix
      teamsync --dir docs/memory check --missing-ok
    """
    from teamsync.commands.check import run_check

    finish(run_check(app.settings, app.output, fix=fix, missing_ok=missing_ok))
