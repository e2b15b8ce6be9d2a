"""Faults under churn, each ending with the store exactly what the cluster implies (the convergence checker).

These run `kubevec run` as a real process against a control plane of their own (no
kube-controller-manager, so nothing changes unless the test changes it), with a short resync
interval: every scenario must reach 0 missing / 0 orphaned / 0 stale within one interval of the
fault ending, with no crash loop.
"""

from __future__ import annotations

import collections
import json
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SYNCPOLICY_CRD
from tests.controlplane.cluster import ControlPlane
from tests.doubles.model_servers import KEY, StandIn, in_a_thread
from tests.e2e.controller_harness import GADGETS, RESYNC, Controller, apply, eventually, gadget_crd

pytestmark = pytest.mark.e2e

NAMESPACE = "faults"


@pytest.fixture(scope="module")
def plane(plane: ControlPlane) -> ControlPlane:
    """The module's own control plane (conftest), with the namespace these tests write in."""
    plane.kubectl("create", "namespace", NAMESPACE)
    return plane


@pytest.fixture
def controller(plane: ControlPlane, tmp_path: Path) -> Iterator[Controller]:
    ctl = Controller(plane, tmp_path / "store", tmp_path / "kubevec.log")
    try:
        yield ctl
    finally:
        ctl.stop()


class Churn:
    """Creates, updates and deletes ConfigMaps, Services and custom resources in one namespace."""

    def __init__(self, plane: ControlPlane, *, seed: int) -> None:
        self.plane = plane
        self.random = random.Random(seed)
        self.step = 0

    def once(self, *, creates: int = 6) -> None:
        self.step += 1
        s = self.step
        objects = []
        for i in range(creates):
            objects.append(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{s}-{i}", "namespace": NAMESPACE, "labels": {"step": str(s)}},
                    "data": {"k": "v"},
                }
            )
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"svc-{s}", "namespace": NAMESPACE, "labels": {"step": str(s)}},
                "spec": {"ports": [{"port": 80 + s % 100}], "selector": {"app": f"a{s}"}},
            }
        )
        if self.gadgets_installed():
            objects.append(
                {
                    "apiVersion": f"{GADGETS}/v1",
                    "kind": "Gadget",
                    "metadata": {"name": f"g-{s}", "namespace": NAMESPACE},
                    "spec": {"colour": self.random.choice(["red", "green", "blue"])},
                }
            )
        apply(self.plane, objects)
        names = self.plane.kubectl("get", "configmaps", "-n", NAMESPACE, "-o", "name").split()
        names = [n for n in names if n.startswith("configmap/cm-")]
        for name in self.random.sample(names, k=min(3, len(names))):
            self.plane.kubectl("label", name, "-n", NAMESPACE, f"touched={s}", "--overwrite")
        for name in self.random.sample(names, k=min(2, len(names))):
            self.plane.kubectl("delete", name, "-n", NAMESPACE, "--ignore-not-found", "--wait=false")

    def gadgets_installed(self) -> bool:
        return bool(self.plane.kubectl("get", "crd", f"gadgets.{GADGETS}", "--ignore-not-found", "-o", "name"))


def install_gadgets(plane: ControlPlane) -> None:
    apply(plane, gadget_crd())
    plane.kubectl("wait", "--for=condition=Established", f"crd/gadgets.{GADGETS}")


def log_shapes(log: Path) -> collections.Counter[str]:
    """WARNING/ERROR lines of a controller log, counted by shape (numbers masked, timestamp dropped)."""
    shapes: collections.Counter[str] = collections.Counter()
    for line in log.read_text(errors="replace").splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[2] in ("WARNING", "ERROR"):
            shapes[re.sub(r"\d+", "#", parts[3])] += 1
    return shapes


def test_apiserver_killed_with_etcd_compaction(plane: ControlPlane, controller: Controller) -> None:
    """SIGKILL the API server, compact etcd while it is down (watches come back to 410 Gone), restart it."""
    controller.env["KUBEVEC_LOG_LEVEL"] = "INFO"
    install_gadgets(plane)
    churn = Churn(plane, seed=1)
    churn.once()
    controller.start()
    controller.wait_ready()
    churn.once()
    controller.converged()

    plane.kill("kube-apiserver")
    plane.compact_etcd()
    eventually(
        lambda: controller.readyz()[0] == 503 and "cannot reach the Kubernetes API" in controller.readyz()[1],
        timeout=15,
        message="readiness did not drop while the API server was down",
    )
    assert controller.metric("kubevec_cluster_reachable") == 0
    time.sleep(20)  # kopf, the probe and the resync all retry meanwhile
    plane.restart("kube-apiserver")
    plane.compact_etcd()  # anything kopf resumes from is gone: 410, re-list
    churn.once()
    churn.once()
    controller.converged()
    controller.wait_ready(timeout=RESYNC)
    assert controller.metric("kubevec_cluster_reachable") == 1
    assert controller.proc is not None
    assert controller.proc.poll() is None  # no crash, no restart
    # The resync converged the store first; kopf's own watch retry comes back to 410 Gone and re-lists.
    eventually(lambda: "Restarted a watch after 410 Gone" in controller.log.read_text(), timeout=120)
    churn.once()
    controller.converged()
    log = controller.log.read_text()
    assert "Traceback" not in log
    shapes = log_shapes(controller.log)
    assert shapes, "the outage left no warning at all"
    assert max(shapes.values()) <= 2, shapes.most_common(3)  # once per interval (60 s), with a count
    assert sum(shapes.values()) < 40, shapes.most_common(10)


def test_embedder_rate_limited_then_failing_then_recovering(plane: ControlPlane, controller: Controller) -> None:
    """A Voyage-compatible fake answers 429 with Retry-After, then 500s, then recovers: nothing is lost."""
    script = [(429, {"Retry-After": "1"})] * 2 + [(500, {})] * 8
    with in_a_thread(StandIn("voyage", dimension=64, script=list(script))) as fake:
        controller.env.update(
            {
                "KUBEVEC_EMBEDDER__PROVIDER": "voyage",
                "KUBEVEC_EMBEDDER__MODEL": "voyage-4",
                "KUBEVEC_EMBEDDER__DIMENSION": "64",
                "KUBEVEC_EMBEDDER__BASE_URL": fake.url,
                "KUBEVEC_EMBEDDER__API_KEY": KEY,
            }
        )
        churn = Churn(plane, seed=2)
        churn.once()
        controller.start()
        eventually(lambda: not fake.script, timeout=120, message="the scripted failures were never consumed")
        churn.once()
        controller.wait_ready(timeout=120)
        churn.once()
        controller.converged()
        assert controller.proc is not None
        assert controller.proc.poll() is None
        assert KEY not in controller.log.read_text()
        # Only what changed is embedded: a restart of an unchanged cluster embeds nothing.
        calls = fake.calls
        controller.stop()
        controller.start()
        controller.wait_ready()
        controller.converged()
        assert fake.calls == calls


def test_controller_sigkilled_at_random_points(plane: ControlPlane, controller: Controller) -> None:
    """SIGKILL during the initial sync and during churn, five times, restarting each time."""
    rng = random.Random(5)
    churn = Churn(plane, seed=5)
    for _ in range(3):
        churn.once(creates=15)
    for round_ in range(5):
        controller.start()
        time.sleep(rng.uniform(0.5, 6.0) if round_ < 2 else rng.uniform(2.0, 8.0))
        if round_ >= 2:
            churn.once()
        controller.kill()
        churn.once()
    controller.start()
    controller.wait_ready()
    controller.converged()
    # Whatever was half-written, the hashes in the store are the truth: a clean restart embeds nothing.
    controller.stop()
    controller.start()
    controller.wait_ready()
    controller.converged()
    assert (controller.metric("kubevec_embeddings_computed_total") or 0) == 0  # no sample: nothing counted


def test_objects_and_a_whole_crd_deleted_while_stopped(plane: ControlPlane, controller: Controller) -> None:
    install_gadgets(plane)
    churn = Churn(plane, seed=3)
    churn.once()
    churn.once()
    controller.start()
    controller.wait_ready()
    controller.converged()
    controller.stop()
    plane.kubectl("delete", "crd", f"gadgets.{GADGETS}")
    plane.kubectl("delete", "configmaps", "-n", NAMESPACE, "-l", "step=1")
    churn.once()
    controller.start()
    controller.wait_ready()
    controller.converged()
    install_gadgets(plane)  # leave it for the other scenarios


def test_secret_opt_in_reads_only_metadata(plane: ControlPlane, controller: Controller) -> None:
    plane.kubectl("apply", "-f", str(SYNCPOLICY_CRD))
    plane.kubectl("wait", "--for=condition=Established", "crd/syncpolicies.kubevec.io")
    plane.kubectl("create", "secret", "generic", "opt-in", "-n", NAMESPACE, "--from-literal=token=Zz9secretvalue")
    controller.start()
    controller.wait_ready()
    controller.converged()
    apply(
        plane,
        {
            "apiVersion": "kubevec.io/v1alpha1",
            "kind": "SyncPolicy",
            "metadata": {"name": "secrets"},
            "spec": {"secrets": True},
        },
    )
    controller.converged()
    from tests.e2e.controller_harness import stored

    secret = stored(controller.store, "instances").get(f"faults/{NAMESPACE}/core/v1/Secret/opt-in")
    assert secret is not None
    assert "keys: token" in secret["text"]
    assert "Zz9secretvalue" not in json.dumps(secret)
    plane.kubectl("delete", "syncpolicy", "secrets")
    controller.converged()
