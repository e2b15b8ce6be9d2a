"""Run the real controller (kopf + App) against the real control plane, and read what it stored."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from kopf.testing import KopfRunner

from backends.chroma import ChromaStore
from backends.config import StoreSettings
from controller.app import App
from controller.operator import build_registry
from controller.settings import ServerSettings, Settings, SyncSettings
from inference.providers.embedders.base import Embedder
from tests.controlplane.cluster import ControlPlane, free_port

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
    *, plane: ControlPlane, store_path: Path, embedder: Embedder, kubeconfig: Path | None = None, **sync: Any
) -> Iterator[App]:
    """Start the controller, wait until it is ready (initial resync flushed), stop it on exit."""
    settings = settings_for(store_path, kubeconfig=kubeconfig or plane.kubeconfig, **sync)
    app = App(settings=settings, embedder=embedder)
    registry = build_registry(settings=settings, app=app)
    with KopfRunner(["run", "--all-namespaces", "--standalone"], registry=registry, timeout=60) as runner:
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
    """Every document of a collection as {id: {"text", "metadata"}}, read with a separate client."""

    async def read() -> dict[str, dict[str, Any]]:
        store = ChromaStore(path=str(store_path))
        try:
            out = {}
            async for record in store.iter_records(collection):
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
