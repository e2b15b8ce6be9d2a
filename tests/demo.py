"""``make demo``: a throwaway control plane, sample CRDs and objects, the controller, example searches.

Everything started here is stopped on exit (Ctrl-C included). The store is embedded Chroma under
``.kubevec/demo`` and the embedder is the offline model, as in a default install.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.controlplane.cluster import ControlPlane, free_port, running

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "deploy" / "samples"
STORE = REPO / ".kubevec" / "demo"
SEARCHES: list[tuple[str, dict[str, Any]]] = [
    ("capabilities", {"query": "which resource gives me a managed Postgres?"}),
    ("capabilities", {"query": "rotate TLS certs for my ingress automatically before they expire"}),
    ("capabilities", {"query": "scale my consumers on queue length"}),
    ("instances", {"query": "what runs the payments API in prod?"}),
    ("instances", {"query": "nightly backup", "kind": "BackupSchedule"}),
    ("instances", {"keyword": "orders", "namespace": "prod"}),
    ("instances", {"labels": ["team=payments"], "k": 10}),
]


def step(message: str) -> None:
    print(f"==> {message}", flush=True)


def deployment(name: str, namespace: str, image: str, team: str, replicas: int = 2, **pod: Any) -> dict[str, Any]:
    labels = {"app": name, "team": team}
    container = {"name": name, "image": image, "ports": [{"containerPort": 8080}], **pod.pop("container", {})}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            "annotations": {"example.com/description": f"{name} service owned by {team}"},
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [container], **pod},
            },
        },
    }


def service(name: str, namespace: str, team: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": {"team": team}},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080, "name": "http"}]},
    }


def _path(path: str, service: str) -> dict[str, Any]:
    return {"path": path, "pathType": "Prefix", "backend": {"service": {"name": service, "port": {"number": 80}}}}


def sample_objects() -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("prod", "staging", "data")
    ]
    for namespace in ("prod", "staging"):
        objects += [
            deployment(
                "payments-api",
                namespace,
                "ghcr.io/acme/payments-api:2.3.1",
                "payments",
                3 if namespace == "prod" else 1,
                container={
                    "envFrom": [{"configMapRef": {"name": "payments-config"}}],
                    "env": [
                        {
                            "name": "DB_PASSWORD",
                            "valueFrom": {"secretKeyRef": {"name": "payments-db", "key": "password"}},
                        }
                    ],
                },
            ),
            service("payments-api", namespace, "payments"),
            deployment("checkout-web", namespace, "ghcr.io/acme/checkout-web:5.0.0", "storefront"),
            service("checkout-web", namespace, "storefront"),
            deployment(
                "orders-worker",
                namespace,
                "ghcr.io/acme/orders-worker:1.9.0",
                "orders",
                volumes=[{"name": "spool", "persistentVolumeClaim": {"claimName": "orders-spool"}}],
            ),
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "orders-spool", "namespace": namespace},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "fast-ssd",
                    "resources": {"requests": {"storage": "5Gi"}},
                },
            },
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "Ingress",
                "metadata": {"name": "storefront", "namespace": namespace},
                "spec": {
                    "rules": [
                        {
                            "host": f"shop.{namespace}.example.com",
                            "http": {
                                "paths": [
                                    _path("/pay", "payments-api"),
                                    _path("/", "checkout-web"),
                                ]
                            },
                        }
                    ]
                },
            },
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "payments-config", "namespace": namespace},
                "data": {"CURRENCY": "EUR", "PROVIDER": "stripe"},
            },
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "payments-db", "namespace": namespace},
                "stringData": {"password": "demo-password-never-indexed"},
            },
        ]
    return objects


def apply_samples(plane: ControlPlane) -> int:
    crds = SAMPLES / "crds.yaml"
    plane.kubectl("apply", "-f", str(crds))
    names = [line.split(":", 1)[1].strip() for line in crds.read_text().splitlines() if line.startswith("  name: ")]
    plane.kubectl("wait", "--for=condition=Established", *[f"crd/{n}" for n in names], "--timeout=60s")
    step(f"Applied {len(names)} sample CRDs from deploy/samples/crds.yaml")
    objects = sample_objects()
    plane.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    custom = plane.kubectl("apply", "-f", str(SAMPLES / "objects.yaml")).strip().splitlines()
    step(f"Applied {len(objects) + len(custom)} sample objects in namespaces prod, staging, data")
    return len(objects) + len(custom)


def start_controller(plane: ControlPlane) -> tuple[subprocess.Popen[bytes], int]:
    health = free_port()
    env = {
        **os.environ,
        "KUBECONFIG": str(plane.kubeconfig),
        "KUBEVEC_CLUSTER_NAME": "demo",
        "KUBEVEC_STORE__PATH": str(STORE),
        "KUBEVEC_SERVER__HOST": "127.0.0.1",
        "KUBEVEC_SERVER__HEALTH_PORT": str(health),
        "KUBEVEC_SERVER__METRICS_PORT": str(free_port()),
        "KUBEVEC_SYNC__DEBOUNCE_SECONDS": "0.5",
        "KUBEVEC_LOG_LEVEL": "INFO",
    }
    log = open(STORE.parent / "demo-controller.log", "wb")  # noqa: SIM115 - lives as long as the process
    kubevec = str(Path(sys.executable).with_name("kubevec"))
    proc = subprocess.Popen([kubevec, "run"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return proc, health


def wait_ready(proc: subprocess.Popen[bytes], health: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the controller exited with {proc.returncode}; see .kubevec/demo-controller.log")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{health}/readyz", timeout=2) as response:
                if response.status == 200:
                    return
        except urllib.error.HTTPError as exc:
            reason = exc.read().decode(errors="replace")
            if reason != last:
                print(f"    controller: {reason}", flush=True)
                last = reason
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError("the controller was not ready in time; see .kubevec/demo-controller.log")


def roll_out(plane: ControlPlane, timeout: float = 60) -> None:
    """A new image for payments-api while the controller runs, so the change history has something to say."""
    step("Rolling out ghcr.io/acme/payments-api:2.3.2 in prod (the controller records what changes)")
    plane.kubectl(
        "set", "image", "deployment/payments-api", "-n", "prod", "payments-api=ghcr.io/acme/payments-api:2.3.2"
    )
    env = {
        **os.environ,
        "KUBEVEC_STORE__PATH": str(STORE),
        "KUBEVEC_LOG_LEVEL": "WARNING",
        "KUBEVEC_CLI_RESIDENT_SECONDS": "0",  # a polling loop, not a person: no reader left behind
    }
    kubevec = str(Path(sys.executable).with_name("kubevec"))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = subprocess.run(
            [kubevec, "changes", "-n", "prod", "--kind", "Deployment", "-o", "json"],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode == 0 and json.loads(done.stdout)["changes"]:
            time.sleep(2)  # the ReplicaSets the rollout makes are recorded a moment later
            return
        time.sleep(0.5)
    raise TimeoutError("the rollout was not recorded in time; see .kubevec/demo-controller.log")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


async def searches() -> int:
    """Print the example searches; return how many found nothing (the demo fails on any)."""
    from kubevec.backends.chroma import ChromaStore
    from kubevec.inference.providers.embedders.local import LocalEmbedder
    from kubevec.query.changes import ChangesRequest, parse_time
    from kubevec.query.render import compact
    from kubevec.query.request import SearchRequest
    from kubevec.query.search import SearchService

    store = ChromaStore(path=str(STORE))
    service = SearchService(
        store=store,
        embedder=LocalEmbedder(),
        collections={"capabilities": "capabilities", "instances": "instances", "changes": "changes"},
    )
    counts = {c: await store.count(c) for c in ("capabilities", "instances")}
    empty = 0
    step(f"The store holds {counts['capabilities']} capability and {counts['instances']} instance documents")
    for collection, kwargs in SEARCHES:
        shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        print(f"\n$ kubevec search --collection {collection}  ({shown})")
        results = await service.search(SearchRequest.build(collection=collection, **{"k": 3, **kwargs}))
        print(compact(results, token_budget=300))
        empty += not results
    print(
        "\n$ kubevec changes --since 1h -n prod   (what the MCP tool list_changes(since='1h', namespace='prod') says)"
    )
    changes = await service.changes(ChangesRequest(since=parse_time("1h"), namespace="prod", k=10))
    print("\n".join(changes.lines()))
    empty += not changes.entries
    subject = "Secret/prod/payments-db"
    print(f"\n$ kubevec related {subject} --direction in --hops 3   (what breaks if it goes?)")
    related = await service.related(subject, direction="in", hops=3)
    print("\n".join(related.lines()))
    empty += not related.edges
    await store.close()
    return empty


def main() -> int:
    step("Building or reusing the control plane binaries (a cold build takes several minutes)")
    if STORE.exists():
        shutil.rmtree(STORE)
    STORE.mkdir(parents=True)
    started = time.monotonic()
    with running() as plane:
        step(
            f"Started etcd + kube-apiserver + kube-controller-manager at {plane.url} in {time.monotonic() - started:.1f}s"
        )
        apply_samples(plane)
        step("Starting `kubevec run` (embedded Chroma in .kubevec/demo, offline embedder)")
        proc, health = start_controller(plane)
        try:
            t0 = time.monotonic()
            wait_ready(proc, health)
            step(f"The controller finished its initial sync in {time.monotonic() - t0:.1f}s")
            roll_out(plane)
        finally:
            stop(proc)
            step("Stopped the controller")
    step("Stopped the control plane")
    if empty := asyncio.run(searches()):
        print(f"\n{empty} example searches found nothing; see .kubevec/demo-controller.log", file=sys.stderr)
        return 1
    print("\nDone. The controller's log is in .kubevec/demo-controller.log")
    return 0


if __name__ == "__main__":
    sys.exit(main())
