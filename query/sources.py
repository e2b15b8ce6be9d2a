"""What every reader reads from: the store, its active collections, the question's vector, the BM25 index."""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Final

from kubevec.backends import VectorStore
from kubevec.core.errors import CollectionNotFound
from kubevec.inference.collections import CAPABILITIES
from kubevec.query.collections import ActiveCollections
from kubevec.query.hubs import Centres
from kubevec.query.kind_vocabulary import EMPTY, KindVocabulary
from kubevec.query.lexical import LexicalIndex
from kubevec.query.query_vectors import QueryVectors
from kubevec.query.ranking import LEXICAL_WEIGHT, RRF_K

if TYPE_CHECKING:
    from kubevec.inference.providers.rerank import Reranker


#: How long a store without write stamps keeps a kind vocabulary before reading it again.
KINDS_SECONDS: Final = 30.0


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

    #: Each collection's mean vector, to centre instance similarities on (``kubevec.query.hubs``).
    centres: Centres = dataclasses.field(default_factory=Centres, repr=False)
    #: The kind vocabulary and what it was read at: (collection name, its write stamp, when).
    _kinds: tuple[str, str | None, float, KindVocabulary] | None = dataclasses.field(default=None, repr=False)

    async def name(self, collection: str) -> str:
        """The active physical name of ``collection``, the names re-read first if they may have changed."""
        await self.active.fresh()
        return self.active.name(collection)

    async def kinds(self) -> KindVocabulary:
        """The kinds the store's capability records name, read again when the collection was written
        (its write stamp; a store without stamps at most every :data:`KINDS_SECONDS`)."""
        await self.active.fresh()
        if CAPABILITIES not in self.active.names:
            return EMPTY  # a reader of instances alone
        name = self.active.name(CAPABILITIES)
        try:
            stamp = await self.store.stamp(name)
            cached = self._kinds
            current = cached is not None and cached[:2] == (name, stamp)
            if cached is not None and current and (stamp is not None or time.monotonic() - cached[2] < KINDS_SECONDS):
                return cached[3]
            payloads = [record.metadata async for record in self.store.iter_records(name, page_size=1000)]
        except CollectionNotFound:
            return EMPTY
        vocabulary = KindVocabulary.of_records(payloads)
        self._kinds = (name, stamp, time.monotonic(), vocabulary)
        return vocabulary
