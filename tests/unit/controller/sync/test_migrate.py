"""Changing the embedding model: a new generation from the stored texts, one atomic switch, readers never
see an empty or mixed collection, an interrupted run resumes."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import pytest

from kubevec.backends import Record, VectorStore
from kubevec.backends.generations import Generation, read_active, resolve
from kubevec.backends.memory import MemoryStore
from kubevec.controller.sync.migrate import migrate
from kubevec.core.errors import EmbedderUnavailable
from kubevec.inference.providers.config import EmbedderSettings
from kubevec.inference.providers.embedders.base import Embedder
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder

BASES = {"capabilities": "capabilities", "instances": "instances"}
POINTER = "generations"
N = 100


class NamedEmbedder(CountingEmbedder):
    """Another model: its own name and dimension; yields to the loop per batch, can fail after some batches."""

    def __init__(self, name: str, dimension: int, *, fail_after: int | None = None) -> None:
        super().__init__(dimension=dimension)
        self._name = name
        self.fail_after = fail_after
        self.batches = 0

    @property
    def name(self) -> str:
        return self._name

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        await asyncio.sleep(0.001)  # a real model call: readers run meanwhile
        if self.fail_after is not None and self.batches >= self.fail_after:
            raise EmbedderUnavailable("simulated outage mid-migration")
        self.batches += 1
        return await super().embed_documents(texts)


OLD = NamedEmbedder("old-model", 8)


async def seeded(store: VectorStore | None = None) -> VectorStore:
    store = store or MemoryStore()
    for logical in BASES.values():
        await store.ensure_collection(logical, dimension=OLD.dimension, embedder=OLD.name)
        records = [
            Record(
                id=f"{logical}-{i}",
                vector=OLD.vector(f"{logical} document {i}"),
                text=f"{logical} document {i}",
                metadata={"content_hash": f"h{i}", "kind": "Widget"},
            )
            for i in range(N)
        ]
        await store.upsert(logical, records)
    return store


def reader(store: VectorStore, embedders: Mapping[str, Embedder]) -> SearchService:
    """What `kubevec search` and the MCP server build: names and query model from the pointer."""

    async def refresh() -> tuple[dict[str, str], Embedder | None]:
        names, generation = await resolve(store, pointer=POINTER, bases=BASES)
        return names, embedders[generation.embedder if generation else OLD.name]

    return SearchService(store=store, embedder=None, collections=BASES, refresh=refresh)


@pytest.mark.parametrize("backend", ["memory", "qdrant"])
async def test_a_migration_moves_every_record_to_the_new_model_and_drops_the_old_generation(backend: str) -> None:
    from kubevec.backends.qdrant import QdrantStore

    store, new = await seeded(MemoryStore() if backend == "memory" else QdrantStore()), NamedEmbedder("new-model", 12)
    done = await migrate(
        store=store, embedder=new, settings=EmbedderSettings(), bases=BASES, pointer=POINTER, batch_size=32
    )
    assert done.previous == Generation(number=0, embedder="old-model", dimension=8)
    assert done.generation == Generation(number=1, embedder="new-model", dimension=12, provider="local")
    assert (done.embedded, done.skipped, done.removed) == (2 * N, 0, 0)
    assert await read_active(store, pointer=POINTER) == done.generation
    for logical in BASES:
        assert await store.collection_info(logical) is None  # old generation dropped
        info = await store.collection_info(f"{logical}__g1")
        assert info is not None
        assert (info.embedder, info.dimension) == ("new-model", 12)
        copied = await store.get(f"{logical}__g1", [f"{logical}-7"], include_vectors=True)
        assert copied[0].text == f"{logical} document 7"
        assert copied[0].metadata["content_hash"] == "h7"
        assert copied[0].vector == pytest.approx(new.vector(f"{logical} document 7"))
    again = await migrate(store=store, embedder=new, settings=EmbedderSettings(), bases=BASES, pointer=POINTER)
    assert not again.changed
    assert again.embedded == 0
    back = await migrate(store=store, embedder=OLD, settings=EmbedderSettings(), bases=BASES, pointer=POINTER)
    assert back.generation is not None
    assert back.generation.number == 2
    assert await store.collection_info("instances__g1") is None
    assert await store.count("instances__g2") == N


async def test_readers_never_see_an_empty_or_mixed_collection_during_a_migration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("kubevec.query.search.REFRESH_SECONDS", 3600.0)  # hold stale names: the drop must be survived
    store, new = await seeded(), NamedEmbedder("new-model", 12)
    search = reader(store, {OLD.name: OLD, new.name: new})
    answers: list[tuple[int, str]] = []
    finished, answered = asyncio.Event(), asyncio.Event()

    async def read() -> None:
        while not finished.is_set():
            listed = await search.search(SearchRequest.build(collection="instances", kind="Widget", k=N))
            semantic = await search.search(SearchRequest.build(collection="instances", query="document 3", k=5))
            answers.append((len(listed), search.collections["instances"]))
            answered.set()
            assert len(semantic) == 5
            await asyncio.sleep(0)

    task = asyncio.create_task(read())
    await asyncio.wait_for(
        answered.wait(), timeout=30
    )  # answered from the old generation (its first query builds indexes)
    await migrate(store=store, embedder=new, settings=EmbedderSettings(), bases=BASES, pointer=POINTER, batch_size=16)
    await asyncio.sleep(0.01)
    finished.set()
    await task
    assert {count for count, _ in answers} == {N}  # every answer complete, before, during and after
    assert next(name for _, name in answers) == "instances"
    assert [name for _, name in answers][-1] == "instances__g1"  # switched, by re-resolving after the drop


async def test_an_interrupted_migration_leaves_readers_on_the_old_generation_and_resumes() -> None:
    store = await seeded()
    failing = NamedEmbedder("new-model", 12, fail_after=3)
    with pytest.raises(EmbedderUnavailable):
        await migrate(
            store=store, embedder=failing, settings=EmbedderSettings(), bases=BASES, pointer=POINTER, batch_size=20
        )
    assert await read_active(store, pointer=POINTER) is None  # not switched
    assert await store.count("capabilities") == N  # the old generation is whole
    await store.delete("capabilities", ["capabilities-0"])  # changed meanwhile: copied, now gone
    resumed = NamedEmbedder("new-model", 12)
    done = await migrate(
        store=store, embedder=resumed, settings=EmbedderSettings(), bases=BASES, pointer=POINTER, batch_size=20
    )
    assert done.skipped == 3 * 20 - 1  # the three batches already copied, less the deleted record
    assert done.removed == 1
    assert done.embedded == 2 * N - 1 - done.skipped
    assert await store.count("capabilities__g1") == N - 1
    assert await store.count("instances__g1") == N


async def test_nothing_to_migrate_in_an_empty_store() -> None:
    done = await migrate(store=MemoryStore(), embedder=OLD, settings=EmbedderSettings(), bases=BASES, pointer=POINTER)
    assert done.generation is None
    assert not done.changed
