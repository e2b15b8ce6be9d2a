"""Store down under a running controller: readiness drops, nothing is lost, the store converges.

Run against each server backend that can be started here: a `chroma run` server, PostgreSQL with
pgvector and Weaviate (Qdrant has no server binary here; its local mode cannot go down).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kubevec.backends import VectorStore
from kubevec.backends.config import StoreSettings
from kubevec.backends.factory import open_store
from kubevec.controller.settings import ServerSettings, Settings, SyncSettings
from tests.controlplane.cluster import ControlPlane, free_port
from tests.doubles.embedders import CountingEmbedder
from tests.e2e.controller_harness import eventually, running_controller
from tests.e2e.convergence import wait_converged
from tests.services import chroma_server, postgres_server, redis_server, weaviate_server

pytestmark = pytest.mark.e2e


@dataclasses.dataclass(frozen=True)
class StoreServer:
    """A store server the test can stop and start again on the same data and port."""

    settings: StoreSettings
    serve: Callable[[], contextlib.AbstractContextManager[object]]

    def open(self) -> VectorStore:
        return open_store(self.settings)


@pytest.fixture(params=["chroma", "pgvector", "weaviate", "redis"])
def store_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreServer]:
    port = free_port()
    prefix = "outage-"
    if request.param == "chroma":
        data = tmp_path / "chroma"
        data.mkdir()
        settings = StoreSettings(backend="chroma", url=f"http://127.0.0.1:{port}", path=None, collection_prefix=prefix)
        yield StoreServer(settings=settings, serve=lambda: chroma_server(data, port=port))
        return
    if request.param == "redis":  # killed and started again on its data (append-only file) and port
        data = tmp_path / "redis"
        data.mkdir()
        settings = StoreSettings(
            backend="redis",
            url=f"redis://127.0.0.1:{port}/0",
            password="redis-test-pw",
            path=None,
            collection_prefix=prefix,
            timeout_seconds=5,
        )
        yield StoreServer(settings=settings, serve=lambda: redis_server(data, port=port))
        return
    if request.param == "weaviate":
        data = tmp_path / "weaviate"
        data.mkdir()
        grpc = free_port()
        settings = StoreSettings(
            backend="weaviate",
            url=f"http://127.0.0.1:{port}",
            grpc_port=grpc,
            path=None,
            collection_prefix=prefix,
            timeout_seconds=5,
        )
        yield StoreServer(settings=settings, serve=lambda: weaviate_server(data, port=port, grpc_port=grpc))
        return
    base = Path(tempfile.mkdtemp(prefix="kubevec-pg-outage-"))  # not under pytest's root-only tmp: see postgres_server
    with postgres_server(base, port=port) as first:  # initialise the data directory and learn the password
        pass
    settings = StoreSettings(
        backend="pgvector", url=first.url, password=first.password, path=None, collection_prefix=prefix
    )
    yield StoreServer(settings=settings, serve=lambda: postgres_server(base, port=port))
    shutil.rmtree(base, ignore_errors=True)


def http_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def ids(server: StoreServer) -> set[str]:
    async def read() -> set[str]:
        store = server.open()
        try:
            return {i async for i, _ in store.iter_ids("outage-instances")}
        finally:
            await store.close()

    return asyncio.run(read())


def test_store_outage_degrades_then_converges(control_plane: ControlPlane, store_server: StoreServer) -> None:
    namespace = f"outage-{store_server.settings.backend}"
    control_plane.kubectl("create", "namespace", namespace)
    health, metrics = free_port(), free_port()
    settings = Settings(
        kubeconfig=control_plane.kubeconfig,
        cluster_name="outage",
        store=store_server.settings,
        sync=SyncSettings(
            debounce_seconds=0.2, resync_interval_seconds=3600, max_backoff_seconds=1, builtin_capabilities=False
        ),
        server=ServerSettings(host="127.0.0.1", health_port=health, metrics_port=metrics),
    )
    with running_controller(
        plane=control_plane, embedder=CountingEmbedder(), settings=settings, wait_ready=False
    ) as app:
        with store_server.serve():
            eventually(lambda: app.ready, timeout=120)
            assert http_status(f"http://127.0.0.1:{health}/readyz") == 200
            control_plane.kubectl("create", "configmap", "before", "-n", namespace, "--from-literal=a=1")
            eventually(lambda: f"outage/{namespace}/core/v1/ConfigMap/before" in ids(store_server))
        # The store is down: changes keep arriving.
        control_plane.kubectl("create", "configmap", "during", "-n", namespace, "--from-literal=a=1")
        control_plane.kubectl("delete", "configmap", "before", "-n", namespace)
        eventually(lambda: app.engine.degraded, timeout=30, message="the controller never noticed the outage")
        assert http_status(f"http://127.0.0.1:{health}/readyz") == 503
        scrape = urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5).read().decode()
        assert "kubevec_degraded 1.0" in scrape
        assert 'kubevec_errors_total{stage="store"}' in scrape
        # The store comes back (same data, same port): everything converges, nothing was lost.
        with store_server.serve():
            eventually(lambda: not app.engine.degraded, timeout=60, message="never recovered")
            eventually(
                lambda: (
                    f"outage/{namespace}/core/v1/ConfigMap/during" in ids(store_server)
                    and f"outage/{namespace}/core/v1/ConfigMap/before" not in ids(store_server)
                ),
                timeout=30,
                message="the store did not converge after the outage",
            )
            eventually(lambda: http_status(f"http://127.0.0.1:{health}/readyz") == 200, timeout=30)
            drift, _ = wait_converged(
                kubeconfig=control_plane.kubeconfig,
                cluster="outage",
                open_store=store_server.open,
                prefix="outage-",
                timeout=60,
            )
            assert drift.converged, f"the store did not converge after the outage: {drift}"
