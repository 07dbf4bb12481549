"""The click group. Each verb lives in its own module and is loaded lazily, so
``teamsync check`` never pays for ``teamsync serve``'s imports.

Exit codes (mapped in :mod:`teamsync.cli._errors` only): 0 ok; 1 findings,
conflicts or a :class:`~teamsync.errors.TeamsyncError`; 2 usage; 3 unexpected;
130 interrupted.
"""

from __future__ import annotations

import importlib
import importlib.util

import click

from teamsync._version import __version__

# verb -> "module:attribute"; a module that does not exist yet is simply not listed.
COMMANDS: dict[str, str] = {
    "init": "teamsync.cli.sync:init",
    "status": "teamsync.cli.sync:status",
    "pull": "teamsync.cli.sync:pull",
    "push": "teamsync.cli.sync:push",
    "sync": "teamsync.cli.sync:sync",
    "restore": "teamsync.cli.sync:restore",
    "log": "teamsync.cli.sync:log",
    "redact": "teamsync.cli.sync:redact",
    "check": "teamsync.cli.check:check",
    "scan": "teamsync.cli.scan:scan",
    "allow": "teamsync.cli.allow:allow",
    "pre-receive": "teamsync.cli.allow:pre_receive",
    "recall": "teamsync.cli.recall:recall",
    "extract": "teamsync.cli.recall:extract",
    "dream": "teamsync.cli.recall:dream",
    "serve": "teamsync.cli.server:serve",
    "token": "teamsync.cli.server:token",
    "install-hooks": "teamsync.cli.hooks:install_hooks",
    "guard": "teamsync.cli.hooks:guard",
    "watch": "teamsync.cli.hooks:watch",
    "mcp": "teamsync.cli.mcp:mcp",
    "install-mcp": "teamsync.cli.mcp:install_mcp",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(
            name
            for name, target in COMMANDS.items()
            if importlib.util.find_spec(target.partition(":")[0]) is not None
        )

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            import difflib  # only for a mistyped verb

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise click.UsageError(
                f"No such command {name!r}.{hint} Run `teamsync --help` for the list.", ctx
            )
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attr = target.partition(":")
        if importlib.util.find_spec(module_name) is None:
            return None
        command = getattr(importlib.import_module(module_name), attr, None)
        return command if isinstance(command, click.Command) else None


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Global options go before the command: `teamsync --json status`, not "
    "`teamsync status --json`. Shell completion: see docs/cli.md#shell-completion.",
)
@click.version_option(__version__, "--version", prog_name="teamsync")
@click.option(
    "--dir",
    "memdir",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Memory directory (holds MEMORY.md and team/). Default: TEAMSYNC_DIR, "
    "else Claude Code's ~/.claude/projects/<project>/memory/.",
)
@click.option("--json", "json_mode", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="Only warnings and errors (and --json output).")
@click.option(
    "--verbose", "-v", is_flag=True, help="More detail; tracebacks for unexpected errors."
)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour output. auto: only on a terminal, and not when NO_COLOR is set.",
)
@click.pass_context
def cli(
    ctx: click.Context, memdir: str | None, json_mode: bool, quiet: bool, verbose: bool, color: str
) -> None:
    """teamsync: share your coding assistant's team memory safely.

    Sync team/ through a REST server or a git remote without losing anyone's
    edit, keep secrets out of it at every gate, and recall what matters.

    \b
    Examples:
      teamsync init --git git@example.com:team/memory.git
      teamsync sync
      teamsync scan --staged
      teamsync --json status
    """
    if quiet and verbose:
        raise click.UsageError("choose one of --quiet and --verbose")
    from teamsync.cli._common import AppContext  # not for --version / --help

    ctx.obj = AppContext.create(
        memdir=memdir, json_mode=json_mode, quiet=quiet, verbose=verbose, color=color
    )
    if ctx.obj.settings.dir is not None:
        from teamsync.commands.places import refuse_team_dir

        refuse_team_dir(ctx.obj.settings, ctx.invoked_subcommand)
