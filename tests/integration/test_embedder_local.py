"""The offline embedder reproduces upstream all-MiniLM-L6-v2 vectors (cosine >= 0.995 on every one)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kubevec.core.errors import EmbedderError
from kubevec.inference.providers.embedders.local import LocalEmbedder, default_model_path
from tests.conftest import embedding_reference

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder(batch_size=8)


def test_matches_upstream_reference_vectors(embedder: LocalEmbedder) -> None:
    reference = json.loads(embedding_reference().read_text())
    sentences = reference["sentences"]
    assert "" in sentences  # the edge cases are really there
    assert any(len(s.split()) > 300 for s in sentences)
    got = embedder.encode(sentences)
    want = np.asarray(reference["vectors"], dtype=np.float32)
    cosines = (got * want).sum(axis=1) / np.linalg.norm(want, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.995, f"sentence {worst!r}: cosine {cosines[worst]:.4f}"
    assert got.shape == (len(sentences), reference["dimension"])
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


async def test_batching_does_not_change_vectors(embedder: LocalEmbedder) -> None:
    texts = ["short", "a much longer text about TLS certificates and ingress controllers " * 5, ""]
    together = await embedder.embed_documents(texts)
    alone = [await embedder.embed_query(t) for t in texts]
    for a, b in zip(together, alone, strict=True):
        assert float(np.dot(a, b)) > 0.9999
    assert embedder.dimension == 384
    assert await embedder.embed_documents([]) == []


def test_wrong_model_hash_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    with pytest.raises(EmbedderError, match="sha256"):
        LocalEmbedder(model_path=fake)
    with pytest.raises(EmbedderError, match="sha256"):
        LocalEmbedder(model_path=default_model_path(), model_sha256="0" * 64)


def test_length_sorted_batches_come_back_in_input_order(embedder: LocalEmbedder) -> None:
    """Texts are batched by length (less padding); every row must still belong to its own text."""
    words = ["certificate", "ingress", "postgres", "backup", "queue", "topic", "replica", "secret", "volume", "gateway"]
    texts = [" ".join(words[: 1 + (i * 7) % 10]) * (1 + (i * 5) % 13) for i in range(21)]
    together = embedder.encode(texts)  # three batches of 8, shuffled by length
    for i, text in enumerate(texts):
        assert float(np.dot(together[i], embedder.encode([text])[0])) > 0.9999, i
    unsorted = LocalEmbedder(batch_size=8, sort_by_length=False).encode(texts)
    assert np.allclose(together, unsorted, atol=1e-4)


def test_int8_weights_give_the_same_vectors(embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """``int8_weights`` only skips folding the weights to fp32 at load time: the same vectors."""
    from kubevec.controller.settings import Settings
    from kubevec.inference.providers.config import make_embedder

    monkeypatch.setenv("KUBEVEC_EMBEDDER__INT8_WEIGHTS", "true")
    compact = make_embedder(Settings().embedder)
    assert isinstance(compact, LocalEmbedder)
    assert compact.int8_weights
    assert not embedder.int8_weights
    texts = ["rotate TLS certificates before they expire", "a managed Postgres cluster with backups " * 20, ""]
    cosines = (compact.encode(texts) * embedder.encode(texts)).sum(axis=1)
    assert cosines.min() > 0.9999


async def test_document_batches_give_freed_memory_back(
    embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """onnxruntime frees hundreds of MiB per batch that glibc would keep; queries skip the ~1 ms call."""
    import kubevec.inference.providers.embedders.local as local

    calls: list[str] = []
    monkeypatch.setattr(local, "release_freed", lambda: calls.append("trim") or True)
    await embedder.embed_documents(["a managed Postgres cluster", "rotate TLS certificates"])
    assert calls == ["trim"]
    await embedder.embed_query("which resource gives me a managed Postgres?")
    assert calls == ["trim"]


def test_the_arena_is_on_and_long_texts_go_alone(embedder: LocalEmbedder) -> None:
    """The arena re-uses one batch's memory (bounded because each batch's cost is capped)."""
    from kubevec.inference.providers.embedders.local import MAX_BATCH_COST

    assert embedder._session.get_session_options().enable_cpu_mem_arena
    widths: list[tuple[int, int]] = []
    run = embedder._run
    embedder._run = lambda pieces: widths.append((len(pieces), max(map(len, pieces)))) or run(pieces)  # type: ignore[method-assign]
    try:
        embedder.encode(["word " * 300, "word " * 300, "word " * 100, "word " * 100, "short", "short"])
    finally:
        del embedder._run
    assert all(count * width * width <= MAX_BATCH_COST or count == 1 for count, width in widths)
    assert (1, 256) in widths
