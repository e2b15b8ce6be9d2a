"""Agent-facing search: semantic, keyword and metadata filters, hybrid fusion and MMR, in one call.

Paths, cheapest first:

- filters only: records are listed through the filter; no embedding, score 1.0.
- ``keyword`` only: the store's keyword search (any word of the keyword); no embedding.
- ``query``: the query is embedded once (``embed_query``); dense hits are, by default, fused with
  a BM25 ranking of the same collection by weighted reciprocal rank fusion (k=10, BM25 weight
  0.5; why, at ``RRF_K``). With a query,
  ``keyword`` narrows results to documents containing every word of it.
- ``mmr``: the fused candidates (``fetch_k``, default 4*k) are re-ranked for diversity by maximal
  marginal relevance over cosine similarity, ``mmr_lambda`` trading relevance (1) for diversity (0).

Every result has a ``score`` in [0, 1] that never increases down the list (it is what the list is
ordered by) and says what it is in ``score_kind``: ``cosine`` (dense only), ``fused`` (hybrid: the
weighted reciprocal-rank score divided by its maximum, 1.0 for a document first in both rankings),
``mmr`` (the diversity gain, rescaled to [0, 1]), ``keyword`` (the share of the keyword's words
found) or ``filter`` (1.0). With a query, ``similarity`` is the cosine similarity of the query and
the document, whatever the order: a hybrid list ordered by fused score can show similarities
that go down and up again, which is why the order's own score is shown beside it. Labels come from
the similarity (the score without a query): ``very similar`` at 0.70 or more, ``similar`` at 0.50
or more, ``somewhat related`` below (all-MiniLM-L6-v2 puts good matches of a short question around
0.5-0.7). ``min_score`` keeps results whose similarity (without a query: score) reaches it.

``SearchService`` is the façade the controller, the CLI and the MCP server hold: it owns the
sources (``sources.py``: the store, its active collections, the query embedder's state, the BM25
index) and hands each call to its tool's reader (``readers/``), behind the one view gate.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from kubevec.backends import VectorStore
from kubevec.core.errors import BackendError
from kubevec.inference.documents import INSTANCES
from kubevec.inference.providers.embedders.base import Embedder
from kubevec.query.answers import Answer, Result
from kubevec.query.audit import AuditTrail
from kubevec.query.changes import Changes, ChangesRequest
from kubevec.query.collections import ActiveCollections, Refresh
from kubevec.query.lexical import LexicalIndex
from kubevec.query.query_vectors import EMBEDDER_DOWN_SECONDS, QUERY_EMBED_TIMEOUT, QueryVectors
from kubevec.query.ranking import LEXICAL_WEIGHT, RRF_K
from kubevec.query.readers.changes import changes as read_changes
from kubevec.query.readers.documents import find_document, get_document
from kubevec.query.readers.facets import facets as read_facets
from kubevec.query.readers.kinds import resolve_kind as read_kinds
from kubevec.query.readers.placements import placements as read_placements
from kubevec.query.readers.related import related as read_related
from kubevec.query.readers.search import MAX_NAMED, read_search
from kubevec.query.related import Direction, Related
from kubevec.query.request import SearchRequest
from kubevec.query.scoped import ScopedSearch, ToolObserver
from kubevec.query.sources import Sources

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from kubevec.inference.providers.rerank import Reranker
    from kubevec.query.placements import Placement
    from kubevec.query.views import View

__all__ = ["EMBEDDER_DOWN_SECONDS", "MAX_NAMED", "QUERY_EMBED_TIMEOUT", "REFRESH_SECONDS", "SearchService"]

#: How long collection names (and the query embedder) from a ``refresh`` are trusted before re-reading.
REFRESH_SECONDS: Final = 5.0


class SearchService:
    """The read side's façade: its sources, and one method per tool that hands the call to the tool's reader."""

    def __init__(
        self,
        *,
        store: VectorStore,
        embedder: Embedder | None,
        collections: Mapping[str, str],
        lexical: LexicalIndex | None = None,
        rrf_k: int = RRF_K,
        lexical_weight: float = LEXICAL_WEIGHT,
        refresh: Refresh | None = None,
        reranker: Reranker | None = None,
        rerank_candidates: int = 20,
        query_embed_timeout: float = QUERY_EMBED_TIMEOUT,
        history_embedded: bool = True,
        observer: ToolObserver | None = None,
        audit: AuditTrail | None = None,
    ) -> None:
        """``refresh``, when given, says which physical collections (and query embedder) are active now:
        read at most every ``REFRESH_SECONDS``, and again at once when a collection has gone (a
        migration switched generations under a long-lived reader such as the MCP server)."""
        active = ActiveCollections(
            names=collections, embedder=embedder, refresh=refresh, refresh_seconds=REFRESH_SECONDS
        )
        self.sources = Sources(
            store=store,
            active=active,
            vectors=QueryVectors(active=active, timeout=query_embed_timeout),
            lexical=lexical or LexicalIndex(store=store),
            rrf_k=rrf_k,
            lexical_weight=lexical_weight,
            reranker=reranker,
            rerank_candidates=rerank_candidates,
            history_embedded=history_embedded,
        )
        #: Told of each tool call made through :meth:`scoped` (the controller's metrics); None: nobody is.
        self.observer = observer
        #: Records each tool call made through :meth:`scoped` (an MCP server's); None: no trail.
        self.audit = audit

    # -- the sources, as callers have read them ----------------------------------------------------

    @property
    def store(self) -> VectorStore:
        return self.sources.store

    @property
    def lexical(self) -> LexicalIndex:
        return self.sources.lexical

    @property
    def reranker(self) -> Reranker | None:
        return self.sources.reranker

    @property
    def collections(self) -> dict[str, str]:
        """The active physical collection of each logical one (as last read)."""
        return self.sources.active.names

    @property
    def embedder(self) -> Embedder | None:
        return self.sources.active.embedder

    @embedder.setter
    def embedder(self, embedder: Embedder | None) -> None:
        self.sources.active.embedder = embedder

    @property
    def query_embed_timeout(self) -> float:
        return self.sources.vectors.timeout

    @query_embed_timeout.setter
    def query_embed_timeout(self, seconds: float) -> None:
        self.sources.vectors.timeout = seconds

    def begin_call(self) -> None:
        """A resident process's next caller: read the active collections and try the embedder afresh,
        as a process of its own would (nothing one caller met shapes the next one's answer)."""
        self.sources.active.begin_call()
        self.sources.vectors.begin_call()

    async def fresh(self, *, force: bool = False) -> None:
        """Re-read the active collections when they may have changed (see ``refresh``)."""
        await self.sources.active.fresh(force=force)

    async def warm(self) -> None:
        """Build each collection's lexical index now, so an agent's first hybrid query does not wait for it.

        Long-lived servers call it as they start (``kubevec mcp`` over stdio, and the controller's MCP
        endpoint after its first resync): at 12,000 instance documents the build is ~0.4 s that the
        first query would otherwise pay. A collection that cannot be read yet is left to that query.
        """
        try:
            await self.fresh()
        except BackendError as exc:
            logger.info("Left the lexical indexes to the first queries error=%s", exc)
            return
        for collection, name in self.collections.items():
            try:
                await self.lexical.refresh(name, with_metadata=collection != INSTANCES)
            except BackendError as exc:
                logger.info("Left the lexical index to the first query collection=%s error=%s", collection, exc)

    def collection_name(self, collection: str) -> str:
        return self.sources.active.name(collection)

    # -- the tools (each its reader's; ``view`` is a caller's, None: everything) -------------------

    async def search(self, request: SearchRequest, *, view: View | None = None, keep_parts: bool = False) -> Answer:
        """Run one search by its cheapest path (see the module docstring); at most ``request.k`` results.

        With a ``view`` (an MCP caller's), only the documents it may see are ranked, counted or returned."""
        return await read_search(self.sources, request, view, keep_parts=keep_parts)

    async def get_document(
        self, collection: str, id: str, *, cluster: str | None = None, clusters: frozenset[str] | None = None
    ) -> Result | None:
        """One document by id (see :func:`kubevec.query.readers.documents.get_document`)."""
        return await get_document(self.sources, collection, id, cluster=cluster, clusters=clusters)

    async def find_document(
        self, id: str, *, collection: str | None = None, cluster: str | None = None, view: View | None = None
    ) -> tuple[Result, str] | None:
        """The document and its collection (see :func:`kubevec.query.readers.documents.find_document`)."""
        return await find_document(self.sources, id, view, collection=collection, cluster=cluster)

    async def resolve_kind(
        self, name: str, *, limit: int = 5, cluster: str | None = None, view: View | None = None
    ) -> list[dict[str, Any]]:
        """What an agent needs to write a manifest for a kind it only knows by name (``readers/kinds.py``)."""
        return await read_kinds(self.sources, name, view, limit=limit, cluster=cluster)

    async def related(
        self,
        subject: str,
        *,
        hops: int = 1,
        direction: Direction = "both",
        cluster: str | None = None,
        view: View | None = None,
    ) -> Related:
        """What an instance (an id, or an object key ``Kind/namespace/name``) references and what references it."""
        return await read_related(self.sources, subject, view, hops=hops, direction=direction, cluster=cluster)

    async def facets(
        self, collection: str, field: str, *, limit: int = 100, cluster: str | None = None, view: View | None = None
    ) -> dict[str, int]:
        """Distinct values of a metadata field with their counts (lists count each element), of visible documents."""
        return await read_facets(self.sources, collection, field, view, limit=limit, cluster=cluster)

    async def changes(self, request: ChangesRequest, *, view: View | None = None) -> Changes:
        """The change history's answer to ``request``, as far as ``view`` sees the objects (see ``query/changes.py``)."""
        return await read_changes(self.sources, request, view)

    def scoped(self, view: View | None) -> ScopedSearch:
        """A reader that sees what ``view`` allows and nothing else (None: everything, for the CLI and stdio)."""
        return ScopedSearch(sources=self.sources, view=view, observer=self.observer, audit=self.audit)

    async def placements(self, cluster: str) -> set[Placement]:
        """Where this cluster's instance documents live (namespace, resource): what access reviews ask about."""
        return await read_placements(self.sources, cluster)
