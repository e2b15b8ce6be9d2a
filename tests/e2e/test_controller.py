"""The controller against a real etcd + kube-apiserver, embedded Chroma and the offline embedder.

The tests in this module share one cluster and one store and run in order: they follow the life
of a cluster (initial sync, churn, restarts, deletions while down, policy edits).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.app import App
from inference.embedders.local import LocalEmbedder
from tests.controlplane.cluster import ControlPlane
from tests.e2e.controller_harness import (
    apply,
    embedded,
    eventually,
    iid,
    running_controller,
    stored,
)

pytestmark = pytest.mark.e2e

SECRET_VALUE = "cGF5bWVudHMtZGItcGFzc3dvcmQtOTk="  # payments-db-password-99
SHARED = Path(__file__).resolve().parents[3] / "shared" / "crds"


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e-store") / "chroma"


@pytest.fixture(scope="module")
def cluster(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    for rel in ("cert-manager/certificates.cert-manager.io.yaml", "velero/backups.velero.io.yaml"):
        control_plane.kubectl("apply", "--server-side", "-f", str(SHARED / rel))
    control_plane.kubectl(
        "wait", "--for=condition=Established", "crd/certificates.cert-manager.io", "crd/backups.velero.io"
    )
    apply(
        control_plane,
        [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "payments-api", "namespace": "shop", "labels": {"app": "payments"}},
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
                "metadata": {"name": "payments-api", "namespace": "shop"},
                "spec": {"selector": {"app": "payments"}, "ports": [{"port": 8080}]},
            },
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": "shop"},
                "data": {"LOG_LEVEL": "verbose-config-value"},
            },
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "db", "namespace": "shop"},
                "data": {"password": SECRET_VALUE},
            },
            {
                "apiVersion": "cert-manager.io/v1",
                "kind": "Certificate",
                "metadata": {"name": "api-tls", "namespace": "shop"},
                "spec": {"secretName": "api-tls", "dnsNames": ["api.example.com"], "issuerRef": {"name": "le"}},
            },
        ],
    )
    return control_plane


DEPLOYMENT = iid("shop", "apps", "v1", "Deployment", "payments-api")
CERTIFICATE = iid("shop", "cert-manager.io", "v1", "Certificate", "api-tls")
CONFIGMAP = iid("shop", "", "v1", "ConfigMap", "settings")
SECRET = iid("shop", "", "v1", "Secret", "db")


def test_initial_sync_and_live_changes(cluster: ControlPlane, store_path: Path, embedder: LocalEmbedder) -> None:
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder) as app:
        capabilities = stored(store_path, "capabilities")
        assert {"certificates.cert-manager.io", "backups.velero.io", "deployments.apps", "pods", "configmaps"} <= set(
            capabilities
        )
        assert "renewed" in capabilities["certificates.cert-manager.io"]["text"]
        instances = stored(store_path, "instances")
        for document_id in (DEPLOYMENT, CERTIFICATE, CONFIGMAP, iid(None, "", "v1", "Namespace", "shop")):
            assert document_id in instances, document_id
        assert SECRET not in instances  # Secrets are indexed only when a SyncPolicy opts in
        assert "images: ghcr.io/acme/payments:1.4.2" in instances[DEPLOYMENT]["text"]
        assert not any(i.startswith("e2e/shop/core/v1/Event/") for i in instances)

        # A label change re-embeds exactly one document.
        before = embedded(app, "instances")
        cluster.kubectl("label", "deployment/payments-api", "-n", "shop", "tier=api")
        eventually(lambda: "tier=api" in stored(store_path, "instances")[DEPLOYMENT]["metadata"]["labels"])
        assert embedded(app, "instances") == before + 1

        # A status-only change embeds nothing and changes nothing.
        before_docs = stored(store_path, "instances")
        before = embedded(app, "instances")
        status = {
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "lastTransitionTime": "2026-11-22T00:00:00Z",
                        "reason": "Issued",
                        "message": "ok",
                    }
                ],
                "notAfter": "2027-01-01T00:00:00Z",
            }
        }
        cluster.kubectl(
            "patch",
            "certificate/api-tls",
            "-n",
            "shop",
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps(status),
        )
        time.sleep(1.5)
        eventually(lambda: not app.engine.queue)
        assert embedded(app, "instances") == before
        assert stored(store_path, "instances")[CERTIFICATE] == before_docs[CERTIFICATE]

        # Create and delete an instance.
        cluster.kubectl("create", "configmap", "extra", "-n", "shop", "--from-literal=k=v")
        extra = iid("shop", "", "v1", "ConfigMap", "extra")
        eventually(lambda: extra in stored(store_path, "instances"), message="created configmap not stored")
        cluster.kubectl("delete", "configmap", "extra", "-n", "shop")
        eventually(lambda: extra not in stored(store_path, "instances"), message="deleted configmap still stored")

        # A CRD installed after start-up: its capability and its instances.
        cluster.kubectl("apply", "--server-side", "-f", str(SHARED / "strimzi" / "kafkatopics.kafka.strimzi.io.yaml"))
        cluster.kubectl("wait", "--for=condition=Established", "crd/kafkatopics.kafka.strimzi.io")
        apply(
            cluster,
            {
                "apiVersion": "kafka.strimzi.io/v1",
                "kind": "KafkaTopic",
                "metadata": {"name": "orders", "namespace": "shop"},
                "spec": {"partitions": 12, "replicas": 3},
            },
        )
        topic = eventually(
            lambda: next((i for i in stored(store_path, "instances") if "/KafkaTopic/orders" in i), None),
            timeout=60,
            message="instance of a CRD installed after start-up not stored",
        )
        assert "partitions: 12" in stored(store_path, "instances")[topic]["text"]
        assert "kafkatopics.kafka.strimzi.io" in stored(store_path, "capabilities")

        # Deleting that CRD removes its capability and its instances.
        cluster.kubectl("delete", "crd", "kafkatopics.kafka.strimzi.io")
        eventually(lambda: "kafkatopics.kafka.strimzi.io" not in stored(store_path, "capabilities"), timeout=60)
        eventually(lambda: topic not in stored(store_path, "instances"), timeout=60)


def test_secrets_and_last_applied_appear_nowhere(cluster: ControlPlane, store_path: Path) -> None:
    everything = json.dumps([stored(store_path, "instances"), stored(store_path, "capabilities")])
    assert SECRET_VALUE not in everything
    assert "payments-db-password" not in everything
    assert "verbose-config-value" not in everything
    assert "last-applied-configuration" not in everything
    assert "managedFields" not in everything
    assert "keys: LOG_LEVEL" in stored(store_path, "instances")[CONFIGMAP]["text"]


def test_restart_with_unchanged_cluster_embeds_and_changes_nothing(
    cluster: ControlPlane, store_path: Path, embedder: LocalEmbedder
) -> None:
    before = {c: stored(store_path, c) for c in ("capabilities", "instances")}
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder) as app:
        time.sleep(1)
        assert embedded(app, "instances") == 0
        assert embedded(app, "capabilities") == 0
        after = {c: stored(store_path, c) for c in ("capabilities", "instances")}
    # Only objects the kube-controller-manager touched meanwhile may differ (pods, replicasets).
    for collection in ("capabilities", "instances"):
        stable = {i for i in before[collection] if "/Pod/" not in i and "/ReplicaSet/" not in i}
        assert {i: after[collection].get(i) for i in stable} == {i: before[collection][i] for i in stable}


def test_objects_deleted_while_stopped_are_gone_after_restart(
    cluster: ControlPlane, store_path: Path, embedder: LocalEmbedder
) -> None:
    cluster.kubectl("delete", "configmap", "settings", "-n", "shop")
    cluster.kubectl("create", "configmap", "while-down", "-n", "shop", "--from-literal=a=b")
    assert CONFIGMAP in stored(store_path, "instances")
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder):
        instances = stored(store_path, "instances")
        assert CONFIGMAP not in instances
        assert iid("shop", "", "v1", "ConfigMap", "while-down") in instances


def test_restricted_token_reads_only_and_writes_nothing(
    cluster: ControlPlane, store_path: Path, embedder: LocalEmbedder
) -> None:
    cluster.kubectl("apply", "-f", str(Path(__file__).resolve().parents[2] / "deploy" / "crds"))
    reader = cluster.grant_reader(
        rules=[{"apiGroups": ["kubevec.io"], "resources": ["syncpolicies/status"], "verbs": ["patch", "update"]}]
    )
    # The restricted user can read but not write:
    assert (
        cluster.kubectl("auth", "can-i", "patch", "deployments", "-n", "shop", reader=True, check=False).strip() == "no"
    )
    before = json.loads(cluster.kubectl("get", "deployment/payments-api", "-n", "shop", "-o", "json"))["metadata"]
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder, kubeconfig=reader) as app:
        cluster.kubectl("label", "service/payments-api", "-n", "shop", "reviewed=yes")
        service = iid("shop", "", "v1", "Service", "payments-api")
        eventually(lambda: "reviewed=yes" in stored(store_path, "instances")[service]["metadata"].get("labels", []))
        assert app.last_resync_error is None
        assert not app.engine.degraded
    after = json.loads(cluster.kubectl("get", "deployment/payments-api", "-n", "shop", "-o", "json"))["metadata"]
    assert after["resourceVersion"] == before["resourceVersion"]
    assert after.get("annotations") == before.get("annotations")
    assert after.get("finalizers") == before.get("finalizers")
    events = json.loads(cluster.kubectl("get", "events", "-A", "-o", "json"))["items"]
    assert not [e for e in events if "kopf" in json.dumps(e.get("source", {})) or "kubevec" in json.dumps(e)]


def test_sync_policy_excludes_and_reports_status(
    cluster: ControlPlane, store_path: Path, embedder: LocalEmbedder
) -> None:
    cluster.kubectl("apply", "-f", str(Path(__file__).resolve().parents[2] / "deploy" / "crds"))
    cluster.kubectl("wait", "--for=condition=Established", "crd/syncpolicies.kubevec.io")
    with running_controller(plane=cluster, store_path=store_path, embedder=embedder) as app:
        assert any("/ConfigMap/" in i for i in stored(store_path, "instances"))
        apply(
            cluster,
            {
                "apiVersion": "kubevec.io/v1alpha1",
                "kind": "SyncPolicy",
                "metadata": {"name": "default"},
                "spec": {
                    "resources": {"exclude": [{"group": "core", "kind": "ConfigMap"}]},
                    "namespaces": {"exclude": ["kube-*"]},
                },
            },
        )
        eventually(
            lambda: not any("/ConfigMap/" in i for i in stored(store_path, "instances")),
            timeout=60,
            message="excluded kind still stored",
        )
        assert DEPLOYMENT in stored(store_path, "instances")

        def ready() -> dict[str, object] | None:
            status = json.loads(cluster.kubectl("get", "syncpolicy/default", "-o", "json")).get("status") or {}
            conditions = {c["type"]: c["status"] for c in status.get("conditions", [])}
            return status if conditions.get("Ready") == "True" else None

        status = eventually(ready, timeout=60, message="SyncPolicy status never became Ready")
        assert status["documents"]["instances"] > 0  # type: ignore[index]
        assert status["observedGeneration"] == 1
        # Removing the policy brings the ConfigMaps back.
        cluster.kubectl("delete", "syncpolicy", "default")
        eventually(lambda: any("/ConfigMap/" in i for i in stored(store_path, "instances")), timeout=60)
        assert isinstance(app, App)
