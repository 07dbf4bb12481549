"""The one place that maps outcomes to exit codes.

0 ok · 1 findings, conflicts or a TeamsyncError · 2 usage · 3 unexpected · 130 interrupted.
"""

from __future__ import annotations

import os
import traceback

import click

from teamsync._extras import missing_extra
from teamsync.errors import TeamsyncError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_UNEXPECTED = 3
EXIT_INTERRUPTED = 130


def run_with_exit_codes(command: click.Command, args: list[str]) -> int:
    try:
        result = command.main(args=args, prog_name="teamsync", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:  # UsageError, BadParameter, …
        exc.show()
        return EXIT_USAGE if exc.exit_code == 2 else int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        return EXIT_INTERRUPTED
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except TeamsyncError as exc:
        click.echo(f"error: {exc}", err=True)
        return exc.exit_code
    except BrokenPipeError:
        return EXIT_FINDINGS
    except ModuleNotFoundError as exc:
        missing = missing_extra(exc)
        if missing is None:
            return _unexpected(exc)
        click.echo(f"error: {missing}", err=True)
        return missing.exit_code
    except Exception as exc:  # noqa: BLE001 - the last resort, with a pointer for a bug report
        return _unexpected(exc)
    return int(result) if isinstance(result, int) else EXIT_OK


def _unexpected(exc: BaseException) -> int:
    click.echo(f"error: unexpected {type(exc).__name__}: {exc}", err=True)
    if "TEAMSYNC_DEBUG" in os.environ:
        traceback.print_exc()
    else:
        click.echo("This is a bug in teamsync; rerun with TEAMSYNC_DEBUG=1 for details.", err=True)
    return EXIT_UNEXPECTED
