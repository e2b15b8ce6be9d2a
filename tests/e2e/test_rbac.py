"""The chart's no-Secrets RBAC (rbac.readSecrets=false) on a real API server: ready, no 403s, no Secret read."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SYNCPOLICY_CRD
from tests.controlplane.cluster import READER_USER, ControlPlane
from tests.e2e.controller_harness import Controller, apply, stored

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


def rendered(*values: str) -> list[dict[str, Any]]:
    helm = (
        subprocess.run(
            ["bash", str(REPO / "charts" / "tools" / "build-helm.sh")], capture_output=True, text=True, check=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    args = [a for v in values for a in ("--set", v)]
    out = subprocess.run(
        [helm, "template", "kv", str(REPO / "charts" / "kubevec"), *args], capture_output=True, text=True, check=True
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def test_no_secrets_rbac_runs_clean_and_never_reads_a_secret(plane: ControlPlane, tmp_path: Path) -> None:
    docs = rendered("rbac.readSecrets=false")
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    role["metadata"] = {"name": "kubevec-no-secrets"}
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "kubevec-no-secrets"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kubevec-no-secrets"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": READER_USER}],
    }
    plane.kubectl("apply", "-f", str(SYNCPOLICY_CRD))
    apply(plane, [role, binding])
    can = plane.kubectl("auth", "can-i", "list", "secrets", "-A", reader=True, check=False).strip()
    assert can == "no"
    assert plane.kubectl("auth", "can-i", "list", "deployments.apps", "-A", reader=True, check=False).strip() == "yes"
    plane.kubectl("create", "namespace", "rbac")
    plane.kubectl("create", "configmap", "visible", "-n", "rbac", "--from-literal=a=b")
    plane.kubectl("create", "secret", "generic", "hidden", "-n", "rbac", "--from-literal=a=b")
    apply(
        plane,
        {
            "apiVersion": "kubevec.io/v1alpha1",
            "kind": "SyncPolicy",
            "metadata": {"name": "s"},
            "spec": {"secrets": True},
        },
    )
    controller = Controller(
        plane,
        tmp_path / "store",
        tmp_path / "kubevec.log",
        KUBECONFIG=str(plane.reader_kubeconfig),
        KUBEVEC_SYNC__API_GROUPS=str(env["KUBEVEC_SYNC__API_GROUPS"]),
    )
    try:
        controller.start()
        controller.wait_ready()  # the resync lists the policy itself: the forbidden list came first
        instances = stored(controller.store, "instances")
    finally:
        controller.stop()
    assert "faults/rbac/core/v1/ConfigMap/visible" in instances
    assert not [i for i in instances if "/Secret/" in i]
    # The policy opts Secrets in, RBAC forbids them: one clear line (per interval), nothing else fails.
    problems = [
        line
        for line in controller.log.read_text().splitlines()
        if (" ERROR " in line or " WARNING " in line) and ("403" in line or "orbidden" in line)
    ]
    assert len(problems) == 1, problems
    assert (
        "Skipped a resource kubevec may not list resource=secrets error=HTTP 403: secrets is forbidden" in problems[0]
    )
    assert "Traceback" not in controller.log.read_text()
    assert json.loads(env["KUBEVEC_SYNC__API_GROUPS"])[0] == "apiextensions.k8s.io"
