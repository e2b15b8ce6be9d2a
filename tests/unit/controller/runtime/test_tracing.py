"""Tracing off by default; on, one event yields a span tree an operator can follow (in-memory exporter)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NoOpTracer

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.controller.app import App
from kubevec.controller.runtime import tracing
from kubevec.controller.settings import ServerSettings, Settings
from kubevec.core.errors import SearchError
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use(provider)
    yield exporter
    tracing.use(None)


def by_name(finished: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in finished if s.name == name]


def test_tracing_is_off_by_default() -> None:
    assert isinstance(tracing.tracer(), NoOpTracer)
    assert tracing.configure(endpoint=None, service_name="kubevec", sample_ratio=1.0, cluster="c") is None
    assert Settings().tracing.endpoint is None


async def test_one_event_becomes_an_event_span_linked_from_the_flush_that_embeds_and_upserts_it(
    spans: InMemorySpanExporter,
) -> None:
    settings = Settings(cluster_name="unit", server=ServerSettings(health_port=0, metrics_port=0))
    app = App(settings=settings, store=MemoryStore(), embedder=CountingEmbedder())
    await app.engine.prepare()
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "namespace": "a"}, "data": {"k": "v"}}
    app.events.observe_object(
        group="", version="v1", plural="configmaps", kind="ConfigMap", event_type="ADDED", body=body
    )
    assert await app.engine.flush()
    finished = spans.get_finished_spans()
    (event,) = by_name(finished, "kubevec.event")
    assert dict(event.attributes or {}) == {
        "k8s.resource": "configmaps",
        "k8s.event.type": "ADDED",
        "k8s.namespace": "a",
        "k8s.name": "web",
    }
    (flush,) = by_name(finished, "kubevec.flush")
    assert [link.context.span_id for link in flush.links] == [event.context.span_id]
    assert (flush.attributes or {})["kubevec.documents"] == 1
    (embed,) = by_name(finished, "kubevec.embed")
    (upsert,) = by_name(finished, "kubevec.upsert")
    for child in (embed, upsert):
        assert child.parent is not None
        assert child.parent.span_id == flush.context.span_id
        assert child.context.trace_id == flush.context.trace_id
    assert dict(embed.attributes or {}) == {"kubevec.collection": "instances", "kubevec.texts": 1}
    assert (upsert.attributes or {})["kubevec.documents"] == 1
    await app.store.close()


async def test_mcp_tool_calls_are_spans(spans: InMemorySpanExporter) -> None:
    from kubevec.controller.runtime.metrics import Metrics

    store = MemoryStore()
    embedder = CountingEmbedder()
    await store.ensure_collection("capabilities", dimension=embedder.dimension, embedder=embedder.name)
    text = "Certificate (cert-manager.io) TLS certificates"
    await store.upsert(
        "capabilities", [Record(id="c", vector=embedder.vector(text), text=text, metadata={"content_hash": "h"})]
    )
    metrics = Metrics()
    service = SearchService(
        store=store, embedder=embedder, collections={"capabilities": "capabilities"}, observer=metrics
    ).scoped(None)
    await service.search(SearchRequest.build(collection="capabilities", query="tls certificate"))
    (tool,) = by_name(spans.get_finished_spans(), "kubevec.mcp.vector_search")
    assert tool.status.is_ok
    # the same wrapper times every call and counts failures, per tool
    registry = metrics.registry
    assert registry.get_sample_value("kubevec_mcp_request_duration_seconds_count", {"tool": "vector_search"}) == 1
    assert registry.get_sample_value("kubevec_mcp_request_errors_total", {"tool": "vector_search"}) == 0
    with pytest.raises(SearchError):
        await service.search(SearchRequest.build(collection="instances", query="tls"))  # no such collection here
    assert registry.get_sample_value("kubevec_mcp_request_duration_seconds_count", {"tool": "vector_search"}) == 2
    assert registry.get_sample_value("kubevec_mcp_request_errors_total", {"tool": "vector_search"}) == 1
    failed = by_name(spans.get_finished_spans(), "kubevec.mcp.vector_search")[-1]
    assert not failed.status.is_ok


async def test_a_resync_is_a_span_with_its_list_and_diff_phases(spans: InMemorySpanExporter) -> None:
    from tests.doubles.cluster import FakeReader, configmap, synced

    await synced(FakeReader(), configmap("a"), configmap("b"))
    finished = spans.get_finished_spans()
    (resync,) = by_name(finished, "kubevec.resync")
    (listing,) = by_name(finished, "kubevec.resync.list")
    (diff,) = by_name(finished, "kubevec.resync.diff")
    assert listing.parent is not None
    assert listing.parent.span_id == resync.context.span_id
    assert diff.parent is not None
    assert diff.parent.span_id == resync.context.span_id
    assert (listing.attributes or {})["kubevec.instances"] == 2
    assert (diff.attributes or {})["kubevec.upserts"] == 2
    assert (resync.attributes or {})["kubevec.documents"] == 2
