"""The one place that maps outcomes to exit codes.

0 ok · 1 findings, conflicts or a TeamsyncError · 2 usage · 3 unexpected · 130 interrupted.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from teamsync.errors import TeamsyncError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_UNEXPECTED = 3
EXIT_INTERRUPTED = 130


def run_with_exit_codes(command: click.Command, args: list[str]) -> int:
    """Run the CLI; every outcome becomes an exit code (and, under --json, errors a JSON object).

    With ``--json`` an error is also printed on stdout as
    ``{"error": {"kind": …, "message": …}}``; the exit code is the same.
    """
    report = _Reporter(json_mode=_wants_json(args), verbose=_global_flag(args, "--verbose", "-v"))
    try:
        result = command.main(args=args, prog_name="teamsync", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:  # UsageError, BadParameter, …
        exc.show()
        hint = _global_option_hint(exc, args)
        if hint:
            click.echo(hint, err=True)
        report.json("usage", exc.format_message())
        return EXIT_USAGE if exc.exit_code == 2 else int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        report.json("interrupted", "aborted")
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        report.json("interrupted", "interrupted")
        return EXIT_INTERRUPTED
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # noqa: BLE001 - sorted out below; the last resort reports a bug
        return _failed(report, exc)
    return int(result) if isinstance(result, int) else EXIT_OK


def _failed(report: _Reporter, exc: Exception) -> int:
    """The exit code for an exception out of a command (and its message).

    The error classes are imported here, when something failed: ``teamsync
    --version`` and other successful runs never load them.
    """
    from teamsync.errors import TeamsyncError

    if isinstance(exc, TeamsyncError):
        report.error(exc, error_kind(exc))
        return exc.exit_code
    if isinstance(exc, BrokenPipeError):
        return EXIT_FINDINGS
    if isinstance(exc, ModuleNotFoundError):
        from teamsync._extras import missing_extra

        missing = missing_extra(exc)
        if missing is not None:
            report.error(missing, "missing-extra")
            return missing.exit_code
    return report.unexpected(exc)


_GLOBAL = ("--dir", "--json", "--quiet", "-q", "--verbose", "-v", "--color")
_TAKES_VALUE = ("--dir", "--color")


def _global_option_hint(exc: click.ClickException, args: list[str]) -> str | None:
    """For ``teamsync status --json``: say that global options go before the verb, with the
    command line that does it (the option and its value moved in front of the verb)."""
    if not isinstance(exc, click.NoSuchOption):
        return None
    name = exc.option_name.partition("=")[0]
    if name not in _GLOBAL:
        return None
    moved = move_global_option(args, name)
    command = f"`teamsync {_shell_join(moved)}`" if moved else f"`teamsync {name} COMMAND …`"
    return f"hint: {name} is a global option; give it before the command: {command}"


def _verb_index(args: list[str]) -> int | None:
    """Where the verb is: the first word that is neither a global option nor its value."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return i
        i += 2 if arg in _TAKES_VALUE else 1
    return None


def move_global_option(args: list[str], name: str) -> list[str] | None:
    """``args`` with the first ``name`` after the verb (and its value, for ``--dir`` and
    ``--color``) moved just before the verb; None when there is no such word to move."""
    verb = _verb_index(args)
    if verb is None:
        return None
    for i in range(verb + 1, len(args)):
        arg = args[i]
        if arg == "--":
            return None
        if arg == name or arg.startswith(f"{name}="):
            end = i + 2 if arg == name and name in _TAKES_VALUE and i + 1 < len(args) else i + 1
            return [*args[:verb], *args[i:end], *args[verb:i], *args[end:]]
    return None


def _shell_join(words: list[str]) -> str:
    import shlex  # only for this hint

    return shlex.join(words)


def error_kind(exc: TeamsyncError) -> str:
    """``exc.kind``, else the class name in kebab case (``AuthError`` -> ``auth``)."""
    if exc.kind:
        return exc.kind
    name = type(exc).__name__.removesuffix("Error")
    return "".join(f"-{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))


def _wants_json(args: list[str]) -> bool:
    """``--json`` in the arguments (before any ``--``)."""
    return _global_flag(args, "--json")


def _global_flag(args: list[str], *names: str) -> bool:
    for arg in args:
        if arg in names:
            return True
        if arg == "--":
            return False
    return False


class _Reporter:
    def __init__(self, *, json_mode: bool, verbose: bool = False) -> None:
        self.json_mode = json_mode
        self.verbose = verbose or "TEAMSYNC_DEBUG" in os.environ

    def json(self, kind: str, message: str) -> None:
        if self.json_mode:
            payload = {"error": {"kind": kind, "message": message}}
            click.echo(json.dumps(payload, indent=2))

    def error(self, exc: BaseException, kind: str) -> None:
        click.echo(f"error: {exc}", err=True)
        detail = getattr(exc, "detail", None)
        if self.verbose and detail:
            click.echo(f"detail: {detail}", err=True)
        self.json(kind, str(exc))

    def unexpected(self, exc: BaseException) -> int:
        click.echo(f"error: unexpected {type(exc).__name__}: {exc}", err=True)
        if self.verbose:
            import traceback

            traceback.print_exc()
        else:
            click.echo(
                "This is a bug in teamsync; rerun with --verbose (or TEAMSYNC_DEBUG=1) for "
                "details.",
                err=True,
            )
        self.json("unexpected", f"unexpected {type(exc).__name__}: {exc}")
        return EXIT_UNEXPECTED
