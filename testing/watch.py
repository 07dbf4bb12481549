"""Test helpers for `teamsync watch`: a supervised subprocess and polling waits."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO


def wait_for(check: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    """Poll ``check`` until it is true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(interval)
    return check()


def memory_text(name: str) -> str:
    """A valid team memory file."""
    return (
        f"---\nname: {name}\ndescription: the {name} fact for the watch test\ntype: project\n---\n"
        f"The {name} fact.\n**Why:** tests.\n**How to apply:** none.\n"
    )


@dataclass
class WatchProcess:
    popen: subprocess.Popen[bytes]
    log: Path
    sink: IO[bytes]

    @classmethod
    def start(
        cls, args: list[str], *, cwd: Path, log: Path, env: dict[str, str] | None = None
    ) -> WatchProcess:
        sink = open(log, "wb")  # noqa: SIM115 - closed in kill()
        popen = subprocess.Popen(
            args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT
        )
        return cls(popen, log, sink)

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_output(self, text: str, timeout: float) -> None:
        if not wait_for(lambda: text in self.output() or self.popen.poll() is not None, timeout):
            raise AssertionError(f"{text!r} not seen in {timeout} s:\n{self.output()}")
        if text not in self.output():
            raise AssertionError(f"watch exited before {text!r}:\n{self.output()}")

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(10)
        self.sink.close()
