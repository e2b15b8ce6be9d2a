"""What e2e tests of the agents' side share: tenants' workloads, an MCP agent, helm and the kubelet's env."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import REPO
from tests.controlplane.cluster import ControlPlane, free_port
from tests.e2e.controller_harness import CLUSTER, eventually, spawn_kubevec_run


def workloads(ns: str) -> list[dict[str, Any]]:
    meta = {"namespace": ns}
    pod = {"containers": [{"name": "web", "image": "nginx:1.27", "envFrom": [{"secretRef": {"name": "db-creds"}}]}]}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", **meta}, "data": {"a": "1"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", **meta}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", **meta},
         "spec": {"selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod}}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "agent", **meta}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nobody", **meta}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "agent-reader", **meta},
         "rules": [{"apiGroups": [""], "resources": ["configmaps", "services"], "verbs": ["get", "list"]},
                   {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "agent-reader", **meta},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "agent-reader"},
         "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": ns}]},
    ]  # fmt: skip


class Agent:
    """One MCP session with one bearer token."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    async def calls(self, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=60) as http,
            Client(streamable_http_client(self.url, http_client=http)) as client,
        ):
            out = []
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                out.append(result.structured_content if not result.is_error else {"error": _text(result)})
            return out

    def call(self, name: str, **arguments: Any) -> Any:
        return asyncio.run(self.calls((name, arguments)))[0]

    def calls_one(self, tool: str, arguments: dict[str, Any]) -> Any:
        """One call whose arguments may hold ``name`` (resolve_kind's)."""
        return asyncio.run(self.calls((tool, arguments)))[0]

    def ids(self, **fields: Any) -> set[str]:
        found = self.call("vector_search", **{"collection": "instances", "k": 100, **fields})
        assert "error" not in found, found
        return {hit["id"] for hit in found["results"]}


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def helm(plane: ControlPlane, *args: str) -> str:
    built = subprocess.run(
        ["bash", str(REPO / "charts" / "tools" / "build-helm.sh")], capture_output=True, text=True, check=True
    )
    binary = built.stdout.strip().splitlines()[-1]
    proc = subprocess.run(
        [binary, f"--kubeconfig={plane.kubeconfig}", *args], capture_output=True, text=True, check=False, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def container_env(plane: ControlPlane, container: dict[str, Any], *, namespace: str) -> dict[str, str]:
    """The container's environment as the kubelet would build it (plain values and Secret keys)."""
    env: dict[str, str] = {}
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = item["value"]
            continue
        ref = item["valueFrom"]["secretKeyRef"]
        secret = json.loads(plane.kubectl("get", "secret", ref["name"], "-n", namespace, "-o", "json"))
        env[item["name"]] = base64.b64decode(secret["data"][ref["key"]]).decode()
    return env


@dataclasses.dataclass
class Served:
    """`kubevec run` serving MCP to tenants: its process, MCP URL, metrics port and log."""

    proc: subprocess.Popen[bytes]
    url: str
    metrics: int
    log: Path

    def metric(self, name: str, **labels: str) -> float:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/metrics", timeout=10) as response:
            text = response.read().decode()
        wanted = name + ("{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}" if labels else "")
        for line in text.splitlines():
            if line.startswith(wanted + " "):
                return float(line.rsplit(" ", 1)[1])
        raise AssertionError(f"{wanted} not exported")


@contextlib.contextmanager
def serving_tenants(
    plane: ControlPlane, tmp_path: Path, *, token: str, namespaces: Sequence[str], **env: str
) -> Iterator[Served]:
    """`kubevec run` with Kubernetes-token MCP auth, once the tenants' Deployments are indexed (seen with
    ``token``, which must see every namespace); stopped after, and its log checked for tracebacks."""
    port, health, metrics = free_port(), free_port(), free_port()
    log = tmp_path / "kubevec.log"
    proc = spawn_kubevec_run(
        plane,
        tmp_path / "store",
        log=log,
        KUBEVEC_CLUSTER_NAME=CLUSTER,
        KUBEVEC_MCP_PORT=str(port),
        KUBEVEC_SERVER__HEALTH_PORT=str(health),
        KUBEVEC_SERVER__METRICS_PORT=str(metrics),
        **{"KUBEVEC_MCP_KUBERNETES_AUTH": "true", **env},
    )
    served = Served(proc=proc, url=f"http://127.0.0.1:{port}/mcp", metrics=metrics, log=log)
    try:

        def indexed() -> bool:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                seen = Agent(served.url, token).ids(kind="Deployment", filter={"namespace": {"$in": list(namespaces)}})
            except Exception:
                return False
            return len(seen) == len(namespaces)

        eventually(indexed, timeout=240, message="the tenants' Deployments were never indexed")
        yield served
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    assert "Traceback" not in log.read_text()
