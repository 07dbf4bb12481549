"""The command line's entry point.

:func:`main` maps every outcome to an exit code through
:mod:`teamsync.cli._errors`. The click group itself lives in
:mod:`teamsync.cli.app`; ``cli`` and ``COMMANDS`` are re-exported from there on
first use.

One fast path: Claude Code runs ``teamsync guard`` before every Write or Edit,
so a bare ``teamsync guard [--event PreToolUse|PostToolUse]`` answers without importing
click at all (about 20 ms of a budget of 100). A no-op ``sync`` / ``status`` /
``pull`` / ``push`` on the git backend is answered the same way
(:mod:`teamsync.commands.sync_fast`). Any other form goes through click.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

TYPE_CHECKING = False  # typing's, without importing typing on the hook path
if TYPE_CHECKING:
    from typing import Any

_FAST_GUARD_ARGS = (["guard"], ["guard", "--event", "PreToolUse"], ["guard", "--event=PreToolUse"])
_FAST_POST_ARGS = (["guard", "--event", "PostToolUse"], ["guard", "--event=PostToolUse"])
_FAST_FAILURE_ARGS = (
    ["guard", "--event", "PostToolUseFailure"],
    ["guard", "--event=PostToolUseFailure"],
)


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point: run the CLI and map every outcome to an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None and args and args[0] == "guard":
        from teamsync._fastpath import try_fast

        if try_fast(args):  # a quiet call answered before the guard is imported
            return 0
    if args in _FAST_GUARD_ARGS:
        from teamsync.commands.guard import fast_guard

        return fast_guard()
    if args in _FAST_POST_ARGS:
        from teamsync.commands.guard import fast_guard

        return fast_guard("PostToolUse")
    if args in _FAST_FAILURE_ARGS:
        from teamsync.commands.guard import fast_guard

        return fast_guard("PostToolUseFailure")
    if args and args[-1] in ("sync", "status", "pull", "push"):
        from teamsync.commands.sync_fast import fast_sync

        code = fast_sync(args)
        if code is not None:
            return code
    from teamsync.cli._errors import run_with_exit_codes
    from teamsync.cli.app import cli

    return run_with_exit_codes(cli, args)


def __getattr__(name: str) -> Any:
    if name in ("cli", "COMMANDS", "LazyGroup"):
        from teamsync.cli import app

        return getattr(app, name)
    raise AttributeError(f"module 'teamsync.cli' has no attribute {name!r}")
