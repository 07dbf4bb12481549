"""Shared helpers for memory-directory tests: write memories and indexes quickly."""

from __future__ import annotations

from pathlib import Path


def memory_text(
    name: str | None = "A memory",
    description: str | None = "One specific line about it",
    type: str | None = "project",
    body: str = "The fact.\n\n**Why:** a reason.\n**How to apply:** do this.\n",
) -> str:
    """A memory file's text; pass None to leave a field out."""
    fields = [(k, v) for k, v in (("name", name), ("description", description), ("type", type))]
    head = "".join(f"{key}: {value}\n" for key, value in fields if value is not None)
    return f"---\n{head}---\n{body}"


def write_memory(directory: Path, filename: str, **fields: str | None) -> Path:
    """Write ``filename`` under ``directory`` (parents created) and return its path."""
    path = directory / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(memory_text(**fields), encoding="utf-8")  # type: ignore[arg-type]
    return path


def write_index(directory: Path, *entries: tuple[str, str, str]) -> Path:
    """Write ``MEMORY.md`` with ``- [title](target) — hook`` lines."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "MEMORY.md"
    path.write_text("".join(f"- [{t}]({f}) — {h}\n" for t, f, h in entries), encoding="utf-8")
    return path


def clean_memdir(root: Path) -> Path:
    """A memory directory with two private and two team memories, all indexed."""
    write_memory(root, "user_role.md", name="Role", description="Senior backend dev", type="user")
    write_memory(root, "prefs.md", name="Prefs", description="Prefers small PRs", type="feedback")
    write_index(root, ("Role", "user_role.md", "backend"), ("Prefs", "prefs.md", "small PRs"))
    team = root / "team"
    write_memory(team, "deploys.md", name="Deploys", description="Friday freeze", type="project")
    write_memory(team, "dash.md", name="Dash", description="Grafana board", type="reference")
    write_index(team, ("Deploys", "deploys.md", "freeze"), ("Dash", "dash.md", "board"))
    return root


def assert_current_layout(written: str, original: str, *, within: float = 300.0) -> None:
    """``written`` says what ``original`` said, in Claude Code's current (metadata) layout,
    with ``metadata.modified`` within ``within`` seconds of now."""
    import time

    from teamsync.memdir.format import LAYOUT_METADATA, parse_memory

    new, old = parse_memory(written, "m.md"), parse_memory(original, "m.md")
    assert new.layout == LAYOUT_METADATA, written
    assert (new.name, new.description, new.type, new.body) == (
        old.name,
        old.description,
        old.type,
        old.body,
    )
    meta = new.frontmatter["metadata"]
    assert meta["node_type"] == "memory" and "type" not in new.frontmatter
    assert new.modified is not None and abs(new.modified.timestamp() - time.time()) < within
