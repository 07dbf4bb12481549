"""``teamsync guard``: the hook events, Claude Code's and git's.

``PreToolUse`` is the write guard (:mod:`teamsync.hooks.guard`); every other
event is :mod:`teamsync.hooks.events`. :func:`fast_guard` is what the console
script runs for a bare ``teamsync guard``, before click is even imported:
Claude Code calls it before every Write and Edit.
"""

from __future__ import annotations

import sys

from teamsync.config import Settings

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import TextIO


def event_name(event: str) -> str | None:
    """The canonical name of hook event ``event``, or None when there is no such event."""
    from teamsync.hooks.guard import normalize_event

    return normalize_event(event)


def run_event(settings: Settings, name: str, stdin: TextIO, out: TextIO, err: TextIO) -> int:
    """Answer one hook event (``name`` as :func:`event_name` gives it)."""
    if name == "PreToolUse":
        from teamsync.hooks.guard import run_guard

        return run_guard(settings, stdin, out, err)
    from teamsync.hooks.events import run_event as run

    return run(settings, name, stdin, out, err)


def fast_guard(event: str = "PreToolUse") -> int:
    """``teamsync guard [--event PostToolUse]`` without click; the guard never raises
    (it fails closed)."""
    try:
        return run_event(Settings.build(), event, sys.stdin, sys.stdout, sys.stderr)
    except KeyboardInterrupt:
        return 130
