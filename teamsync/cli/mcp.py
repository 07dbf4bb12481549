"""``teamsync mcp`` and ``teamsync install-mcp``: click only; the work is in
:mod:`teamsync.commands.mcp`."""

from __future__ import annotations

import click

from teamsync.cli._common import AppContext, finish, pass_app

CLIENTS = ("claude-code", "codex", "cursor", "gemini")


@click.command()
@click.option(
    "--remember/--read-only",
    "remember",
    default=None,
    help="Offer memory_remember (writes new team memories through the write guard). "
    "Default: teamsync.yaml's `mcp.remember`, else read-only.",
)
@click.option("--offline", is_flag=True, help="Search without Claude even when a key is set.")
@pass_app
def mcp(app: AppContext, remember: bool | None, offline: bool) -> None:
    """Serve the team memory to any assistant over MCP (stdio).

    Tools: memory_search, memory_get, memory_list, and memory_remember when
    writing is on. Each memory and MEMORY.md is also a resource. Assistants
    start this command themselves: see `teamsync install-mcp`.

    \b
    Examples:
      teamsync --dir ~/.claude/projects/P/memory mcp
      teamsync mcp --remember
    """
    from teamsync.commands.mcp import run_mcp

    finish(run_mcp(app.settings, app.output, remember=remember, offline=offline))


@click.command("install-mcp")
@click.option("--client", type=click.Choice(CLIENTS), required=True, help="Which assistant.")
@click.option(
    "--scope",
    type=click.Choice(["project", "user"]),
    default="project",
    show_default=True,
    help="project: this repository's file (pins its memory directory); user: your home's.",
)
@click.option("--remember", is_flag=True, help="Start the server with memory_remember on.")
@click.option("--dry-run", is_flag=True, help="Print the change; write nothing.")
@pass_app
def install_mcp(app: AppContext, client: str, scope: str, remember: bool, dry_run: bool) -> None:
    """Add `teamsync mcp` to an assistant's MCP configuration.

    The entry runs this teamsync by the absolute path of its interpreter; every
    other setting in the file is kept, and the old file is backed up beside it.

    \b
    Examples:
      teamsync install-mcp --client codex --scope user --dry-run
      teamsync install-mcp --client claude-code
    """
    from teamsync.commands.mcp import run_install_mcp

    code = run_install_mcp(
        app.settings, app.output, client=client, scope=scope, dry_run=dry_run, remember=remember
    )
    finish(code)
