"""``teamsync scan``: click only; the work is :func:`teamsync.commands.scan.run_scan`."""

from __future__ import annotations

import click

from teamsync.cli._common import AppContext, finish, pass_app


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "--staged", is_flag=True, help="Scan the staged content (the index), not the work tree."
)
@click.option(
    "--git-range",
    metavar="A..B",
    default=None,
    help="Scan only the lines that the commits in A..B add (the CI case for a pull request).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "sarif"]),
    default="text",
    show_default=True,
    help="Report format; sarif is SARIF 2.1.0 for GitHub code scanning.",
)
@click.option("--output", metavar="FILE", default=None, help="Write the report to FILE.")
@click.option(
    "--baseline",
    metavar="FILE",
    default=None,
    help="Ignore findings whose fingerprints are in this baseline file.",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="Write every current finding into the --baseline file and exit 0.",
)
@click.option(
    "--no-generic",
    is_flag=True,
    help="Only the curated token rules; skip detect-secrets' generic password/entropy checks.",
)
@click.option(
    "--exit-code",
    type=click.IntRange(0, 255),
    default=1,
    show_default=True,
    metavar="N",
    help="Exit status when secrets are found (0: report without failing the job).",
)
@click.option(
    "--ignore-inline-allow",
    is_flag=True,
    help="Inline `teamsync: allow` / `pragma: allowlist secret` comments count nowhere (for CI).",
)
@click.option(
    "--memory",
    is_flag=True,
    help="The PATHs are team memory (e.g. a checkout of the memory branch): pragmas do not count.",
)
@click.option(
    "--memory-store",
    metavar="memstore_…",
    default=None,
    help="Scan a memory store's memories (key from ANTHROPIC_API_KEY or TEAMSYNC_TOKEN).",
)
@click.option(
    "--history",
    is_flag=True,
    help="With --memory-store: every retained version, not only the current memories.",
)
@click.option(
    "--base-url",
    metavar="URL",
    default=None,
    help="With --memory-store: a self-hosted server (teamsync serve).",
)
@pass_app
def scan(
    app: AppContext,
    paths: tuple[str, ...],
    staged: bool,
    git_range: str | None,
    fmt: str,
    output: str | None,
    baseline: str | None,
    update_baseline: bool,
    no_generic: bool,
    ignore_inline_allow: bool,
    memory: bool,
    exit_code: int,
    memory_store: str | None,
    history: bool,
    base_url: str | None,
) -> None:
    """Find secrets in PATHs (files or directories; default: the memory dir or .).

    Exit 1 when anything is found, 0 when clean, 2 on usage errors. Findings name
    the file, line, rule and a fingerprint, never the secret; a secret in a file
    name is reported on line "name" with the name redacted. Inline allow comments
    count in ordinary code only: never in team memory (memory/team paths, --memory,
    the memory dir itself) and nowhere with --ignore-inline-allow. Fingerprints in
    the reviewed allowlist (`teamsync allow`) and in a --baseline are not reported.

    \b
    Examples:
      teamsync scan                          # the memory directory
      teamsync scan --staged                 # what you are about to commit
      teamsync scan --git-range origin/main..HEAD --format sarif --output r.sarif
      teamsync scan . --exit-code 0          # report, never fail
      teamsync scan --memory-store memstore_01AbC --history   # a store's retained versions
    """
    from teamsync.commands.scan import ScanRequest, run_scan

    request = ScanRequest(
        paths=paths,
        staged=staged,
        git_range=git_range,
        format=fmt,
        output=output,
        baseline=baseline,
        update_baseline=update_baseline,
        generic=not no_generic,
        ignore_inline_allow=ignore_inline_allow,
        memory=memory,
        exit_code=exit_code,
        memory_store=memory_store,
        history=history,
        base_url=base_url,
    )
    finish(run_scan(app.settings, app.output, request))
