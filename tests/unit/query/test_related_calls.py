"""``calls`` edges (issue 51): resolved against the Services the store holds, with their evidence; a store
written before the rename (``connects-to``) still answers."""

from __future__ import annotations

from typing import Any

import pytest

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.inference.instances import build_instance
from kubevec.query.mcp.schemas import Relation
from kubevec.query.related import Related
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder

ENV = [
    {"name": "CART_SERVICE_ADDR", "value": "cartservice:7070"},
    {"name": "DATABASE_URL", "value": "postgres://app:Qz7mapleRiver@db.payments.svc.cluster.local:5432/app"},
    {"name": "LEGACY_ADDR", "value": "legacy.other:80"},  # name.ns: Service other/legacy, not stored
    {"name": "SITE_URL", "value": "https://example.com/"},  # name.ns by shape: an outside host
    {"name": "GONE_ADDR", "value": "gone:80"},  # a bare name the cluster has no Service for
]


def _objects() -> list[tuple[str, dict[str, Any]]]:
    pod = {"containers": [{"name": "web", "image": "web:1", "env": ENV, "args": ["--search=http://search:9200"]}]}
    return [
        ("deployments", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "frontend", "namespace": "shop"},
                         "spec": {"template": {"metadata": {"labels": {"app": "frontend"}}, "spec": pod}}}),
        ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "cartservice", "namespace": "shop"}}),
        ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "search", "namespace": "shop"}}),
        ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db", "namespace": "payments"}}),
        # a Service of the same name in another namespace is not the one a bare host names
        ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "gone", "namespace": "elsewhere"}}),
    ]  # fmt: skip


async def _service(records: list[Record]) -> SearchService:
    store = MemoryStore()
    await store.ensure_collection("instances", dimension=CountingEmbedder().dimension, embedder="counting")
    await store.upsert("instances", records)
    return SearchService(store=store, embedder=None, collections={"instances": "instances"})


def _records(*, legacy: bool = False) -> list[Record]:
    embedder, out = CountingEmbedder(), []
    for plural, obj in _objects():
        doc = build_instance(obj, plural=plural).to_document()
        metadata = dict(doc.metadata)
        if legacy and "ref_relations" in metadata:  # as the previous builder stored it: no evidence, the old name
            metadata["ref_relations"] = ["connects-to" if r == "calls" else r for r in metadata["ref_relations"]]
            metadata.pop("call_evidence", None)
        out.append(Record(id=doc.id, vector=embedder.vector(doc.text), text=doc.text, metadata=metadata))
    return out


@pytest.fixture
async def service() -> SearchService:
    return await _service(_records())


def _calls(answer: Related) -> set[tuple[str, str, str]]:
    return {(e.direction, e.neighbour.key, e.via) for e in answer.edges if e.relation == "calls"}


async def test_calls_reach_only_the_services_the_store_holds_with_what_named_them(service: SearchService) -> None:
    answer = await service.related("Deployment/shop/frontend", direction="out")
    assert _calls(answer) == {
        ("out", "Service/shop/cartservice", "CART_SERVICE_ADDR"),
        ("out", "Service/payments/db", "DATABASE_URL"),
        ("out", "Service/shop/search", "args"),
    }
    edge = next(e for e in answer.edges if e.relation == "calls" and e.via == "CART_SERVICE_ADDR")
    assert edge.to_json()["via"] == "CART_SERVICE_ADDR"
    assert Relation.model_validate(edge.to_json()).via == "CART_SERVICE_ADDR"  # the MCP tool's typed answer keeps it
    assert edge.evidence == "inferred"  # read from a value's shape, not a field Kubernetes defines
    assert any("calls" in line and "Service shop/cartservice via CART_SERVICE_ADDR" in line for line in answer.lines())
    assert "Qz7mapleRiver" not in repr(answer.to_json())


async def test_a_service_knows_who_calls_it(service: SearchService) -> None:
    answer = await service.related("Service/payments/db", direction="in")
    assert _calls(answer) == {("in", "Deployment/shop/frontend", "DATABASE_URL")}


async def test_a_service_the_store_lacks_has_no_callers() -> None:
    """A subject named by key only (not stored): a candidate address is not evidence that it exists."""
    service = await _service(_records())
    answer = await service.related("Service/other/legacy", direction="in")
    assert _calls(answer) == set()


async def test_a_store_written_before_the_rename_answers_calls() -> None:
    service = await _service(_records(legacy=True))
    answer = await service.related("Deployment/shop/frontend", direction="out")
    assert {(d, key) for d, key, _ in _calls(answer)} == {
        ("out", "Service/shop/cartservice"),
        ("out", "Service/payments/db"),
        ("out", "Service/shop/search"),
    }
    assert {via for _, _, via in _calls(answer)} == {""}
