"""Prometheus metrics, in a registry of their own (several controllers can live in one test process)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


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
        self.skipped = Counter(
            "kubevec_embeddings_skipped_total",
            "Documents not embedded: unchanged hash, or vector re-used for a metadata-only change",
            ["collection", "reason"],
            registry=r,
        )
        self.embed_seconds = Histogram(
            "kubevec_embedding_duration_seconds", "Time to embed one batch", buckets=_LATENCY_BUCKETS, registry=r
        )
        self.event_to_store = Histogram(
            "kubevec_event_to_stored_seconds",
            "Time from receiving an event to its document being stored",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.queue_depth = Gauge("kubevec_queue_depth", "Documents waiting to be flushed", registry=r)
        self.errors = Counter("kubevec_errors_total", "Errors by stage", ["stage"], registry=r)
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

    def render(self) -> bytes:
        return generate_latest(self.registry)
