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

Scores are similarities in [0, 1]: the cosine similarity of the query and the document when a
query was given, the keyword coverage otherwise. Labels: ``very similar`` at 0.70 or more,
``similar`` at 0.50 or more, ``somewhat related`` below (all-MiniLM-L6-v2 puts good matches of a
short question around 0.5-0.7).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from backends import Hit, InvalidFilter, VectorStore
from backends.filters import And, Contains, Eq, Filter, all_of, from_json, matches, validate
from inference.embedders.base import Embedder
from query.lexical import LexicalIndex

#: RRF constant and the weight of the BM25 ranking (dense counts 1). The textbook k=60 suits
#: fusing many deep runs; fusing two short rankings, it flattens the top so much that BM25's
#: noise costs the dense ranking its first places (on the shared CRD queries, k=60 with weight
#: 0.3 loses MRR to dense alone: 0.641 vs 0.655). Chosen by 2-fold cross-validation over
#: k in {5..60} and weight in {0.1..1}: each half picked k 5-10, weight 0.3-0.5, and those
#: beat dense alone on the other half in 5 of 6 splits. Whole set: recall@5 0.875 vs 0.795,
#: MRR 0.677 vs 0.641; the textbook setting 0.841 / 0.637 (``make bench`` prints both).
RRF_K: Final = 10
LEXICAL_WEIGHT: Final = 0.5
VERY_SIMILAR: Final = 0.70
SIMILAR: Final = 0.50
MAX_K: Final = 100


class SearchError(ValueError):
    """Bad search input; the message says what to change."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Result:
    id: str
    score: float
    label: str
    metadata: Mapping[str, Any]
    text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "score": round(self.score, 4),
            "label": self.label,
            "metadata": dict(self.metadata),
            "text": self.text,
        }


def label_for(score: float) -> str:
    if score >= VERY_SIMILAR:
        return "very similar"
    return "similar" if score >= SIMILAR else "somewhat related"


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
    ) -> None:
        self.store = store
        self.rrf_k = rrf_k
        self.lexical_weight = lexical_weight
        self.embedder = embedder
        self.collections = dict(collections)
        self.lexical = lexical or LexicalIndex(store=store)
        self._embedder_checked: set[str] = set()

    def collection_name(self, collection: str) -> str:
        if collection not in self.collections:
            raise SearchError(f"Unknown collection {collection!r}; use one of {', '.join(sorted(self.collections))}")
        return self.collections[collection]

    async def vector_search(
        self,
        collection: str,
        *,
        query: str | None = None,
        keyword: str | None = None,
        filter: Filter | Mapping[str, Any] | None = None,
        kind: str | None = None,
        group: str | None = None,
        namespace: str | None = None,
        labels: Sequence[str] | None = None,
        k: int = 5,
        hybrid: bool = True,
        mmr: bool = False,
        mmr_lambda: float = 0.5,
        fetch_k: int | None = None,
        min_score: float | None = None,
    ) -> list[Result]:
        name = self.collection_name(collection)
        combined = self._filter(filter=filter, kind=kind, group=group, namespace=namespace, labels=labels)
        query = (query or "").strip() or None
        keyword = (keyword or "").strip() or None
        if not 1 <= k <= MAX_K:
            raise SearchError(f"k must be from 1 to {MAX_K}, got {k}")
        if not 0.0 <= mmr_lambda <= 1.0:
            raise SearchError(f"mmr_lambda must be from 0 to 1, got {mmr_lambda}")
        if query is None and keyword is None and combined is None:
            raise SearchError("Give a query, a keyword or a filter (kind, group, namespace, labels or filter)")
        try:
            if query is None and keyword is not None:
                hits = await self.store.keyword_search(name, text=keyword, filter=combined, k=k)
                results = [self._result(h.id, h.score, h.text, h.metadata) for h in hits]
            elif query is None:
                results = await self._filtered(name, combined, k)
            else:
                results = await self._semantic(
                    name,
                    query=query,
                    keyword=keyword,
                    filter=combined,
                    k=k,
                    hybrid=hybrid,
                    mmr=mmr,
                    mmr_lambda=mmr_lambda,
                    fetch_k=fetch_k,
                )
        except InvalidFilter as exc:
            raise SearchError(str(exc)) from exc
        if min_score is not None:
            results = [r for r in results if r.score >= min_score]
        return results[:k]

    # -- paths -------------------------------------------------------------------------------------

    async def _filtered(self, name: str, combined: Filter | None, k: int) -> list[Result]:
        out = []
        async for record in self.store.iter_records(name, filter=combined, page_size=max(k, 10)):
            out.append(self._result(record.id, 1.0, record.text, record.metadata))
            if len(out) >= k:
                break
        return out

    async def _semantic(
        self,
        name: str,
        *,
        query: str,
        keyword: str | None,
        filter: Filter | None,
        k: int,
        hybrid: bool,
        mmr: bool,
        mmr_lambda: float,
        fetch_k: int | None,
    ) -> list[Result]:
        if self.embedder is None:
            raise SearchError("Semantic search needs an embedder; use keyword or filter search instead")
        if name not in self._embedder_checked:  # once per collection, not on every query
            info = await self.store.collection_info(name)
            if info is not None and info.embedder and info.embedder != self.embedder.name:
                raise SearchError(
                    f"Collection {name!r} was built with embedder {info.embedder!r}, "
                    f"but this search uses {self.embedder.name!r}; configure the same embedder"
                )
            self._embedder_checked.add(name)
        pool = max(fetch_k or 4 * k, k) if (mmr or hybrid) else k
        vector = await self.embedder.embed_query(query)
        dense = await self.store.search(name, vector=vector, k=min(pool, 1000), filter=filter, text_contains=keyword)
        fused = dense
        if hybrid:
            lexical = await self._lexical(name, query=query, keyword=keyword, filter=filter, k=pool)
            fused = await self._fuse(name, vector=vector, dense=dense, lexical=lexical)
        if mmr:
            fused = await self._mmr(name, vector=vector, hits=fused[:pool], k=k, mmr_lambda=mmr_lambda)
        return [self._result(h.id, h.score, h.text, h.metadata) for h in fused[:k]]

    async def _lexical(self, name: str, *, query: str, keyword: str | None, filter: Filter | None, k: int) -> list[Hit]:
        ranked = await self.lexical.rank(name, text=query, k=max(k * 4, 50))
        extra = Contains(keyword) if keyword else None
        wanted = all_of(filter, extra)
        hits = [
            Hit(id=r.id, score=score, text=r.text, metadata=r.metadata)
            for r, score in ranked
            if wanted is None or matches(wanted, text=r.text, metadata=r.metadata)
        ]
        return hits[:k]

    async def _fuse(self, name: str, *, vector: list[float], dense: list[Hit], lexical: list[Hit]) -> list[Hit]:
        """Reciprocal rank fusion; the displayed score stays the cosine similarity to the query."""
        rrf: dict[str, float] = {}
        for weight, ranking in ((1.0, dense), (self.lexical_weight, lexical)):
            for rank, hit in enumerate(ranking):
                rrf[hit.id] = rrf.get(hit.id, 0.0) + weight / (self.rrf_k + rank + 1)
        by_id = {h.id: h for h in lexical} | {h.id: h for h in dense}
        missing = [i for i in rrf if i not in {h.id for h in dense}]
        similarity = {h.id: h.score for h in dense}
        if missing:  # lexical-only hits: compute their cosine so every score means the same thing
            for record in await self.store.get(name, missing, include_vectors=True):
                similarity[record.id] = max(0.0, _cosine(vector, record.vector))
        ordered = sorted(rrf, key=lambda i: (-rrf[i], i))
        return [dataclasses.replace(by_id[i], score=min(1.0, similarity.get(i, 0.0))) for i in ordered]

    async def _mmr(self, name: str, *, vector: list[float], hits: list[Hit], k: int, mmr_lambda: float) -> list[Hit]:
        vectors = {r.id: r.vector for r in await self.store.get(name, [h.id for h in hits], include_vectors=True)}
        candidates = [h for h in hits if vectors.get(h.id)]
        chosen: list[Hit] = []
        while candidates and len(chosen) < k:

            def gain(hit: Hit) -> float:
                relevance = _cosine(vector, vectors[hit.id])
                redundancy = max((_cosine(vectors[hit.id], vectors[c.id]) for c in chosen), default=0.0)
                return mmr_lambda * relevance - (1 - mmr_lambda) * redundancy

            best = max(candidates, key=gain)
            chosen.append(best)
            candidates.remove(best)
        return chosen

    # -- helpers -----------------------------------------------------------------------------------

    def _filter(
        self,
        *,
        filter: Filter | Mapping[str, Any] | None,
        kind: str | None,
        group: str | None,
        namespace: str | None,
        labels: Sequence[str] | None,
    ) -> Filter | None:
        parts: list[Filter | None] = []
        if filter is not None:
            try:
                parts.append(validate(filter) if not isinstance(filter, Mapping) else from_json(filter))
            except InvalidFilter as exc:
                raise SearchError(f"Invalid filter: {exc}") from exc
        if kind:
            parts.append(Eq("kind", kind))
        if group:
            parts.append(Eq("group", group))
        if namespace:
            parts.append(Eq("namespace", namespace))
        for label in labels or ():
            if "=" not in label:
                raise SearchError(f"Labels are key=value, got {label!r}")
            parts.append(Eq("labels", label))
        combined = all_of(*parts)
        if isinstance(combined, And) and len(combined.filters) > 64:
            raise SearchError("Too many conditions")
        return combined

    @staticmethod
    def _result(id: str, score: float, text: str, metadata: Mapping[str, Any]) -> Result:
        return Result(id=id, score=score, label=label_for(score), metadata=metadata, text=text)

    async def get_document(self, collection: str, id: str) -> Result | None:
        records = await self.store.get(self.collection_name(collection), [id])
        return self._result(records[0].id, 1.0, records[0].text, records[0].metadata) if records else None

    async def facets(self, collection: str, field: str, *, limit: int = 100) -> dict[str, int]:
        """Distinct values of a metadata field with their counts (lists count each element)."""
        counts: dict[str, int] = {}
        async for record in self.store.iter_records(self.collection_name(collection), page_size=1000):
            value = record.metadata.get(field)
            for item in value if isinstance(value, list) else [value] if value is not None else []:
                counts[str(item)] = counts.get(str(item), 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a)) or 1.0
    nb = math.sqrt(sum(y * y for y in b)) or 1.0
    return dot / (na * nb)
