"""Optional reranking: the Voyage reranker through the official client (fake server), and search using it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder

TEXTS = {
    "kafka": "Topic: a Kafka topic with partitions and retention",
    "postgres": "PostgresCluster: a managed postgres database cluster with failover",
    "pooler": "Pooler: connection pooling in front of a postgres database",
    "backup": "BackupSchedule: nightly backups of namespaces",
}


class WordReranker:
    """Relevance = share of the query's words found (like the fake server), counted calls."""

    name = "word-reranker"

    def __init__(self) -> None:
        self.calls: list[int] = []

    async def rerank(self, query: str, documents: Sequence[str], *, top_k: int) -> list[tuple[int, float]]:
        self.calls.append(len(documents))
        words = set(query.lower().split())
        scored = [(i, len(words & set(d.lower().split())) / len(words)) for i, d in enumerate(documents)]
        return sorted(scored, key=lambda p: (-p[1], p[0]))[:top_k]


@pytest.fixture
async def service() -> SearchService:
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection("capabilities", dimension=embedder.dimension, embedder=embedder.name)
    records = [
        Record(id=i, vector=embedder.vector(t), text=t, metadata={"content_hash": i, "kind": i})
        for i, t in TEXTS.items()
    ]
    await store.upsert("capabilities", records)
    return SearchService(
        store=store,
        embedder=embedder,
        collections={"capabilities": "capabilities"},
        reranker=WordReranker(),
        rerank_candidates=3,
    )


async def test_search_reorders_the_top_candidates_and_says_so(service: SearchService) -> None:
    results = await service.search(
        SearchRequest.build(collection="capabilities", query="managed postgres database", k=2)
    )
    assert [r.id for r in results] == ["postgres", "pooler"]
    assert {r.score_kind for r in results} == {"rerank"}
    assert results[0].score >= results[1].score  # ordered by the score shown
    assert all(r.similarity is not None for r in results)  # cosine to the query, as always
    assert service.reranker.calls == [3]  # type: ignore[union-attr]  # max(k, candidates) texts, one call
    plain = await service.search(
        SearchRequest.build(collection="capabilities", query="managed postgres database", k=2, rerank=False)
    )
    assert {r.score_kind for r in plain} == {"fused"}
    diverse = await service.search(SearchRequest.build(collection="capabilities", query="postgres", k=2, mmr=True))
    assert {r.score_kind for r in diverse} == {"mmr"}
    assert service.reranker.calls == [3]  # type: ignore[union-attr]  # neither called it
    filtered = await service.search(SearchRequest.build(collection="capabilities", kind="kafka"))
    assert [r.score_kind for r in filtered] == ["filter"]  # no query, nothing to rerank
