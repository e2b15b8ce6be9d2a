"""Two tenants' objects in one index (and another cluster's copy): the fixture of the access tests."""

from __future__ import annotations

from typing import Any

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.inference.instances import build_instance
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder

CLUSTER = "prod"
POD_SPEC = {
    "containers": [
        {"name": "api", "image": "api:1", "envFrom": [{"secretRef": {"name": "db-creds"}}]},
    ],
}


def objects(ns: str) -> list[tuple[str, dict[str, Any]]]:
    meta = {"namespace": ns}
    return [
        ("deployments", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"{ns}-api", **meta},
                         "spec": {"template": {"metadata": {"labels": {"app": "api"}}, "spec": POD_SPEC}}}),
        ("configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{ns}-settings", **meta}}),
        ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"{ns}-svc", **meta},
                      "spec": {"selector": {"app": "api"}}}),
    ]  # fmt: skip


CLUSTER_WIDE = [
    ("clusterroles", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                      "metadata": {"name": "secret-reader"}}),
]  # fmt: skip


async def index() -> tuple[SearchService, MemoryStore]:
    store, embedder = MemoryStore(), CountingEmbedder()
    for collection in ("instances", "capabilities"):
        await store.ensure_collection(collection, dimension=embedder.dimension, embedder=embedder.name)
    records = []
    for cluster in (CLUSTER, "staging"):
        for plural, obj in [*objects("team-a"), *objects("team-b"), *CLUSTER_WIDE]:
            doc = build_instance(obj, plural=plural, cluster=cluster).to_document()
            records.append(Record(id=doc.id, vector=embedder.vector(doc.text), text=doc.text, metadata=doc.metadata))
    await store.upsert("instances", records)
    capability = {
        "cluster": CLUSTER,
        "kind": "Certificate",
        "group": "cert-manager.io",
        "content_hash": "c1",
        "resource": "certificates.cert-manager.io",
    }
    await store.upsert(
        "capabilities",
        [
            Record(
                id="certificates.cert-manager.io",
                vector=embedder.vector("tls"),
                text="Certificate tls",
                metadata=capability,
            )
        ],
    )
    service = SearchService(
        store=store, embedder=embedder, collections={"instances": "instances", "capabilities": "capabilities"}
    )
    return service, store


async def ids(service: SearchService, view: Any, **fields: Any) -> set[str]:
    results = await service.search(SearchRequest.build(**{"k": 100, **fields}), view=view)
    return {r.id for r in results}
