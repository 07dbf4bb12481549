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

PROGRESS_THRESHOLD = 50
"""Draw a progress bar when a run touches more files than this (on a terminal)."""


class ProgressBar:
    """A click progress bar on stderr (files done/total, percent, ETA), shown only on a
    terminal for big runs; :meth:`close` ends its line before the summary is printed."""

    def __init__(self, threshold: int = PROGRESS_THRESHOLD, stream: Any = None) -> None:
        self.threshold = threshold
        self.stream = stream if stream is not None else sys.stderr
        self._bar: Any = None

    def start(self, total: int) -> None:
        self.close()
        if total > self.threshold and self.stream.isatty():
            self._bar = click.progressbar(
                length=total,
                label="Syncing",
                file=self.stream,
                show_pos=True,
                show_eta=True,
                show_percent=True,
            )
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
@click.option(
    "--force",
    is_flag=True,
    help="Git: accept a branch that holds files other than memory files (a code branch).",
)
@pass_app
def init(
    app: AppContext,
    git_url: str | None,
    branch: str | None,
    rest_url: str | None,
    repo: str | None,
    token_file: str | None,
    force: bool,
) -> None:
    """Set up sync for this memory directory (config goes beside team/, never in it).

    The remote is checked first: a missing repository, a code branch or a URL
    that is no team-memory server is refused and nothing is written.
    Re-running init says which configuration it replaces.

    \b
    Examples:
      teamsync init --git git@example.com:team/memory.git
      teamsync init --git origin                  # the project's own remote, branch teamsync/memory
      teamsync init --rest http://127.0.0.1:8787 --repo acme/app
    """
    from teamsync.commands.sync import init as run_init

    config = _init_config(
        git_url=git_url, branch=branch, rest_url=rest_url, repo=repo, token_file=token_file
    )
    finish(run_init(app.settings, app.output, config, force=force))


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
    from teamsync.server.limits import normalize_repo
    from teamsync.sync.config import SyncConfig

    if not url.startswith(("http://", "https://")):
        raise click.UsageError(f"--rest {url!r}: use an http:// or https:// URL")
    try:
        repo_id = normalize_repo(repo) if repo else None
    except UsageError as exc:
        raise click.UsageError(f"--repo: {exc}") from exc
    tfile = str(Path(token_file).expanduser().resolve()) if token_file else None
    return SyncConfig("rest", url.rstrip("/"), repo=repo_id, token_file=tfile)


def _run(app: AppContext, mode: Mode, dry_run: bool) -> None:
    from teamsync.commands.sync import run

    bar = ProgressBar()
    try:
        code = run(app.settings, app.output, mode=mode, dry_run=dry_run, progress=lambda: bar)
    finally:
        bar.close()
    finish(code)


@click.command()
@dry_run_option
@pass_app
def status(app: AppContext, dry_run: bool) -> None:
    """Show local changes, remote changes and would-be conflicts; change nothing.

    \b
    Examples:
      teamsync status
      teamsync --json status
    """
    _run(app, "status", True)


@click.command()
@dry_run_option
@pass_app
def pull(app: AppContext, dry_run: bool) -> None:
    """Bring the remote's changes into team/ (merging; never losing a local edit).

    \b
    Examples:
      teamsync pull
      teamsync pull --dry-run
    """
    _run(app, "pull", dry_run)


@click.command()
@dry_run_option
@pass_app
def push(app: AppContext, dry_run: bool) -> None:
    """Send local changes to the remote (files with secrets are held back).

    \b
    Examples:
      teamsync push
      teamsync push --dry-run
    """
    _run(app, "push", dry_run)


@click.command()
@dry_run_option
@pass_app
def sync(app: AppContext, dry_run: bool) -> None:
    """Pull, merge and push in one go. Exit 1 on conflicts or refused entries.

    \b
    Examples:
      teamsync sync
      teamsync --quiet sync      # only warnings and errors
    """
    _run(app, "sync", dry_run)
