"""``teamsync init/status/pull/push/sync``: click only; the work is in
:mod:`teamsync.commands.sync`."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

import click

from teamsync.cli._common import AppContext, finish, pass_app

if TYPE_CHECKING:
    from teamsync.sync.engine import Mode
    from teamsync.sync.guards import Recovery

PROGRESS_THRESHOLD = 50
"""Draw a progress bar when a run touches more files than this (on a terminal)."""
LINE_EVERY_S = 1.0
"""``--progress`` off a terminal: at most one progress line this often (and the last)."""


class ProgressBar:
    """Progress on stderr with counts: a click bar (done/total, percent, ETA) on a terminal
    for big runs; with ``lines`` (``--progress``) also off a terminal, as plain lines
    (``Writing: 2000/10000 (20%)``, at most one every :data:`LINE_EVERY_S` but always the
    last). :meth:`close` ends the bar's line before the summary is printed."""

    def __init__(
        self, threshold: int = PROGRESS_THRESHOLD, stream: Any = None, *, lines: bool = False
    ) -> None:
        self.threshold = threshold
        self.stream = stream if stream is not None else sys.stderr
        self.lines = lines
        self._bar: Any = None
        self._plain: list[Any] | None = None  # [label, total, done, last line's time]

    def start(self, total: int, label: str = "Syncing") -> None:
        self.close()
        if self.stream.isatty():
            if total > self.threshold or (self.lines and total):
                self._bar = click.progressbar(
                    length=total,
                    label=label,
                    file=self.stream,
                    show_pos=True,
                    show_eta=True,
                    show_percent=True,
                )
                self._bar.__enter__()
        elif self.lines and total:
            self._plain = [label, total, 0, 0.0]
            self._line()

    def advance(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)
        elif self._plain is not None:
            self._plain[2] += n
            if (
                self._plain[2] >= self._plain[1]
                or time.monotonic() - self._plain[3] >= LINE_EVERY_S
            ):
                self._line()

    def _line(self) -> None:
        assert self._plain is not None
        label, total, done, _ = self._plain
        self.stream.write(f"{label}: {done}/{total} ({100 * done // total}%)\n")
        self.stream.flush()
        self._plain[3] = time.monotonic()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
        self._plain = None


dry_run_option = click.option(
    "--dry-run", is_flag=True, help="Show what would happen; change nothing on either side."
)
progress_option = click.option(
    "--progress",
    is_flag=True,
    help="Show progress with counts on stderr even when it is not a terminal (a terminal "
    "shows a bar for big runs anyway); stdout and --json are unaffected.",
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
    "--memory-store",
    metavar="memstore_…",
    default=None,
    help="An Anthropic memory store (the Memory Stores API); key from ANTHROPIC_API_KEY "
    "(or TEAMSYNC_TOKEN for teamsync serve).",
)
@click.option(
    "--path-prefix",
    metavar="/FOLDER/",
    default=None,
    help="Memory store: the folder team/ mirrors (default: the whole store).",
)
@click.option(
    "--base-url",
    metavar="URL",
    default=None,
    help="Memory store: a self-hosted server (teamsync serve) instead of Anthropic's API.",
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
    memory_store: str | None,
    path_prefix: str | None,
    base_url: str | None,
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
      teamsync init --memory-store memstore_01AbC --path-prefix /team/
    """
    from teamsync.commands.sync import config_from_options
    from teamsync.commands.sync import init as run_init
    from teamsync.errors import UsageError

    try:
        config = config_from_options(
            git_url=git_url,
            branch=branch,
            rest_url=rest_url,
            repo=repo,
            token_file=token_file,
            memory_store=memory_store,
            path_prefix=path_prefix,
            base_url=base_url,
        )
    except UsageError as exc:
        raise click.UsageError(str(exc)) from exc
    finish(run_init(app.settings, app.output, config, force=force))


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
restore_local_option = click.option(
    "--restore-local",
    is_flag=True,
    help="Memories synced here are missing from team/ (a wiped or moved folder): download "
    "the remote's copy of each again instead of deleting it for everyone.",
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
    progress: bool = False,
    restore_local: bool = False,
) -> None:
    from teamsync.commands.sync import run

    if restore_remote and accept_remote:
        raise click.UsageError("choose one: --restore-remote or --accept-remote")
    recover: Recovery | None = (
        "restore-remote" if restore_remote else "accept-remote" if accept_remote else None
    )
    bar = ProgressBar(lines=progress)
    try:
        code = run(
            app.settings,
            app.output,
            mode=mode,
            dry_run=dry_run,
            progress=lambda: bar,
            yes=yes,
            recover=recover,
            restore_local=restore_local,
        )
    finally:
        bar.close()
    finish(code)


@click.command()
@dry_run_option
@click.option(
    "--explain",
    metavar="KEY",
    default=None,
    help="Say what the next sync would do with KEY (a path in team/) and why: its entry "
    "in the plan `status` shows (with --json, the entry itself).",
)
@pass_app
def status(app: AppContext, dry_run: bool, explain: str | None) -> None:
    """Show local changes, remote changes and would-be conflicts; change nothing.

    \b
    Examples:
      teamsync status
      teamsync --json status
      teamsync status --explain notes/deploy.md   # why (not) synced?
      teamsync --json status --explain deploy.md
    """
    if explain is not None:
        from teamsync.commands.explain import explain as run_explain

        finish(run_explain(app.settings, app.output, explain))
        return
    _run(app, "status", True)


@click.command()
@dry_run_option
@yes_option
@accept_option
@restore_local_option
@progress_option
@pass_app
def pull(
    app: AppContext,
    dry_run: bool,
    yes: bool,
    accept_remote: bool,
    restore_local: bool,
    progress: bool,
) -> None:
    """Bring the remote's changes into team/ (merging; never losing a local edit).

    \b
    Examples:
      teamsync pull
      teamsync pull --dry-run
      teamsync pull --restore-local   # team/ was wiped: download every memory again
    """
    _run(
        app,
        "pull",
        dry_run,
        yes=yes,
        accept_remote=accept_remote,
        progress=progress,
        restore_local=restore_local,
    )


@click.command()
@dry_run_option
@yes_option
@restore_option
@progress_option
@pass_app
def push(app: AppContext, dry_run: bool, yes: bool, restore_remote: bool, progress: bool) -> None:
    """Send local changes to the remote (files with secrets are held back).

    \b
    Examples:
      teamsync push
      teamsync push --dry-run
      teamsync push --restore-remote   # the remote lost history: put our copies back
    """
    _run(app, "push", dry_run, yes=yes, restore_remote=restore_remote, progress=progress)


@click.command()
@dry_run_option
@yes_option
@restore_option
@accept_option
@restore_local_option
@progress_option
@pass_app
def sync(
    app: AppContext,
    dry_run: bool,
    yes: bool,
    restore_remote: bool,
    accept_remote: bool,
    restore_local: bool,
    progress: bool,
) -> None:
    """Pull, merge and push in one go. Exit 1 on conflicts, refused entries or a guard's stop.

    \b
    Examples:
      teamsync sync
      teamsync --quiet sync      # only warnings and errors
      teamsync sync --yes        # go past the mass-change guard, once
    """
    _run(
        app,
        "sync",
        dry_run,
        yes=yes,
        restore_remote=restore_remote,
        accept_remote=accept_remote,
        progress=progress,
        restore_local=restore_local,
    )


@click.command()
@click.argument("key", required=False)
@click.option("--list", "list_", is_flag=True, help="List what can be restored, newest first.")
@click.option(
    "--force", is_flag=True, help="Replace a different current file (its content is kept)."
)
@click.option(
    "--at",
    metavar="VERSION",
    help="A remote version (git commit or server history id, see `teamsync log`).",
)
@pass_app
def restore(app: AppContext, key: str | None, list_: bool, force: bool, at: str | None) -> None:
    """Bring back a memory a sync deleted or replaced on this machine (works offline).

    KEY is the path inside team/, e.g. `notes/plan.md`. The next `teamsync sync`
    shares it again.

    \b
    Examples:
      teamsync restore --list
      teamsync restore notes/plan.md
      teamsync restore notes/plan.md --at 3f2a9c1   # as that commit / history id left it
    """
    from teamsync.commands.restore import run_restore

    if list_ == (key is not None):
        raise click.UsageError("give a KEY to restore, or --list to see what can be restored")
    if at is not None and key is None:
        raise click.UsageError("--at needs a KEY")
    finish(run_restore(app.settings, app.output, key, force=force, at=at))


@click.command()
@click.argument("key", required=False)
@click.option(
    "-n", "--limit", type=int, default=50, show_default=True, help="Show at most N changes."
)
@pass_app
def log(app: AppContext, key: str | None, limit: int) -> None:
    """Show who changed what on the remote, and when, newest first.

    KEY (a path inside team/) limits it to one memory. REST reads the server's
    history (a teamsync server); git reads the sync branch's commits.

    \b
    Examples:
      teamsync log
      teamsync log notes/plan.md -n 10
      teamsync --json log
    """
    from teamsync.commands.log import run_log

    finish(run_log(app.settings, app.output, key, limit=limit))


@click.command()
@click.argument("target", metavar="VERSION|KEY")
@click.option(
    "--repo",
    default=None,
    metavar="OWNER/NAME",
    help="Server side (`teamsync serve`, legacy dialect): blank the text the server keeps "
    "for the deleted memory KEY of this repository.",
)
@click.option(
    "--db",
    default=None,
    metavar="URL",
    help="With --repo: the server's database (sqlite:///PATH or postgresql://…). Env: TEAMSYNC_DB.",
)
@pass_app
def redact(app: AppContext, target: str, repo: str | None, db: str | None) -> None:
    """Blank a remote version that holds a secret.

    VERSION is a memory version id from `teamsync log` (memver_…): a memory
    store's own redaction. On `teamsync serve`'s legacy dialect the operator
    blanks the text a deleted memory's tombstone keeps: `--repo OWNER/NAME KEY`
    on the server's database. On git history cannot be blanked; the command
    says what to do instead and exits 1.

    \b
    Examples:
      teamsync log notes/plan.md
      teamsync redact memver_01AbCdEf
      teamsync redact --repo acme/app --db sqlite:///srv/ts.sqlite3 notes/plan.md
    """
    from teamsync.commands.redact import run_redact, run_redact_server

    if repo is not None:
        finish(run_redact_server(app.settings, app.output, repo=repo, key=target, db=db))
    elif db is not None:
        raise click.UsageError("--db needs --repo (the server-side redaction)")
    else:
        finish(run_redact(app.settings, app.output, target))
