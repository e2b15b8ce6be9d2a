"""The search reader: one search by its cheapest path (see ``kubevec.query.search`` for the paths and scores).

Behind the one view gate (:func:`kubevec.query.scope.admit`): a caller reads only what its view
lets it, and a capability record shared by clusters only as the clusters it may read serve it.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Mapping
from typing import Final

from kubevec.backends import Hit, Record
from kubevec.backends.filters import Contains, Eq, Filter, In, all_of, matches, words
from kubevec.core import fields
from kubevec.core.errors import InvalidFilter, SearchError
from kubevec.inference.documents import CAPABILITIES, INSTANCES, is_kubernetes_name
from kubevec.inference.fleet import project
from kubevec.query.answers import Answer, Result, cosine, make_result
from kubevec.query.asking import place_of, pointed_kinds, without_place
from kubevec.query.blame import blamed
from kubevec.query.cursors import any_word, make_cursor, read_cursor
from kubevec.query.folding import fold, key_of
from kubevec.query.hubs import centred
from kubevec.query.intent import Intent
from kubevec.query.ranking import fuse, mmr
from kubevec.query.referenced import KIND as referenced_kind
from kubevec.query.referenced import referenced
from kubevec.query.request import SearchRequest
from kubevec.query.scope import admit, within_clusters
from kubevec.query.sources import Sources
from kubevec.query.spelling import image_names, places, spell_out
from kubevec.query.views import View

#: Objects a question names (and degraded ones, for a question about trouble) added to the candidates, at most.
MAX_NAMED: Final = 100


async def read_search(
    sources: Sources, request: SearchRequest, view: View | None, *, keep_parts: bool = False
) -> Answer:
    """Run one search by its cheapest path; at most ``request.k`` results, of the documents ``view`` may see.

    ``keep_parts``: a shared capability record keeps every visible cluster's part (``resolve_kind``
    answers per cluster); otherwise it is read as the asked cluster's."""
    await sources.active.fresh()
    sources.active.name(request.collection)  # an unknown collection is an error, also for a caller who sees none
    admitted = admit(view, request.collection, cluster=request.cluster, conditions=request.conditions)
    if admitted is None:
        return Answer()  # a hidden collection, or a cluster outside the caller's scope, holds nothing it may read
    searcher = Searcher(sources)
    answer = await sources.active.retrying(lambda: searcher.run(request, admitted.filter, clusters=admitted.clusters))
    if request.collection == CAPABILITIES:  # shared records read as the asked cluster's (kubevec.inference.fleet)
        kept = [(r, within_clusters(r.metadata, admitted.clusters)) for r in answer]
        answer[:] = [
            dataclasses.replace(r, metadata=metadata if keep_parts else project(metadata, cluster=request.cluster))
            for r, metadata in kept
            if metadata is not None
        ]
    return answer


class Searcher:
    """The paths of one search over ``sources`` (the view is already in the conditions it is given)."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources

    async def run(
        self, request: SearchRequest, conditions: Filter | None, *, clusters: frozenset[str] | None = None
    ) -> Answer:
        name = self.sources.active.name(request.collection)
        degraded = None
        total: int | None = None
        try:
            if request.count_by is not None:
                return await self._counted(name, request, conditions, clusters=clusters)
            if request.query is None and request.keyword is not None:
                total = await self.sources.store.count(name, all_of(conditions, any_word(request.keyword)))
                if total > request.k or request.cursor:
                    return await self._keyword_pages(name, conditions, request, total=total)
                hits = await self.sources.store.keyword_search(
                    name, text=request.keyword, filter=conditions, k=request.k
                )
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
        ids = sorted({i async for i, _ in self.sources.store.iter_ids(name, filter=combined, page_size=1000)})
        start = bisect.bisect_right(ids, after) if after is not None else 0
        page = ids[start : start + request.k]
        found = {r.id: r for r in await self.sources.store.get(name, page)}  # gone since listed: left out
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
            async for record_id, _ in self.sources.store.iter_ids(
                name, filter=all_of(combined, Contains(word)), page_size=1000
            ):
                matched[record_id] = matched.get(record_id, 0) + 1
        positions = sorted(f"{len(wanted) - count:04d}/{record_id}" for record_id, count in matched.items())
        after = read_cursor(request.cursor, name=request.collection, filter=bound) if request.cursor else None
        start = bisect.bisect_right(positions, after) if after is not None else 0
        page = [position.split("/", 1)[1] for position in positions[start : start + request.k]]
        found = {r.id: r for r in await self.sources.store.get(name, page)}
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
        async for record in self.sources.store.iter_records(name, filter=scope, page_size=1000):
            metadata = within_clusters(record.metadata, clusters)
            if metadata is None:
                continue
            total += 1
            value = fields.value(metadata, request.count_by)
            for item in value if isinstance(value, list) else [value] if value not in (None, "") else ["(none)"]:
                counts[str(item)] = counts.get(str(item), 0) + 1
        ordered = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        return Answer.of([], total=total, counts=ordered)

    async def _semantic(
        self, name: str, *, request: SearchRequest, query: str, conditions: Filter | None
    ) -> list[Result]:
        await self.sources.vectors.check(self.sources.store, name)
        pool, k = request.pool, request.k
        said = spell_out(query) if request.collection == INSTANCES else query  # "LB": a load balancer
        vector = await self.sources.vectors.vector(said)
        if vector is None:
            return await self._from_words(name, request=request, query=said, conditions=conditions)
        dense = await self.sources.store.search(
            name, vector=vector, k=pool, filter=conditions, text_contains=request.keyword
        )
        if request.collection == INSTANCES and len(dense) > 1:
            mean = await self.sources.centres.of(self.sources.store, name)
            if mean is not None:  # hubs (near every question) rank by what they share with this one only
                dense = await centred(self.sources.store, name, hits=dense, mean=mean)
        topic = spell_out(without_place(query)) if request.collection == INSTANCES else query  # the place left out
        place = place_of(query) if request.collection == INSTANCES and request.namespace is None else None
        if place is not None and without_place(query) != query.lower():
            dense = await self._placed(
                name, request=request, topic=topic, place=place, dense=dense, conditions=conditions
            )
        ranked = [(h, h.score) for h in dense]  # (hit with its similarity as score, the order's score)
        kind = "cosine"
        if request.hybrid:
            known: dict[str, float] = {}
            lexical = await self._lexical(
                name,
                query=topic,
                keyword=request.keyword,
                filter=conditions,
                k=pool,
                with_metadata=request.collection != INSTANCES,
                similarity=(vector, known),
            )
            ranked, kind = (
                await fuse(
                    self.sources.store,
                    name,
                    vector=vector,
                    dense=dense,
                    lexical=lexical,
                    rrf_k=self.sources.rrf_k,
                    lexical_weight=self.sources.lexical_weight,
                    known=known,
                ),
                "fused",
            )
        if request.collection == INSTANCES and request.names and not request.mmr:
            ranked = await self._named(name, query=query, vector=vector, ranked=ranked, conditions=conditions)
        if request.mmr:
            hits = [hit for hit, _ in ranked[:pool]]
            ranked, kind = (
                await mmr(self.sources.store, name, vector=vector, hits=hits, k=k, mmr_lambda=request.mmr_lambda),
                "mmr",
            )
        elif self.sources.reranker is not None and request.rerank and len(ranked) > 1:
            ranked, kind = await self._rerank(query, ranked[: max(k, self.sources.rerank_candidates)], k=k), "rerank"
        return Answer.of(
            [
                make_result(h.id, order_score, h.text, h.metadata, kind=kind, similarity=h.score)
                for h, order_score in ranked[:k]
            ],
            total=len(ranked),
        )

    async def _placed(
        self,
        name: str,
        *,
        request: SearchRequest,
        topic: str,
        place: str,
        dense: list[Hit],
        conditions: Filter | None,
    ) -> list[Hit]:
        """A question placed in one namespace ("which pods in namespace calculator are not healthy"): the
        place is where to look, not what, so the objects there ranked by the rest of the question come
        first, then the question's own ranking (which keeps what lives elsewhere and is named, a volume)."""
        vector = await self.sources.vectors.vector(topic)
        if vector is None:
            return dense
        there = await self.sources.store.search(
            name,
            vector=vector,
            k=request.pool,
            filter=all_of(conditions, Eq("namespace", place)),
            text_contains=request.keyword,
        )
        mean = await self.sources.centres.of(self.sources.store, name) if len(there) > 1 else None
        if mean is not None:
            there = await centred(self.sources.store, name, hits=there, mean=mean)
        seen = {hit.id for hit in there}
        return there + [hit for hit in dense if hit.id not in seen]

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
        intent = Intent.of(query, vocabulary=await self.sources.kinds())
        have = {hit.id for hit, _ in ranked}
        wanted = tuple(sorted(p for p in intent.phrases if is_kubernetes_name(p)))[:MAX_NAMED]
        extra: dict[str, Record] = {}
        by_name = In("name", wanted) if wanted else None
        if by_name is not None and conditions is None:  # no filter to apply first: the keyword index knows names
            ids = await self.sources.lexical.named(name, wanted, with_metadata=False, limit=2 * MAX_NAMED)
            if ids is not None:  # None: the index is first being built; the store answers meanwhile
                found = await self.sources.store.get(name, [i for i in ids if i not in have], include_vectors=True)
                extra.update((record.id, record) for record in found)
                by_name = None
        for where in (by_name, Eq("health", "degraded") if intent.trouble else None):
            if where is None:
                continue
            async for record in self.sources.store.iter_records(
                name, filter=all_of(conditions, where), page_size=MAX_NAMED
            ):
                if record.id not in have:
                    extra[record.id] = record
                if len(extra) >= 2 * MAX_NAMED:
                    break
        scored = list(ranked) + await self._scored(name, vector=vector, records=extra)
        read = intent.among(
            # a Namespace's name is a place (see ``Intent.places_named``), not the name of an object in one;
            # an image's name of several words names its workloads too ("NATS Streaming": ``nats-streaming``)
            frozenset(
                fields.NAME.of(hit.metadata).lower() for hit, _ in scored if fields.KIND.of(hit.metadata) != "Namespace"
            )
            | image_names(hit.metadata for hit, _ in scored),
            namespaces=frozenset(place for hit, _ in scored for place in places(hit.metadata)),
        ).around([hit.metadata for hit, _ in scored])
        if (read.callees or read.also_callees) and read.neighbours:
            # "which database does the frontend use", "the frontend and the database it uses": what it points at
            # is the answer (or one of them); fetch what neither ranking found
            scored += await self._joined(name, read.neighbours, scored=scored, vector=vector, conditions=conditions)
        scored += await self._referenced(name, read=read, scored=scored, vector=vector, conditions=conditions)
        if read.trouble and (causes := blamed(hit.metadata for hit, _ in scored)):
            # "why are some pods never created": the quota the troubled objects' messages name is the answer
            scored += await self._joined(name, causes, scored=scored, vector=vector, conditions=conditions)
            read = dataclasses.replace(read, blamed=causes)
        boosted = _boosted(scored, intent=read)
        if read.also_callers and boosted:
            # "the config map that holds the Kafka settings and the workloads that load it": "it" is the first
            # answer of the kind asked ("which ConfigMap provides zoo.cfg, and which workload mounts it") or of
            # one the verb can take (what is loaded holds settings); what points at it is asked for too
            kinds = {read.asked_kind} if read.asked_kind else pointed_kinds(read.question)
            first = next(
                (key_of(hit.metadata) for hit, _ in boosted if not kinds or fields.KIND.of(hit.metadata) in kinds),
                key_of(boosted[0][0].metadata),
            )
            scored += await self._referring(name, first, scored=scored, vector=vector, conditions=conditions)
            boosted = _boosted(scored, intent=dataclasses.replace(read, referred=frozenset({first})))
        top = max((score for _, score in boosted), default=0.0)
        return [(hit, max(0.0, score / top) if top > 0 else 0.0) for hit, score in boosted]

    async def _joined(
        self,
        name: str,
        keys: frozenset[str],
        *,
        scored: list[tuple[Hit, float]],
        vector: list[float],
        conditions: Filter | None,
    ) -> list[tuple[Hit, float]]:
        """The objects of ``keys`` (``Kind/namespace/name``) that are not candidates yet, read by their names
        under the view's conditions, as candidates with no rank score."""
        have = {key_of(hit.metadata) for hit, _ in scored}
        missing = sorted(keys - have)[:MAX_NAMED]
        names = tuple(sorted({key.rpartition("/")[2] for key in missing}))
        found = await self._by_names(name, names, conditions=conditions) if names else []
        wanted = frozenset(missing)
        return await self._scored(name, vector=vector, records={r.id: r for r in found if key_of(r.metadata) in wanted})

    async def _referring(
        self,
        name: str,
        key: str,
        *,
        scored: list[tuple[Hit, float]],
        vector: list[float],
        conditions: Filter | None,
    ) -> list[tuple[Hit, float]]:
        """The objects that point at ``key`` (their ``refs`` hold it) and are not candidates yet."""
        have = frozenset(hit.id for hit, _ in scored)
        found = await self._first(name, all_of(conditions, Eq("refs", key)), skip=have)
        return await self._scored(name, vector=vector, records={record.id: record for record in found})

    async def _referenced(
        self,
        name: str,
        *,
        read: Intent,
        scored: list[tuple[Hit, float]],
        vector: list[float],
        conditions: Filter | None,
    ) -> list[tuple[Hit, float]]:
        """Secrets the question asks for that the candidates refer to and the store does not hold (kubevec
        reads none by default), put together from what refers to them (``kubevec.query.referenced``)."""
        found = referenced(
            scored, wanted=lambda n: n in read.phrases, kind_asked=read.names_kind(referenced_kind) >= 1.0
        )
        have = {key_of(hit.metadata) for hit, _ in scored}
        found = {ref: pair for ref, pair in sorted(found.items()) if ref not in have}
        if not found:
            return []
        names = tuple(sorted({ref.rpartition("/")[2] for ref in found}))[:MAX_NAMED]
        stored = {key_of(r.metadata): r for r in await self._by_names(name, names, conditions=conditions)}
        real = {r.id: r for ref, r in stored.items() if ref in found}  # Secrets opted in: the real ones
        made = [
            (hit, base)
            for ref, (hit, base) in found.items()
            if ref not in stored
            and ref.rpartition("/")[2] in names
            and (
                conditions is None or matches(conditions, text=hit.text, metadata=hit.metadata)
            )  # the view, the filter
        ]
        return made + await self._scored(name, vector=vector, records=real)

    async def _by_names(self, name: str, names: tuple[str, ...], *, conditions: Filter | None) -> list[Record]:
        """Records named so, under the view's conditions (the keyword index knows names when there are none)."""
        if conditions is None:
            ids = await self.sources.lexical.named(name, names, with_metadata=False, limit=2 * MAX_NAMED)
            if ids is not None:
                return await self.sources.store.get(name, ids, include_vectors=True)
        return await self._first(name, all_of(conditions, In("name", names)))

    async def _first(self, name: str, where: Filter | None, *, skip: frozenset[str] = frozenset()) -> list[Record]:
        """The first records ``where`` holds (at most twice :data:`MAX_NAMED`), but those in ``skip``."""
        found: list[Record] = []
        async for record in self.sources.store.iter_records(name, filter=where, page_size=MAX_NAMED):
            if record.id not in skip:
                found.append(record)
            if len(found) >= 2 * MAX_NAMED:
                break
        return found

    async def _scored(
        self, name: str, *, vector: list[float], records: Mapping[str, Record]
    ) -> list[tuple[Hit, float]]:
        """Records neither ranking found, as candidates with their cosine similarity and no rank score."""
        if not records:
            return []
        unread = [i for i, record in records.items() if not record.vector]
        vectors = {i: record.vector for i, record in records.items() if record.vector}
        if unread:
            found = await self.sources.store.get(name, unread, include_vectors=True)
            vectors.update((record.id, record.vector) for record in found)
        return [
            (Hit(id=i, score=max(0.0, cosine(vector, vectors[i])), text=r.text, metadata=r.metadata), 0.0)
            for i, r in records.items()
            if vectors.get(i)
        ]

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
            degraded=f"the embedder is unavailable ({self.sources.vectors.down_reason}): answered from keywords alone",
            total=len(results),
        )

    async def _lexical(
        self,
        name: str,
        *,
        query: str,
        keyword: str | None,
        filter: Filter | None,
        k: int,
        with_metadata: bool,
        similarity: tuple[list[float], dict[str, float]] | None = None,
    ) -> list[Hit]:
        """The BM25 ranking under the filters; with ``similarity`` (the query's vector, a dict to fill), the
        records are read back with their vectors and each one's cosine is filled in (fusion needs it)."""
        extra = Contains(keyword) if keyword else None
        wanted = all_of(filter, extra)

        def keep(record: Record) -> bool:
            return wanted is None or matches(wanted, text=record.text, metadata=record.metadata)

        ranked = await self.sources.lexical.rank(
            name,
            text=query,
            k=max(k * 4, 50),
            with_metadata=with_metadata,
            keep=keep,
            want=k,
            include_vectors=similarity is not None,
        )
        if similarity is not None:
            vector, known = similarity
            known.update({r.id: max(0.0, cosine(vector, r.vector)) for r, _ in ranked if r.vector})
        return [Hit(id=r.id, score=score, text=r.text, metadata=r.metadata) for r, score in ranked]

    async def _rerank(self, query: str, ranked: list[tuple[Hit, float]], *, k: int) -> list[tuple[Hit, float]]:
        """The reranker's order and relevance over the top candidates (the rest are dropped: k <= candidates)."""
        assert self.sources.reranker is not None
        order = await self.sources.reranker.rerank(query, [hit.text for hit, _ in ranked], top_k=k)
        return [(ranked[index][0], min(1.0, max(0.0, relevance))) for index, relevance in order]


def _boosted(scored: list[tuple[Hit, float]], *, intent: Intent) -> list[tuple[Hit, float]]:
    """Candidates with what the question's words add, folded (a workload's own Pods under it) and ordered."""
    return sorted(
        fold(
            [(hit, base + intent.boost(hit.metadata)) for hit, base in scored],
            metadata=lambda hit: hit.metadata,
            asked=lambda kind: intent.names_kind(kind) > 0,
        ),
        key=lambda pair: (-pair[1], pair[0].id),
    )
