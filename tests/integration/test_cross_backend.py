"""Every backend (pgvector, Qdrant, LanceDB, Weaviate, Redis, memory) gives the same dense top-5 as Chroma on the real CRD corpus.

The contract suite checks each backend against exact search on random vectors; this checks them
against each other on what users search: the capability documents of real CRDs, embedded by the
offline model, and the natural-language questions in ``queries.jsonl``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubevec.backends import Record, VectorStore
from kubevec.backends.chroma import ChromaStore
from kubevec.backends.lance import LanceStore
from kubevec.backends.memory import MemoryStore
from kubevec.backends.pgvector import PgvectorStore
from kubevec.backends.qdrant import QdrantStore
from kubevec.backends.redis import RedisStore
from kubevec.backends.weaviate import WeaviateStore
from kubevec.inference.capabilities import describe_crd
from kubevec.inference.manifests import is_crd, iter_manifest_files, load_manifests
from kubevec.inference.providers.embedders.local import LocalEmbedder
from tests.conftest import corpus
from tests.services import Postgres, Redis, Weaviate, postgres_server, redis_server, weaviate_server

pytestmark = pytest.mark.integration
K = 5


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    with postgres_server() as server:
        yield server


@pytest.fixture(scope="module")
def weaviate() -> Iterator[Weaviate]:
    with weaviate_server() as server:
        yield server


@pytest.fixture(scope="module")
def redis() -> Iterator[Redis]:
    with redis_server() as server:
        yield server


@pytest.fixture(scope="module")
def embedded_corpus() -> tuple[list[Record], list[tuple[str, list[float]]]]:
    """The corpus's capability documents and its queries, embedded once for every backend."""
    return asyncio.run(_embed_corpus(corpus()))


async def _embed_corpus(root: Path) -> tuple[list[Record], list[tuple[str, list[float]]]]:
    crds = [d for p in iter_manifest_files([root]) for d in load_manifests(p.read_text(), source=str(p)) if is_crd(d)]
    documents = [describe_crd(crd).to_document() for crd in crds]
    queries = [json.loads(line)["query"] for line in (root / "queries.jsonl").read_text().splitlines() if line.strip()]
    embedder = LocalEmbedder()
    vectors = await embedder.embed_documents([d.text for d in documents])
    records = [
        Record(id=d.id, vector=v, text=d.text, metadata=dict(d.metadata))
        for d, v in zip(documents, vectors, strict=True)
    ]
    return records, [(q, await embedder.embed_query(q)) for q in queries]


async def top_k(store: VectorStore, records: list[Record], queries: list[tuple[str, list[float]]]) -> list[list[str]]:
    await store.ensure_collection("capabilities", dimension=len(records[0].vector), embedder="minilm")
    try:
        await store.upsert("capabilities", records)
        return [[h.id for h in await store.search("capabilities", vector=v, k=K)] for _, v in queries]
    finally:
        await store.drop_collection("capabilities")
        await store.close()


@pytest.fixture(scope="module")
def chroma_answers(
    tmp_path_factory: pytest.TempPathFactory, embedded_corpus: tuple[list[Record], list[tuple[str, list[float]]]]
) -> list[list[str]]:
    records, queries = embedded_corpus
    path = tmp_path_factory.mktemp("chroma")
    return asyncio.run(top_k(ChromaStore(path=str(path)), records, queries))


@pytest.mark.parametrize("backend", ["pgvector", "qdrant", "lancedb", "weaviate", "redis", "memory"])
async def test_dense_top5_matches_chroma(
    backend: str,
    tmp_path: Path,
    postgres: Postgres,
    weaviate: Weaviate,
    redis: Redis,
    embedded_corpus: tuple[list[Record], list[tuple[str, list[float]]]],
    chroma_answers: list[list[str]],
) -> None:
    records, queries = embedded_corpus
    store: VectorStore = {
        "pgvector": lambda: PgvectorStore(url=postgres.url, password=postgres.password),
        "qdrant": lambda: QdrantStore(path=str(tmp_path / "qdrant")),
        "lancedb": lambda: LanceStore(path=str(tmp_path / "lance")),
        "weaviate": lambda: WeaviateStore(url=weaviate.url, grpc_port=weaviate.grpc_port),
        "redis": lambda: RedisStore(url=redis.url, password=redis.password),
        "memory": MemoryStore,
    }[backend]()
    answers = await top_k(store, records, queries)
    assert len(queries) >= 50
    differing = [
        (q, want, got) for (q, _), want, got in zip(queries, chroma_answers, answers, strict=True) if want != got
    ]
    assert not differing, f"{len(differing)} of {len(queries)} queries differ from Chroma, first: {differing[0]}"
