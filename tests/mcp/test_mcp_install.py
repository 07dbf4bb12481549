"""`teamsync install-mcp`: each client's documented file, every other setting kept, a backup,
and `--dry-run` changing nothing; `teamsync mcp` never offers writing on a read-only token."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from testing.memdir import write_memory

TEAMSYNC = [sys.executable, "-m", "teamsync"]


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TEAMSYNC, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write_memory(tmp_path / "memory" / "team", "a.md", name="A", description="d", type="project")
    return root


@pytest.mark.parametrize(
    ("client", "rel", "existing"),
    [
        ("claude-code", ".mcp.json", {"mcpServers": {"other": {"command": "x"}}, "keep": 1}),
        ("cursor", ".cursor/mcp.json", {"mcpServers": {}, "theme": "dark"}),
        ("gemini", ".gemini/settings.json", {"general": {"vimMode": True}}),
    ],
)
def test_json_clients_keep_every_other_setting_and_back_up(
    project: Path, client: str, rel: str, existing: dict[str, object]
) -> None:
    memdir = project.parent / "memory"
    target = project / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    original = json.dumps(existing, indent=4) + "\n"
    target.write_text(original, encoding="utf-8")
    dry = cli(project, "--dir", str(memdir), "install-mcp", "--client", client, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert '"teamsync"' in dry.stdout and target.read_text(encoding="utf-8") == original
    done = cli(project, "--dir", str(memdir), "--json", "install-mcp", "--client", client)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    data = json.loads(target.read_text(encoding="utf-8"))
    entry = data["mcpServers"]["teamsync"]
    assert entry["command"] == str(Path(sys.executable).absolute())
    assert entry["args"] == ["-m", "teamsync", "--dir", str(memdir.resolve()), "mcp"]
    for key, value in existing.items():
        if key != "mcpServers":
            assert data[key] == value
    for name, value in dict(existing.get("mcpServers", {})).items():  # type: ignore[call-overload]
        assert data["mcpServers"][name] == value
    assert Path(report["backup"]).read_text(encoding="utf-8") == original
    again = cli(project, "--dir", str(memdir), "--json", "install-mcp", "--client", client)
    assert json.loads(again.stdout)["changed"] is False


def test_codex_toml_keeps_every_other_line(project: Path) -> None:
    home = project.parent / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    original = (
        '# my settings\nmodel = "o4"\n\n[mcp_servers.teamsync]\ncommand = "old"\n\n'
        '[mcp_servers.teamsync.env]\nX = "1"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
        'args = ["--port", "1"]\n'
    )
    config.write_text(original, encoding="utf-8")
    env_run = subprocess.run(
        [*TEAMSYNC, "install-mcp", "--client", "codex", "--scope", "user"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    assert env_run.returncode == 0, env_run.stderr
    text = config.read_text(encoding="utf-8")
    parsed = tomllib.loads(text)
    assert parsed["model"] == "o4"
    assert parsed["mcp_servers"]["docs"] == {"command": "docs-mcp", "args": ["--port", "1"]}
    assert parsed["mcp_servers"]["teamsync"] == {
        "command": str(Path(sys.executable).absolute()),
        "args": ["-m", "teamsync", "mcp"],
    }
    assert text.startswith('# my settings\nmodel = "o4"\n')
    assert '[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = ["--port", "1"]\n' in text
    backups = list(config.parent.glob("config.toml.bak-*"))
    assert len(backups) == 1 and backups[0].read_text(encoding="utf-8") == original


def test_unreadable_config_is_refused_not_replaced(project: Path) -> None:
    target = project / ".mcp.json"
    target.write_text("{not json", encoding="utf-8")
    done = cli(project, "install-mcp", "--client", "claude-code")
    assert done.returncode == 1 and "not valid JSON" in done.stderr
    assert target.read_text(encoding="utf-8") == "{not json"


def test_read_only_token_never_offers_remember(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    pytest.importorskip("fastapi")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from teamsync.server.storage import open_storage
    from teamsync.sync.config import SyncConfig, save_config
    from testing.server import app_for, token_for, uvicorn_server

    store = open_storage(f"sqlite:///{tmp_path / 'server.sqlite3'}")
    reader, writer = token_for(store, read_only=True), token_for(store)
    memdir = tmp_path / "memory"
    write_memory(memdir / "team", "a.md", name="A", description="d", type="project")
    (memdir / "teamsync.yaml").parent.mkdir(parents=True, exist_ok=True)

    async def offered(token: str) -> list[str]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "teamsync", "--dir", str(memdir), "mcp", "--offline", "--remember"],
            env={"HOME": str(tmp_path), "TEAMSYNC_TOKEN": token, "PATH": "/usr/bin:/bin"},
        )
        async with Client(params, read_timeout_seconds=60) as client:
            return sorted(t.name for t in (await client.list_tools()).tools)

    import asyncio

    with uvicorn_server(app_for(store)) as url:
        save_config(memdir, SyncConfig("rest", url, repo="acme/widgets"))
        assert "memory_remember" not in asyncio.run(offered(reader))
        assert "memory_remember" in asyncio.run(offered(writer))
    # the server gone, nobody can say whether the token may write: writing stays off
    assert "memory_remember" not in asyncio.run(offered(writer))


def test_capabilities_name_only_the_callers_own_valid_token(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    import httpx2

    from teamsync.server.storage import open_storage
    from teamsync.wire import CAPABILITIES_PATH
    from testing.server import app_for, token_for, uvicorn_server

    store = open_storage(f"sqlite:///{tmp_path / 'server.sqlite3'}")
    reader = token_for(store, repo="acme/widgets", read_only=True)
    with uvicorn_server(app_for(store)) as url:

        def scope(headers: dict[str, str]) -> object:
            return httpx2.get(url + CAPABILITIES_PATH, headers=headers).json().get("token")

        assert scope({}) is None
        assert scope({"Authorization": "Bearer tsm_000000000000_" + "x" * 43}) is None
        assert scope({"Authorization": f"Bearer {reader}"}) == {
            "repo": "acme/widgets",
            "read_only": True,
        }
