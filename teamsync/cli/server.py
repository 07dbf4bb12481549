"""``teamsync serve`` and ``teamsync token …`` (click only; logic in teamsync.commands)."""

from __future__ import annotations

import click

from teamsync.cli._common import AppContext, finish, pass_app
from teamsync.limits import DEFAULT_MAX_ENTRIES

_DB_HELP = "Database URL: sqlite:///PATH (default: a file in the user data dir) or postgresql://…"


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8787, show_default=True, type=int, help="TCP port.")
@click.option("--db", default=None, metavar="URL", help=_DB_HELP + " Env: TEAMSYNC_DB.")
@click.option(
    "--max-entries",
    default=DEFAULT_MAX_ENTRIES,
    show_default=True,
    type=int,
    help="Most entries one repository may hold.",
)
@click.option(
    "--allowlist",
    metavar="FILE",
    default=None,
    help="The operator's reviewed allowlist (fingerprints; `teamsync allow --file FILE`). "
    "Inline allow comments in entries never count.",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=int,
    help="Server processes sharing the port (for PostgreSQL: each with its own pool).",
)
@pass_app
def serve(
    app: AppContext,
    host: str,
    port: int,
    db: str | None,
    max_entries: int,
    allowlist: str | None,
    workers: int,
) -> None:
    """Run the self-hosted team-memory server (Claude Code wire format + extensions).

    \b
    Examples:
      teamsync serve                           # 127.0.0.1:8787, SQLite
      teamsync serve --port 0                  # any free port (printed)
      teamsync serve --db postgresql://teamsync@db/teamsync
      teamsync serve --db postgresql://teamsync@db/teamsync --workers 4
    """
    from teamsync.commands.serve import serve as run

    finish(
        run(
            app.settings,
            app.output,
            host=host,
            port=port,
            db=db,
            max_entries=max_entries,
            allowlist=allowlist,
            workers=workers,
        )
    )


@click.group()
def token() -> None:
    """Create, list and revoke the server's bearer tokens.

    \b
    Examples:
      teamsync token create --repo acme/app --name alice
      teamsync token list
    """


@token.command("create")
@click.option("--repo", required=True, metavar="OWNER/NAME", help="The one repository it may use.")
@click.option("--read-only", is_flag=True, help="May pull, may not push.")
@click.option("--name", default=None, help="A label recorded as `who` in the history.")
@click.option(
    "--expires",
    default=None,
    metavar="WHEN",
    help="Refuse the token after a duration (12h, 90d, 8w) or a date (YYYY-MM-DD, UTC). "
    "Default: never.",
)
@click.option("--db", default=None, metavar="URL", help=_DB_HELP)
@pass_app
def create(
    app: AppContext,
    repo: str,
    read_only: bool,
    name: str | None,
    expires: str | None,
    db: str | None,
) -> None:
    """Create a token and print it once.

    \b
    Examples:
      teamsync token create --repo acme/app --name alice
      teamsync token create --repo acme/app --read-only --expires 90d
    """
    from teamsync.commands.token import token_create

    finish(
        token_create(
            app.settings,
            app.output,
            repo=repo,
            read_only=read_only,
            db=db,
            name=name,
            expires=expires,
        )
    )


@token.command("list")
@click.option("--db", default=None, metavar="URL", help=_DB_HELP)
@pass_app
def list_(app: AppContext, db: str | None) -> None:
    """List tokens: id, repository, mode, name, state (never the token).

    \b
    Examples:
      teamsync token list
      teamsync --json token list
    """
    from teamsync.commands.token import token_list

    finish(token_list(app.settings, app.output, db=db))


@token.command("revoke")
@click.argument("token_id", metavar="ID")
@click.option("--db", default=None, metavar="URL", help=_DB_HELP)
@pass_app
def revoke(app: AppContext, token_id: str, db: str | None) -> None:
    """Revoke the token with this id (see `token list`).

    \b
    Examples:
      teamsync token revoke 3f2a9c
    """
    from teamsync.commands.token import token_revoke

    finish(token_revoke(app.settings, app.output, token_id=token_id, db=db))
