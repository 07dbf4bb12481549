"""All printing goes through :class:`Output` (pass a stream in; never print directly)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO


def _stdout() -> TextIO:
    return sys.stdout


def _stderr() -> TextIO:
    return sys.stderr


def printable(text: str) -> str:
    """Escape control and other invisible characters so file names cannot drive the terminal.

    A secret in a name (``team/<token>.md``) is replaced by its rule id, so no
    file name printed by teamsync repeats one.
    """
    from teamsync.security.names import redact_name

    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in redact_name(text))


@dataclass
class Output:
    """Human lines go to ``err`` in JSON mode so stdout holds exactly one JSON object."""

    json_mode: bool = False
    color: bool = False
    quiet: bool = False
    out: TextIO = field(default_factory=_stdout)
    err: TextIO = field(default_factory=_stderr)

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def info(self, message: str) -> None:
        """A normal progress or result line (stderr in JSON mode)."""
        if self.quiet:
            return
        print(message, file=self.err if self.json_mode else self.out, flush=True)

    def success(self, message: str) -> None:
        self.info(self._style(message, "32"))

    def warn(self, message: str) -> None:
        print(self._style(f"warning: {message}", "33"), file=self.err, flush=True)

    def error(self, message: str) -> None:
        print(self._style(f"error: {message}", "31"), file=self.err, flush=True)

    def emit(self, payload: Mapping[str, Any]) -> None:
        """Print the command's one JSON object (only in JSON mode)."""
        if self.json_mode:
            print(json.dumps(payload, indent=2, sort_keys=False), file=self.out, flush=True)
