"""`helm install` on the real control plane, then agents reach the index through the chart's MCP endpoint.

There is no kubelet here, so the pod never starts. The test does what the kubelet would: it reads
the installed Deployment, resolves its environment (the token from the installed Secret), and
runs the container's command locally as the chart's ServiceAccount (a TokenRequest token), with
only the ports, the bind address and the data paths changed. The MCP client then talks to it as
an in-cluster agent would: with the Service's DNS name in the Host header.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import REPO, SAMPLE_CRDS
from tests.controlplane.cluster import ControlPlane, free_port
from tests.e2e.agents import container_env, helm
from tests.e2e.controller_harness import eventually

pytestmark = pytest.mark.e2e

NS = "agents"
RELEASE = "kv"
TOKEN = "agent-token-7f3e"


def test_helm_install_serves_agents_over_mcp(plane: ControlPlane, tmp_path: Path) -> None:
    plane.kubectl("create", "namespace", NS)
    plane.kubectl("create", "secret", "generic", "kv-mcp", "-n", NS, f"--from-literal=token={TOKEN}")
    plane.kubectl("apply", "--server-side", "-f", str(SAMPLE_CRDS))
    helm(
        plane,
        *("install", RELEASE, str(REPO / "charts" / "kubevec"), "--namespace", NS),
        *("--set", "mcp.enabled=true", "--set", "mcp.tokenSecret=kv-mcp"),
        *("--set", "syncPolicy.configMapKeys=false"),  # a SyncPolicy in the same release as its CRD
        *("--set", "sync.builtinCapabilities=false"),
    )
    policy = json.loads(plane.kubectl("get", "syncpolicy", "kv-kubevec", "-o", "json"))
    assert policy["spec"] == {"configMapKeys": False}
    deployment = json.loads(plane.kubectl("get", "deployment", "kv-kubevec", "-n", NS, "-o", "json"))
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    service = json.loads(plane.kubectl("get", "service", "kv-kubevec-mcp", "-n", NS, "-o", "json"))
    assert service["spec"]["ports"][0]["targetPort"] == "mcp"
    mcp_port = next(p["containerPort"] for p in container["ports"] if p["name"] == "mcp")

    # Run the container's command as the kubelet would, as the chart's ServiceAccount.
    sa_token = plane.kubectl("create", "token", "kv-kubevec", "-n", NS, "--duration=1h").strip()
    kubeconfig = tmp_path / "sa.kubeconfig"
    plane.write_kubeconfig(kubeconfig, user="kv-kubevec", token=sa_token)
    env = container_env(plane, container, namespace=NS)
    assert env["KUBEVEC_MCP_TOKEN"] == TOKEN
    assert int(env["KUBEVEC_MCP_PORT"]) == mcp_port
    local_port, health_port = free_port(), free_port()
    env.update(  # port-forward equivalent: the same server on free local ports, data in tmp
        KUBEVEC_MCP_PORT=str(local_port),
        KUBEVEC_SERVER__HOST="127.0.0.1",
        KUBEVEC_SERVER__HEALTH_PORT=str(health_port),
        KUBEVEC_SERVER__METRICS_PORT="0",
        KUBEVEC_STORE__PATH=str(tmp_path / "store"),
        KUBEVEC_DESCRIBER__LLM__CACHE_DIR=str(tmp_path / "llm-cache"),
        KUBEVEC_SYNC__DEBOUNCE_SECONDS="0.2",
    )
    kubevec = str(Path(sys.executable).with_name("kubevec"))
    log = tmp_path / "kubevec.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [kubevec, *container["args"]],
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig), **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def ready() -> bool:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{health_port}/readyz", timeout=3) as response:
                    return bool(response.status == 200)
            except OSError:
                return False

        eventually(ready, timeout=180, message="the installed controller never became ready")
        url = f"http://127.0.0.1:{local_port}/mcp"
        with urllib.request.urlopen(f"http://127.0.0.1:{local_port}/healthz", timeout=5) as response:
            assert response.status == 200  # probes need no token
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(url, data=b"{}", method="POST"), timeout=5)
        assert refused.value.code == 401
        in_cluster_host = f"kv-kubevec-mcp.{NS}.svc:{service['spec']['ports'][0]['port']}"
        results = asyncio.run(ask(url, host=in_cluster_host))
        assert results["tools"] >= {"vector_search", "get_document", "list_facets"}
        assert results["top"] == "certificates.pki.samples.kubevec.io"  # written by the same process
        with pytest.raises(Exception):  # noqa: B017, PT011 - a Host the chart did not allow is refused
            asyncio.run(ask(url, host="evil.example.com"))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    assert "Traceback" not in log.read_text()

    # An upgrade carries a changed SyncPolicy (a hook, recreated) and re-applies the CRD it owns.
    helm(
        plane,
        *("upgrade", RELEASE, str(REPO / "charts" / "kubevec"), "--namespace", NS, "--reuse-values"),
        *("--set", "syncPolicy.configMapKeys=true"),
    )
    policy = json.loads(plane.kubectl("get", "syncpolicy", "kv-kubevec", "-o", "json"))
    assert policy["spec"] == {"configMapKeys": True}
    crd = json.loads(plane.kubectl("get", "crd", "syncpolicies.kubevec.io", "-o", "json"))
    assert crd["metadata"]["annotations"]["meta.helm.sh/release-name"] == RELEASE

    helm(plane, "uninstall", RELEASE, "--namespace", NS)
    crd = plane.kubectl("get", "crd", "syncpolicies.kubevec.io", "-o", "name", check=False)
    assert crd.strip() == "customresourcedefinition.apiextensions.k8s.io/syncpolicies.kubevec.io"  # kept
    assert plane.kubectl("get", "pvc", "kv-kubevec", "-n", NS, "-o", "name").strip()  # the index is kept


async def ask(url: str, *, host: str) -> dict[str, Any]:
    """tools/list and one search, as an agent inside the cluster would send them."""
    headers = {"Authorization": f"Bearer {TOKEN}", "Host": host}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        tools = {tool.name for tool in (await client.list_tools()).tools}

        async def top() -> str | None:
            found = await client.call_tool(
                "vector_search",
                {"query": "TLS certificate renewed automatically", "k": 1, "format": "json"},
            )
            text = "".join(getattr(block, "text", "") for block in found.content)
            hits = json.loads(text)["results"] if text.startswith("{") else []
            return hits[0]["metadata"]["resource"] if hits else None

        found = None
        for _ in range(60):  # the initial sync may still be writing
            found = await top()
            if found:
                break
            await asyncio.sleep(1)
        return {"tools": tools, "top": found}
