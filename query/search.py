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
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from kubevec.backends import Hit, Record, VectorStore
from kubevec.backends.filters import And, Contains, Eq, Filter, In, all_of, matches, words
from kubevec.core.errors import BackendError, CollectionNotFound, EmbedderError, InvalidFilter, SearchError
from kubevec.inference.change_records import CHANGES
from kubevec.inference.documents import CAPABILITIES, INSTANCES, is_kubernetes_name
from kubevec.inference.fleet import is_shared, parts_of, project
from kubevec.inference.identity import parse_instance_id
from kubevec.inference.providers.embedders.base import Embedder
from kubevec.query.answers import Answer, Result, cosine, make_result
from kubevec.query.changes import Changes, ChangesRequest, list_changes
from kubevec.query.cursors import any_word, make_cursor, read_cursor
from kubevec.query.intent import Intent
from kubevec.query.kinds import exact_kinds, kind_answers
from kubevec.query.lexical import LexicalIndex
from kubevec.query.ranking import LEXICAL_WEIGHT, RRF_K, fuse, mmr
from kubevec.query.related import Direction, Related, Relationships
from kubevec.query.request import SearchRequest, check_cluster
from kubevec.query.scoped import ScopedSearch, ToolObserver, scope_clusters, within_clusters

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from kubevec.inference.providers.rerank import Reranker
    from kubevec.query.access import Placement, View

#: How long collection names (and the query embedder) from a ``refresh`` are trusted before re-reading.
REFRESH_SECONDS: Final = 5.0
#: How long a query may wait for its vector (the embedder's own retries can take a minute).
QUERY_EMBED_TIMEOUT: Final = 10.0
#: Objects a question names (and degraded ones, for a question about trouble) added to the candidates, at most.
MAX_NAMED: Final = 100
#: After the embedder failed, queries go straight to keywords for this long, then try it again.
EMBEDDER_DOWN_SECONDS: Final = 30.0


class SearchService:
    def __init__(
        self,
        *,
        store: VectorStore,
        embedder: Embedder | None,
        collections: Mapping[str, str],
        lexical: LexicalIndex | None = None,
        rrf_k: int = RRF_K,
        lexical_weight: float = LEXICAL_WEIGHT,
        refresh: Callable[[], Awaitable[tuple[Mapping[str, str], Embedder | None]]] | None = None,
        reranker: Reranker | None = None,
        rerank_candidates: int = 20,
        query_embed_timeout: float = QUERY_EMBED_TIMEOUT,
        history_embedded: bool = True,
        observer: ToolObserver | None = None,
    ) -> None:
        """``refresh``, when given, says which physical collections (and query embedder) are active now:
        read at most every ``REFRESH_SECONDS``, and again at once when a collection has gone (a
        migration switched generations under a long-lived reader such as the MCP server)."""
        self.store = store
        self.rrf_k = rrf_k
        self.lexical_weight = lexical_weight
        self.embedder = embedder
        self.collections = dict(collections)
        self.lexical = lexical or LexicalIndex(store=store)
        self._embedder_checked: set[str] = set()
        self._refresh = refresh
        self._refreshed = -math.inf
        self.reranker = reranker
        self.rerank_candidates = rerank_candidates
        self.query_embed_timeout = query_embed_timeout
        #: Whether change summaries were embedded (``KUBEVEC_HISTORY__EMBED``): else found by words.
        self.history_embedded = history_embedded
        #: Told of each tool call made through :meth:`scoped` (the controller's metrics); None: nobody is.
        self.observer = observer
        #: Until when queries skip the embedder after it failed (monotonic): each would wait its retries.
        self._embedder_down_until = -math.inf
        self._embedder_down_reason = ""

    def begin_call(self) -> None:
        """A resident process's next caller: read the active collections and try the embedder afresh,
        as a process of its own would (nothing one caller met shapes the next one's answer)."""
        self._refreshed = self._embedder_down_until = -math.inf

    async def fresh(self, *, force: bool = False) -> None:
        """Re-read the active collections when they may have changed (see ``refresh``)."""
        if self._refresh is None or (not force and time.monotonic() - self._refreshed < REFRESH_SECONDS):
            return
        names, embedder = await self._refresh()
        self.collections = dict(names)
        if embedder is not None:
            self.embedder = embedder
        self._refreshed = time.monotonic()

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
        if collection not in self.collections:
            raise SearchError(f"Unknown collection {collection!r}; use one of {', '.join(sorted(self.collections))}")
        return self.collections[collection]

    async def search(self, request: SearchRequest, *, view: View | None = None, keep_parts: bool = False) -> Answer:
        """Run one search by its cheapest path (see the module docstring); at most ``request.k`` results.

        With a ``view`` (an MCP caller's), only the documents it may see are ranked, counted or returned."""
        await self.fresh()
        if view is not None and not view.sees(request.collection):
            self.collection_name(request.collection)  # an unknown collection is still an error
            return Answer()
        clusters = scope_clusters(view, request.collection)
        if clusters is not None and request.cluster is not None and request.cluster not in clusters:
            self.collection_name(request.collection)
            return Answer()  # a cluster outside the caller's scope holds nothing it may read
        conditions = view.restrict(request.collection, request.conditions) if view else request.conditions
        try:
            answer = await self._search(request, conditions, clusters=clusters)
        except CollectionNotFound:
            if self._refresh is None:
                raise
            await self.fresh(force=True)  # switched generations since the names were read: once more
            answer = await self._search(request, conditions, clusters=clusters)
        if request.collection == CAPABILITIES:  # shared records read as the asked cluster's (kubevec.inference.fleet)
            kept = [(r, within_clusters(r.metadata, clusters)) for r in answer]
            answer[:] = [
                dataclasses.replace(r, metadata=metadata if keep_parts else project(metadata, cluster=request.cluster))
                for r, metadata in kept
                if metadata is not None
            ]
        return answer

    async def _search(
        self, request: SearchRequest, conditions: Filter | None, *, clusters: frozenset[str] | None = None
    ) -> Answer:
        name = self.collection_name(request.collection)
        degraded = None
        total: int | None = None
        try:
            if request.count_by is not None:
                return await self._counted(name, request, conditions, clusters=clusters)
            if request.query is None and request.keyword is not None:
                total = await self.store.count(name, all_of(conditions, any_word(request.keyword)))
                if total > request.k or request.cursor:
                    return await self._keyword_pages(name, conditions, request, total=total)
                hits = await self.store.keyword_search(name, text=request.keyword, filter=conditions, k=request.k)
                results = [make_result(h.id, h.score, h.text, h.metadata, kind="keyword") for h in hits]
            elif request.query is None:
                return await self._filtered(name, conditions, request)
            else:
                results = await self._semantic(name, request=request, query=request.query, conditions=conditions)
                degraded = getattr(results, "degraded", None)
                total = getattr(results, "total", None)
        except InvalidFilter as exc:
            raise SearchError(str(exc)) from exc
        if request.min_score is not None and degraded is None:  # a similarity threshold: keyword hits have none
            results = [r for r in results if r.relevance >= request.min_score]
        shown = results[: request.k]
        return Answer.of(shown, degraded=degraded, total=max(total or 0, len(shown)))

    # -- paths -------------------------------------------------------------------------------------

    async def _filtered(self, name: str, combined: Filter | None, request: SearchRequest) -> Answer:
        """A filter-only listing in id order, ``k`` at a time: the total is exact, and the cursor (the last id
        shown) makes every page hold each matching document once while writes go on: one that did not
        change is never skipped or repeated, a new one shows if its id sorts after the cursor."""
        after = read_cursor(request.cursor, name=request.collection, filter=combined) if request.cursor else None
        ids = sorted({i async for i, _ in self.store.iter_ids(name, filter=combined, page_size=1000)})
        start = bisect.bisect_right(ids, after) if after is not None else 0
        page = ids[start : start + request.k]
        found = {r.id: r for r in await self.store.get(name, page)}  # gone since listed: left out
        results = [make_result(i, 1.0, found[i].text, found[i].metadata, kind="filter") for i in page if i in found]
        more = start + request.k < len(ids)
        cursor = make_cursor(page[-1], name=request.collection, filter=combined) if more and page else None
        return Answer.of(results, total=len(ids), cursor=cursor)

    async def _keyword_pages(self, name: str, combined: Filter | None, request: SearchRequest, *, total: int) -> Answer:
        """A keyword answer longer than a page: by the share of the words a document holds, then by id.

        Both depend on the document alone (the rarity tie-break of a one-page answer depends on every
        other document), so the cursor (the last position shown) pages every matching document once
        while writes go on, as a filter-only listing does."""
        keyword = request.keyword or ""
        wanted = list(dict.fromkeys(words(keyword)))
        bound = all_of(combined, any_word(keyword))
        matched: dict[str, int] = {}
        for word in wanted:
            async for record_id, _ in self.store.iter_ids(
                name, filter=all_of(combined, Contains(word)), page_size=1000
            ):
                matched[record_id] = matched.get(record_id, 0) + 1
        positions = sorted(f"{len(wanted) - count:04d}/{record_id}" for record_id, count in matched.items())
        after = read_cursor(request.cursor, name=request.collection, filter=bound) if request.cursor else None
        start = bisect.bisect_right(positions, after) if after is not None else 0
        page = [position.split("/", 1)[1] for position in positions[start : start + request.k]]
        found = {r.id: r for r in await self.store.get(name, page)}
        results = [
            make_result(i, matched[i] / len(wanted), found[i].text, found[i].metadata, kind="keyword")
            for i in page
            if i in found
        ]
        more = start + request.k < len(positions)
        last = positions[start + len(page) - 1] if page else None
        cursor = make_cursor(last, name=request.collection, filter=bound) if more and last else None
        return Answer.of(results, total=max(total, len(positions)), cursor=cursor)

    async def _counted(
        self, name: str, request: SearchRequest, combined: Filter | None, *, clusters: frozenset[str] | None
    ) -> Answer:
        """Matches per value of ``count_by`` (a list field counts each element), without a document;
        with ``clusters``, a shared capability record counts only those clusters' parts."""
        assert request.count_by is not None
        scope = all_of(combined, any_word(request.keyword) if request.keyword else None)
        counts: dict[str, int] = {}
        total = 0
        async for record in self.store.iter_records(name, filter=scope, page_size=1000):
            metadata = within_clusters(record.metadata, clusters)
            if metadata is None:
                continue
            total += 1
            value = metadata.get(request.count_by)
            for item in value if isinstance(value, list) else [value] if value not in (None, "") else ["(none)"]:
                counts[str(item)] = counts.get(str(item), 0) + 1
        ordered = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        return Answer.of([], total=total, counts=ordered)

    async def _semantic(
        self, name: str, *, request: SearchRequest, query: str, conditions: Filter | None
    ) -> list[Result]:
        if self.embedder is None:
            raise SearchError("Semantic search needs an embedder; use keyword or filter search instead")
        if name not in self._embedder_checked:  # once per collection, not on every query
            info = await self.store.collection_info(name)
            if info is not None and info.embedder and info.embedder != self.embedder.name:
                raise SearchError(
                    f"Collection {name!r} was built with embedder {info.embedder!r}, "
                    f"but this search uses {self.embedder.name!r}; configure the same embedder, or move the "
                    "store to this one with kubevec migrate"
                )
            self._embedder_checked.add(name)
        pool, k = request.pool, request.k
        vector = await self._query_vector(query)
        if vector is None:
            return await self._from_words(name, request=request, query=query, conditions=conditions)
        dense = await self.store.search(name, vector=vector, k=pool, filter=conditions, text_contains=request.keyword)
        ranked = [(h, h.score) for h in dense]  # (hit with its similarity as score, the order's score)
        kind = "cosine"
        if request.hybrid:
            lexical = await self._lexical(
                name,
                query=query,
                keyword=request.keyword,
                filter=conditions,
                k=pool,
                with_metadata=request.collection != INSTANCES,
            )
            ranked, kind = (
                await fuse(
                    self.store,
                    name,
                    vector=vector,
                    dense=dense,
                    lexical=lexical,
                    rrf_k=self.rrf_k,
                    lexical_weight=self.lexical_weight,
                ),
                "fused",
            )
        if request.collection == INSTANCES and request.names and not request.mmr:
            ranked = await self._named(name, query=query, vector=vector, ranked=ranked, conditions=conditions)
        if request.mmr:
            hits = [hit for hit, _ in ranked[:pool]]
            ranked, kind = (
                await mmr(self.store, name, vector=vector, hits=hits, k=k, mmr_lambda=request.mmr_lambda),
                "mmr",
            )
        elif self.reranker is not None and request.rerank and len(ranked) > 1:
            ranked, kind = await self._rerank(query, ranked[: max(k, self.rerank_candidates)], k=k), "rerank"
        return Answer.of(
            [
                make_result(h.id, order_score, h.text, h.metadata, kind=kind, similarity=h.score)
                for h, order_score in ranked[:k]
            ],
            total=len(ranked),
        )

    async def _named(
        self,
        name: str,
        *,
        query: str,
        vector: list[float],
        ranked: list[tuple[Hit, float]],
        conditions: Filter | None,
    ) -> list[tuple[Hit, float]]:
        """Candidates re-scored by what the question names (``kubevec.query.intent``), with the objects it
        names exactly and, for a question about trouble, degraded ones added to the candidates even when
        neither ranking found them. Scores are rescaled so the first is 1.0 (the order's own score)."""
        intent = Intent.of(query)
        have = {hit.id for hit, _ in ranked}
        wanted = tuple(sorted(p for p in intent.phrases if is_kubernetes_name(p)))[:MAX_NAMED]
        extra: dict[str, Record] = {}
        for where in (In("name", wanted) if wanted else None, Eq("health", "degraded") if intent.trouble else None):
            if where is None:
                continue
            async for record in self.store.iter_records(name, filter=all_of(conditions, where), page_size=MAX_NAMED):
                if record.id not in have:
                    extra[record.id] = record
                if len(extra) >= 2 * MAX_NAMED:
                    break
        scored = list(ranked)
        if extra:
            vectors = {r.id: r.vector for r in await self.store.get(name, list(extra), include_vectors=True)}
            scored += [
                (Hit(id=i, score=max(0.0, cosine(vector, vectors[i])), text=r.text, metadata=r.metadata), 0.0)
                for i, r in extra.items()
                if vectors.get(i)
            ]
        intent = intent.among(
            frozenset(str(hit.metadata.get("name", "")).lower() for hit, _ in scored),
            namespaces=frozenset(str(hit.metadata.get("namespace") or "").lower() for hit, _ in scored) - {""},
        ).around([hit.metadata for hit, _ in scored])
        boosted = sorted(
            ((hit, base + intent.boost(hit.metadata)) for hit, base in scored), key=lambda pair: (-pair[1], pair[0].id)
        )
        top = max((score for _, score in boosted), default=0.0)
        return [(hit, max(0.0, score / top) if top > 0 else 0.0) for hit, score in boosted]

    async def _query_vector(self, query: str) -> list[float] | None:
        """The query's vector; None when the embedder failed now or moments ago (see ``_from_words``)."""
        assert self.embedder is not None
        if time.monotonic() < self._embedder_down_until:
            return None
        try:
            return await asyncio.wait_for(self.embedder.embed_query(query), timeout=self.query_embed_timeout)
        except (EmbedderError, TimeoutError) as exc:
            reason = exc.reason if isinstance(exc, EmbedderError) else "timeout"
            self._embedder_down_until = time.monotonic() + EMBEDDER_DOWN_SECONDS
            self._embedder_down_reason = reason
            logger.warning(
                "Answering from keywords alone: the embedder failed reason=%s retry_in=%.0fs error=%s",
                reason,
                EMBEDDER_DOWN_SECONDS,
                str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
            )
            return None

    async def _from_words(self, name: str, *, request: SearchRequest, query: str, conditions: Filter | None) -> Answer:
        """BM25 over the question's words, under the same view and filters, when no vector can be had."""
        hits = await self._lexical(
            name,
            query=query,
            keyword=request.keyword,
            filter=conditions,
            k=request.k,
            with_metadata=request.collection != INSTANCES,
        )
        top = max((h.score for h in hits), default=0.0) or 1.0
        results = [make_result(h.id, h.score / top, h.text, h.metadata, kind="keyword") for h in hits]
        return Answer.of(
            results,
            degraded=f"the embedder is unavailable ({self._embedder_down_reason}): answered from keywords alone",
            total=len(results),
        )

    async def _lexical(
        self, name: str, *, query: str, keyword: str | None, filter: Filter | None, k: int, with_metadata: bool
    ) -> list[Hit]:
        extra = Contains(keyword) if keyword else None
        wanted = all_of(filter, extra)

        def keep(record: Record) -> bool:
            return wanted is None or matches(wanted, text=record.text, metadata=record.metadata)

        ranked = await self.lexical.rank(
            name, text=query, k=max(k * 4, 50), with_metadata=with_metadata, keep=keep, want=k
        )
        return [Hit(id=r.id, score=score, text=r.text, metadata=r.metadata) for r, score in ranked]

    async def _rerank(self, query: str, ranked: list[tuple[Hit, float]], *, k: int) -> list[tuple[Hit, float]]:
        """The reranker's order and relevance over the top candidates (the rest are dropped: k <= candidates)."""
        assert self.reranker is not None
        order = await self.reranker.rerank(query, [hit.text for hit, _ in ranked], top_k=k)
        return [(ranked[index][0], min(1.0, max(0.0, relevance))) for index, relevance in order]

    # -- helpers -----------------------------------------------------------------------------------

    async def get_document(
        self, collection: str, id: str, *, cluster: str | None = None, clusters: frozenset[str] | None = None
    ) -> Result | None:
        """One document by id; a capability also by its resource name (``certificates.cert-manager.io``), as
        ``cluster`` serves it (without: the record most clusters share), read as that cluster's."""
        await self.fresh()
        name = self.collection_name(collection)
        records = await self.store.get(name, [id])
        if not records and collection == CAPABILITIES and not is_shared(id):
            scope: Filter = Eq("resource", id) if cluster is None else And((Eq("resource", id), Eq("cluster", cluster)))
            candidates = [r async for r in self.store.iter_records(name, filter=scope, page_size=100)]
            if clusters is not None:  # the record the caller's clusters serve, not one only others do
                candidates = [r for r in candidates if within_clusters(r.metadata, clusters) is not None]
            records = sorted(candidates, key=lambda r: (-len(parts_of(r.metadata)), r.id))[:1]
        if not records:
            return None
        record = records[0]
        metadata: Mapping[str, Any] | None = record.metadata
        if collection == CAPABILITIES:
            metadata = within_clusters(record.metadata, clusters)
            if metadata is None or (clusters is not None and cluster is not None and cluster not in clusters):
                return None
            metadata = project(metadata, cluster=cluster)
        assert metadata is not None
        return make_result(record.id, 1.0, record.text, metadata, kind="id")

    async def find_document(
        self, id: str, *, collection: str | None = None, cluster: str | None = None, view: View | None = None
    ) -> tuple[Result, str] | None:
        """The document and its collection: the one named, else the one the id's shape points to, then the other.

        Instance ids are ``cluster/namespace/group/version/kind/name``; capability ids ``plural.group``.
        With ``cluster``, a document another cluster's controller wrote does not count; with ``view``,
        one the caller may not see is not there.
        """
        check_cluster(cluster)

        def counts(result: Result | None, where: str) -> bool:
            if result is None or (cluster is not None and result.metadata.get("cluster") != cluster):
                return False
            return view is None or view.allows(where, metadata=result.metadata, text=result.text)

        if collection is not None:
            result = await self.get_document(collection, id, cluster=cluster, clusters=scope_clusters(view, collection))
            return (result, collection) if result is not None and counts(result, collection) else None
        first = "instances" if parse_instance_id(id) is not None else "capabilities"
        for where in (first, "capabilities" if first == "instances" else "instances"):
            if where not in self.collections:
                continue
            try:
                result = await self.get_document(where, id, cluster=cluster, clusters=scope_clusters(view, where))
            except CollectionNotFound:
                continue  # a store indexed by `kubevec index crds` has no instances collection
            if result is not None and counts(result, where):
                return result, where
        return None

    async def resolve_kind(
        self, name: str, *, limit: int = 5, cluster: str | None = None, view: View | None = None
    ) -> list[dict[str, Any]]:
        check_cluster(cluster)
        """What an agent needs to write a manifest for a kind it only knows by name.

        Exact first: the kind, plural, short name, ``plural.group`` or ``Kind.group``, case-insensitive,
        over the capabilities collection (one document per resource type, so a scan is cheap); every
        exact match is returned (``Certificate`` can exist in several groups). Without one, the
        closest types by meaning (``match: semantic`` with their similarity).
        """
        await self.fresh()
        wanted = name.strip().lower()
        if not wanted:
            raise SearchError("resolve_kind needs a kind, a plural, a short name or a phrase")
        collection = self.collection_name("capabilities")
        if view is not None and not view.sees("capabilities"):
            return []
        clusters = scope_clusters(view, CAPABILITIES)
        if clusters is not None and cluster is not None and cluster not in clusters:
            return []
        scope: Filter | None = Eq("cluster", cluster) if cluster else None
        if view is not None:
            scope = view.restrict("capabilities", scope)
        records = self.store.iter_records(collection, filter=scope, page_size=1000)
        exact = await exact_kinds(records, wanted=wanted, clusters=clusters, cluster=cluster)
        if exact:
            return exact[:limit]
        if self.embedder is None:
            return []
        request = SearchRequest.build(collection="capabilities", query=name, k=limit, hybrid=False, cluster=cluster)
        results = await self.search(request, view=view, keep_parts=True)  # one answer per cluster's part
        semantic = [
            answer
            for r in results
            for answer in kind_answers(r.id, r.metadata, cluster=cluster, match="semantic", similarity=r.similarity)
        ]
        return semantic[:limit]

    async def related(
        self,
        subject: str,
        *,
        hops: int = 1,
        direction: Direction = "both",
        cluster: str | None = None,
        view: View | None = None,
    ) -> Related:
        """What an instance (an id, or an object key ``Kind/namespace/name``) references and what references it.

        With ``view``, documents the caller may not see are neither edges nor ends: such an object is
        only named where a visible document references it (as its own spec does)."""
        check_cluster(cluster)
        await self.fresh()
        relationships = Relationships(store=self.store, collection=self.collection_name("instances"), view=view)
        try:
            return await relationships.related(subject, hops=hops, direction=direction, cluster=cluster)
        except InvalidFilter as exc:
            raise SearchError(str(exc)) from exc

    async def facets(
        self, collection: str, field: str, *, limit: int = 100, cluster: str | None = None, view: View | None = None
    ) -> dict[str, int]:
        """Distinct values of a metadata field with their counts (lists count each element), of visible documents."""
        check_cluster(cluster)
        await self.fresh()
        counts: dict[str, int] = {}
        if view is not None and not view.sees(collection):
            self.collection_name(collection)
            return counts
        clusters = scope_clusters(view, collection)
        if clusters is not None and cluster is not None and cluster not in clusters:
            self.collection_name(collection)
            return counts
        scope: Filter | None = Eq("cluster", cluster) if cluster else None
        if view is not None:
            scope = view.restrict(collection, scope)
        async for record in self.store.iter_records(self.collection_name(collection), filter=scope, page_size=1000):
            metadata = within_clusters(record.metadata, clusters)
            if metadata is None:
                continue
            value = metadata.get(field)
            for item in value if isinstance(value, list) else [value] if value is not None else []:
                counts[str(item)] = counts.get(str(item), 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])

    async def changes(self, request: ChangesRequest, *, view: View | None = None) -> Changes:
        """The change history's answer to ``request``, as far as ``view`` sees the objects (see ``query/changes.py``)."""
        await self.fresh()
        if view is not None and not view.sees(INSTANCES):
            return Changes(entries=[], total=0)
        if CHANGES not in self.collections:
            return Changes(entries=[], total=0, degraded="this store keeps no change history")
        scope = view.restrict(INSTANCES, None) if view is not None else None
        name = self.collection_name(CHANGES)
        embedded = self.history_embedded and time.monotonic() >= self._embedder_down_until
        try:
            try:
                return await list_changes(
                    store=self.store,
                    collection=name,
                    request=request,
                    scope=scope,
                    embedder=self.embedder,
                    embedded=embedded,
                )
            except EmbedderError as exc:
                self._embedder_down_until = time.monotonic() + EMBEDDER_DOWN_SECONDS
                answer = await list_changes(
                    store=self.store, collection=name, request=request, scope=scope, embedder=None, embedded=False
                )
                return dataclasses.replace(
                    answer, degraded=f"the embedder is unavailable ({exc.reason}): answered from keywords alone"
                )
        except CollectionNotFound:
            return Changes(
                entries=[],
                total=0,
                degraded="no change history yet: the controller records it (KUBEVEC_HISTORY__ENABLED)",
            )
        except InvalidFilter as exc:
            raise SearchError(str(exc)) from exc

    def scoped(self, view: View | None) -> ScopedSearch:
        """A reader that sees what ``view`` allows and nothing else (None: everything, for the CLI and stdio)."""
        return ScopedSearch(service=self, view=view)

    async def placements(self, cluster: str) -> set[Placement]:
        """Where this cluster's instance documents live (namespace, resource): what access reviews ask about."""
        from kubevec.query.access import placement_of

        await self.fresh()
        found: set[Placement] = set()
        async for record in self.store.iter_records(
            self.collection_name("instances"), filter=Eq("cluster", cluster), page_size=1000
        ):
            placement = placement_of(record.metadata)
            if placement is not None:
                found.add(placement)
        return found
