"""The change history on a real control plane: `kubevec run` records what changes while it runs and
what changed while it was down, `kubevec changes` answers by time, namespace and meaning.

The module's own control plane runs no kube-controller-manager, so a Deployment's status changes
only when the test writes it: healthy, then status churn under the same health (no record), then
degraded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.controlplane.cluster import ControlPlane
from tests.e2e.controller_harness import Controller, apply, eventually, stored

pytestmark = pytest.mark.e2e
NS = "history"
KUBEVEC = str(Path(sys.executable).with_name("kubevec"))


def deployment(image: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "payments-api", "namespace": NS, "labels": {"app": "payments"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "payments"}},
            "template": {
                "metadata": {"labels": {"app": "payments"}},
                "spec": {"containers": [{"name": "api", "image": image}]},
            },
        },
    }


def status(plane: ControlPlane, *, ready: int, generation: int, reason: str = "NewReplicaSetAvailable") -> None:
    progressing = "False" if reason == "ProgressDeadlineExceeded" else "True"
    body = {
        "status": {
            "observedGeneration": generation,
            "replicas": 2,
            "updatedReplicas": 2,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "conditions": [
                {"type": "Available", "status": "True" if ready == 2 else "False", "reason": "MinimumReplicas"},
                {"type": "Progressing", "status": progressing, "reason": reason},
            ],
        }
    }
    plane.kubectl(
        "patch", "deployment", "payments-api", "-n", NS, "--subresource=status", "--type=merge", "-p", json.dumps(body)
    )


def changes(store: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "KUBEVEC_STORE__PATH": str(store), "KUBEVEC_LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        [KUBEVEC, "changes", "-n", NS, "-o", "json", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def summaries(store: Path) -> list[str]:
    return [c["summary"] for c in changes(store, "--since", "1h", "-k", "100")["changes"]]


def test_changes_are_recorded_while_running_and_while_down(plane: ControlPlane, tmp_path: Path) -> None:
    plane.kubectl("create", "namespace", NS)
    apply(plane, deployment("ghcr.io/acme/payments-api:2.3.0"))
    store = tmp_path / "store"
    controller = Controller(plane, store, tmp_path / "kubevec.log")
    try:
        controller.start()
        controller.wait_ready()
        controller.converged()
        assert summaries(store) == []  # the first sync builds the index: nothing changed

        apply(plane, deployment("ghcr.io/acme/payments-api:2.3.1"))
        eventually(lambda: len(summaries(store)) == 1, timeout=30, message="the rollout was not recorded")
        status(plane, ready=2, generation=2)
        eventually(lambda: len(summaries(store)) == 2, timeout=30, message="the rollout's end was not recorded")
        for generation in (3, 4, 5):  # status churn under the same health
            status(plane, ready=2, generation=generation, reason=f"ReplicaSetUpdated{generation}")
        status(plane, ready=1, generation=6, reason="ProgressDeadlineExceeded")
        eventually(lambda: len(summaries(store)) == 3, timeout=30, message="the health flip was not recorded")
        apply(plane, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flags", "namespace": NS}})
        eventually(lambda: len(summaries(store)) == 4, timeout=30, message="the creation was not recorded")
        controller.converged()
        recorded = summaries(store)
        assert recorded[:2] == [
            "ConfigMap history/flags created",
            "Deployment history/payments-api: health healthy -> degraded (ProgressDeadlineExceeded)",
        ]
        assert recorded[2].startswith("Deployment history/payments-api: health ")  # from what it was without a status
        assert recorded[2].endswith(" -> healthy")
        assert recorded[3].startswith("Deployment history/payments-api: image ghcr.io/acme/payments-api 2.3.0 -> 2.3.1")

        controller.stop()  # what changes while it is down is recorded by the resync after it starts
        plane.kubectl("delete", "configmap", "flags", "-n", NS)
        apply(plane, deployment("ghcr.io/acme/payments-api:2.4.0"))
        controller.start()
        controller.wait_ready()
        controller.converged()
        eventually(lambda: len(summaries(store)) == 6, timeout=30, message="the missed changes were not recorded")
        missed = sorted(summaries(store)[:2])
        assert missed[0] == "ConfigMap history/flags deleted"
        assert missed[1].startswith("Deployment history/payments-api: image ghcr.io/acme/payments-api 2.3.1 -> 2.4.0")
    finally:
        controller.stop()

    by_meaning = changes(store, "payments image version", "-k", "1")["changes"]
    assert len(by_meaning) == 1
    assert "image ghcr.io/acme/payments-api" in by_meaning[0]["summary"]
    paged = changes(store, "-k", "4")
    assert (paged["total"], paged["truncated"], len(paged["changes"])) == (6, True, 4)
    rest = changes(store, "-k", "4", "--cursor", paged["cursor"])
    assert (len(rest["changes"]), rest["cursor"]) == (2, None)
    assert {c["id"] for c in paged["changes"]}.isdisjoint(c["id"] for c in rest["changes"])
    only_deleted = changes(store, "--change", "deleted")["changes"]
    assert [c["object"].rsplit("/", 1)[-1] for c in only_deleted] == ["flags"]
    assert not changes(store, "--until", "2h")["changes"]  # nothing is that old
    records = stored(store, "changes")
    assert {r["metadata"]["cluster"] for r in records.values()} == {"faults"}
