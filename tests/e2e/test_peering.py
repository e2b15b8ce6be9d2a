"""Two `kubevec run` replicas with kopf peering: one active; when it dies, the other takes over."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import urllib.request
from pathlib import Path

import pytest

from kubevec.backends.chroma import ChromaStore
from tests.conftest import KUBEVEC_CRDS
from tests.controlplane.cluster import ControlPlane, free_port
from tests.e2e.controller_harness import eventually, spawn_kubevec_run
from tests.e2e.convergence import wait_converged

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


def start(plane: ControlPlane, store: Path, *, priority: int) -> tuple[subprocess.Popen[bytes], int, int]:
    health, metrics = free_port(), free_port()
    proc = spawn_kubevec_run(
        plane,
        store,
        log=store.parent / f"controller-{priority}.log",
        KUBEVEC_CLUSTER_NAME="peers",
        KUBEVEC_PEERING="e2e-peering",
        KUBEVEC_PEERING_PRIORITY=str(priority),
        KUBEVEC_PEERING_LIFETIME_SECONDS="6",
        KUBEVEC_SERVER__HEALTH_PORT=str(health),
        KUBEVEC_SERVER__METRICS_PORT=str(metrics),
    )
    return proc, health, metrics


def gauge(metrics: int, name: str) -> float | None:
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=2).read().decode()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def stored(store: Path) -> set[str]:
    async def read() -> set[str]:
        client = ChromaStore(path=str(store))
        try:
            return {i async for i, _ in client.iter_ids("instances") if "/peers-ns/" in i}
        finally:
            await client.close()

    return asyncio.run(read())


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        proc.wait(timeout=30)


def test_one_active_replica_and_failover(control_plane: ControlPlane, tmp_path: Path) -> None:
    control_plane.kubectl("apply", "--server-side", "-f", str(KUBEVEC_CRDS))
    control_plane.kubectl("wait", "--for=condition=Established", "crd/clusterkopfpeerings.kopf.dev")
    control_plane.kubectl(
        "apply",
        "-f",
        "-",
        input='{"apiVersion": "kopf.dev/v1", "kind": "ClusterKopfPeering", "metadata": {"name": "e2e-peering"}}',
    )
    control_plane.kubectl("create", "namespace", "peers-ns")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    leader, _, leader_metrics = start(control_plane, tmp_path / "a" / "store", priority=100)
    standby, _, standby_metrics = start(control_plane, tmp_path / "b" / "store", priority=10)
    try:
        eventually(lambda: gauge(leader_metrics, "kubevec_active") == 1.0, timeout=120, message="leader never active")
        eventually(lambda: gauge(standby_metrics, "kubevec_ready") is not None, timeout=120)
        control_plane.kubectl("create", "configmap", "seen-by-leader", "-n", "peers-ns", "--from-literal=a=1")
        eventually(lambda: (gauge(leader_metrics, 'kubevec_documents{collection="instances"}') or 0) > 0, timeout=60)
        assert gauge(standby_metrics, "kubevec_active") == 0.0
        assert (gauge(standby_metrics, 'kubevec_upserts_total{collection="instances"}') or 0.0) == 0.0
        # The leader dies; the standby takes over after the peer's lifetime and catches up by resync.
        stop(leader, signal.SIGKILL)
        control_plane.kubectl("create", "configmap", "after-failover", "-n", "peers-ns", "--from-literal=a=1")
        eventually(
            lambda: gauge(standby_metrics, "kubevec_active") == 1.0, timeout=60, message="standby never took over"
        )
        eventually(
            lambda: (gauge(standby_metrics, 'kubevec_upserts_total{collection="instances"}') or 0) >= 2, timeout=60
        )
        drift, _ = wait_converged(
            kubeconfig=control_plane.kubeconfig, cluster="peers", store_path=tmp_path / "b" / "store", timeout=60
        )
        assert drift.converged, f"the new leader's store did not converge: {drift}"
        stop(standby)
        assert {
            "peers/peers-ns/core/v1/ConfigMap/seen-by-leader",
            "peers/peers-ns/core/v1/ConfigMap/after-failover",
        } <= stored(tmp_path / "b" / "store")
    finally:
        stop(leader, signal.SIGKILL)
        stop(standby, signal.SIGKILL)
