"""``teamsync install-hooks``, ``teamsync guard`` and ``teamsync watch`` (click only).

``guard`` sits on Claude Code's hot path, so this module imports nothing
beyond click and the CLI plumbing at load time; each command imports its
implementation when it runs.
"""

from __future__ import annotations

import sys

import click

from teamsync.cli._common import AppContext, finish, pass_app


@click.command("install-hooks")
@click.option(
    "--claude-code",
    is_flag=True,
    help="Also merge teamsync's hooks into the project's .claude/settings.json (backup kept).",
)
@click.option(
    "--git/--no-git",
    "git_hooks",
    default=True,
    show_default=True,
    help="Install the git hooks (pre-commit, pre-push, post-merge, post-checkout).",
)
@click.option(
    "--settings",
    "target",
    type=click.Choice(["project", "local", "user"]),
    default=None,
    help="With --claude-code, which Claude Code settings file: project (.claude/settings.json, "
    "committed; the default), local (.claude/settings.local.json, only you) or user "
    "(~/.claude/settings.json).",
)
@click.option(
    "--with-extract",
    "extract",
    is_flag=True,
    help="Also add the Stop hook that extracts memories with Claude after each response "
    "(opt-in: it calls the Claude API, billed to ANTHROPIC_API_KEY).",
)
@click.option(
    "--uninstall", is_flag=True, help="Remove teamsync's hooks; restore the previous ones."
)
@pass_app
def install_hooks(
    app: AppContext,
    claude_code: bool,
    git_hooks: bool,
    target: str | None,
    extract: bool,
    uninstall: bool,
) -> None:
    """Install teamsync's git hooks (and Claude Code hooks) politely.

    An existing hook is kept as <hook>.legacy and still runs first; uninstall
    puts it back. core.hooksPath is followed when it points inside the
    repository and refused otherwise.

    \b
    Examples:
      teamsync install-hooks
      teamsync install-hooks --claude-code --settings local --with-extract
      teamsync install-hooks --uninstall
    """
    from teamsync.commands.install_hooks import install_hooks as run

    finish(
        run(
            app.settings,
            app.output,
            claude_code=claude_code,
            git=git_hooks,
            remove=uninstall,
            target=target,
            extract=extract,
        )
    )


@click.command()
@click.option(
    "--event",
    default="PreToolUse",
    show_default=True,
    metavar="NAME",
    help="Hook event: PreToolUse, PostToolUse, PostToolUseFailure, SessionStart, Stop "
    "(Claude Code) or post-merge, post-checkout (git).",
)
@pass_app
def guard(app: AppContext, event: str) -> None:
    """Claude Code hook: refuse unsafe writes into team memory (JSON on stdin).

    With the default --event PreToolUse, a Write, Edit or MultiEdit into the
    team directory is denied when its key is unsafe or the file it would
    produce holds a likely secret; anything else is allowed at once.

    \b
    Examples:
      echo '{...}' | teamsync guard
      teamsync guard --event post-merge
    """
    from teamsync.commands.guard import event_name, run_event

    name = event_name(event)
    if name is None:
        raise click.BadParameter(f"unknown hook event {event!r}", param_hint="--event")
    finish(run_event(app.settings, name, sys.stdin, sys.stdout, sys.stderr))


@click.command()
@click.option(
    "--debounce",
    type=click.FloatRange(min=0.0),
    default=2.0,
    show_default=True,
    help="Seconds of quiet after a change before pushing.",
)
@click.option(
    "--pull-interval",
    type=click.FloatRange(min=1.0),
    default=300.0,
    show_default=True,
    help="Seconds between periodic pulls.",
)
@click.option(
    "--retry-base",
    type=click.FloatRange(min=0.01),
    default=2.0,
    show_default=True,
    help="First retry delay after a failed push; doubles up to 300 s, with jitter.",
)
@click.option("--poll", is_flag=True, help="Poll the team directory instead of using watchdog.")
@pass_app
def watch(
    app: AppContext, debounce: float, pull_interval: float, retry_base: float, poll: bool
) -> None:
    """Watch the team directory: push after changes, pull periodically (foreground).

    Failed pushes are retried on a backoff timer; an authentication error
    stops pushing until the configuration file changes. Ctrl-C or SIGTERM
    exits cleanly after a final push of pending changes.

    \b
    Examples:
      teamsync watch
      teamsync watch --poll --pull-interval 60
    """
    from teamsync.commands.watch import watch as run

    finish(
        run(
            app.settings,
            app.output,
            debounce=debounce,
            pull_interval=pull_interval,
            retry_base=retry_base,
            poll=poll,
        )
    )
