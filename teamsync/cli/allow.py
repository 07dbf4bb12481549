"""``teamsync allow``: click only; the work is :func:`teamsync.commands.allow.run_allow`."""

from __future__ import annotations

import sys

import click

from teamsync.cli._common import AppContext, finish, pass_app


@click.command()
@click.argument("fingerprints", nargs=-1)
@click.option("--reason", default="", help="Why this finding is not a secret (required to add).")
@click.option("--rule", default="", help="The rule that reported it (for reviewers).")
@click.option("--path", "where", default="", help="Where it was reported (for reviewers).")
@click.option(
    "--repo",
    default="",
    metavar="OWNER/NAME",
    help="On a server's allowlist (`serve --allowlist FILE`): the repository it applies to.",
)
@click.option(
    "--file",
    metavar="FILE",
    default=None,
    help="The allowlist file (default: .teamsync/allowlist.json in the project checkout).",
)
@click.option("--remove", is_flag=True, help="Remove the fingerprints instead of adding them.")
@click.option("--list", "list_only", is_flag=True, help="List the allowlist's entries.")
@pass_app
def allow(
    app: AppContext,
    fingerprints: tuple[str, ...],
    reason: str,
    rule: str,
    where: str,
    repo: str,
    file: str | None,
    remove: bool,
    list_only: bool,
) -> None:
    """Record reviewed false positives (by FINGERPRINT) in the project's allowlist.

    Team-memory gates (the Claude Code hook, push, pull, the server, scans of
    memory files) ignore inline allow comments; a fingerprint in this allowlist
    is what lets a finding through. Asks for confirmation at a terminal and
    refuses to run without one. Commit the file so the change is reviewed.

    \b
    Examples:
      teamsync scan --format json            # the fingerprint of each finding
      teamsync allow 3f2a9c... --reason "test fixture, not a real key"
      teamsync allow --list
    """
    from teamsync.commands.allow import AllowRequest, run_allow

    def confirm(question: str) -> bool:
        return click.confirm(question, default=False, err=True)

    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    request = AllowRequest(
        fingerprints=fingerprints,
        reason=reason,
        rule=rule,
        path=where,
        repo=repo,
        file=file,
        remove=remove,
        list_only=list_only,
    )
    finish(run_allow(app.settings, app.output, request, confirm=confirm if interactive else None))


@click.command("pre-receive")
@click.option(
    "--branch",
    default=None,
    metavar="NAME",
    help="Only check pushes to this branch (the memory branch); default: every branch.",
)
@click.option(
    "--allowlist-ref",
    default="HEAD",
    show_default=True,
    metavar="REF",
    help="Read .teamsync/allowlist.json from this ref of this repository (the protected "
    "default branch).",
)
@click.option(
    "--allowlist-file",
    default=None,
    metavar="FILE",
    help="Read the allowlist from this operator-owned file instead.",
)
@pass_app
def pre_receive(
    app: AppContext, branch: str | None, allowlist_ref: str, allowlist_file: str | None
) -> None:
    """A git server's pre-receive hook: refuse pushes that bring a secret into team memory.

    Reads git's `<old> <new> <ref>` lines on stdin. The allowlist comes from the
    server's side (the protected default branch, or an operator's file), never
    from the pusher.

    \b
    Examples:
      teamsync pre-receive --branch teamsync/memory
      echo "$BEFORE $AFTER refs/heads/teamsync/memory" | teamsync pre-receive --allowlist-ref origin/main
    """
    from teamsync.commands.pre_receive import run_pre_receive

    finish(
        run_pre_receive(
            app.settings,
            app.output,
            sys.stdin,
            branch=branch,
            allowlist_ref=allowlist_ref,
            allowlist_file=allowlist_file,
        )
    )
