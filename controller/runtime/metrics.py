"""Prometheus metrics, in a registry of their own (several controllers can live in one test process).

Every labelled counter starts at 0 for each label value the controller can produce, so an alert on
``increase(...) > 0`` sees 0 rather than "no data" before the first error. Labels are bounded:
``collection`` (2), ``stage`` (:data:`ERROR_STAGES`), ``operation`` (:data:`STORE_OPERATIONS`),
``backend`` and ``provider`` (one each per process); the one label that grows with the cluster is
``kubevec_events_received_total{resource}``, at most one series per watched resource type and
event type (3 x the number of CRD versions watched, plus the built-in kinds).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any, Final

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from kubevec.backends import CollectionInfo, Health, Hit, Record, StoredHashes, VectorStore
from kubevec.backends.base import DEFAULT_PAGE_SIZE, Distance
from kubevec.backends.filters import Filter
from kubevec.core.version import kubevec_version
from kubevec.inference.documents import COLLECTIONS
from kubevec.query.limits import AccessCollector, Count
from kubevec.query.request import TOOLS

_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_STORE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
#: Every ``stage`` of ``kubevec_errors_total`` (a unit test checks the sources use no other).
#: ``EmbedderError.reason`` values: each has a zero series from start-up, for alerts.
EMBEDDER_ERROR_REASONS: Final = (
    "unavailable",
    "rate_limited",
    "timeout",
    "auth",
    "refused",
    "dimension",
    "response",
    "config",
    "error",
)
#: Every ``reason`` of ``kubevec_documents_skipped_total``: an InferenceError's reason, or ``error`` for
#: anything a builder raised that no rule foresaw.
DOCUMENT_SKIP_REASONS: Final = ("malformed", "nodes", "time", "error")
ERROR_STAGES: Final = (
    "startup",
    "store",
    "store_record",
    "history_record",
    "embedder",
    "inference",
    "resync",
    "forbidden",
    "policy",
    "cluster",
    "discovery",
)
SKIP_REASONS: Final = ("unchanged", "vector_reused")
MCP_TOOLS: Final = TOOLS
STORE_OPERATIONS: Final = (
    "ensure_collection",
    "drop_collection",
    "collection_info",
    "upsert",
    "delete",
    "delete_where",
    "get",
    "count",
    "list_ids",
    "iter_ids",
    "iter_hashes",
    "iter_records",
    "iter_texts",
    "search",
    "keyword_search",
    "health",
)

# The ``_created`` series double every counter and histogram and no alert or dashboard uses them.
disable_created_metrics()  # type: ignore[no-untyped-call]


class Metrics:
    """Every metric the controller exports; names follow Prometheus conventions (``kubevec_`` prefix)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.events = Counter(
            "kubevec_events_received_total", "Watch events received", ["resource", "type"], registry=r
        )
        self.documents = Gauge("kubevec_documents", "Documents stored per collection", ["collection"], registry=r)
        self.upserts = Counter("kubevec_upserts_total", "Documents written to the store", ["collection"], registry=r)
        self.deletes = Counter("kubevec_deletes_total", "Documents deleted from the store", ["collection"], registry=r)
        self.embeddings = Counter("kubevec_embeddings_computed_total", "Texts embedded", ["collection"], registry=r)
        self.changes = Counter(
            "kubevec_changes_recorded_total", "Change history records written, by change", ["change"], registry=r
        )
        self.changes_pruned = Counter(
            "kubevec_changes_pruned_total", "Change history records removed by retention", registry=r
        )
        self.skipped = Counter(
            "kubevec_embeddings_skipped_total",
            "Documents not embedded: unchanged hash, or vector re-used for a metadata-only change",
            ["collection", "reason"],
            registry=r,
        )
        self.provider = "unknown"  # the embedder's provider, set by describe_build
        self.embed_seconds = Histogram(
            "kubevec_embedding_duration_seconds",
            "Time to embed one batch",
            ["provider"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.embed_errors = Counter(
            "kubevec_embedder_errors_total",
            "Embedding calls that failed after retries, by reason (unavailable, rate_limited, timeout, auth, "
            "refused, dimension, response, config, error)",
            ["provider", "reason"],
            registry=r,
        )
        self.degraded_answers = Counter(
            "kubevec_search_degraded_total",
            "Searches answered from keywords alone because the embedder failed",
            ["tool"],
            registry=r,
        )
        self.search_seconds = Histogram(
            "kubevec_mcp_request_duration_seconds",
            "Time to answer one MCP tool call served by the controller",
            ["tool"],
            buckets=_STORE_BUCKETS,
            registry=r,
        )
        self.search_errors = Counter(
            "kubevec_mcp_request_errors_total", "MCP tool calls that failed, by tool", ["tool"], registry=r
        )
        self.build_info = Gauge(
            "kubevec_build_info",
            "Always 1: the running version, embedder, model, dimension and store backend",
            ["version", "embedder", "model", "dimension", "backend"],
            registry=r,
        )
        self.store_seconds = Histogram(
            "kubevec_store_operation_duration_seconds",
            "Time of one store operation (a whole listing for iter_*)",
            ["backend", "operation"],
            buckets=_STORE_BUCKETS,
            registry=r,
        )
        self.store_errors = Counter(
            "kubevec_store_operation_errors_total", "Store operations that failed", ["backend", "operation"], registry=r
        )
        self.event_to_store = Histogram(
            "kubevec_event_to_stored_seconds",
            "Time from receiving an event to its document being stored",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.queue_depth = Gauge("kubevec_queue_depth", "Documents waiting to be flushed", registry=r)
        self.errors = Counter("kubevec_errors_total", "Errors by stage", ["stage"], registry=r)
        self.documents_skipped = Counter(
            "kubevec_documents_skipped_total",
            "Objects that could not be turned into a document and were skipped, by reason "
            "(malformed, nodes, time, error)",
            ["reason"],
            registry=r,
        )
        for reason in DOCUMENT_SKIP_REASONS:
            self.documents_skipped.labels(reason=reason)
        self.last_resync = Gauge(
            "kubevec_last_full_resync_timestamp_seconds", "Unix time of the last completed full resync", registry=r
        )
        self.resync_seconds = Histogram(
            "kubevec_resync_duration_seconds", "Duration of a full resync", buckets=_LATENCY_BUCKETS, registry=r
        )
        self.ready = Gauge("kubevec_ready", "1 when the initial sync is complete and the store is healthy", registry=r)
        self.cluster_reachable = Gauge(
            "kubevec_cluster_reachable", "1 while the Kubernetes API server answers the probe", registry=r
        )
        self.cluster_reachable.set(1)
        self.degraded = Gauge("kubevec_degraded", "1 while the store or embedder is failing", registry=r)
        self.active = Gauge(
            "kubevec_active",
            "1 when this replica syncs (always, without peering; the leading peer with it)",
            registry=r,
        )
        for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
            r.register(collector)  # RSS, CPU, open fds, Python version, GC: the process's own health
        for stage in ERROR_STAGES:
            self.errors.labels(stage=stage)
        for tool in MCP_TOOLS:
            self.search_errors.labels(tool=tool)
        self.degraded_answers.labels(tool="vector_search")
        for collection in COLLECTIONS:
            for counter in (self.upserts, self.deletes, self.embeddings):
                counter.labels(collection=collection)
            for reason in SKIP_REASONS:
                self.skipped.labels(collection=collection, reason=reason)

    def describe_build(self, *, embedder: str, model: str, dimension: int, backend: str) -> None:
        """Set ``kubevec_build_info`` (once per process) and start the store series at 0."""
        self.build_info.labels(
            version=kubevec_version(), embedder=embedder, model=model, dimension=str(dimension), backend=backend
        ).set(1)
        self.provider = embedder
        for reason in EMBEDDER_ERROR_REASONS:
            self.embed_errors.labels(provider=embedder, reason=reason)
        for operation in STORE_OPERATIONS:
            self.store_errors.labels(backend=backend, operation=operation)

    def watch_counts(self, *, embedder: object, llm: object | None) -> None:
        """Export the retry and LLM counts the inference objects keep (they know nothing of Prometheus)."""
        self.registry.register(_InferenceCounts(embedder=embedder, llm=llm, provider=self.provider))

    def watch_access(self, counts: Callable[[], Iterable[Count]]) -> None:
        """Export the MCP guard's refusals and the authorizer's review counts (the query side knows no Prometheus)."""
        self.registry.register(AccessCollector(counts))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class InstrumentedStore:
    """A :class:`VectorStore` that times every operation and counts failures, by backend and operation.

    It wraps the store the controller uses, so backends stay free of Prometheus and the query side
    (CLI, MCP) keeps its own plain store.
    """

    def __init__(self, store: VectorStore, *, metrics: Metrics) -> None:
        self._store = store
        self._seconds = metrics.store_seconds
        self._errors = metrics.store_errors

    @property
    def backend(self) -> str:
        return self._store.backend

    @property
    def location(self) -> str:
        return self._store.location

    @property
    def wrapped(self) -> VectorStore:
        return self._store

    async def _timed(self, operation: str, call: Any) -> Any:
        started = time.perf_counter()
        try:
            return await call
        except Exception:
            self._errors.labels(backend=self.backend, operation=operation).inc()
            raise
        finally:
            self._seconds.labels(backend=self.backend, operation=operation).observe(time.perf_counter() - started)

    async def _timed_iter(self, operation: str, items: AsyncIterator[Any]) -> AsyncIterator[Any]:
        started = time.perf_counter()
        try:
            async for item in items:
                yield item
        except Exception:
            self._errors.labels(backend=self.backend, operation=operation).inc()
            raise
        finally:
            self._seconds.labels(backend=self.backend, operation=operation).observe(time.perf_counter() - started)

    async def ensure_collection(
        self,
        name: str,
        *,
        dimension: int,
        distance: Distance = "cosine",
        embedder: str,
        indexed: Sequence[str] = (),
    ) -> None:
        await self._timed(
            "ensure_collection",
            self._store.ensure_collection(
                name, dimension=dimension, distance=distance, embedder=embedder, indexed=indexed
            ),
        )

    async def drop_collection(self, name: str) -> None:
        await self._timed("drop_collection", self._store.drop_collection(name))

    async def collection_info(self, name: str) -> CollectionInfo | None:
        info: CollectionInfo | None = await self._timed("collection_info", self._store.collection_info(name))
        return info

    async def upsert(self, name: str, records: Sequence[Record]) -> None:
        await self._timed("upsert", self._store.upsert(name, records))

    async def delete(self, name: str, ids: Sequence[str]) -> None:
        await self._timed("delete", self._store.delete(name, ids))

    async def delete_where(self, name: str, filter: Filter) -> None:
        await self._timed("delete_where", self._store.delete_where(name, filter))

    async def get(self, name: str, ids: Sequence[str], *, include_vectors: bool = False) -> list[Record]:
        records: list[Record] = await self._timed("get", self._store.get(name, ids, include_vectors=include_vectors))
        return records

    async def count(self, name: str, filter: Filter | None = None) -> int:
        count: int = await self._timed("count", self._store.count(name, filter))
        return count

    async def list_ids(self, name: str) -> list[str]:
        ids: list[str] = await self._timed("list_ids", self._store.list_ids(name))
        return ids

    def iter_ids(
        self, name: str, *, filter: Filter | None = None, page_size: int = DEFAULT_PAGE_SIZE
    ) -> AsyncIterator[tuple[str, str]]:
        return self._timed_iter("iter_ids", self._store.iter_ids(name, filter=filter, page_size=page_size))

    def iter_hashes(
        self, name: str, *, filter: Filter | None = None, page_size: int = DEFAULT_PAGE_SIZE
    ) -> AsyncIterator[tuple[str, StoredHashes]]:
        return self._timed_iter("iter_hashes", self._store.iter_hashes(name, filter=filter, page_size=page_size))

    def iter_records(
        self, name: str, *, filter: Filter | None = None, page_size: int = DEFAULT_PAGE_SIZE
    ) -> AsyncIterator[Record]:
        return self._timed_iter("iter_records", self._store.iter_records(name, filter=filter, page_size=page_size))

    def iter_texts(self, name: str, *, page_size: int = DEFAULT_PAGE_SIZE) -> AsyncIterator[tuple[str, str]]:
        return self._timed_iter("iter_texts", self._store.iter_texts(name, page_size=page_size))

    async def search(
        self,
        name: str,
        *,
        vector: Sequence[float],
        k: int,
        filter: Filter | None = None,
        text_contains: str | None = None,
    ) -> list[Hit]:
        hits: list[Hit] = await self._timed(
            "search", self._store.search(name, vector=vector, k=k, filter=filter, text_contains=text_contains)
        )
        return hits

    async def keyword_search(self, name: str, *, text: str, filter: Filter | None = None, k: int) -> list[Hit]:
        hits: list[Hit] = await self._timed(
            "keyword_search", self._store.keyword_search(name, text=text, filter=filter, k=k)
        )
        return hits

    async def health(self) -> Health:
        health: Health = await self._timed("health", self._store.health())
        if not health.ok:
            self._errors.labels(backend=self.backend, operation="health").inc()
        return health

    async def close(self) -> None:
        await self._store.close()


class _InferenceCounts(Collector):
    """``kubevec_embedding_retries_total{provider}`` and the LLM describer's request, cache-hit and failure counts."""

    def __init__(self, *, embedder: object, llm: object | None, provider: str) -> None:
        self._embedder = embedder
        self._llm = llm
        self._provider = provider

    def collect(self) -> Any:
        retries = CounterMetricFamily(
            "kubevec_embedding_retries", "Embedding calls retried (rate limits, 5xx, timeouts)", labels=["provider"]
        )
        retries.add_metric([self._provider], float(getattr(self._embedder, "retries", 0)))
        yield retries
        truncated = CounterMetricFamily(
            "kubevec_embedder_truncated",
            "Texts longer than the model takes, clipped to its limit (embedded from their start, never dropped)",
            labels=["provider"],
        )
        truncated.add_metric([self._provider], float(getattr(self._embedder, "truncated", 0)))
        yield truncated
        for name, attribute, help in (
            ("kubevec_llm_requests", "requests_made", "Requests sent to the LLM describer's API"),
            ("kubevec_llm_cache_hits", "cache_hits", "Capability texts refined from the LLM answer cache"),
            ("kubevec_llm_failures", "failures", "LLM refinements that failed (the schema text is kept)"),
        ):
            yield CounterMetricFamily(name, help, value=float(getattr(self._llm, attribute, 0)) if self._llm else 0.0)
