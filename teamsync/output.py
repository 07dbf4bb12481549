"""All printing goes through :class:`Output` (pass a stream in; never print directly).

Names (file names, keys, URLs from a remote) are made safe to print before they
get here, by :func:`teamsync.security.names.printable`: this module knows no
scanner.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, TextIO


class Output:
    """Human lines go to ``err`` in JSON mode so stdout holds exactly one JSON object.

    ``color`` is for ``out``, ``err_color`` for ``err`` (None: the same as
    ``color``); each stream's own terminal decides. ``quiet`` drops info lines
    (warnings and errors stay); ``verbose`` lets :meth:`debug` lines through.
    A plain class, not a dataclass: the CLI's fast no-op path prints through it
    before the dataclass machinery is imported.
    """

    def __init__(
        self,
        json_mode: bool = False,
        color: bool = False,
        quiet: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
        err_color: bool | None = None,
        verbose: bool = False,
    ) -> None:
        self.json_mode, self.color, self.quiet, self.verbose = json_mode, color, quiet, verbose
        self.out: TextIO = out if out is not None else sys.stdout
        self.err: TextIO = err if err is not None else sys.stderr
        self.err_color = err_color

    def __repr__(self) -> str:
        return f"Output(json_mode={self.json_mode}, quiet={self.quiet}, verbose={self.verbose})"

    def _style(self, text: str, code: str, stream: TextIO | None = None) -> str:
        on = self.color
        if stream is self.err and self.err_color is not None:
            on = self.err_color
        return f"\x1b[{code}m{text}\x1b[0m" if on else text

    def _info_stream(self) -> TextIO:
        return self.err if self.json_mode else self.out

    def info(self, message: str) -> None:
        """A normal progress or result line (stderr in JSON mode)."""
        if self.quiet:
            return
        print(message, file=self._info_stream(), flush=True)

    def success(self, message: str) -> None:
        self.info(self._style(message, "32", self._info_stream()))

    def debug(self, message: str) -> None:
        """A detail line, shown only with ``--verbose`` (always on stderr)."""
        if self.verbose:
            print(self._style(message, "2", self.err), file=self.err, flush=True)

    def warn(self, message: str) -> None:
        print(self._style(f"warning: {message}", "33", self.err), file=self.err, flush=True)

    def error(self, message: str) -> None:
        print(self._style(f"error: {message}", "31", self.err), file=self.err, flush=True)

    def emit(self, payload: Mapping[str, Any]) -> None:
        """Print the command's one JSON object (only in JSON mode)."""
        if self.json_mode:
            print(json.dumps(payload, indent=2, sort_keys=False), file=self.out, flush=True)
