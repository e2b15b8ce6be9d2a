"""Listing questions are filters and counts over the facts in instance metadata (what the tool description teaches)."""

from __future__ import annotations

from typing import Any

import pytest

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.inference.instances import build_instance
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder


def deployment(name: str, *, image: str, limits: bool) -> tuple[str, dict[str, Any]]:
    resources = {"limits": {"memory": "128Mi"}} if limits else {}
    return ("deployments", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "shop"},
                            "spec": {"template": {"spec": {"containers": [
                                {"name": "c", "image": image, "resources": resources}]}}}})  # fmt: skip


OBJECTS = [
    deployment("web", image="web:1", limits=True),
    deployment("api", image="api:2", limits=False),
    deployment("worker", image="api:2", limits=False),
    ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api-x", "namespace": "shop"},
              "spec": {"containers": [{"name": "c", "image": "api:2"}]},
              "status": {"phase": "Running", "containerStatuses": [{"name": "c", "restartCount": 3,
                         "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                         "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}}]}}),
    ("clusterrolebindings", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                             "metadata": {"name": "admins"}, "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"},
                             "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "ops"}]}),
]  # fmt: skip


@pytest.fixture
async def service() -> SearchService:
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection("instances", dimension=embedder.dimension, embedder=embedder.name)
    docs = [build_instance(obj, plural=plural).to_document() for plural, obj in OBJECTS]
    await store.upsert(
        "instances", [Record(id=d.id, vector=embedder.vector(d.text), text=d.text, metadata=d.metadata) for d in docs]
    )
    return SearchService(store=store, embedder=embedder, collections={"instances": "instances"})


async def test_images_of_every_deployment_are_a_count(service: SearchService) -> None:
    answer = await service.search(SearchRequest.build(collection="instances", kind="Deployment", count_by="images"))
    assert answer.counts == {"api:2": 2, "web:1": 1}


async def test_deployments_without_limits_are_a_filter(service: SearchService) -> None:
    request = SearchRequest.build(
        collection="instances", kind="Deployment", filter={"resource_limits": {"$ne": "all"}}, k=10
    )
    assert sorted(r.metadata["name"] for r in await service.search(request)) == ["api", "worker"]


async def test_what_is_broken_and_why_is_a_count_of_reasons(service: SearchService) -> None:
    request = SearchRequest.build(collection="instances", filter={"health": "degraded"}, count_by="container_reasons")
    assert (await service.search(request)).counts == {"CrashLoopBackOff": 1, "OOMKilled": 1}


async def test_who_is_bound_to_a_role_is_a_filter_on_role_counted_by_subject(service: SearchService) -> None:
    request = SearchRequest.build(
        collection="instances", filter={"role": "ClusterRole/cluster-admin"}, count_by="subjects"
    )
    assert (await service.search(request)).counts == {"Group/ops": 1, "User/alice": 1}
