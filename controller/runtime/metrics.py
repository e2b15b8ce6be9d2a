"""Prometheus metrics, in a registry of their own (several controllers can live in one test process).

Every labelled counter starts at 0 for each label value the controller can produce, so an alert on
``increase(...) > 0`` sees 0 rather than "no data" before the first error. Labels are bounded:
``collection`` (2), ``stage`` (:data:`ERROR_STAGES`), ``operation`` (:data:`STORE_OPERATIONS`),
``backend`` and ``provider`` (one each per process); the one label that grows with the cluster is
``kubevec_events_received_total{resource}``, at most one series per watched resource type and
event type (3 x the number of CRD versions watched, plus the built-in kinds).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
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

from kubevec.core.version import kubevec_version
from kubevec.inference.documents import COLLECTIONS
from kubevec.query.limits import AccessCollector, Count
from kubevec.query.tools import names as tool_names

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
MCP_TOOLS: Final = tool_names()
STORE_OPERATIONS: Final = (
    "ensure_collection",
    "drop_collection",
    "collection_info",
    "upsert",
    "delete",
    "delete_where",
    "get",
    "sample",
    "count",
    "list_ids",
    "stamp",
    "journal",
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

    @contextlib.contextmanager
    def tool_call(self, tool: str) -> Iterator[None]:
        """One MCP tool call (``kubevec.query.scoped.ToolObserver``): a span, its time, and its failure."""
        from kubevec.controller.runtime.tracing import tracer

        started = time.perf_counter()
        try:
            with tracer().start_as_current_span(f"kubevec.mcp.{tool}"):
                yield
        except Exception:
            self.search_errors.labels(tool=tool).inc()
            raise
        finally:
            self.search_seconds.labels(tool=tool).observe(time.perf_counter() - started)

    def answered_degraded(self, tool: str) -> None:
        """A tool answered, but not as asked (the embedder is down: words alone)."""
        self.degraded_answers.labels(tool=tool).inc()

    def observed(self, *, backend: str, operation: str, seconds: float, failed: bool) -> None:
        """A store operation ended (``kubevec.backends.protocol.StoreObserver``): time it, count it if it failed."""
        if failed:
            self.store_errors.labels(backend=backend, operation=operation).inc()
        self.store_seconds.labels(backend=backend, operation=operation).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)


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
            ("kubevec_llm_cache_hits", "cache_hits", "LLM answers read from its cache instead of asked"),
            ("kubevec_llm_failures", "failures", "LLM requests that failed (the text is kept without the answer)"),
        ):
            yield CounterMetricFamily(name, help, value=float(getattr(self._llm, attribute, 0)) if self._llm else 0.0)
