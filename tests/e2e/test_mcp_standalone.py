"""`helm install` with ``mcp.mode=standalone`` on the real control plane: agents talk to a pod that reads nothing.

The chart's MCP Deployment runs ``kubevec mcp`` over a Chroma server as its own ServiceAccount,
bound to ``system:auth-delegator`` only. As in ``test_helm_install.py`` there is no kubelet: the
test runs the installed container's command locally with that ServiceAccount's token (the one the
projected volume would hold) and the installed environment, only port and bind address changed.
Checked: the ServiceAccount can create reviews and cannot list Pods, Secrets or anything else;
two tenants' agents see their own namespaces only; a ServiceAccount without RBAC sees no instance.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.controlplane.cluster import ControlPlane, free_port
from tests.e2e.agents import Agent, container_env, helm, workloads
from tests.e2e.controller_harness import CLUSTER, apply, eventually, spawn_kubevec_run
from tests.services import chroma_server

pytestmark = pytest.mark.e2e

NS = "agents"


def can_i(plane: ControlPlane, kubeconfig: Path, *args: str) -> bool:
    proc = subprocess.run(
        [str(plane.kubectl_path), f"--kubeconfig={kubeconfig}", "auth", "can-i", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() == "yes"


def test_standalone_mcp_holds_review_rights_only_and_filters_by_caller(plane: ControlPlane, tmp_path: Path) -> None:
    suffix = secrets.token_hex(3)
    ns_a, ns_b = f"tenant-a-{suffix}", f"tenant-b-{suffix}"
    for ns in (ns_a, ns_b):
        apply(plane, workloads(ns))
    (tmp_path / "chroma").mkdir()
    with chroma_server(tmp_path / "chroma") as store_url:
        helm(
            plane,
            *("install", "kv", str(REPO / "charts" / "kubevec"), "--namespace", NS, "--create-namespace"),
            *("--set", "mcp.enabled=true", "--set", "mcp.mode=standalone", "--set", f"store.url={store_url}"),
            *("--set", f"clusterName={CLUSTER}", "--set", "sync.builtinCapabilities=false"),
        )
        deployment = json.loads(plane.kubectl("get", "deployment", "kv-kubevec-mcp", "-n", NS, "-o", "json"))
        pod = deployment["spec"]["template"]["spec"]
        assert pod["automountServiceAccountToken"] is False
        (container,) = pod["containers"]

        # The index, written by a controller into the same Chroma server.
        log = tmp_path / "controller.log"
        controller = spawn_kubevec_run(
            plane,
            tmp_path / "unused",
            log=log,
            KUBEVEC_STORE__URL=store_url,
            KUBEVEC_CLUSTER_NAME=CLUSTER,
            KUBEVEC_SERVER__HEALTH_PORT=str(free_port()),
            KUBEVEC_SERVER__METRICS_PORT="0",
        )
        mcp: subprocess.Popen[bytes] | None = None
        try:
            # The MCP pod's credentials: its ServiceAccount's token, as the projected volume holds it.
            token = plane.kubectl("create", "token", "kv-kubevec-mcp", "-n", NS, "--duration=1h").strip()
            kubeconfig = tmp_path / "mcp.kubeconfig"
            plane.write_kubeconfig(kubeconfig, user="kv-kubevec-mcp", token=token)
            assert can_i(plane, kubeconfig, "create", "tokenreviews.authentication.k8s.io")
            assert can_i(plane, kubeconfig, "create", "subjectaccessreviews.authorization.k8s.io")
            for verb, resource in (("list", "pods"), ("get", "secrets"), ("list", "configmaps"), ("list", "*.*")):
                assert not can_i(plane, kubeconfig, verb, resource, "--all-namespaces"), (verb, resource)

            env = container_env(plane, container, namespace=NS)
            port = free_port()
            args = [a if a != str(container["ports"][0]["containerPort"]) else str(port) for a in container["args"]]
            args = [a if a != "0.0.0.0" else "127.0.0.1" for a in args]
            mcp_log = tmp_path / "mcp.log"

            def indexed() -> bool:
                assert controller.poll() is None, log.read_text()[-3000:]
                return "Resynced the store" in log.read_text()

            eventually(indexed, timeout=240, message="the controller never finished its first resync")
            with open(mcp_log, "ab") as out:
                mcp = subprocess.Popen(
                    [str(Path(sys.executable).with_name("kubevec")), *args],
                    env={
                        "PATH": os.environ["PATH"],
                        "HOME": str(tmp_path),
                        **env,
                        "KUBECONFIG": str(kubeconfig),
                        "KUBEVEC_CACHE_DIR": str(tmp_path / "cache"),
                    },
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            url = f"http://127.0.0.1:{port}/mcp"

            def serving() -> bool:
                assert mcp is not None
                assert mcp.poll() is None, mcp_log.read_text()[-3000:]
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=3) as response:
                        return bool(response.status == 200)
                except OSError:
                    return False

            eventually(serving, timeout=90, message="the standalone MCP server never answered")
            agent_a = Agent(url, plane.kubectl("create", "token", "agent", "-n", ns_a).strip())
            agent_b = Agent(url, plane.kubectl("create", "token", "agent", "-n", ns_b).strip())
            nobody = Agent(url, plane.kubectl("create", "token", "nobody", "-n", ns_a).strip())
            seen_a = eventually(lambda: agent_a.ids(query="web settings"), timeout=30, message="agent a saw nothing")
            seen_b = agent_b.ids(query="web settings")
            assert {i.split("/")[1] for i in seen_a} == {ns_a}
            assert {i.split("/")[1] for i in seen_b} == {ns_b}
            assert nobody.ids(query="web settings") == set()
            assert nobody.call("list_facets", field="namespace")["counts"] == {}
        finally:
            for proc in (controller, mcp):
                if proc is not None:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(timeout=30)
        assert "Traceback" not in (tmp_path / "mcp.log").read_text()
