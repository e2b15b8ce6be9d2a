"""Optional OpenTelemetry tracing: off unless ``KUBEVEC_TRACING__ENDPOINT`` names an OTLP collector.

Spans: ``kubevec.event`` (one watch event: the document built and queued), ``kubevec.flush`` (one
batch written, linked to the events it carries: a batch serves many events, so it is their link,
not their child), under it ``kubevec.embed`` and ``kubevec.upsert`` / ``kubevec.delete`` per
collection, ``kubevec.resync`` with ``kubevec.resync.list`` and ``kubevec.resync.diff``, and
``kubevec.mcp.<tool>`` for the tools the controller serves. Counts are attributes
(``kubevec.documents``, ``kubevec.texts``). Off, every span is OpenTelemetry's no-op.

The exporter speaks OTLP over gRPC; ``http://`` endpoints are plain, ``https://`` use TLS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from opentelemetry.trace import NoOpTracer, Tracer, get_current_span

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

_tracer: Tracer = NoOpTracer()


def tracer() -> Tracer:
    """The tracer spans are started on (OpenTelemetry's no-op one unless tracing is configured)."""
    return _tracer


def span_event(name: str, attributes: Mapping[str, str | int | float]) -> None:
    """An event on the current span (the audit trail's record on its ``kubevec.mcp.<tool>`` span)."""
    get_current_span().add_event(name, attributes=dict(attributes))


def use(provider: TracerProvider | None) -> None:
    """Send spans to ``provider`` (tests pass one with an in-memory exporter); ``None`` turns tracing off.

    A process-local choice rather than OpenTelemetry's global provider, which can be set once only.
    """
    global _tracer
    _tracer = NoOpTracer() if provider is None else provider.get_tracer("kubevec", _version())


def configure(*, endpoint: str | None, service_name: str, sample_ratio: float, cluster: str) -> TracerProvider | None:
    """The OTLP pipeline ``KUBEVEC_TRACING__*`` asks for, in use, or ``None`` when tracing is off.

    The caller shuts the provider down at exit (that flushes the last spans).
    """
    if not endpoint:
        return None
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    resource = Resource.create(
        {"service.name": service_name, "service.version": _version(), "k8s.cluster.name": cluster}
    )
    provider = TracerProvider(resource=resource, sampler=ParentBased(TraceIdRatioBased(sample_ratio)))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    use(provider)
    return provider


def _version() -> str:
    from kubevec.core.version import kubevec_version

    return kubevec_version()
