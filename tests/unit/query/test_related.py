"""The ``related`` query: both directions, hops that keep their direction, clusters kept apart, clear errors."""

from __future__ import annotations

from typing import Any

import pytest

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.core.errors import SearchError
from kubevec.inference.instances import build_instance
from kubevec.query.related import Related
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder

NS = "shop"
POD_SPEC = {
    "containers": [
        {
            "name": "api",
            "image": "api:1",
            "env": [{"name": "P", "valueFrom": {"secretKeyRef": {"name": "db", "key": "p"}}}],
        }
    ],
    "volumes": [
        {"name": "cfg", "configMap": {"name": "settings"}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
    ],
}


def objects(ns: str) -> list[tuple[str, dict[str, Any]]]:
    meta = {"namespace": ns}
    return [
        ("deployments", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", **meta},
                         "spec": {"template": {"metadata": {"labels": {"app": "api"}}, "spec": POD_SPEC}}}),
        ("replicasets", {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                         "metadata": {"name": "api-1", **meta, "ownerReferences": [{"kind": "Deployment", "name": "api"}]},
                         "spec": {"template": {"metadata": {"labels": {"app": "api", "hash": "1"}}, "spec": POD_SPEC}}}),
        ("pods", {"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "api-1-x", **meta, "labels": {"app": "api", "hash": "1"},
                               "ownerReferences": [{"kind": "ReplicaSet", "name": "api-1"}]},
                  "spec": POD_SPEC, "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
        ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", **meta},
                      "spec": {"selector": {"app": "api"}}}),
        ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "other", **meta},
                      "spec": {"selector": {"app": "other"}}}),
        ("ingresses", {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web", **meta},
                       "spec": {"rules": [{"http": {"paths": [{"backend": {"service": {"name": "api"}}}]}}]}}),
        ("configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", **meta}}),
        ("persistentvolumeclaims", {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                    "metadata": {"name": "data", **meta}, "spec": {"storageClassName": "fast"}}),
    ]  # fmt: skip


@pytest.fixture
async def service() -> SearchService:
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection("instances", dimension=embedder.dimension, embedder=embedder.name)
    records = []
    for cluster in ("default", "other"):
        for plural, obj in objects(NS):
            doc = build_instance(obj, plural=plural, cluster=cluster).to_document()
            records.append(Record(id=doc.id, vector=embedder.vector(doc.text), text=doc.text, metadata=doc.metadata))
    await store.upsert("instances", records)
    return SearchService(store=store, embedder=None, collections={"instances": "instances"})


def edges(answer: Related) -> set[tuple[int, str, str, str]]:
    return {(e.hop, e.direction, e.relation, e.neighbour.label) for e in answer.edges}


async def test_what_breaks_if_a_secret_goes_even_when_the_secret_is_not_stored(service: SearchService) -> None:
    answer = await service.related("Secret/shop/db", direction="in", hops=2, cluster="default")
    assert answer.subject.label == "Secret shop/db (not stored)"
    assert edges(answer) == {
        (1, "in", "uses-secret", "Deployment shop/api"),
        (1, "in", "uses-secret", "ReplicaSet shop/api-1"),
        (1, "in", "uses-secret", "Pod shop/api-1-x [healthy]"),
        (2, "in", "selects", "Service shop/api"),  # selects the Deployment's pods (reached first)
    }
    assert all(e.source.cluster == "default" for e in answer.edges)


async def test_a_key_named_in_several_clusters_needs_a_cluster(service: SearchService) -> None:
    with pytest.raises(SearchError, match="several clusters"):
        await service.related("ConfigMap/shop/settings")
    unstored = await service.related("Secret/shop/db", direction="in")  # not stored: referrers of every cluster
    assert {e.source.cluster for e in unstored.edges} == {"default", "other"}


async def test_a_deployment_needs_its_config_secret_and_claim_and_the_claim_its_class(service: SearchService) -> None:
    deployment = "default/shop/apps/v1/Deployment/api"
    answer = await service.related(deployment, direction="out", hops=2)
    assert edges(answer) == {
        (1, "out", "uses-secret", "Secret shop/db (not stored)"),
        (1, "out", "uses-configmap", "ConfigMap shop/settings"),
        (1, "out", "mounts-claim", "PersistentVolumeClaim shop/data"),
        (2, "out", "uses-class", "StorageClass fast (not stored)"),
    }
    stored = {e.target.id for e in answer.edges if e.target.id}
    assert stored == {"default/shop/core/v1/ConfigMap/settings", "default/shop/core/v1/PersistentVolumeClaim/data"}


async def test_a_service_selects_workloads_and_pods_and_an_ingress_routes_to_it(service: SearchService) -> None:
    answer = await service.related("default/shop/core/v1/Service/api")
    assert edges(answer) == {
        (1, "out", "selects", "Deployment shop/api"),
        (1, "out", "selects", "ReplicaSet shop/api-1"),
        (1, "out", "selects", "Pod shop/api-1-x [healthy]"),
        (1, "in", "routes-to", "Ingress shop/web"),
    }
    json = answer.to_json()
    assert json["edges"][0]["from"]["id"] == "default/shop/core/v1/Service/api"
    assert {"hop", "direction", "relation", "evidence", "from", "to"} == set(json["edges"][0])
    assert {edge["evidence"] for edge in json["edges"]} == {"definite"}  # a selector that matches, a route


async def test_a_pod_follows_its_owner_chain_and_is_selected(service: SearchService) -> None:
    pod = "default/shop/core/v1/Pod/api-1-x"
    up = await service.related(pod, direction="out", hops=3)
    owners = [(e.hop, e.relation, e.target.label) for e in up.edges if e.relation == "owned-by"]
    assert owners == [(1, "owned-by", "ReplicaSet shop/api-1"), (2, "owned-by", "Deployment shop/api")]
    selected = await service.related(pod, direction="in")
    assert edges(selected) == {(1, "in", "selects", "Service shop/api")}
    assert "<- selects" in "\n".join(selected.lines())


async def test_bad_subjects_and_bounds_get_clear_errors(service: SearchService) -> None:
    with pytest.raises(SearchError, match="neither an instance id"):
        await service.related("deployment api")
    with pytest.raises(SearchError, match="No instance document"):
        await service.related("default/shop/apps/v1/Deployment/missing")
    with pytest.raises(SearchError, match="hops must be between 1 and 3"):
        await service.related("Secret/shop/db", hops=4)
    with pytest.raises(SearchError, match="direction must be"):
        await service.related("Secret/shop/db", direction="up")  # type: ignore[arg-type]
    lonely = await service.related("Secret/shop/nothing-uses-me", cluster="default")
    assert lonely.lines() == ["Secret shop/nothing-uses-me (not stored)", "  (no relationships in the store)"]


async def test_each_edge_says_whether_kubernetes_defines_it_or_a_field_name_suggests_it() -> None:
    """An owner reference or a pod's volume is definite; a custom resource's ``issuerRef`` is inferred."""
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection("instances", dimension=embedder.dimension, embedder=embedder.name)
    certificate = {
        "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "metadata": {"name": "api-tls", "namespace": NS, "ownerReferences": [{"kind": "Ingress", "name": "web"}]},
        "spec": {"secretName": "api-tls", "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"}},
    }  # fmt: skip
    doc = build_instance(certificate, plural="certificates", cluster="default").to_document()
    await store.upsert(
        "instances", [Record(id=doc.id, vector=embedder.vector(doc.text), text=doc.text, metadata=doc.metadata)]
    )
    service = SearchService(store=store, embedder=embedder, collections={"instances": "instances"})
    answer = await service.related(doc.id, direction="out")
    assert {(e.relation, e.evidence) for e in answer.edges} == {
        ("owned-by", "definite"),
        ("secretName", "inferred"),
        ("issuerRef", "inferred"),
    }
    text = "\n".join(answer.lines())
    assert "issuerRef" in text
    assert "ClusterIssuer letsencrypt" in text
    assert text.count("(inferred)") == 2


SELECTING = [
    ("networkpolicies", {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                         "metadata": {"name": "api", "namespace": NS},
                         "spec": {"podSelector": {"matchLabels": {"app": "api"}}}}),
    ("networkpolicies", {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                         "metadata": {"name": "deny-all", "namespace": NS}, "spec": {"podSelector": {}}}),
    ("networkpolicies", {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                         "metadata": {"name": "expressions", "namespace": NS},
                         "spec": {"podSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}}),
    ("poddisruptionbudgets", {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                              "metadata": {"name": "api", "namespace": NS},
                              "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "api", "hash": "1"}}}}),
    ("servicemonitors", {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
                         "metadata": {"name": "api", "namespace": "monitoring"},
                         "spec": {"selector": {"matchLabels": {"team": "shop"}},
                                  "namespaceSelector": {"matchNames": [NS]}}}),
    ("servicemonitors", {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
                         "metadata": {"name": "elsewhere", "namespace": "monitoring"},
                         "spec": {"selector": {"matchLabels": {"team": "shop"}}}}),
    ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "labelled", "namespace": NS,
                                                                      "labels": {"team": "shop"}},
                  "spec": {"selector": {"app": "api"}}}),
    ("virtualservices", {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
                         "metadata": {"name": "api", "namespace": NS},
                         "spec": {"hosts": ["*"], "http": [{"route": [
                             {"destination": {"host": "labelled"}},
                             {"destination": {"host": "api.shop.svc.cluster.local"}},
                             {"destination": {"host": "api.example.com"}}]}]}}),
    ("clusterrolebindings", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                             "metadata": {"name": "system:controller:job-controller"},
                             "roleRef": {"kind": "ClusterRole", "name": "system:controller:job-controller"}}),
    ("clusterroles", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                      "metadata": {"name": "system:controller:job-controller"}}),
    ("ipaddresses", {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": "10.0.0.7"},
                     "spec": {"parentRef": {"group": "", "resource": "services", "namespace": NS, "name": "api"}}}),
    ("flowschemas", {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
                     "metadata": {"name": "workload"}, "spec": {"priorityLevelConfiguration": {"name": "high"}}}),
]  # fmt: skip


@pytest.fixture
async def selecting(service: SearchService) -> SearchService:
    embedder = CountingEmbedder()
    docs = [build_instance(obj, plural=plural).to_document() for plural, obj in SELECTING]
    records = [Record(id=d.id, vector=embedder.vector(d.text), text=d.text, metadata=d.metadata) for d in docs]
    await service.store.upsert("instances", records)
    return service


async def test_network_policies_and_budgets_select_pods_by_label_and_an_empty_selector_selects_all(
    selecting: SearchService,
) -> None:
    policy = await selecting.related("NetworkPolicy/shop/api", direction="out", cluster="default")
    assert edges(policy) == {
        (1, "out", "selects", "Deployment shop/api"),
        (1, "out", "selects", "ReplicaSet shop/api-1"),
        (1, "out", "selects", "Pod shop/api-1-x [healthy]"),
    }
    deny = await selecting.related("NetworkPolicy/shop/deny-all", direction="out", cluster="default")
    assert (1, "out", "selects", "Pod shop/api-1-x [healthy]") in edges(deny)
    guessed = await selecting.related("NetworkPolicy/shop/expressions", direction="out", cluster="default")
    assert edges(guessed) == set()  # matchExpressions are not guessed from half a selector
    budget = await selecting.related("PodDisruptionBudget/shop/api", direction="out", cluster="default")
    assert {e.target.kind for e in budget.edges} == {"ReplicaSet", "Pod"}  # the Deployment lacks hash=1
    pod = await selecting.related("default/shop/core/v1/Pod/api-1-x", direction="in")
    assert {(r, label) for _, _, r, label in edges(pod)} == {
        ("selects", "Service shop/api"),
        ("selects", "Service shop/labelled"),
        ("selects", "NetworkPolicy shop/api"),
        ("selects", "NetworkPolicy shop/deny-all"),
        ("selects", "PodDisruptionBudget shop/api"),
    }


async def test_a_service_monitor_monitors_services_by_label_in_the_namespaces_it_names(
    selecting: SearchService,
) -> None:
    monitor = await selecting.related("ServiceMonitor/monitoring/api", direction="out", cluster="default")
    assert edges(monitor) == {(1, "out", "monitors", "Service shop/labelled")}
    assert {e.to_json()["evidence"] for e in monitor.edges} == {"inferred"}  # a custom resource's convention
    elsewhere = await selecting.related("ServiceMonitor/monitoring/elsewhere", direction="out", cluster="default")
    assert edges(elsewhere) == set()  # its own namespace only
    service = await selecting.related("Service/shop/labelled", direction="in", cluster="default")
    assert (1, "in", "monitors", "ServiceMonitor monitoring/api") in edges(service)
    assert (1, "in", "destination", "VirtualService shop/api") in edges(service)


async def test_routes_bindings_addresses_and_flow_schemas_name_their_targets(selecting: SearchService) -> None:
    route = await selecting.related("VirtualService/shop/api", direction="out", cluster="default")
    assert {label for _, _, _, label in edges(route)} == {
        "Service shop/labelled",
        "Service shop/api",
    }  # not example.com
    binding = await selecting.related(
        "ClusterRoleBinding/_cluster/system:controller:job-controller", direction="out", cluster="default"
    )
    assert edges(binding) == {(1, "out", "grants", "ClusterRole system:controller:job-controller")}
    address = await selecting.related("IPAddress/_cluster/10.0.0.7", direction="out", cluster="default")
    assert edges(address) == {(1, "out", "parentRef", "Service shop/api")}
    schema = await selecting.related("FlowSchema/_cluster/workload", direction="out", cluster="default")
    assert edges(schema) == {(1, "out", "priority-level", "PriorityLevelConfiguration high (not stored)")}
