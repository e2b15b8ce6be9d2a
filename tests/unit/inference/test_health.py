"""The coarse health summary: per-kind rules, custom resources by condition or phase, metadata only."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubevec.backends.memory import MemoryStore
from kubevec.controller.app import App
from kubevec.controller.settings import ServerSettings, Settings
from kubevec.inference.health import MAX_MESSAGE, clean_message, health_of
from kubevec.inference.instances import build_instance
from kubevec.inference.redaction import REDACTED
from tests.doubles.embedders import CountingEmbedder


def obj(
    api_version: str, kind: str, *, status: dict[str, Any], spec: dict[str, Any] | None = None, **meta: Any
) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "x", "namespace": "a", **meta},
        "spec": spec or {},
        "status": status,
    }


def cond(type: str, status: str, reason: str | None = None) -> dict[str, str]:
    return {"type": type, "status": status, **({"reason": reason} if reason else {})}


CASES = [
    # Deployments: available and updated replicas against spec.replicas, Progressing=False is a failed rollout
    (
        obj("apps/v1", "Deployment", spec={"replicas": 3}, status={"availableReplicas": 3, "updatedReplicas": 3}),
        ("healthy", True, None),
    ),
    (
        obj(
            "apps/v1",
            "Deployment",
            spec={"replicas": 3},
            status={
                "availableReplicas": 1,
                "updatedReplicas": 3,
                "conditions": [cond("Progressing", "True", "ReplicaSetUpdated")],
            },
        ),
        ("progressing", False, "ReplicaSetUpdated"),
    ),
    (
        obj(
            "apps/v1",
            "Deployment",
            spec={"replicas": 3},
            status={"availableReplicas": 2, "conditions": [cond("Progressing", "False", "ProgressDeadlineExceeded")]},
        ),
        ("degraded", False, "ProgressDeadlineExceeded"),
    ),
    (
        obj(
            "apps/v1",
            "Deployment",
            spec={"replicas": 2},
            status={"availableReplicas": 2, "updatedReplicas": 2, "observedGeneration": 1},
            generation=2,
        ),
        ("progressing", True, "ReplicasNotReady"),
    ),
    (obj("apps/v1", "Deployment", spec={"replicas": 0}, status={"observedGeneration": 1}), ("healthy", True, None)),
    (
        obj(
            "apps/v1",
            "StatefulSet",
            spec={"replicas": 2},
            status={"readyReplicas": 2, "currentRevision": "r1", "updateRevision": "r1"},
        ),
        ("healthy", True, None),
    ),
    (
        obj(
            "apps/v1",
            "StatefulSet",
            spec={"replicas": 2},
            status={"readyReplicas": 2, "currentRevision": "r1", "updateRevision": "r2", "updatedReplicas": 1},
        ),
        ("progressing", True, "ReplicasNotReady"),
    ),
    (
        obj(
            "apps/v1", "DaemonSet", status={"desiredNumberScheduled": 3, "numberReady": 3, "updatedNumberScheduled": 3}
        ),
        ("healthy", True, None),
    ),
    (
        obj(
            "apps/v1",
            "ReplicaSet",
            spec={"replicas": 2},
            status={"readyReplicas": 0, "conditions": [cond("ReplicaFailure", "True", "FailedCreate")]},
        ),
        ("degraded", False, "FailedCreate"),
    ),
    # Pods: phase, Ready, waiting reasons
    (obj("v1", "Pod", status={"phase": "Running", "conditions": [cond("Ready", "True")]}), ("healthy", True, None)),
    (
        obj(
            "v1",
            "Pod",
            status={"phase": "Running", "containerStatuses": [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}}]},
        ),
        ("degraded", False, "CrashLoopBackOff"),
    ),
    # a disruption budget that allows none blocks every drain
    (
        obj("policy/v1", "PodDisruptionBudget", status={"conditions": [cond("DisruptionAllowed", "True")]}),
        ("healthy", True, None),
    ),
    (
        obj(
            "policy/v1",
            "PodDisruptionBudget",
            status={"disruptionsAllowed": 0, "conditions": [cond("DisruptionAllowed", "False", "InsufficientPods")]},
        ),
        ("degraded", False, "InsufficientPods"),
    ),
    # running, not ready: the Ready condition says why (a readiness probe failing)
    (
        obj("v1", "Pod", status={"phase": "Running", "conditions": [cond("Ready", "False", "ContainersNotReady")]}),
        ("progressing", False, "ContainersNotReady"),
    ),
    (
        obj("v1", "Pod", status={"phase": "Pending", "conditions": [cond("PodScheduled", "False", "Unschedulable")]}),
        ("degraded", False, "Unschedulable"),
    ),
    (
        obj("v1", "Pod", status={"phase": "Pending", "conditions": [cond("PodScheduled", "False", "SchedulingGated")]}),
        ("progressing", False, "SchedulingGated"),
    ),
    (
        obj(
            "v1",
            "Pod",
            status={"phase": "Pending", "containerStatuses": [{"state": {"waiting": {"reason": "ImagePullBackOff"}}}]},
        ),
        ("degraded", False, "ImagePullBackOff"),
    ),
    (obj("v1", "Pod", status={"phase": "Succeeded"}), ("healthy", False, "Completed")),
    (obj("v1", "Pod", status={"phase": "Failed", "reason": "Evicted"}), ("degraded", False, "Evicted")),
    (obj("batch/v1", "Job", status={"conditions": [cond("Complete", "True")]}), ("healthy", True, "Complete")),
    (
        obj("batch/v1", "Job", status={"conditions": [cond("Failed", "True", "BackoffLimitExceeded")]}),
        ("degraded", False, "BackoffLimitExceeded"),
    ),
    (obj("batch/v1", "Job", status={"active": 1}), ("progressing", False, "Running")),
    (obj("v1", "PersistentVolumeClaim", status={"phase": "Bound"}), ("healthy", True, None)),
    (obj("v1", "PersistentVolumeClaim", status={"phase": "Pending"}), ("progressing", False, None)),
    (obj("v1", "PersistentVolumeClaim", status={"phase": "Lost"}), ("degraded", False, None)),
    (
        obj("v1", "Node", status={"conditions": [cond("Ready", "False", "KubeletNotReady")]}),
        ("degraded", False, "KubeletNotReady"),
    ),
    (
        obj("v1", "Node", status={"conditions": [cond("Ready", "Unknown", "NodeStatusUnknown")]}),
        ("unknown", False, "NodeStatusUnknown"),
    ),
    # Custom resources: Ready (else Available), a "not yet" reason is progressing, else the phase
    (
        obj("postgresql.cnpg.io/v1", "Cluster", status={"conditions": [cond("Ready", "True", "ClusterIsReady")]}),
        ("healthy", True, None),
    ),
    (
        obj("cert-manager.io/v1", "Certificate", status={"conditions": [cond("Ready", "False", "Issuing")]}),
        ("degraded", False, "Issuing"),
    ),
    (
        obj("cert-manager.io/v1", "Certificate", status={"conditions": [cond("Ready", "False", "Pending")]}),
        ("progressing", False, "Pending"),
    ),
    (
        obj("example.com/v1", "Widget", status={"conditions": [cond("Available", "False", "ReconcileError")]}),
        ("degraded", False, "ReconcileError"),
    ),
    (
        obj(
            "example.com/v1",
            "Widget",
            status={"conditions": [cond("Ready", "True")], "observedGeneration": 1},
            generation=2,
        ),
        ("progressing", True, None),
    ),
    (obj("example.com/v1", "Widget", status={"phase": "Running"}), ("healthy", True, None)),
    (obj("example.com/v1", "Widget", status={"phase": "Failed"}), ("degraded", False, None)),
    (obj("example.com/v1", "Widget", status={"phase": "Provisioning"}), ("progressing", False, None)),
]


@pytest.mark.parametrize(("body", "expected"), CASES, ids=lambda v: f"{v['kind']}" if isinstance(v, dict) else "")
def test_health_rules(body: dict[str, Any], expected: tuple[str, bool, str | None]) -> None:
    health = health_of(body)
    assert health is not None
    assert (health.state, health.ready, health.reason) == expected


@pytest.mark.parametrize(
    "status",
    [None, {}, {"observedGeneration": 3}, {"conditions": "not a list"}, {"conditions": [None, 7, {"status": "True"}]}],
)
def test_no_or_odd_status_has_no_summary_and_never_breaks_the_document(status: Any) -> None:
    body = obj("example.com/v1", "Widget", status={})
    body["status"] = status
    assert health_of(body) is None
    metadata = build_instance(body, plural="widgets").to_document().metadata
    assert "health" not in metadata


def test_the_summary_is_metadata_only() -> None:
    healthy = obj("v1", "Pod", status={"phase": "Running", "conditions": [cond("Ready", "True")]})
    crashing = copy.deepcopy(healthy)
    crashing["status"] = {
        "phase": "Running",
        "containerStatuses": [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
    }
    one, two = (build_instance(b, plural="pods").to_document() for b in (healthy, crashing))
    assert one.text == two.text
    assert (one.metadata["health"], two.metadata["health"]) == ("healthy", "degraded")
    assert two.metadata["health_reason"] == "CrashLoopBackOff"
    assert one.metadata["phase"] == "Running"
    assert one.content_hash != two.content_hash


async def test_a_health_change_writes_metadata_with_the_stored_vector_and_equal_health_writes_nothing() -> None:
    settings = Settings(cluster_name="unit", server=ServerSettings(health_port=0, metrics_port=0))
    embedder = CountingEmbedder()
    app = App(settings=settings, store=MemoryStore(), embedder=embedder)
    await app.engine.prepare()
    body = obj("apps/v1", "Deployment", spec={"replicas": 2}, status={"availableReplicas": 2, "updatedReplicas": 2})

    async def event(status: dict[str, Any]) -> None:
        changed = {**body, "status": status}
        app.events.observe_object(
            group="apps", version="v1", plural="deployments", kind="Deployment", event_type="MODIFIED", body=changed
        )
        assert await app.engine.flush()

    await event(body["status"])
    assert len(embedder.texts) == 1
    upserts = app.metrics.registry.get_sample_value("kubevec_upserts_total", {"collection": "instances"})
    await event(
        {
            "availableReplicas": 1,
            "updatedReplicas": 2,
            "conditions": [cond("Progressing", "False", "ProgressDeadlineExceeded")],
        }
    )
    assert len(embedder.texts) == 1  # no embedding: the text did not change
    (stored,) = await app.store.get("instances", ["unit/a/apps/v1/Deployment/x"])
    assert (stored.metadata["health"], stored.metadata["health_reason"]) == ("degraded", "ProgressDeadlineExceeded")
    assert (
        app.metrics.registry.get_sample_value("kubevec_upserts_total", {"collection": "instances"})
        == (upserts or 0) + 1
    )
    reused = app.metrics.registry.get_sample_value(
        "kubevec_embeddings_skipped_total", {"collection": "instances", "reason": "vector_reused"}
    )
    assert reused == 1
    from kubevec.query.request import SearchRequest
    from kubevec.query.search import SearchService

    service = SearchService(store=app.store, embedder=embedder, collections={"instances": "instances"})
    degraded = await service.search(SearchRequest.build(collection="instances", health="degraded", query="x"))
    assert [r.id for r in degraded] == ["unit/a/apps/v1/Deployment/x"]
    assert await service.search(SearchRequest.build(collection="instances", health="healthy")) == []
    # status churn that leaves the summary equal: nothing written at all
    await event(
        {
            "availableReplicas": 0,
            "updatedReplicas": 2,
            "observedGeneration": 9,
            "conditions": [cond("Progressing", "False", "ProgressDeadlineExceeded")],
        }
    )
    assert (
        app.metrics.registry.get_sample_value("kubevec_upserts_total", {"collection": "instances"})
        == (upserts or 0) + 1
    )
    assert len(embedder.texts) == 1


@pytest.mark.parametrize(
    "value",
    [
        "hvs.Kv9canaryQ7abcdefghijklmnopqrstu",
        "password=Kv9canaryQ7",
        "https://u:Kv9canaryQ7@db",
        "Bearer abcdef0123456789",
    ],
)
def test_a_phase_or_reason_holding_a_credential_is_left_out(value: str) -> None:
    """Both come from ``status``, which any controller fills; they are metadata, so the text's redaction never saw them."""
    obj = {
        "kind": "Widget",
        "status": {"phase": value, "conditions": [{"type": "Ready", "status": "False", "reason": value}]},
    }
    metadata = health_of(obj).metadata()  # type: ignore[union-attr]
    assert "Kv9canaryQ7" not in str(metadata)
    assert "abcdef0123456789" not in str(metadata)
    kept = health_of({"kind": "Widget", "status": {"phase": "In Progress"}}).metadata()  # type: ignore[union-attr]
    assert kept["phase"] == "In Progress"


def test_a_crashing_pod_says_what_killed_it_its_exit_code_and_restarts() -> None:
    pod = obj("v1", "Pod", status={
        "phase": "Running",
        "containerStatuses": [{
            "name": "server", "restartCount": 7,
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}},
            "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
        }],
    })  # fmt: skip
    metadata = build_instance(pod, plural="pods").to_document().metadata
    assert metadata["health"] == "degraded"
    assert metadata["health_reason"] == "CrashLoopBackOff"
    assert metadata["container_reasons"] == ["CrashLoopBackOff", "OOMKilled"]
    assert metadata["exit_codes"] == ["137"]
    assert metadata["restarts"] == 7
    assert metadata["health_message"] == "back-off 5m0s restarting failed container"


def test_a_replica_set_the_quota_refused_keeps_the_message_naming_the_quota() -> None:
    message = (
        'pods "web-1" is forbidden: exceeded quota: staging-quota, requested: pods=1, used: pods=0, limited: pods=0'
    )
    failure = {**cond("ReplicaFailure", "True", "FailedCreate"), "message": message}
    replica_set = obj("apps/v1", "ReplicaSet", spec={"replicas": 1}, status={"conditions": [failure]})
    metadata = build_instance(replica_set, plural="replicasets").to_document().metadata
    assert (metadata["health"], metadata["health_reason"]) == ("degraded", "FailedCreate")
    assert "exceeded quota: staging-quota" in metadata["health_message"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (obj("autoscaling/v2", "HorizontalPodAutoscaler",
             status={"conditions": [cond("AbleToScale", "True", "SucceededGetScale"),
                                    cond("ScalingActive", "False", "FailedGetResourceMetric")]}),
         ("degraded", False, "FailedGetResourceMetric")),
        (obj("autoscaling/v2", "HorizontalPodAutoscaler",
             status={"conditions": [cond("AbleToScale", "True"), cond("ScalingActive", "True"),
                                    cond("ScalingLimited", "True", "TooManyReplicas")]}),
         ("healthy", True, "TooManyReplicas")),
        (obj("tekton.dev/v1", "PipelineRun", status={"conditions": [cond("Succeeded", "False", "Failed")]}),
         ("degraded", False, "Failed")),
        (obj("tekton.dev/v1", "PipelineRun", status={"conditions": [cond("Succeeded", "Unknown", "Running")]}),
         ("progressing", False, "Running")),
        (obj("tekton.dev/v1", "TaskRun", status={"conditions": [cond("Succeeded", "True", "Succeeded")]}),
         ("healthy", True, "Succeeded")),
        (obj("kustomize.toolkit.fluxcd.io/v1", "Kustomization",
             status={"conditions": [cond("Ready", "True", "ReconciliationSucceeded"), cond("Stalled", "True", "BuildFailed")]}),
         ("degraded", False, "BuildFailed")),
        (obj("example.com/v1", "Thing", status={"conditions": [cond("Healthy", "False", "BackendDown")]}),
         ("degraded", False, "BackendDown")),
        # Argo CD: its own verdict in status.health; its conditions (SyncError...) carry no status
        (obj("argoproj.io/v1alpha1", "Application",
             status={"health": {"status": "Degraded", "message": "exceeded its progress deadline"},
                     "sync": {"status": "OutOfSync"}, "conditions": [{"type": "SyncError", "message": "x"}]}),
         ("degraded", False, "Degraded")),
        (obj("argoproj.io/v1alpha1", "Application",
             status={"health": {"status": "Healthy"}, "sync": {"status": "OutOfSync"}}),
         ("healthy", True, "OutOfSync")),
        (obj("argoproj.io/v1alpha1", "Application", status={"health": {"status": "Healthy"}, "sync": {"status": "Synced"}}),
         ("healthy", True, None)),
        (obj("argoproj.io/v1alpha1", "Application", status={"health": {"status": "Missing"}}),
         ("degraded", False, "Missing")),
        (obj("argoproj.io/v1alpha1", "Application", status={"health": {"status": "Suspended"}}),
         ("progressing", False, "Suspended")),
        (obj("example.com/v1", "Thing", status={"health": "green", "conditions": [cond("Ready", "True")]}),
         ("healthy", True, None)),
        (obj("example.com/v1", "Thing", status={"health": {"status": "Purple"}, "conditions": [cond("Ready", "False", "Down")]}),
         ("degraded", False, "Down")),
    ],
)  # fmt: skip
def test_conditions_as_operators_use_them(body: dict[str, Any], expected: tuple[str, bool, str | None]) -> None:
    health = health_of(body)
    assert health is not None
    assert (health.state, health.ready, health.reason) == expected


def test_a_message_quoting_a_credential_is_redacted() -> None:
    failure = {
        **cond("Ready", "False", "ConnectFailed"),
        "message": "dial postgres://app:hunter2hunter2@db:5432 failed",
    }
    metadata = (
        build_instance(obj("example.com/v1", "Db", status={"conditions": [failure]}), plural="dbs")
        .to_document()
        .metadata
    )
    assert "hunter2" not in str(metadata)
    assert "failed" in metadata["health_message"]


@pytest.mark.parametrize(
    "tail",
    [
        " failed: git clone https://deploy:Qz7mapleRiverTok9@github.com/acme/app.git",
        " exec failed: mysql -uroot -pQz7mapleRiver orders",
        " cannot connect dsn=postgres://app:Qz7mapleRiver@db:5432/app",
    ],
)
def test_a_message_is_judged_before_it_is_cut(tail: str) -> None:
    """issue 52: a status message cut at 240 characters before it was judged kept the half of a
    credential the cut left (``https://deploy:Qz7ma``), which no longer read as one."""
    for lead in range(150, 260):
        message = clean_message("a" * lead + tail)
        assert message is not None
        assert len(message) <= MAX_MESSAGE
        assert "Qz7" not in message, (lead, message[-40:])
        assert not message.endswith(("<", "<red", "<redacted")) or message.endswith(REDACTED)


def test_a_short_message_reads_as_before() -> None:
    assert clean_message("Back-off  pulling image\n nginx:1.27") == "Back-off pulling image nginx:1.27"


def test_a_crash_loop_says_the_containers_last_words_not_the_back_off_line() -> None:
    """The kubelet's back-off line names only the container; its termination message says why it crashes."""
    pod = obj(
        "v1",
        "Pod",
        status={
            "phase": "Running",
            "containerStatuses": [
                {
                    "restartCount": 19,
                    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed"}},
                    "lastState": {"terminated": {"reason": "Error", "exitCode": 1,
                                                 "message": "PSQLException: Connection to tb-database:5432 refused."}},
                }
            ],
        },
    )  # fmt: skip
    health = health_of(pod)
    assert health is not None
    assert health.reason == "CrashLoopBackOff"
    assert health.metadata()["health_message"] == "PSQLException: Connection to tb-database:5432 refused."
