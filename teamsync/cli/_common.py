"""What every command shares: the application context and its decorator."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from teamsync.config import Settings
from teamsync.output import Output

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class AppContext:
    settings: Settings
    output: Output

    @classmethod
    def create(
        cls,
        *,
        memdir: str | None,
        json_mode: bool,
        quiet: bool = False,
        verbose: bool = False,
        color: str = "auto",
    ) -> AppContext:
        settings = Settings.build(
            dir=memdir,
            json=json_mode,
            isatty=sys.stdout.isatty(),
            err_isatty=sys.stderr.isatty(),
            color=color,
        )
        output = Output(
            json_mode=json_mode,
            color=settings.color,
            err_color=settings.err_color,
            quiet=quiet,
            verbose=verbose,
        )
        return cls(settings=settings, output=output)


pass_app = click.make_pass_decorator(AppContext)
"""Inject the :class:`AppContext` built by the top-level group."""


def finish(code: int) -> None:
    """End a command with ``code`` (commands return ints from the library)."""
    if code:
        raise SystemExit(code)
