"""A question about trouble finds the object the troubled ones blame by name (a quota that refused their Pods)."""

from __future__ import annotations

from typing import Any

from kubevec.query.blame import blamed, blamed_by
from tests.unit.query.test_intent import keys, service_of

REFUSED = (
    'pods "web-5d8f9c-x2k9p" is forbidden: exceeded quota: team-quota, requested: pods=1, used: pods=4, limited: pods=4'
)


def replica_set(name: str, *, refused: bool) -> dict[str, Any]:
    status: dict[str, Any] = {"replicas": 0 if refused else 1, "readyReplicas": 0 if refused else 1}
    if refused:
        status["conditions"] = [
            {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": REFUSED}
        ]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "shop", "generation": 1},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": f"shop/{name}:1"}]}}},
        "status": {**status, "observedGeneration": 1},
    }


def test_the_quota_and_the_missing_objects_a_message_names_are_blamed() -> None:
    troubled = {"kind": "ReplicaSet", "namespace": "shop", "health": "degraded", "health_message": REFUSED}
    assert blamed_by(troubled) == {"ResourceQuota/shop/team-quota"}
    waiting = {
        "kind": "Pod",
        "namespace": "shop",
        "health": "degraded",
        "warning_reason": "FailedMount",
        "warning_message": 'MountVolume.SetUp failed for volume "creds" : secret "db-creds" not found',
    }
    assert blamed_by(waiting) == {"Secret/shop/db-creds"}
    unbound = {"kind": "Pod", "namespace": "shop", "health": "degraded", "health_message": (
        'persistentvolumeclaim "data-0" not found')}  # fmt: skip
    assert blamed_by(unbound) == {"PersistentVolumeClaim/shop/data-0"}
    # a healthy object blames nothing, whatever its words; a cluster-scoped one has no namespace to look in
    assert blamed_by({**troubled, "health": "healthy"}) == frozenset()
    assert blamed_by({**troubled, "namespace": None}) == frozenset()
    assert blamed([troubled, waiting]) == {"ResourceQuota/shop/team-quota", "Secret/shop/db-creds"}


async def test_why_pods_are_never_created_finds_the_quota_that_refused_them() -> None:
    found: list[tuple[str, dict[str, Any]]] = [
        ("replicasets", replica_set("web-5d8f9c", refused=True)),
        ("replicasets", replica_set("api-7c9d8b", refused=False)),
        (
            "resourcequotas",
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {"name": "team-quota", "namespace": "shop"},
                "spec": {"hard": {"pods": "4"}},
                "status": {"hard": {"pods": "4"}, "used": {"pods": "4"}},
            },
        ),
    ]
    for i in range(12):  # objects of the namespace the question's words could meet instead
        found.append(("configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"settings-{i}", "namespace": "shop"},
            "data": {"pods": "4"},
        }))  # fmt: skip
    service = await service_of(found)
    answer = await keys(service, "why are some shop pods never created", k=2)
    assert set(answer) == {"ReplicaSet/shop/web-5d8f9c", "ResourceQuota/shop/team-quota"}
