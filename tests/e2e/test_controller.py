"""The controller against a real etcd + kube-apiserver, embedded Chroma and the offline embedder.

Every test stands alone: its own namespace, its own store, its own controller; any one runs by
itself (``pytest tests/e2e/test_controller.py::test_...``). The CRDs are the tests' own (no
``../shared``), installed once per module and left for the session: CRDs are cluster-wide.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubevec.controller.app import App
from kubevec.inference.providers.embedders.local import LocalEmbedder
from tests.conftest import SYNCPOLICY_CRD
from tests.controlplane.cluster import ControlPlane
from tests.doubles.embedders import CountingEmbedder
from tests.e2e.controller_harness import (
    CLUSTER,
    apply,
    counter,
    embedded,
    eventually,
    iid,
    namespaced_crd,
    running_controller,
    settings_for,
    stored,
)

pytestmark = pytest.mark.e2e

SECRET_VALUE = "cGF5bWVudHMtZGItcGFzc3dvcmQtOTk="  # payments-db-password-99
CERT_GROUP = "pki.e2e.kubevec.io"
CERTIFICATES = f"certificates.{CERT_GROUP}"
CERTIFICATE_CRD = namespaced_crd(
    group=CERT_GROUP,
    plural="certificates",
    kind="Certificate",
    schema={
        "type": "object",
        "description": "A Certificate is an X.509 TLS certificate, issued by an issuer and renewed automatically "
        "before it expires; the key pair is stored in a Secret.",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "secretName": {"type": "string", "description": "Secret the signed certificate is stored in."},
                    "dnsNames": {"type": "array", "items": {"type": "string"}},
                    "issuerRef": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    },
)
CERTIFICATE_CRD["spec"]["versions"][0]["subresources"] = {"status": {}}


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.fixture(scope="module")
def cluster(control_plane: ControlPlane) -> ControlPlane:
    apply(control_plane, CERTIFICATE_CRD)
    control_plane.kubectl("wait", "--for=condition=Established", f"crd/{CERTIFICATES}")
    return control_plane


@pytest.fixture
def ns(cluster: ControlPlane) -> Iterator[str]:
    """A namespace of this test's own, with a small shop in it; deleted afterwards."""
    name = f"shop-{uuid.uuid4().hex[:6]}"
    apply(cluster, shop(name))
    yield name
    cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "chroma"


def shop(ns: str) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "payments-api", "namespace": ns, "labels": {"app": "payments"}},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "payments"}},
                "template": {
                    "metadata": {"labels": {"app": "payments"}},
                    "spec": {"containers": [{"name": "api", "image": "ghcr.io/acme/payments:1.4.2"}]},
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "payments-api", "namespace": ns},
            "spec": {"selector": {"app": "payments"}, "ports": [{"port": 8080}]},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": ns},
            "data": {"LOG_LEVEL": "verbose-config-value"},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "db", "namespace": ns},
            "data": {"password": SECRET_VALUE},
        },
        {
            "apiVersion": f"{CERT_GROUP}/v1",
            "kind": "Certificate",
            "metadata": {"name": "api-tls", "namespace": ns},
            "spec": {"secretName": "api-tls", "dnsNames": ["api.example.com"], "issuerRef": {"name": "le"}},
        },
    ]


def deployment(ns: str) -> str:
    return iid(ns, "apps", "v1", "Deployment", "payments-api")


def certificate(ns: str) -> str:
    return iid(ns, CERT_GROUP, "v1", "Certificate", "api-tls")


def configmap(ns: str, name: str = "settings") -> str:
    return iid(ns, "", "v1", "ConfigMap", name)


def test_initial_sync_indexes_types_and_objects(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        capabilities = stored(store_path, "capabilities")
        assert {CERTIFICATES, "deployments.apps", "pods", "configmaps"} <= set(capabilities)
        assert "renewed" in capabilities[CERTIFICATES]["text"]
        # What each was built from, so a restart neither fetches schemas nor describes again:
        # a built-in kind by its group-version's schema hash in /openapi/v3, a CRD by its generation.
        assert capabilities["pods"]["metadata"]["built_from"].count("/") >= 2
        assert capabilities[CERTIFICATES]["metadata"]["built_from"].split("/")[1] == "1"
        instances = stored(store_path, "instances")
        for document_id in (deployment(ns), certificate(ns), configmap(ns), iid(None, "", "v1", "Namespace", ns)):
            assert document_id in instances, document_id
        assert iid(ns, "", "v1", "Secret", "db") not in instances  # Secrets only when a SyncPolicy opts in
        assert "images: ghcr.io/acme/payments:1.4.2" in instances[deployment(ns)]["text"]
        assert not any("/Event/" in i for i in instances)


def test_a_label_change_re_embeds_exactly_one_document(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder) as app:
        before = embedded(app, "instances")
        cluster.kubectl("label", "deployment/payments-api", "-n", ns, "tier=api")
        eventually(lambda: "tier=api" in stored(store_path, "instances")[deployment(ns)]["metadata"]["labels"])
        assert embedded(app, "instances") == before + 1


def test_status_changes_embed_nothing_and_write_only_when_the_health_summary_changes(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder) as app:
        before_doc = stored(store_path, "instances")[certificate(ns)]
        assert "health" not in before_doc["metadata"]  # no status yet: no summary
        before = embedded(app, "instances")

        def patch_status(conditions: list[dict[str, str]]) -> None:
            body = json.dumps({"status": {"conditions": conditions}})
            cluster.kubectl(
                "patch", "certificate/api-tls", "-n", ns, "--subresource=status", "--type=merge", "-p", body
            )

        # Ready=False with an error: the summary changes; the stored vector is re-used, nothing embedded.
        reused = counter(app, "kubevec_embeddings_skipped_total", collection="instances", reason="vector_reused")
        patch_status([{"type": "Ready", "status": "False", "reason": "IssuerNotFound"}])
        degraded = eventually(
            lambda: (
                (d := stored(store_path, "instances")[certificate(ns)])["metadata"].get("health") == "degraded" and d
            ),
            message="the health summary never reached the store",
        )
        assert degraded["metadata"]["health_reason"] == "IssuerNotFound"
        assert degraded["metadata"]["ready"] is False
        assert degraded["text"] == before_doc["text"]
        assert counter(app, "kubevec_embeddings_skipped_total", collection="instances", reason="vector_reused") > reused
        assert embedded(app, "instances") == before
        # A message says why: written to the metadata, nothing embedded.
        looking = {"type": "Ready", "status": "False", "reason": "IssuerNotFound", "message": "still looking"}
        patch_status([looking])
        said = eventually(
            lambda: (
                (d := stored(store_path, "instances")[certificate(ns)])["metadata"].get("health_message")
                == "still looking"
                and d
            ),
            message="the condition's message never reached the store",
        )
        assert embedded(app, "instances") == before
        # Churn that leaves the summary equal (a new timestamp): planned, skipped, unchanged.
        skipped = counter(app, "kubevec_embeddings_skipped_total", collection="instances", reason="unchanged")
        patch_status([{**looking, "lastTransitionTime": "2026-01-01T00:00:00Z"}])
        eventually(
            lambda: (
                counter(app, "kubevec_embeddings_skipped_total", collection="instances", reason="unchanged") > skipped
            )
        )
        assert embedded(app, "instances") == before
        assert stored(store_path, "instances")[certificate(ns)] == said
        # Agents find it by health, without a query.
        env = {**os.environ, "KUBEVEC_STORE__PATH": str(store_path), "KUBEVEC_LOG_LEVEL": "WARNING"}
        shown = subprocess.run(
            [str(Path(sys.executable).with_name("kubevec")), "search", "--collection", "instances",
             "--health", "degraded", "-n", ns, "-o", "name"],
            env=env, capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        assert shown.stdout.split() == [certificate(ns)]


def test_objects_created_and_deleted_live(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        cluster.kubectl("create", "configmap", "extra", "-n", ns, "--from-literal=k=v")
        eventually(lambda: configmap(ns, "extra") in stored(store_path, "instances"), message="created, not stored")
        cluster.kubectl("delete", "configmap", "extra", "-n", ns)
        eventually(
            lambda: configmap(ns, "extra") not in stored(store_path, "instances"), message="deleted, still stored"
        )


def test_a_crd_installed_after_start_up_and_deleted_again(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    group = f"messaging{uuid.uuid4().hex[:6]}.e2e.kubevec.io"
    crd = namespaced_crd(
        group=group,
        plural="topics",
        kind="Topic",
        schema={
            "type": "object",
            "description": "A Topic is a message topic with partitions and replicas.",
            "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        },
    )
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        apply(cluster, crd)
        cluster.kubectl("wait", "--for=condition=Established", f"crd/topics.{group}")
        apply(
            cluster,
            {
                "apiVersion": f"{group}/v1",
                "kind": "Topic",
                "metadata": {"name": "orders", "namespace": ns},
                "spec": {"partitions": 12, "replicas": 3},
            },
        )
        topic = iid(ns, group, "v1", "Topic", "orders")
        eventually(
            lambda: topic in stored(store_path, "instances"),
            timeout=60,
            message="instance of a CRD installed after start-up not stored",
        )
        assert "partitions: 12" in stored(store_path, "instances")[topic]["text"]
        assert f"topics.{group}" in stored(store_path, "capabilities")
        cluster.kubectl("delete", "crd", f"topics.{group}")
        eventually(lambda: f"topics.{group}" not in stored(store_path, "capabilities"), timeout=60)
        eventually(lambda: topic not in stored(store_path, "instances"), timeout=60)


def test_secrets_and_last_applied_appear_nowhere(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    # The shop was applied client-side: every object carries last-applied-configuration, the Secret's too.
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        everything = json.dumps([stored(store_path, "instances"), stored(store_path, "capabilities")])
        assert "keys: LOG_LEVEL" in stored(store_path, "instances")[configmap(ns)]["text"]
    assert SECRET_VALUE not in everything
    assert "payments-db-password" not in everything
    assert "verbose-config-value" not in everything
    assert "last-applied-configuration" not in everything
    assert "managedFields" not in everything


def test_a_restart_with_an_unchanged_cluster_embeds_nothing(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        pass
    before = {c: stored(store_path, c) for c in ("capabilities", "instances")}
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder) as app:
        assert embedded(app, "instances") == 0
        assert embedded(app, "capabilities") == 0
    after = {c: stored(store_path, c) for c in ("capabilities", "instances")}
    mine = [i for i in before["instances"] if f"/{ns}/" in i]
    assert len(mine) >= 4
    assert {i: after["instances"].get(i) for i in mine} == {i: before["instances"][i] for i in mine}
    assert after["capabilities"] == before["capabilities"]


def test_start_up_lists_each_object_once_and_misses_no_change_made_meanwhile(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    """kopf's first listings are handed over to the first resync (``controller/sync/handover.py``).

    The resync lists a resource only once kopf's watch of it has a resource version, so what changes
    while the controller starts arrives as watch events; ConfigMaps churn all through a restart.
    """
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        pass
    stop = threading.Event()
    steps: list[int] = []

    def churn() -> None:
        step = 0
        while not stop.is_set():
            step += 1
            cluster.kubectl("label", "configmap", "settings", "-n", ns, f"step={step}", "--overwrite")
            cluster.kubectl("create", "configmap", f"churn-{step}", "-n", ns, "--from-literal=a=b")
            if step > 1:
                cluster.kubectl("delete", "configmap", f"churn-{step - 1}", "-n", ns, "--wait=false")
            steps.append(step)

    churning = threading.Thread(target=churn)
    churning.start()
    try:
        eventually(lambda: len(steps) >= 2, timeout=60)
        with running_controller(plane=cluster, store_path=store_path, embedder=embedder) as app:
            time.sleep(1)
            stop.set()
            churning.join()
            assert app.handover.handed_over > 0
            assert not app.handover.open
            # No ConfigMap came as a listing event: the resync listed them, once.
            assert counter(app, "kubevec_events_received_total", resource="configmaps", type="LIST") == 0
            assert counter(app, "kubevec_events_received_total", resource="configmaps", type="MODIFIED") > 0
            last = steps[-1]

            def converged() -> bool:
                instances = stored(store_path, "instances")
                churned = {i for i in instances if f"/{ns}/core/v1/ConfigMap/churn-" in i}
                labels = instances[configmap(ns)]["metadata"]["labels"]
                return churned == {configmap(ns, f"churn-{last}")} and f"step={last}" in labels

            eventually(converged, timeout=30, message="the store missed changes made during start-up")
    finally:
        stop.set()
        churning.join()


def test_objects_deleted_while_stopped_are_gone_after_restart(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        pass
    assert configmap(ns) in stored(store_path, "instances")
    cluster.kubectl("delete", "configmap", "settings", "-n", ns)
    cluster.kubectl("create", "configmap", "while-down", "-n", ns, "--from-literal=a=b")
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        instances = stored(store_path, "instances")
        assert configmap(ns) not in instances
        assert configmap(ns, "while-down") in instances


def test_a_restricted_token_reads_only_and_writes_nothing(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    cluster.kubectl("apply", "-f", str(SYNCPOLICY_CRD))
    reader = cluster.grant_reader(
        rules=[{"apiGroups": ["kubevec.io"], "resources": ["syncpolicies/status"], "verbs": ["patch", "update"]}]
    )
    assert cluster.kubectl("auth", "can-i", "patch", "deployments", "-n", ns, reader=True, check=False).strip() == "no"
    before = json.loads(cluster.kubectl("get", "deployment/payments-api", "-n", ns, "-o", "json"))["metadata"]
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder, kubeconfig=reader) as app:
        cluster.kubectl("label", "service/payments-api", "-n", ns, "reviewed=yes")
        service = iid(ns, "", "v1", "Service", "payments-api")
        eventually(lambda: "reviewed=yes" in stored(store_path, "instances")[service]["metadata"].get("labels", []))
        assert app.last_resync_error is None
        assert not app.engine.degraded
    after = json.loads(cluster.kubectl("get", "deployment/payments-api", "-n", ns, "-o", "json"))["metadata"]
    assert after["resourceVersion"] == before["resourceVersion"]
    assert after.get("annotations") == before.get("annotations")
    assert after.get("finalizers") == before.get("finalizers")
    events = json.loads(cluster.kubectl("get", "events", "-A", "-o", "json"))["items"]
    assert not [e for e in events if "kopf" in json.dumps(e.get("source", {})) or "kubevec" in json.dumps(e)]


def test_a_sync_policy_excludes_and_reports_status(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    cluster.kubectl("apply", "-f", str(SYNCPOLICY_CRD))
    cluster.kubectl("wait", "--for=condition=Established", "crd/syncpolicies.kubevec.io")
    name = f"exclude-{ns}"
    policy = {
        "apiVersion": "kubevec.io/v1alpha1",
        "kind": "SyncPolicy",
        "metadata": {"name": name},
        "spec": {
            "resources": {"exclude": [{"group": "core", "kind": "ConfigMap"}]},
            "namespaces": {"exclude": ["kube-*"]},
        },
    }

    def configmaps() -> list[str]:
        return [i for i in stored(store_path, "instances") if f"/{ns}/" in i and "/ConfigMap/" in i]

    def ready() -> dict[str, Any] | None:
        status = json.loads(cluster.kubectl("get", f"syncpolicy/{name}", "-o", "json")).get("status") or {}
        conditions = {c["type"]: c["status"] for c in status.get("conditions", [])}
        return status if conditions.get("Ready") == "True" else None

    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        assert configmaps()
        try:
            apply(cluster, policy)
            eventually(lambda: not configmaps(), timeout=60, message="excluded kind still stored")
            assert deployment(ns) in stored(store_path, "instances")
            status = eventually(ready, timeout=60, message="SyncPolicy status never became Ready")
            assert status["documents"]["instances"] > 0
            assert status["observedGeneration"] == 1
            # What an operator sees with `kubevec status`, from another process: the store and the policy.
            env = {**os.environ, "KUBECONFIG": "/nonexistent", "KUBEVEC_STORE__PATH": str(store_path)}
            shown = subprocess.run(
                [str(Path(sys.executable).with_name("kubevec")), "--kubeconfig", str(cluster.kubeconfig),
                 "--context", "kubevec-test", "status", "-o", "json"],
                env=env, capture_output=True, text=True, timeout=120, check=True,
            )  # fmt: skip
            report = json.loads(shown.stdout)
            assert report["collections"]["instances"]["documents"] > 0
            assert report["collections"]["instances"]["kinds"]["Deployment"] >= 1
            (shown_policy,) = [p for p in report["cluster"]["syncPolicies"] if p["name"] == name]
            assert shown_policy["conditions"]["Ready"] == "True"
            assert shown_policy["documents"]["instances"] > 0
            (reported,) = [c for c in report["controllers"] if c["cluster"] == CLUSTER]
            assert reported["ready"] is True
            assert reported["documents_instances"] > 0
        finally:
            cluster.kubectl("delete", "syncpolicy", name, check=False)
        eventually(configmaps, timeout=60, message="ConfigMaps not back after the policy was deleted")


def test_related_follows_references_selectors_and_owners_from_the_store_alone(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    """A Deployment, the ReplicaSet the control plane makes for it, a Service, an Ingress, a ConfigMap and a PVC: `kubevec related` both ways."""
    pod_spec = {
        "containers": [
            {
                "name": "api",
                "image": "ghcr.io/acme/orders:2.0.0",
                "env": [{"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}],
            }
        ],
        "volumes": [
            {"name": "settings", "configMap": {"name": "settings"}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "orders-data"}},
        ],
    }
    apply(
        cluster,
        [
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "orders-data", "namespace": ns},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "fast-ssd",
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            },
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "orders", "namespace": ns},
                "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": {"app": "orders"}},
                    "template": {"metadata": {"labels": {"app": "orders"}}, "spec": pod_spec},
                },
            },
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "orders", "namespace": ns},
                "spec": {"selector": {"app": "orders"}, "ports": [{"port": 80}]},
            },
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "Ingress",
                "metadata": {"name": "shop", "namespace": ns},
                "spec": {
                    "rules": [
                        {
                            "host": "shop.example.com",
                            "http": {
                                "paths": [
                                    {
                                        "path": "/orders",
                                        "pathType": "Prefix",
                                        "backend": {"service": {"name": "orders", "port": {"number": 80}}},
                                    }
                                ]
                            },
                        }
                    ]
                },
            },
        ],
    )
    # The control plane's Deployment controller makes the ReplicaSet, owned by the Deployment.
    rs_name = eventually(
        lambda: cluster.kubectl(
            "get", "rs", "-n", ns, "-l", "app=orders", "-o", "jsonpath={.items[*].metadata.name}"
        ).strip(),
        message="no ReplicaSet for the Deployment",
    )
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(store_path), "KUBEVEC_LOG_LEVEL": "WARNING"}

    def related(subject: str, *args: str) -> dict[str, Any]:
        shown = subprocess.run(
            [str(Path(sys.executable).with_name("kubevec")), "related", subject, "-o", "json", *args],
            env=env, capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        answer: dict[str, Any] = json.loads(shown.stdout)
        return answer

    def edges(answer: dict[str, Any]) -> set[tuple[int, str, str, str]]:
        return {
            (e["hop"], e["direction"], e["relation"], e["to" if e["direction"] == "out" else "from"]["key"])
            for e in answer["edges"]
        }

    rs_id = iid(ns, "apps", "v1", "ReplicaSet", rs_name)
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        eventually(lambda: rs_id in stored(store_path, "instances"), message="the ReplicaSet never reached the store")
        # What breaks if the ConfigMap goes: the workloads that mount it, the Service that selects
        # them, the Ingress that routes to the Service.
        dependants = related(configmap(ns), "--direction", "in", "--hops", "3")
        cluster_ip = cluster.kubectl("get", "service/orders", "-n", ns, "-o", "jsonpath={.spec.clusterIP}")
        assert edges(dependants) == {
            (1, "in", "uses-configmap", f"Deployment/{ns}/orders"),
            (1, "in", "uses-configmap", f"ReplicaSet/{ns}/{rs_name}"),
            (2, "in", "selects", f"Service/{ns}/orders"),
            (3, "in", "routes-to", f"Ingress/{ns}/shop"),
            (3, "in", "parentRef", f"IPAddress/_cluster/{cluster_ip}"),  # the API server's record of its ClusterIP
        }
        # What the ReplicaSet needs: its owner, the Secret (not stored: no SyncPolicy opts Secrets in),
        # the ConfigMap and the claim, and the claim its storage class.
        needs = related(rs_id, "--direction", "out", "--hops", "2")
        assert edges(needs) == {
            (1, "out", "owned-by", f"Deployment/{ns}/orders"),
            (1, "out", "uses-secret", f"Secret/{ns}/db"),
            (1, "out", "uses-configmap", f"ConfigMap/{ns}/settings"),
            (1, "out", "mounts-claim", f"PersistentVolumeClaim/{ns}/orders-data"),
            (2, "out", "uses-class", "StorageClass/_cluster/fast-ssd"),
        }
        stored_ends = {e["to"]["key"]: e["to"]["stored"] for e in needs["edges"]}
        assert stored_ends[f"Secret/{ns}/db"] is False
        assert stored_ends[f"PersistentVolumeClaim/{ns}/orders-data"] is True
        # The Ingress, both ways, in text.
        shown = subprocess.run(
            [str(Path(sys.executable).with_name("kubevec")), "related", f"Ingress/{ns}/shop", "--hops", "2"],
            env=env, capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        assert shown.stdout.splitlines()[:2] == [f"Ingress {ns}/shop", f"  -> routes-to          Service {ns}/orders"]
        assert f"-> selects            ReplicaSet {ns}/{rs_name}" in shown.stdout
        # The claim is live-updated: a new workload mounting it shows up as a dependant.
        cluster.kubectl("create", "deployment", "reports", "-n", ns, "--image=reports:1", "--replicas=0")
        patch = {
            "spec": {
                "template": {
                    "spec": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "orders-data"}}]}
                }
            }
        }
        cluster.kubectl("patch", "deployment/reports", "-n", ns, "--type=strategic", "-p", json.dumps(patch))
        eventually(
            lambda: (
                (1, "in", "mounts-claim", f"Deployment/{ns}/reports")
                in edges(related(f"PersistentVolumeClaim/{ns}/orders-data", "--direction", "in"))
            ),
            timeout=60,
            message="a new mount of the claim never showed as a dependant",
        )


class OtherModel(CountingEmbedder):
    """A second model (another name and dimension), for a model change at start-up."""

    @property
    def name(self) -> str:
        return "other-test-model"


def test_a_controller_started_with_another_model_migrates_when_told_and_writes_the_new_generation(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        before = stored(store_path, "instances")
    assert deployment(ns) in before
    other = OtherModel(dimension=24)
    with running_controller(plane=cluster, store_path=store_path, embedder=other, migrate=True) as app:
        assert app.engine.names["instances"] == "instances__g1"
        after = stored(store_path, "instances__g1")
        assert {i: d["text"] for i, d in after.items()} == {i: d["text"] for i, d in before.items()}
        assert set(other.texts) >= {d["text"] for d in before.values()}  # every stored text, embedded once more
        assert other.texts.count(before[deployment(ns)]["text"]) == 1  # and only once: the sync re-used it
        cluster.kubectl("label", "deployment/payments-api", "-n", ns, "tier=api")
        eventually(lambda: "tier=api" in stored(store_path, "instances__g1")[deployment(ns)]["metadata"]["labels"])
    with pytest.raises(Exception, match="does not exist"):
        stored(store_path, "instances")  # the old generation is gone
    # Back to the first model without being told to migrate: refused, visibly, nothing written.
    settings = settings_for(store_path, kubeconfig=cluster.kubeconfig)
    app = App(settings=settings, embedder=embedder)
    with pytest.raises(Exception, match="migrate"):
        asyncio.run(_prepare(app))


async def _prepare(app: App) -> None:
    try:
        await app._use_generation()
        await app.engine.prepare()
    finally:
        await app.store.close()


def test_a_controller_of_one_namespace_hands_its_listings_over_without_waiting(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    """kopf watches namespaced kinds in the namespace and cluster-scoped ones cluster-wide, as the resync lists them."""
    settings = settings_for(store_path, kubeconfig=cluster.kubeconfig).model_copy(update={"namespace": ns})
    with running_controller(plane=cluster, embedder=embedder, settings=settings) as app:
        assert app.handover.handed_over > 0
        assert app.handover.waited < 10  # kopf reached every resource the resync lists
        assert configmap(ns) in stored(store_path, "instances")
        cluster.kubectl("create", "configmap", "after-start", "-n", ns, "--from-literal=a=b")
        eventually(lambda: configmap(ns, "after-start") in stored(store_path, "instances"), timeout=30)


def test_a_warning_event_reaches_its_objects_metadata_and_goes_with_it_without_an_embedding(
    cluster: ControlPlane, ns: str, store_path: Path, embedder: LocalEmbedder
) -> None:
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder) as app:
        before_doc = stored(store_path, "instances")[deployment(ns)]
        before = embedded(app, "instances")
        uid = cluster.kubectl("get", "deployment/payments-api", "-n", ns, "-o", "jsonpath={.metadata.uid}")
        message = 'pods "payments-api-x" is forbidden: exceeded quota: team-quota, requested: pods=1'

        def warn(name: str, *, reason: str, at: str) -> None:
            apply(cluster, {
                "apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": reason, "message": message,
                "metadata": {"name": name, "namespace": ns},
                "involvedObject": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "payments-api",
                                   "namespace": ns, "uid": uid},
                "firstTimestamp": at, "lastTimestamp": at, "count": 1, "source": {"component": "e2e"},
            })  # fmt: skip

        warn("payments-api.1", reason="FailedCreate", at="2026-01-01T00:00:00Z")
        warned = eventually(
            lambda: (d := stored(store_path, "instances")[deployment(ns)])["metadata"].get("warning_reason") and d,
            message="the warning never reached the Deployment's document",
        )
        assert warned["metadata"]["warning_reason"] == "FailedCreate"
        assert "exceeded quota: team-quota" in warned["metadata"]["warning_message"]
        assert warned["text"] == before_doc["text"]
        assert embedded(app, "instances") == before
        # A later one is the latest; deleting it brings the earlier back; deleting that clears it.
        warn("payments-api.2", reason="FailedMount", at="2026-01-01T01:00:00Z")
        eventually(
            lambda: stored(store_path, "instances")[deployment(ns)]["metadata"].get("warning_reason") == "FailedMount"
        )
        cluster.kubectl("delete", "event", "payments-api.2", "-n", ns)
        eventually(
            lambda: stored(store_path, "instances")[deployment(ns)]["metadata"].get("warning_reason") == "FailedCreate"
        )
        cluster.kubectl("delete", "event", "payments-api.1", "-n", ns)
        eventually(lambda: "warning_reason" not in stored(store_path, "instances")[deployment(ns)]["metadata"])
        assert embedded(app, "instances") == before
