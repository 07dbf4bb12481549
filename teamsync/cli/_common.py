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
    def create(cls, *, memdir: str | None, json_mode: bool) -> AppContext:
        isatty = sys.stdout.isatty()
        settings = Settings.build(dir=memdir, json=json_mode, isatty=isatty)
        return cls(settings=settings, output=Output(json_mode=json_mode, color=settings.color))


pass_app = click.make_pass_decorator(AppContext)
"""Inject the :class:`AppContext` built by the top-level group."""


def finish(code: int) -> None:
    """End a command with ``code`` (commands return ints from the library)."""
    if code:
        raise SystemExit(code)
