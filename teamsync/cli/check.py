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

    if missing_ok:
        from teamsync.memdir.paths import memory_dir

        memdir = memory_dir(app.settings)
        if not memdir.is_dir():
            app.output.info(f"teamsync: no memory directory at {memdir}; nothing to check.")
            app.output.emit({"problems": [], "skipped": f"no memory directory at {memdir}"})
            return
    finish(run_check(app.settings, app.output, fix=fix))
