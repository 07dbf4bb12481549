"""Conformance: the official TypeScript SDK (``@anthropic-ai/sdk``, installed with npm from the
registry into a cached test directory) runs every Memory Stores call against a real
``teamsync serve`` on SQLite and PostgreSQL (``testing/node/memstores_sdk.cjs`` holds the calls
and their checks).

Skipped, with the reason, only when node or npm is missing or npm cannot reach the registry.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from teamsync.server.storage import open_storage
from testing.server import app_for, token_for, uvicorn_server

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "ts-sdk"
SCRIPT = ROOT / "testing" / "node" / "memstores_sdk.cjs"
PACKAGE = "@anthropic-ai/sdk@^1.15.0"
"""1.15 is the first release with ``beta.memoryStores``."""
OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "ENETUNREACH")


@pytest.fixture(scope="session")
def ts_sdk() -> Path:
    """The cached SDK directory; npm installs it on first use."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to run the official TypeScript SDK")
    if (CACHE / "node_modules" / "@anthropic-ai" / "sdk" / "package.json").is_file():
        return CACHE
    CACHE.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), PACKAGE],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        if any(code in result.stderr for code in OFFLINE):
            pytest.skip(f"npm cannot reach the registry to install {PACKAGE}")
        pytest.fail(f"npm install {PACKAGE} failed:\n{result.stderr[-2000:]}")
    return CACHE


@pytest.fixture
def served(db_url: str) -> Iterator[tuple[str, str]]:
    store = open_storage(db_url)
    try:
        token = token_for(store, "acme/widgets", label="node")
        with uvicorn_server(app_for(store)) as url:
            yield url, token
    finally:
        store.close()


def test_the_typescript_sdk_runs_every_call(ts_sdk: Path, served: tuple[str, str]) -> None:
    url, token = served
    env = {**os.environ, "TS_SDK_DIR": str(ts_sdk), "BASE_URL": url, "API_KEY": token}
    env.pop("ANTHROPIC_API_KEY", None)
    result = subprocess.run(
        ["node", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["ok"] is True and answer["calls"] >= 50
