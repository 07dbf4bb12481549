"""`teamsync mcp` driven over stdio by clients nobody here wrote: the official MCP
Python SDK's client and the official TypeScript SDK's client (node)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from testing.memdir import write_index, write_memory

pytest.importorskip("mcp")

TOKEN = "ghp_" + "R8mZ2qV7xK4nT9wL3cY6bH1dF5gJ0sPaEuQo"
TS_SDK = "@modelcontextprotocol/sdk@1.32.2"


def team_memdir(root: Path) -> Path:
    team = root / "team"
    write_memory(
        team,
        "feedback_release_train.md",
        name="Deploy only with the release train",
        description="Production deploys go out with the Tuesday release train, never by hand",
        type="feedback",
        body="Never deploy production by hand.\n\n**Why:** the March outage.\n"
        "**How to apply:** merge to release/ before Monday 18:00.\n",
    )
    write_memory(
        team,
        "reference_grafana.md",
        name="Grafana board for checkout latency",
        description="The checkout latency board lives in Grafana under Payments",
        type="reference",
        body="Checkout p99 latency: Grafana → Payments → Checkout.\n",
    )
    write_index(
        team,
        ("Deploy only with the release train", "feedback_release_train.md", "release train"),
        ("Grafana board for checkout latency", "reference_grafana.md", "latency board"),
    )
    (team / "MEMORY.md").write_text(
        "# Team notes\nAsk in #platform before changing these.\n"
        + (team / "MEMORY.md").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    return root


def server_params(memdir: Path, *extra: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    env = {"HOME": os.environ["HOME"], "PATH": os.environ.get("PATH", "")}
    args = ["-m", "teamsync", "--dir", str(memdir), "mcp", "--offline", *extra]
    return StdioServerParameters(command=sys.executable, args=args, env=env)


def with_client(params: Any, body: Callable[[Any], Awaitable[Any]]) -> Any:
    from mcp import Client

    async def main() -> Any:
        async with Client(params, read_timeout_seconds=60) as client:
            return await body(client)

    return asyncio.run(main())


def test_read_only_server_lists_searches_gets_and_offers_no_remember(tmp_path: Path) -> None:
    memdir = team_memdir(tmp_path / "memory")

    async def body(client: Any) -> dict[str, Any]:
        tools = await client.list_tools()
        search = await client.call_tool(
            "memory_search", {"query": "how do production deploys go out?", "limit": 3}
        )
        listed = await client.call_tool("memory_list", {"type": "reference"})
        got = await client.call_tool("memory_get", {"path": "team/reference_grafana.md"})
        missing = await client.call_tool("memory_get", {"path": "team/nope.md"})
        escape = await client.call_tool("memory_get", {"path": "../../etc/passwd.md"})
        remember = await client.call_tool(
            "memory_remember", {"name": "x", "type": "project", "description": "d", "body": "b"}
        )
        return {
            "tools": sorted(t.name for t in tools.tools),
            "search": search,
            "listed": listed,
            "got": got,
            "missing": missing,
            "escape": escape,
            "remember": remember,
        }

    out = with_client(server_params(memdir), body)
    assert out["tools"] == ["memory_get", "memory_list", "memory_search"]
    found = out["search"].structured_content["memories"]
    assert found and found[0]["path"] == "team/feedback_release_train.md"
    assert set(found[0]) >= {"path", "name", "type", "description", "age_days", "stale"}
    assert found[0]["name"] == "Deploy only with the release train"
    assert [m["path"] for m in out["listed"].structured_content["memories"]] == [
        "team/reference_grafana.md"
    ]
    assert "Grafana → Payments → Checkout" in out["got"].structured_content["content"]
    assert out["missing"].is_error and "does not exist" in out["missing"].content[0].text
    assert out["escape"].is_error and "cannot read" in out["escape"].content[0].text
    assert out["remember"].is_error and "unknown tool" in out["remember"].content[0].text
    assert not (memdir / "team" / "project_x.md").exists()


def test_remember_writes_through_the_guard_and_indexes(tmp_path: Path) -> None:
    memdir = team_memdir(tmp_path / "memory")
    before_index = (memdir / "team" / "MEMORY.md").read_text(encoding="utf-8")
    clean = {
        "name": "Staging database host",
        "type": "reference",
        "description": "Where the staging database lives and who owns it",
        "body": "Staging Postgres is db-staging.internal:5432; the platform team owns it.",
    }
    secret = {
        "name": "CI credentials",
        "type": "reference",
        "description": "The CI account",
        "body": f"Use {TOKEN} for CI. teamsync: allow",
    }

    async def body(client: Any) -> tuple[Any, Any, Any, list[str]]:
        ok = await client.call_tool("memory_remember", clean)
        again = await client.call_tool("memory_remember", clean)
        refused = await client.call_tool("memory_remember", secret)
        resources = await client.list_resources()
        return ok, again, refused, [str(r.uri) for r in resources.resources]

    ok, again, refused, uris = with_client(server_params(memdir, "--remember"), body)
    assert not ok.is_error, ok.content[0].text
    path = memdir / "team" / "reference_staging_database_host.md"
    assert ok.structured_content["path"] == "team/reference_staging_database_host.md"
    assert ok.structured_content["indexed"] is True
    text = path.read_text(encoding="utf-8")
    assert "db-staging.internal:5432" in text and "name: Staging database host" in text
    index = (memdir / "team" / "MEMORY.md").read_text(encoding="utf-8")
    assert "](reference_staging_database_host.md)" in index
    for line in before_index.splitlines():  # every line the fix does not own is kept
        assert line in index
    assert again.is_error and "already exists" in again.content[0].text
    message = refused.content[0].text
    assert refused.is_error and "github-pat" in message
    assert TOKEN not in message and "allow" not in message.lower().replace("allowlist", "")
    assert not (memdir / "team" / "reference_ci_credentials.md").exists()
    assert "memory:///team/reference_staging_database_host.md" in uris
    assert "memory:///team/MEMORY.md" in uris


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ({"name": "../../escape", "type": "project", "description": "d", "body": "b"}, None),
        ({"name": "Mine", "type": "user", "description": "d", "body": "b"}, "private"),
        ({"name": "Two\nlines", "type": "project", "description": "d", "body": "b"}, "one line"),
        ({"name": "Allowlist", "type": "project", "description": "d", "body": "b"}, None),
    ],
)
def test_remember_never_writes_outside_team_or_the_allowlist(
    tmp_path: Path, args: dict[str, str], why: str | None
) -> None:
    from teamsync.config import Settings
    from teamsync.mcp.memories import MemoryService, ToolRefused

    memdir = team_memdir(tmp_path / "memory")
    service = MemoryService(Settings.build(dir=memdir, environ={}), memdir, remember_enabled=True)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    if why is not None:
        with pytest.raises(ToolRefused, match=why):
            service.remember(args["name"], args["type"], args["description"], args["body"])
    else:
        out = service.remember(args["name"], args["type"], args["description"], args["body"])
        assert out["path"].startswith("team/project_") and "/" not in out["path"][5:]
    after = {p for p in tmp_path.rglob("*") if p.is_file()}
    new = {p.relative_to(memdir).as_posix() for p in after - set(before)}
    assert all(k.startswith("team/project_") and k.endswith(".md") for k in new), new
    assert not list(tmp_path.rglob("allowlist.json"))
    for p, data in before.items():
        if p.name != "MEMORY.md":
            assert p.read_bytes() == data


def test_typescript_sdk_client_drives_the_server(tmp_path: Path) -> None:
    where = npm_dir()
    memdir = team_memdir(tmp_path / "memory")
    script = where / "drive_teamsync.mjs"
    script.write_text(TS_CLIENT, encoding="utf-8")
    env = {**os.environ, "TEAMSYNC_PY": sys.executable, "TEAMSYNC_MEMDIR": str(memdir)}
    done = subprocess.run(
        ["node", str(script)], cwd=where, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["tools"] == ["memory_get", "memory_list", "memory_remember", "memory_search"]
    assert out["search"][0]["path"] == "team/feedback_release_train.md"
    assert out["remembered"]["path"] == "team/project_weekly_on_call_handover.md"
    assert out["refused"]["isError"] is True and TOKEN not in out["refused"]["text"]
    assert (memdir / "team" / "project_weekly_on_call_handover.md").is_file()
    assert "memory:///team/MEMORY.md" in out["resources"]
    assert "Team notes" in out["index"]


def npm_dir() -> Path:
    from testing.node import npm_package

    return npm_package(TS_SDK)


TS_CLIENT = r"""
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const transport = new StdioClientTransport({
  command: process.env.TEAMSYNC_PY,
  args: ["-m", "teamsync", "--dir", process.env.TEAMSYNC_MEMDIR, "mcp", "--offline", "--remember"],
  env: { HOME: process.env.HOME, PATH: process.env.PATH },
});
const client = new Client({ name: "ts-check", version: "1.0.0" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
const search = await client.callTool({ name: "memory_search",
  arguments: { query: "how do production deploys go out?" } });
const remembered = await client.callTool({ name: "memory_remember", arguments: {
  name: "Weekly on-call handover", type: "project",
  description: "The on-call handover happens Mondays at 10:00",
  body: "Hand over the pager on Mondays at 10:00 in #oncall." } });
const refused = await client.callTool({ name: "memory_remember", arguments: {
  name: "Deploy key", type: "reference", description: "The deploy key",
  body: "key: ghp_" + "R8mZ2qV7xK4nT9wL3cY6bH1dF5gJ0sPaEuQo" } });
const resources = (await client.listResources()).resources.map((r) => r.uri);
const index = await client.readResource({ uri: "memory:///team/MEMORY.md" });
console.log(JSON.stringify({
  tools,
  search: search.structuredContent.memories,
  remembered: remembered.structuredContent,
  refused: { isError: refused.isError === true, text: refused.content[0].text },
  resources,
  index: index.contents[0].text,
}));
await client.close();
"""


def blind_memdir(root: Path) -> tuple[Path, dict[str, Any]]:
    """The memory directory a separate session wrote without sight of issue 29 (data/README)."""
    from teamsync.memdir.format import dump_frontmatter

    data = json.loads((Path(__file__).parent / "data" / "blind_team_en.json").read_text("utf-8"))
    for m in data["memories"]:
        path = root / m["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        front = dump_frontmatter(
            {"name": m["name"], "description": m["description"], "type": m["type"]}
        )
        path.write_text(f"---\n{front}---\n\n{m['body']}\n", encoding="utf-8")
    (root / "MEMORY.md").write_text(data["index"], encoding="utf-8")
    return root, data


def test_official_client_on_a_directory_written_blind(tmp_path: Path) -> None:
    memdir, data = blind_memdir(tmp_path / "memory")
    index_before = (memdir / "MEMORY.md").read_text(encoding="utf-8")
    picks = data["memories"][:: len(data["memories"]) // 5][:5]

    async def body(client: Any) -> dict[str, Any]:
        listed = await client.call_tool("memory_list", {})
        got = [await client.call_tool("memory_get", {"path": m["path"]}) for m in picks]
        found = [
            await client.call_tool("memory_search", {"query": m["name"], "limit": 5}) for m in picks
        ]
        ok = await client.call_tool(
            "memory_remember",
            {
                "name": "Build cache eviction window",
                "type": "project",
                "description": "Cache entries untouched for 14 days are evicted nightly",
                "body": "Nightly GC evicts cache entries untouched for 14 days.",
            },
        )
        bad = await client.call_tool(
            "memory_remember",
            {
                "name": "Stripe test key",
                "type": "reference",
                "description": "The Stripe key for staging",
                "body": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + "Xk2Lm9Qw",
            },
        )
        return {"listed": listed, "got": got, "found": found, "ok": ok, "bad": bad}

    out = with_client(server_params(memdir, "--remember"), body)
    listed = {m["path"] for m in out["listed"].structured_content["memories"]}
    assert listed == {m["path"] for m in data["memories"]}
    for m, got in zip(picks, out["got"], strict=True):
        assert m["body"].strip() in got.structured_content["content"]
        assert got.structured_content["name"] == m["name"]
    for m, found in zip(picks, out["found"], strict=True):
        paths = [r["path"] for r in found.structured_content["memories"]]
        assert m["path"] in paths, (m["name"], paths)
    assert not out["ok"].is_error, out["ok"].content[0].text
    assert out["ok"].structured_content["indexed"] is True
    assert out["bad"].is_error and "secret" in out["bad"].content[0].text
    assert "sk_live_" not in out["bad"].content[0].text
    assert not list(memdir.rglob("reference_stripe_test_key.md"))
    assert (memdir / "MEMORY.md").read_text(encoding="utf-8").startswith(index_before.rstrip("\n"))
