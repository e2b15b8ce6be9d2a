"""``KUBEVEC_TRACING__ENDPOINT`` sends spans over OTLP/gRPC: a real gRPC receiver on a loopback port gets them."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from kubevec.controller.runtime import tracing
from tests.controlplane.cluster import free_port

pytestmark = pytest.mark.integration


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):  # type: ignore[misc]
    def __init__(self) -> None:
        self.requests: list[Any] = []

    def Export(self, request: Any, context: Any) -> Any:
        self.requests.append(request)
        return trace_service_pb2.ExportTraceServiceResponse()


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, int]]:
    port = free_port()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = Receiver()
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(servicer, server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    yield servicer, port
    server.stop(grace=None)


def test_spans_reach_an_otlp_grpc_endpoint(receiver: tuple[Receiver, int]) -> None:
    servicer, port = receiver
    provider = tracing.configure(
        endpoint=f"http://127.0.0.1:{port}", service_name="kubevec-test", sample_ratio=1.0, cluster="c1"
    )
    assert provider is not None
    try:
        with (
            tracing.tracer().start_as_current_span("kubevec.flush", attributes={"kubevec.documents": 3}),
            tracing.tracer().start_as_current_span("kubevec.embed"),
        ):
            pass
    finally:
        provider.shutdown()  # flushes the batch, as `kubevec run` does on exit
        tracing.use(None)
    spans = [
        (span.name, resource.resource)
        for request in servicer.requests
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    assert sorted(name for name, _ in spans) == ["kubevec.embed", "kubevec.flush"]
    attributes = {a.key: a.value.string_value for a in spans[0][1].attributes}
    assert attributes["service.name"] == "kubevec-test"
    assert attributes["k8s.cluster.name"] == "c1"
