"""Run the real controller (kopf + App) against the real control plane, and read what it stored."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from kopf.testing import KopfRunner

from kubevec.backends.chroma import ChromaStore
from kubevec.backends.config import StoreSettings
from kubevec.controller.app import App
from kubevec.controller.operator import build_registry
from kubevec.controller.settings import ServerSettings, Settings, SyncSettings
from kubevec.inference.fleet import project, resource_of
from kubevec.inference.providers.embedders.base import Embedder
from tests.controlplane.cluster import ControlPlane, free_port
from tests.e2e.convergence import wait_converged

T = TypeVar("T")
CLUSTER = "e2e"


def settings_for(store_path: Path, *, kubeconfig: Path, **sync: Any) -> Settings:
    return Settings(
        kubeconfig=kubeconfig,
        cluster_name=CLUSTER,
        store=StoreSettings(backend="chroma", path=store_path),
        sync=SyncSettings(**{"debounce_seconds": 0.2, "resync_interval_seconds": 3600, **sync}),
        server=ServerSettings(host="127.0.0.1", health_port=free_port(), metrics_port=free_port()),
    )


@contextlib.contextmanager
def running_controller(
    *,
    plane: ControlPlane,
    embedder: Embedder,
    store_path: Path | None = None,
    kubeconfig: Path | None = None,
    settings: Settings | None = None,
    wait_ready: bool = True,
    **sync: Any,
) -> Iterator[App]:
    """The controller in this process (kopf + App), to read the App's state: ready on entry, stopped on exit.

    The one in-process way to start it; :class:`Controller` is the one as a real ``kubevec run`` process.
    ``settings`` replaces the defaults (``store_path`` and ``sync`` are ignored then); with a
    ``namespace`` in them, kopf watches that namespace as ``kubevec run`` would. ``wait_ready=False``:
    yield at once (a test that brings the store up after the controller).
    """
    if settings is None:
        assert store_path is not None, "give a store_path, or settings"
        settings = settings_for(store_path, kubeconfig=kubeconfig or plane.kubeconfig, **sync)
    app = App(settings=settings, embedder=embedder)
    registry = build_registry(settings=settings, app=app)
    scope = ["--namespace", settings.namespace] if settings.namespace else ["--all-namespaces"]
    with KopfRunner(["run", *scope, "--standalone"], registry=registry, timeout=60) as runner:
        if wait_ready:
            eventually(lambda: app.ready, timeout=120, message="the controller never became ready")
        yield app
    assert runner.exception is None, runner.exception


def eventually(check: Callable[[], T | bool | None], *, timeout: float = 30, message: str = "") -> T:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last  # type: ignore[return-value]
        except AssertionError as exc:
            last = exc
        time.sleep(0.2)
    raise AssertionError(f"{message or 'condition not met'} within {timeout}s (last: {last!r})")


def stored(store_path: Path, collection: str) -> dict[str, dict[str, Any]]:
    """Every document of a collection as {id: {"text", "metadata"}}, read with a separate client.

    Capabilities are keyed by resource (``plural.group``, the record id up to ``@``) with the payload as
    its one cluster has it (``kubevec.inference.fleet.project``), as an agent reads them; ``"id"`` is the record's.
    """

    async def read() -> dict[str, dict[str, Any]]:
        store = ChromaStore(path=str(store_path))
        try:
            out = {}
            async for record in store.iter_records(collection):
                if collection == "capabilities":
                    metadata = project(record.metadata)
                    out[resource_of(record.id)] = {"text": record.text, "metadata": metadata, "id": record.id}
                else:
                    out[record.id] = {"text": record.text, "metadata": dict(record.metadata)}
            return out
        finally:
            await store.close()

    return asyncio.run(read())


def counter(app: App, name: str, **labels: str) -> float:
    return app.metrics.registry.get_sample_value(name, labels) or 0.0


def embedded(app: App, collection: str) -> float:
    return counter(app, "kubevec_embeddings_computed_total", collection=collection)


def apply(plane: ControlPlane, manifest: dict[str, Any] | list[dict[str, Any]]) -> None:
    items = manifest if isinstance(manifest, list) else [manifest]
    plane.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def namespaced_crd(*, group: str, plural: str, kind: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A one-version (v1), namespaced CRD with ``schema`` as its openAPIV3Schema."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": plural.removesuffix("s"), "kind": kind, "listKind": f"{kind}List"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


def iid(namespace: str | None, group: str, version: str, kind: str, name: str) -> str:
    return f"{CLUSTER}/{namespace or '_cluster'}/{group or 'core'}/{version}/{kind}/{name}"


def spawn_kubevec_run(plane: ControlPlane, store: Path, *, log: Path, **env: str) -> subprocess.Popen[bytes]:
    """`kubevec run` as a real process (own session, so tests can SIGKILL the whole group)."""
    full_env = {
        **os.environ,
        "KUBECONFIG": str(plane.kubeconfig),
        "KUBEVEC_STORE__PATH": str(store),
        "KUBEVEC_SERVER__HOST": "127.0.0.1",
        "KUBEVEC_SYNC__DEBOUNCE_SECONDS": "0.2",
        "KUBEVEC_SYNC__BUILTIN_CAPABILITIES": "false",
        **env,
    }
    kubevec = str(Path(sys.executable).with_name("kubevec"))
    with open(log, "ab") as out:
        return subprocess.Popen(
            [kubevec, "run"], env=full_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


#: The resync interval of :class:`Controller` (seconds): "within one resync interval" is asserted against it.
RESYNC = 20.0


class Controller:
    """One `kubevec run` process with its health and metrics ports and its log."""

    def __init__(self, plane: ControlPlane, store: Path, log: Path, **env: str) -> None:
        self.plane, self.store, self.log = plane, store, log
        self.health, self.metrics = free_port(), free_port()
        self.env = {
            "KUBEVEC_CLUSTER_NAME": "faults",
            "KUBEVEC_SERVER__HEALTH_PORT": str(self.health),
            "KUBEVEC_SERVER__METRICS_PORT": str(self.metrics),
            "KUBEVEC_SYNC__RESYNC_INTERVAL_SECONDS": str(RESYNC),
            "KUBEVEC_SYNC__CLUSTER_PROBE_SECONDS": "1",
            "KUBEVEC_SYNC__MAX_BACKOFF_SECONDS": "2",
            **env,
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = spawn_kubevec_run(self.plane, self.store, log=self.log, **self.env)

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)

    def readyz(self) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health}/readyz", timeout=3) as response:
                return int(response.status), response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError as exc:
            return 0, str(exc)

    def metric(self, name: str) -> float | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/metrics", timeout=3) as response:
                text = response.read().decode()
        except OSError:
            return None
        values = [float(line.split()[-1]) for line in text.splitlines() if line.startswith(name)]
        return sum(values) if values else None

    def wait_ready(self, timeout: float = 120) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()[-3000:]
            if self.readyz()[0] == 200:
                return
            time.sleep(0.3)
        raise AssertionError(f"never ready: {self.readyz()}\n{self.log.read_text()[-3000:]}")

    def converged(self, timeout: float = RESYNC) -> float:
        drift, seconds = wait_converged(
            kubeconfig=self.plane.kubeconfig, cluster="faults", store_path=self.store, timeout=timeout
        )
        assert drift.converged, f"not converged after {seconds:.0f}s: {drift}\n{self.log.read_text()[-2000:]}"
        return seconds


#: The group of :func:`gadget_crd`: a CRD tests create, fill and delete.
GADGETS = "purge.kubevec.test"


def gadget_crd() -> dict[str, Any]:
    return namespaced_crd(
        group=GADGETS,
        plural="gadgets",
        kind="Gadget",
        schema={
            "type": "object",
            "description": "A gadget that blinks its lights.",
            "properties": {
                "spec": {"type": "object", "properties": {"colour": {"type": "string", "description": "Light colour."}}}
            },
        },
    )
