"""npm packages for tests that drive teamsync with a JavaScript client nobody here wrote.

:func:`npm_package` installs one pinned package (and its dependencies) once per
machine into a directory under the system temp dir, with npm's own cache beside
it, and returns the directory to run ``node`` in. A machine without node/npm, or
whose registry does not answer, skips the test with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(tempfile.gettempdir()) / "teamsync-tests-npm"


def npm_package(spec: str, *, timeout: float = 240.0) -> Path:
    """A directory whose ``node_modules`` holds ``spec`` (``name@version``)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed for this client check")
    where = ROOT / spec.replace("/", "__").replace("@", "_at_")
    marker = where / ".installed"
    if marker.is_file():
        return where
    where.mkdir(parents=True, exist_ok=True)
    (where / "package.json").write_text('{"private": true, "type": "module"}\n', encoding="utf-8")
    env = {**os.environ, "npm_config_cache": str(ROOT / ".npm-cache"), "npm_config_fund": "false"}
    try:
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", spec],
            cwd=where,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm install {spec} did not finish in {timeout:.0f} s (no registry?)")
    if done.returncode != 0:
        pytest.skip(f"npm install {spec} failed: {done.stderr.strip()[-300:]}")
    marker.write_text(spec, encoding="utf-8")
    return where
