"""Store down under a running controller: readiness drops, nothing is lost, the store converges."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from kopf.testing import KopfRunner

from backends.chroma import ChromaStore
from backends.config import StoreSettings
from controller.app import App
from controller.operator import build_registry
from controller.settings import ServerSettings, Settings, SyncSettings
from tests.controlplane.cluster import ControlPlane, free_port
from tests.e2e.controller_harness import eventually
from tests.e2e.convergence import wait_converged
from tests.fakes import CountingEmbedder
from tests.services import chroma_server

pytestmark = pytest.mark.e2e


def http_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def ids(url: str) -> set[str]:
    async def read() -> set[str]:
        store = ChromaStore(url=url)
        try:
            return {i async for i, _ in store.iter_ids("outage-instances")}
        finally:
            await store.close()

    return asyncio.run(read())


def test_store_outage_degrades_then_converges(control_plane: ControlPlane, tmp_path: Path) -> None:
    control_plane.kubectl("create", "namespace", "outage")
    port = free_port()
    health, metrics = free_port(), free_port()
    settings = Settings(
        kubeconfig=control_plane.kubeconfig,
        cluster_name="outage",
        store=StoreSettings(backend="chroma", url=f"http://127.0.0.1:{port}", path=None, collection_prefix="outage-"),
        sync=SyncSettings(
            debounce_seconds=0.2, resync_interval_seconds=3600, max_backoff_seconds=1, builtin_capabilities=False
        ),
        server=ServerSettings(host="127.0.0.1", health_port=health, metrics_port=metrics),
    )
    app = App(settings=settings, embedder=CountingEmbedder())
    data = tmp_path / "chroma"
    data.mkdir()
    with KopfRunner(
        ["run", "--all-namespaces", "--standalone"], registry=build_registry(settings=settings, app=app), timeout=60
    ):
        with chroma_server(data, port=port) as url:
            eventually(lambda: app.ready, timeout=120)
            assert http_status(f"http://127.0.0.1:{health}/readyz") == 200
            control_plane.kubectl("create", "configmap", "before", "-n", "outage", "--from-literal=a=1")
            eventually(lambda: "outage/outage/core/v1/ConfigMap/before" in ids(url))
        # The store is down: changes keep arriving.
        control_plane.kubectl("create", "configmap", "during", "-n", "outage", "--from-literal=a=1")
        control_plane.kubectl("delete", "configmap", "before", "-n", "outage")
        eventually(lambda: app.engine.degraded, timeout=30, message="the controller never noticed the outage")
        assert http_status(f"http://127.0.0.1:{health}/readyz") == 503
        scrape = urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5).read().decode()
        assert "kubevec_degraded 1.0" in scrape
        assert 'kubevec_errors_total{stage="store"}' in scrape
        # The store comes back (same data, same port): everything converges, nothing was lost.
        with chroma_server(data, port=port) as url:
            eventually(lambda: not app.engine.degraded, timeout=60, message="never recovered")
            eventually(
                lambda: (
                    "outage/outage/core/v1/ConfigMap/during" in ids(url)
                    and "outage/outage/core/v1/ConfigMap/before" not in ids(url)
                ),
                timeout=30,
                message="the store did not converge after the outage",
            )
            eventually(lambda: http_status(f"http://127.0.0.1:{health}/readyz") == 200, timeout=30)
            drift, _ = wait_converged(
                kubeconfig=control_plane.kubeconfig,
                cluster="outage",
                open_store=lambda: ChromaStore(url=url),
                prefix="outage-",
                timeout=60,
            )
            assert drift.converged, f"the store did not converge after the outage: {drift}"
