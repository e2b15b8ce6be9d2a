"""What every reader reads from: the store, its active collections, the question's vector, the BM25 index."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from kubevec.backends import VectorStore
from kubevec.query.collections import ActiveCollections
from kubevec.query.lexical import LexicalIndex
from kubevec.query.query_vectors import QueryVectors
from kubevec.query.ranking import LEXICAL_WEIGHT, RRF_K

if TYPE_CHECKING:
    from kubevec.inference.providers.rerank import Reranker


@dataclasses.dataclass(kw_only=True)
class Sources:
    """One reader's sources, shared by every tool (the ``SearchService`` façade holds one)."""

    store: VectorStore
    active: ActiveCollections
    vectors: QueryVectors
    lexical: LexicalIndex
    rrf_k: int = RRF_K
    lexical_weight: float = LEXICAL_WEIGHT
    reranker: Reranker | None = None
    rerank_candidates: int = 20
    #: Whether change summaries were embedded (``KUBEVEC_HISTORY__EMBED``): else found by words.
    history_embedded: bool = True

    async def name(self, collection: str) -> str:
        """The active physical name of ``collection``, the names re-read first if they may have changed."""
        await self.active.fresh()
        return self.active.name(collection)
