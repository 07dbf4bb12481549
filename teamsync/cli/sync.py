"""``teamsync init/status/pull/push/sync``: click only; the work is in
:mod:`teamsync.commands.sync`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from teamsync.cli._common import AppContext, finish, pass_app

if TYPE_CHECKING:
    from teamsync.sync.config import SyncConfig
    from teamsync.sync.engine import Mode
    from teamsync.sync.guards import Recovery

PROGRESS_THRESHOLD = 50
"""Draw a progress bar when a run touches more files than this (on a terminal)."""


class ProgressBar:
    """A click progress bar on stderr, shown only on a terminal for big runs."""

    def __init__(self, threshold: int = PROGRESS_THRESHOLD) -> None:
        self.threshold = threshold
        self._bar: Any = None

    def start(self, total: int) -> None:
        self.close()
        if total > self.threshold and sys.stderr.isatty():
            self._bar = click.progressbar(length=total, label="Syncing", file=sys.stderr)
            self._bar.__enter__()

    def advance(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


dry_run_option = click.option(
    "--dry-run", is_flag=True, help="Show what would happen; change nothing on either side."
)


@click.command()
@click.option("--git", "git_url", metavar="URL", help="A git remote: URL, ssh, file:// or a path.")
@click.option(
    "--branch",
    metavar="NAME",
    default=None,
    help="Git branch that holds the memory files (default: teamsync/memory).",
)
# Other backends add their options here and a case in `_init_config` below.
@click.option("--rest", "rest_url", metavar="URL", help="A team-memory server (teamsync serve).")
@click.option(
    "--repo",
    metavar="OWNER/NAME",
    default=None,
    help="REST: the repository id (default: derived from the project's `origin`).",
)
@click.option(
    "--token-file",
    metavar="PATH",
    default=None,
    help="REST: a 0600 file holding the token (default: TEAMSYNC_TOKEN).",
)
@pass_app
def init(
    app: AppContext,
    git_url: str | None,
    branch: str | None,
    rest_url: str | None,
    repo: str | None,
    token_file: str | None,
) -> None:
    """Set up sync for this memory directory (config goes beside team/, never in it)."""
    from teamsync.commands.sync import init as run_init

    config = _init_config(
        git_url=git_url, branch=branch, rest_url=rest_url, repo=repo, token_file=token_file
    )
    finish(run_init(app.settings, app.output, config))


def _init_config(
    *,
    git_url: str | None,
    branch: str | None,
    rest_url: str | None = None,
    repo: str | None = None,
    token_file: str | None = None,
) -> SyncConfig:
    from teamsync.sync.config import SyncConfig
    from teamsync.sync.git import DEFAULT_BRANCH

    if git_url and rest_url:
        raise click.UsageError("choose one remote: --git URL or --rest URL")
    if rest_url:
        return _rest_config(rest_url, repo, token_file)
    if git_url:
        return SyncConfig("git", git_url, branch or DEFAULT_BRANCH)
    raise click.UsageError(
        "say where to sync: `teamsync init --git URL [--branch NAME]` "
        "or `teamsync init --rest URL [--repo OWNER/NAME]`"
    )


def _rest_config(url: str, repo: str | None, token_file: str | None) -> SyncConfig:
    from pathlib import Path

    from teamsync.errors import UsageError
    from teamsync.sync.config import SyncConfig
    from teamsync.wire import normalize_repo

    if not url.startswith(("http://", "https://")):
        raise click.UsageError(f"--rest {url!r}: use an http:// or https:// URL")
    try:
        repo_id = normalize_repo(repo) if repo else None
    except UsageError as exc:
        raise click.UsageError(f"--repo: {exc}") from exc
    tfile = str(Path(token_file).expanduser().resolve()) if token_file else None
    return SyncConfig("rest", url.rstrip("/"), repo=repo_id, token_file=tfile)


yes_option = click.option(
    "--yes",
    is_flag=True,
    help="Go on even if this deletes or reverts more than the configured share "
    "(mass_change_share) of the team's memories.",
)
restore_option = click.option(
    "--restore-remote",
    is_flag=True,
    help="The remote lost history (lost database, old backup, deleted or rewound branch): "
    "re-push your copies of what it lost. The safe way forward.",
)
accept_option = click.option(
    "--accept-remote",
    is_flag=True,
    help="The remote lost history: take its state anyway. What this removes here stays "
    "recoverable with `teamsync restore KEY`.",
)


def _run(
    app: AppContext,
    mode: Mode,
    dry_run: bool,
    *,
    yes: bool = False,
    restore_remote: bool = False,
    accept_remote: bool = False,
) -> None:
    from teamsync.commands.sync import run

    if restore_remote and accept_remote:
        raise click.UsageError("choose one: --restore-remote or --accept-remote")
    recover: Recovery | None = (
        "restore-remote" if restore_remote else "accept-remote" if accept_remote else None
    )
    bar = ProgressBar()
    try:
        code = run(
            app.settings,
            app.output,
            mode=mode,
            dry_run=dry_run,
            progress=lambda: bar,
            yes=yes,
            recover=recover,
        )
    finally:
        bar.close()
    finish(code)


@click.command()
@dry_run_option
@pass_app
def status(app: AppContext, dry_run: bool) -> None:
    """Show local changes, remote changes and would-be conflicts; change nothing."""
    _run(app, "status", True)


@click.command()
@dry_run_option
@yes_option
@accept_option
@pass_app
def pull(app: AppContext, dry_run: bool, yes: bool, accept_remote: bool) -> None:
    """Bring the remote's changes into team/ (merging; never losing a local edit)."""
    _run(app, "pull", dry_run, yes=yes, accept_remote=accept_remote)


@click.command()
@dry_run_option
@yes_option
@restore_option
@pass_app
def push(app: AppContext, dry_run: bool, yes: bool, restore_remote: bool) -> None:
    """Send local changes to the remote (files with secrets are held back)."""
    _run(app, "push", dry_run, yes=yes, restore_remote=restore_remote)


@click.command()
@dry_run_option
@yes_option
@restore_option
@accept_option
@pass_app
def sync(
    app: AppContext, dry_run: bool, yes: bool, restore_remote: bool, accept_remote: bool
) -> None:
    """Pull, merge and push in one go. Exit 1 on conflicts, refused entries or a guard's stop."""
    _run(app, "sync", dry_run, yes=yes, restore_remote=restore_remote, accept_remote=accept_remote)


@click.command()
@click.argument("key", required=False)
@click.option("--list", "list_", is_flag=True, help="List what can be restored, newest first.")
@click.option(
    "--force", is_flag=True, help="Replace a different current file (its content is kept)."
)
@pass_app
def restore(app: AppContext, key: str | None, list_: bool, force: bool) -> None:
    """Bring back a memory a sync deleted or replaced on this machine (works offline).

    KEY is the path inside team/, e.g. `notes/plan.md`. The next `teamsync sync`
    shares it again.
    """
    from teamsync.commands.restore import run_restore

    if list_ == (key is not None):
        raise click.UsageError("give a KEY to restore, or --list to see what can be restored")
    finish(run_restore(app.settings, app.output, key, force=force))
