"""One wiring for every reader: the controller's endpoint, ``kubevec mcp`` and the CLI commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.serving import LazyEmbedder, search_service
from kubevec.controller.settings import Settings
from kubevec.controller.sync.migrate import migrate
from kubevec.inference.providers.config import EmbedderSettings
from kubevec.query.request import SearchRequest
from tests.doubles.embedders import CountingEmbedder


class Model(CountingEmbedder):
    def __init__(self, name: str, dimension: int) -> None:
        super().__init__(dimension=dimension)
        self._name = name

    @property
    def name(self) -> str:
        return self._name


async def stored(settings: Settings, model: Model) -> MemoryStore:
    store = MemoryStore()
    for name in settings.bases().values():
        await store.ensure_collection(name, dimension=model.dimension, embedder=model.name)
        text = f"{name}: a managed Postgres database"
        await store.upsert(
            name, [Record(id=f"{name}-1", vector=model.vector(text), text=text, metadata={"content_hash": "h1"})]
        )
    return store


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("KUBEVEC_CACHE_DIR", str(tmp_path / "cache"))
    return Settings()


async def test_the_controllers_endpoint_follows_a_migration_and_measures_each_tool(settings: Settings) -> None:
    old, new = Model("old-model", 8), Model("new-model", 12)
    store, metrics = await stored(settings, old), Metrics()
    service = search_service(settings, store, embedder=new, lexical_cache=False, metrics=metrics)
    assert service.observer is metrics
    await migrate(
        store=store, embedder=new, settings=EmbedderSettings(), bases=settings.bases(), pointer=settings.pointer
    )
    found = await service.scoped(None).search(SearchRequest(query="managed postgres", collection="capabilities", k=1))
    assert [result.id for result in found] == [f"{settings.collection('capabilities')}-1"]
    assert service.collections["capabilities"] == f"{settings.collection('capabilities')}__g1"
    assert service.embedder is new  # its own model: never swapped for a generation's
    assert metrics.search_seconds.labels(tool="vector_search")._sum.get() > 0  # type: ignore[attr-defined]
    assert not (settings.cache_dir / "lexical").exists()  # the endpoint's BM25 index lives in memory


async def test_a_command_embeds_queries_with_the_model_that_built_the_active_generation(settings: Settings) -> None:
    store = await stored(settings, Model("all-MiniLM-L6-v2", 8))
    await migrate(
        store=store,
        embedder=Model("BAAI/bge-small-en-v1.5", 12),
        settings=EmbedderSettings(model="BAAI/bge-small-en-v1.5"),
        bases=settings.bases(),
        pointer=settings.pointer,
    )
    service = search_service(settings, store, queries=True)
    assert service.observer is None
    await service.fresh(force=True)
    assert isinstance(service.embedder, LazyEmbedder)  # not loaded: an exact lookup may need no model
    assert service.embedder._settings.model == "BAAI/bge-small-en-v1.5"
    assert service.embedder._settings.int8_weights  # one query, then exit: the faster load
    assert service.collections["instances"] == f"{settings.collection('instances')}__g1"


async def test_a_command_that_embeds_nothing_loads_no_model(settings: Settings) -> None:
    store = await stored(settings, Model("all-MiniLM-L6-v2", 8))
    service = search_service(settings, store)
    await service.fresh(force=True)
    assert service.embedder is None
    assert service.reranker is None
    assert service.lexical._cache_dir is not None  # the next command finds the BM25 index on disk


async def test_an_answer_from_keywords_alone_is_counted(settings: Settings) -> None:
    model = Model("old-model", 8)
    store, metrics = await stored(settings, model), Metrics()
    service = search_service(settings, store, embedder=model, lexical_cache=False, metrics=metrics)
    model.failing = True
    found = await service.scoped(None).search(SearchRequest(query="managed postgres", collection="capabilities", k=1))
    assert found.degraded is not None
    assert metrics.registry.get_sample_value("kubevec_search_degraded_total", {"tool": "vector_search"}) == 1
