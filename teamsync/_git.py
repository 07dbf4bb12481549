"""The one door to the ``git`` program: one environment policy, one runner.

Every part of teamsync that runs git (the hooks, the scanner's git sources,
the git backend, recall's drift check, the REST backend's ``origin`` lookup)
and the test helpers go through :func:`run`. It

- starts git from a clean environment (:func:`clean_env`): a hook runs with
  git's own variables set (``GIT_DIR``, ``GIT_INDEX_FILE``, ``GIT_WORK_TREE``…),
  and a git command started from there would act on the wrong repository or
  index. Only what configures *how* git talks to the world is kept (modelled
  on pre-commit's ``no_git_env``), plus the author and committer identity;
- never prompts (``GIT_TERMINAL_PROMPT=0``) and speaks C (``LC_ALL=C``) so its
  messages can be classified;
- turns a missing git into :class:`~teamsync.errors.ToolMissing` and leaves
  every other failure to the caller, who knows what it means.

Stdlib only and light (no dataclass, no pathlib at run time): the scanner's
pre-commit path and the CLI's fast no-op path import it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["GitResult", "clean_env", "popen", "run"]

_KEEP = frozenset(
    {
        "GIT_EXEC_PATH",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_GLOBAL",
        "GIT_HTTP_PROXY_AUTHMETHOD",
        "GIT_ALLOW_PROTOCOL",
        "GIT_ASKPASS",
        "GIT_TERMINAL_PROMPT",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
    }
)


def clean_env(
    environ: Mapping[str, str] | None = None,
    *,
    keep_index: bool = False,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """``environ`` without the ``GIT_*`` variables that pin a repository or index.

    ``keep_index`` keeps ``GIT_INDEX_FILE`` (made absolute): a pre-commit hook
    scanning what is staged must read the index git is committing from.
    ``extra`` is added last (``GIT_DIR`` of a cache repository, for one).
    """
    source = os.environ if environ is None else environ
    env = {
        k: v
        for k, v in source.items()
        if not k.startswith("GIT_")
        or k in _KEEP
        or k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    index = source.get("GIT_INDEX_FILE")
    if keep_index and index:
        env["GIT_INDEX_FILE"] = os.path.abspath(index)
    if extra:
        env.update(extra)
    return env


def _for_git(env: Mapping[str, str]) -> dict[str, str]:
    """What every git teamsync starts gets on top: no prompts, C messages."""
    out = dict(env)
    out.setdefault("GIT_TERMINAL_PROMPT", "0")
    out["LC_ALL"] = "C"
    out["LANGUAGE"] = "C"
    return out


class GitResult(NamedTuple):
    returncode: int
    stdout: bytes
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def text(self) -> str:
        """stdout as stripped UTF-8 text (undecodable bytes replaced)."""
        return self.stdout.decode("utf-8", "replace").strip()

    def reason(self) -> str:
        """The most telling line of stderr, or the exit status."""
        lines = [ln.strip() for ln in self.stderr.splitlines() if ln.strip()]
        for line in lines:
            if line.startswith(("fatal:", "error:")):
                return line
        return lines[-1] if lines else f"exit {self.returncode}"


def run(
    args: Sequence[str],
    *,
    cwd: Path | str | None = None,
    environ: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float | None = None,
) -> GitResult:
    """Run ``git args`` and return what it said; never raises for a non-zero exit.

    ``environ`` is cleaned with :func:`clean_env`; ``env``, when given, is used
    as it is (a caller that built its own with :func:`clean_env`). Either way
    git never prompts and speaks C.
    A git that cannot be started raises :class:`ToolMissing`; a timeout raises
    :class:`subprocess.TimeoutExpired` for the caller to translate.
    """
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=_for_git(env if env is not None else clean_env(environ)),
            input=stdin if stdin is not None else b"",
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except OSError as exc:
        raise _missing(exc) from None
    return GitResult(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace"))


def popen(
    args: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``git args`` with piped stdin, stdout and stderr, for output read as a stream.

    The environment is as for :func:`run`; the caller reads, waits and checks the status.
    """
    try:
        return subprocess.Popen(
            ["git", *args],
            cwd=cwd,
            env=_for_git(env if env is not None else clean_env()),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise _missing(exc) from None


def _missing(exc: OSError) -> Exception:
    from teamsync.errors import ToolMissing

    return ToolMissing.from_args("git", exc.strerror)
