"""`kubevec run` killed with SIGKILL mid-work: after a restart the store is exactly what the cluster implies."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from kubevec.backends.config import StoreSettings
from kubevec.backends.factory import open_store
from tests.controlplane.cluster import ControlPlane, free_port
from tests.e2e.controller_harness import eventually, spawn_kubevec_run

pytestmark = pytest.mark.e2e


def start(plane: ControlPlane, store: Path, health: int, backend: str) -> subprocess.Popen[bytes]:
    return spawn_kubevec_run(
        plane,
        store,
        log=store.parent / "controller.log",
        KUBEVEC_STORE__BACKEND=backend,
        KUBEVEC_CLUSTER_NAME="killed",
        KUBEVEC_SERVER__HEALTH_PORT=str(health),
        KUBEVEC_SERVER__METRICS_PORT="0",
    )


def ready(health: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{health}/readyz", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def stored_configmaps(store: Path, backend: str, ns: str) -> set[str]:
    async def read() -> set[str]:
        client = open_store(StoreSettings(backend=backend, path=store))  # type: ignore[arg-type]
        try:
            return {i async for i, _ in client.iter_ids("instances") if f"/{ns}/" in i and "/ConfigMap/" in i}
        finally:
            await client.close()

    return asyncio.run(read())


def cluster_configmaps(plane: ControlPlane, ns: str) -> set[str]:
    names = plane.kubectl("get", "configmaps", "-n", ns, "-o", "name").split()
    return {f"killed/{ns}/core/v1/ConfigMap/{n.split('/', 1)[1]}" for n in names}


@pytest.mark.parametrize("backend", ["chroma", "lancedb"])
def test_sigkill_then_restart_converges(control_plane: ControlPlane, tmp_path: Path, backend: str) -> None:
    ns = f"killed-{backend}"
    control_plane.kubectl("create", "namespace", ns)
    for i in range(5):
        control_plane.kubectl("create", "configmap", f"cm-{i}", "-n", ns, f"--from-literal=k={i}")
    store = tmp_path / "store"
    health = free_port()
    proc = start(control_plane, store, health, backend)
    try:
        eventually(lambda: ready(health), timeout=120, message="controller not ready")
        # Churn, then kill it without warning while it may be mid-flush.
        for i in range(5, 15):
            control_plane.kubectl("create", "configmap", f"cm-{i}", "-n", ns, f"--from-literal=k={i}")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        # While it is dead: deletions, creations and updates it never sees as events.
        for i in range(0, 15, 3):
            control_plane.kubectl("delete", "configmap", f"cm-{i}", "-n", ns)
        control_plane.kubectl("create", "configmap", "born-while-dead", "-n", ns, "--from-literal=a=b")
        time.sleep(0.5)
        proc = start(control_plane, store, health, backend)
        eventually(lambda: ready(health), timeout=120, message="restarted controller not ready")
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        assert stored_configmaps(store, backend, ns) == cluster_configmaps(control_plane, ns)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
