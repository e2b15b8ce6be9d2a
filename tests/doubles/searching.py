"""A search service over a handful of documents, for tests of what a question finds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder

#: A document: its id, its text and its payload.
Document = tuple[str, str, Mapping[str, Any]]


async def searching(docs: Iterable[Document]) -> tuple[SearchService, CountingEmbedder]:
    """The ``instances`` collection of a memory store holding ``docs``, embedded by a counting embedder."""
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection("instances", dimension=embedder.dimension, embedder=embedder.name)
    await store.upsert(
        "instances",
        [Record(id=i, vector=embedder.vector(t), text=t, metadata={**m, "content_hash": i}) for i, t, m in docs],
    )
    return SearchService(store=store, embedder=embedder, collections={"instances": "instances"}), embedder


async def names(service: SearchService, question: str, *, k: int = 10) -> list[str]:
    """The names of the first ``k`` instances ``question`` finds, in order."""
    answer = await service.search(SearchRequest(collection="instances", query=question, k=k))
    return [str(r.metadata["name"]) for r in answer]
