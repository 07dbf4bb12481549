"""The hooks package's only door to ``git``: a clean environment and one runner.

A hook runs with git's own variables set (``GIT_DIR``, ``GIT_INDEX_FILE``,
``GIT_WORK_TREE``…); a git command teamsync starts from there would act on the
wrong repository or index. :func:`no_git_env` drops them, keeping only what
configures *how* git talks to the world (modelled on pre-commit's
``no_git_env``) plus the author/committer identity.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from teamsync.errors import TeamsyncError

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
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    }
)


def no_git_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` without the ``GIT_*`` variables that pin a repository or index."""
    env = dict(os.environ if environ is None else environ)
    return {
        k: v
        for k, v in env.items()
        if not k.startswith("GIT_")
        or k in _KEEP
        or k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }


def git(args: list[str], cwd: Path, environ: Mapping[str, str] | None = None) -> str:
    """Run ``git args`` in ``cwd`` with a clean environment; return stripped stdout."""
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=no_git_env(environ),
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError as exc:
        raise TeamsyncError("git is not installed or not on PATH; install git and retry") from exc
    if proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()
        reason = detail[-1] if detail else f"exit {proc.returncode}"
        raise TeamsyncError(f"git {' '.join(args[:2])} failed in {cwd}: {reason}")
    return proc.stdout.strip()


def git_maybe(args: list[str], cwd: Path, environ: Mapping[str, str] | None = None) -> str | None:
    """Like :func:`git`, but ``None`` when git exits non-zero (e.g. an unset config key)."""
    try:
        return git(args, cwd, environ)
    except TeamsyncError:
        return None
