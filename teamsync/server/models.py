"""Pydantic models of the wire format: they parse PUT bodies and document every
response in the OpenAPI document (``/openapi.json``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class PutBody(BaseModel):
    """PUT body. ``entries`` and ``soft_delete_keys`` are Claude Code's; ``deletes`` and
    ``baseChecksums`` are teamsync extensions that a plain client never sends."""

    model_config = ConfigDict(extra="ignore")

    entries: dict[str, str] = Field(default_factory=dict)
    deletes: list[str] = Field(default_factory=list)
    soft_delete_keys: list[str] = Field(default_factory=list)
    """Claude Code 2.1.197's deletes: stored as tombstones, listed in ``deletedEntries``."""
    baseChecksums: dict[str, str | None] | None = None  # noqa: N815 - wire name
    entryModified: dict[str, str] | None = None  # noqa: N815 - extension: first-share times


class Content(BaseModel):
    entries: dict[str, str]
    entryChecksums: dict[str, str]  # noqa: N815
    deletedEntries: dict[str, int] = Field(default_factory=dict)  # noqa: N815
    """key -> when it was deleted (milliseconds since the epoch), as Claude Code reads it."""
    deletedChecksums: dict[str, str] = Field(default_factory=dict)  # noqa: N815 - extension
    """key -> checksum of the content that was deleted (teamsync's; others ignore it)."""


class FullView(BaseModel):
    repo: str
    version: int
    lastModified: str  # noqa: N815
    checksum: str
    content: Content
    entryLastModified: dict[str, str]  # noqa: N815 - extension


class HashesView(BaseModel):
    checksum: str
    version: int
    lastModified: str  # noqa: N815
    entryChecksums: dict[str, str]  # noqa: N815
    entryLastModified: dict[str, str]  # noqa: N815 - extension
    deletedEntries: dict[str, int] = Field(default_factory=dict)  # noqa: N815
    deletedChecksums: dict[str, str] = Field(default_factory=dict)  # noqa: N815 - extension


class DeltaView(BaseModel):
    """``view=hashes&since=N`` (extension ``delta``): only what changed after version N."""

    checksum: str
    version: int
    lastModified: str  # noqa: N815
    since: int
    entryChecksums: dict[str, str]  # noqa: N815 - the live keys written after ``since``
    entryLastModified: dict[str, str]  # noqa: N815
    deleted: list[str]
    deletedEntries: dict[str, int] = Field(default_factory=dict)  # noqa: N815
    """Of ``deleted``: when each was deleted (ms), as a full listing says it."""
    deletedChecksums: dict[str, str] = Field(default_factory=dict)  # noqa: N815 - extension
    """Of ``deleted``: the checksum each held when deleted, as a full listing says it."""
    sinceChecksum: str | None = None  # noqa: N815


class EntriesRequest(BaseModel):
    """``POST …/team_memory/entries`` body (extension ``entries``): the keys wanted."""

    model_config = ConfigDict(extra="ignore")

    keys: list[str] = Field(max_length=5000)


class EntriesView(BaseModel):
    """The named keys that are live, with the store checksum they were read under."""

    checksum: str
    version: int
    entries: dict[str, str]
    entryChecksums: dict[str, str]  # noqa: N815


class PutResult(BaseModel):
    checksum: str
    lastModified: str  # noqa: N815
    version: int
    changedKeys: list[str]  # noqa: N815 - extension
    rejectedEntries: list[dict[str, Any]] = Field(default_factory=list)  # noqa: N815
    """The entries this PUT did not store, each with its key, reason and error code."""


class HistoryEntry(BaseModel):
    id: int
    at: str
    who: str
    key: str
    checksum: str | None
    action: str


class HistoryPage(BaseModel):
    repo: str
    items: list[HistoryEntry]
    next_after: int | None


class Limits(BaseModel):
    max_entries: int
    max_entry_bytes: int
    max_body_bytes: int
    batch_bytes: int


class TokenScope(BaseModel):
    repo: str
    read_only: bool


class Capabilities(BaseModel):
    server: str
    version: str
    extensions: list[str]
    limits: Limits
    token: TokenScope | None = Field(
        default=None, description="the calling token's scope, when the request carries a valid one"
    )


class ErrorDetails(BaseModel):
    model_config = ConfigDict(extra="allow")
    error_code: str


class ErrorInfo(BaseModel):
    message: str
    details: ErrorDetails


class ErrorBody(BaseModel):
    error: ErrorInfo


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` for error statuses, all with :class:`ErrorBody`."""
    return {code: {"model": ErrorBody} for code in codes}
