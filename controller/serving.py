"""The one wiring of what serves reads: ``kubevec run``'s MCP endpoint, ``kubevec mcp`` and every CLI command.

Store, active generation, embedder, reranker, lexical index, search service and authorizer are put
together here and nowhere else. The active generation is resolved by the one resolver
(:func:`active_collections`) on every refresh of the service, so a
reader opened before a ``kubevec migrate`` follows it. Before there was one wiring, the controller's
endpoint and the CLI each built their own and a command skipped the resolver (issue 31).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kubevec.backends.generations import resolve
from kubevec.controller.runtime.tracing import span_event
from kubevec.controller.settings import Settings
from kubevec.query.access import Authorizer
from kubevec.query.audit import AuditTrail
from kubevec.query.lexical import LexicalIndex
from kubevec.query.search import SearchService

if TYPE_CHECKING:
    from kubevec.backends import VectorStore
    from kubevec.backends.generations import Generation
    from kubevec.controller.kube.client import ClusterReader
    from kubevec.controller.runtime.metrics import Metrics
    from kubevec.inference.providers.config import EmbedderSettings
    from kubevec.inference.providers.embedders.base import Embedder


async def active_collections(store: VectorStore, *, settings: Settings) -> tuple[dict[str, str], Generation | None]:
    """The physical collection of each logical one in the active generation, and that generation.

    The one place this is decided: the controller, ``kubevec mcp`` and every CLI command that reads
    or writes ask here (``kubevec index`` after a migration wrote into the dropped generation's
    collection when it decided for itself).
    """
    return await resolve(store, pointer=settings.pointer, bases=settings.bases())


def verified_dir(settings: Settings) -> Path:
    """Where one-shot commands remember the model files they verified (sha256 once per file identity)."""
    return settings.cache_dir / "verified-models"


def search_service(
    settings: Settings,
    store: VectorStore,
    *,
    embedder: Embedder | None = None,
    queries: bool = False,
    one_shot: bool = True,
    lexical_cache: bool = True,
    metrics: Metrics | None = None,
    audit: bool = False,
) -> SearchService:
    """A reader of the active generation's collections.

    ``embedder``: a model already loaded that embeds every query (the controller's own: it refuses to
    start on another generation's model). Otherwise, with ``queries``, each generation's queries are
    embedded by the model that built it, loaded at the first query that needs it; without, nothing
    is loaded (``get``, ``status``, ``related``). ``one_shot`` (a command that embeds one query and
    exits): the local model keeps its int8 weights, which loads 0.18 s faster and costs ~56 ms on
    that one query (the same vector); a server folds them once and embeds each query in ~6 ms.
    ``lexical_cache``: the BM25 index is kept under the cache directory, where the next command finds
    it (the controller's endpoint keeps it in memory). ``metrics``: each tool call is timed, counted
    and traced (the controller's registry).
    """
    loaded: dict[str, Embedder] = {}

    def embedder_for(generation: Generation | None) -> Embedder | None:
        if embedder is not None or not queries:
            return None  # the service's own, or none
        wanted = settings.embedder
        if generation is not None and generation.provider and generation.provider != wanted.provider:
            wanted = wanted.model_copy(update={"provider": generation.provider, "model": generation.model})
        elif generation is not None and generation.provider and generation.model != wanted.model:
            wanted = wanted.model_copy(update={"model": generation.model})
        if one_shot:
            wanted = wanted.model_copy(update={"int8_weights": True})
        key = f"{wanted.provider}:{wanted.model}"
        if key not in loaded:
            loaded[key] = LazyEmbedder(wanted, verified_dir=verified_dir(settings) if one_shot else None)
        return loaded[key]

    async def refresh() -> tuple[Mapping[str, str], Embedder | None]:
        names, generation = await active_collections(store, settings=settings)
        return names, embedder_for(generation)

    reranker = None
    if embedder is not None or queries:
        from kubevec.inference.providers.rerank import make_reranker

        reranker = make_reranker(settings.reranker, embedder=settings.embedder)
    lexical = None
    if lexical_cache:
        place = hashlib.sha256(f"{store.backend}:{store.location}".encode()).hexdigest()[:16]
        lexical = LexicalIndex(store=store, cache_dir=settings.cache_dir / "lexical" / place)
    return SearchService(
        store=store,
        embedder=embedder,
        collections=settings.bases(),
        lexical=lexical,
        refresh=refresh,
        reranker=reranker,
        rerank_candidates=settings.reranker.candidates,
        history_embedded=settings.history.embed,
        observer=metrics,
        audit=AuditTrail(queries=settings.mcp_audit_queries, span_event=span_event) if audit else None,
    )


def authorizer(settings: Settings, service: SearchService, *, kube: ClusterReader | None = None) -> Authorizer:
    """Who may call the MCP tools, and what each caller sees: over the placements ``service`` reads."""
    from kubevec.controller.kube.reviews import build_authorizer  # the Kubernetes client: only for a server

    return build_authorizer(settings, placements=lambda: service.placements(settings.cluster_name), kube=kube)


class LazyEmbedder:
    """A generation's embedder, loaded only when a query needs it (the model takes a second).

    An exact name lookup (``kubevec get``, ``resolve_kind``) usually needs none.
    """

    def __init__(self, settings: EmbedderSettings, *, verified_dir: Path | None = None) -> None:
        self._settings = settings
        self.verified_dir = verified_dir
        self._embedder: Embedder | None = None

    def _load(self) -> Embedder:
        if self._embedder is None:
            from kubevec.inference.providers.config import make_embedder

            self._embedder = make_embedder(self._settings, verified_dir=self.verified_dir)
        return self._embedder

    @property
    def name(self) -> str:
        return self._load().name

    @property
    def dimension(self) -> int:
        return self._load().dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._load().embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        return await self._load().embed_query(text)
