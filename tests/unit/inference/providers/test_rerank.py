"""Optional reranking: the Voyage reranker through the official client (fake server), and search using it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.core.errors import RerankError
from kubevec.inference.providers.rerank import RerankerSettings, VoyageReranker, make_reranker
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder
from tests.doubles.model_servers import KEY, StandIn, running

TEXTS = {
    "kafka": "Topic: a Kafka topic with partitions and retention",
    "postgres": "PostgresCluster: a managed postgres database cluster with failover",
    "pooler": "Pooler: connection pooling in front of a postgres database",
    "backup": "BackupSchedule: nightly backups of namespaces",
}


async def test_voyage_reranks_through_the_official_client_most_relevant_first() -> None:
    async with running(StandIn("voyage")) as fake:
        reranker = VoyageReranker(api_key=KEY, base_url=fake.url)
        order = await reranker.rerank("managed postgres database", list(TEXTS.values()), top_k=2)
        assert order == [(1, 1.0), (2, pytest.approx(2 / 3))]
        assert fake.received[-1].body["model"] == "rerank-2.5"
        assert fake.received[-1].body["top_k"] == 2
        assert await reranker.rerank("anything", [], top_k=3) == []


async def test_voyage_reranker_retries_what_can_succeed_and_names_what_cannot() -> None:
    async with running(StandIn("voyage", script=[(429, {"Retry-After": "0"})])) as fake:
        reranker = VoyageReranker(api_key=KEY, base_url=fake.url)
        assert (await reranker.rerank("postgres", ["postgres", "kafka"], top_k=2))[0][0] == 0
        assert reranker._calls.retries == 1
    async with running(StandIn("voyage", script=[(503, {})] * 10)) as fake:
        reranker = VoyageReranker(api_key=KEY, base_url=fake.url, max_attempts=2, max_backoff=0.01)
        with pytest.raises(RerankError, match="after 2 attempts"):
            await reranker.rerank("postgres", ["postgres"], top_k=1)
    async with running(StandIn("voyage")) as fake:
        with pytest.raises(RerankError, match="rejected the credentials"):
            await VoyageReranker(api_key="bad", base_url=fake.url).rerank("x", ["y"], top_k=1)
    with pytest.raises(RerankError, match="KUBEVEC_RERANKER__API_KEY"):
        make_reranker(RerankerSettings(provider="voyage"))
    assert make_reranker(RerankerSettings()) is None  # off by default


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
