"""Reading commands beside a running controller answer the same with the resident reader and without.

A user runs ``kubevec run`` on an embedded store and asks ``kubevec search`` (and the other reading
commands) about it; the first command leaves a resident reader behind. Each time the cluster has
changed and the controller has written it (converged), every reading command answers byte for byte
what it answers in a process of its own: the reader follows the controller's writes by their
stamps, its keyword index too, and it keeps no lock the controller needs (issue 54).

With embedded Chroma, reads are compared while the controller is stopped, and vector searches
are left out of the comparison: two fresh processes opening the same unchanging Chroma directory
(written by a controller a moment before) answered the same `--no-hybrid` search differently,
one finding the newest Deployment and the other not (Chroma's embedded store: a new client's
queries race its own start-up, chroma-core/chroma#3769, #3792). Every other reading command,
keyword search included, is compared. LanceDB is compared whole, beside the running controller.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kubevec.backends.config import StoreSettings
from kubevec.backends.factory import open_store
from tests.controlplane.cluster import ControlPlane
from tests.e2e.controller_harness import Controller, apply
from tests.e2e.convergence import wait_converged
from tests.resident import Reader, differences, kubevec, runtime_dir, with_reader

pytestmark = pytest.mark.e2e


def deployment(name: str, image: str, *, purpose: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": name},
            "annotations": {"description": purpose},
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": name, "image": image}]},
            },
        },
    }


def reads(name: str, namespace: str, *, vectors: bool = True) -> tuple[tuple[str, ...], ...]:
    """The reading commands compared; ``vectors=False`` leaves out those answered by a vector search."""
    searched = (
        ("search", "which service takes card payments", "--collection", "instances", "-k", "3"),
        ("search", "redis cache for sessions", "--collection", "instances", "--json", "-k", "2"),
        ("search", "redis cache for sessions", "--collection", "instances", "--json", "-k", "2", "--no-hybrid"),
        ("search", "payments", "--collection", "instances", "-n", namespace, "-o", "name"),
    )
    return (*(searched if vectors else ()), *_exact_reads(name, namespace))


def _exact_reads(name: str, namespace: str) -> tuple[tuple[str, ...], ...]:
    return (
        ("search", "--keyword", "redis sessions", "--collection", "instances", "--json", "-k", "2"),
        ("get", f"faults/{namespace}/apps/v1/Deployment/{name}"),
        ("get", f"faults/{namespace}/apps/v1/Deployment/missing"),
        ("related", f"Deployment/{namespace}/{name}"),
        ("facets", "kind", "--collection", "instances"),
        ("changes", "-n", namespace, "--json"),
        ("resolve", "deploy"),
    )


@pytest.mark.parametrize("backend", ["chroma", "lancedb"])
def test_reads_beside_a_running_controller_answer_as_their_own_process(
    plane: ControlPlane, tmp_path: Path, backend: str
) -> None:
    ns = f"resident-{backend}"  # a namespace of its own: without kube-controller-manager none is ever deleted
    plane.kubectl("create", "namespace", ns)
    store = tmp_path / "store"
    controller = Controller(plane, store, tmp_path / "kubevec.log", KUBEVEC_STORE__BACKEND=backend)

    def converged() -> None:
        drift, _ = wait_converged(
            kubeconfig=plane.kubeconfig,
            cluster="faults",
            timeout=60,
            open_store=lambda: open_store(StoreSettings(backend=backend, path=store)),  # type: ignore[arg-type]
        )
        assert drift.converged, drift

    def settled() -> None:
        """Chroma: the writer stopped, its vectors on disk (see the module docstring); started again after."""
        if backend == "chroma":
            controller.stop()
            restarted.append(True)

    restarted: list[bool] = []
    vectors = backend != "chroma"
    try:
        apply(
            plane, deployment("payments-api", "ghcr.io/acme/payments:1.0", purpose="takes card payments", namespace=ns)
        )
        controller.start()
        controller.wait_ready()
        converged()
        with runtime_dir() as runtime:
            env = with_reader(
                {
                    **os.environ,
                    "KUBECONFIG": str(plane.kubeconfig),
                    "KUBEVEC_CLUSTER_NAME": "faults",
                    "KUBEVEC_STORE__BACKEND": backend,
                    "KUBEVEC_STORE__PATH": str(store),
                },
                runtime,
            )
            reader = Reader(env, tmp_path)
            assert kubevec(*reads("payments-api", ns, vectors=vectors)[0], env=env, cwd=tmp_path).returncode == 0
            reader.wait_ready()
            settled()
            found = kubevec("search", "card payments", "--collection", "instances", "-o", "name", env=env, cwd=tmp_path)
            assert f"faults/{ns}/apps/v1/Deployment/payments-api" in found.stdout.splitlines()
            assert differences(reads("payments-api", ns, vectors=vectors), env=env, cwd=tmp_path) == []

            # the controller writes what changed; the reader's next answers are the store's as it is now
            if restarted:
                controller.start()
                controller.wait_ready()
            apply(plane, deployment("session-cache", "redis:7.2", purpose="keeps user sessions", namespace=ns))
            apply(
                plane,
                deployment("payments-api", "ghcr.io/acme/payments:1.1", purpose="refunds card payments", namespace=ns),
            )
            converged()
            settled()
            assert differences(reads("session-cache", ns, vectors=vectors), env=env, cwd=tmp_path) == []
            if restarted:
                controller.start()
                controller.wait_ready()
            plane.kubectl("delete", "deployment", "payments-api", "-n", ns)
            converged()
            settled()
            assert differences(reads("payments-api", ns, vectors=vectors), env=env, cwd=tmp_path) == []
            gone = kubevec("search", "card payments", "--collection", "instances", "-o", "name", env=env, cwd=tmp_path)
            assert "payments-api" not in gone.stdout
            assert reader.answered() >= 3 * len(reads("x", ns, vectors=vectors))
            assert controller.proc is not None
            assert restarted or controller.proc.poll() is None  # it never failed on the reader's account
    finally:
        controller.stop()
