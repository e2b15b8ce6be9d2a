"""The chart's and deploy/'s manifests are accepted by a real kube-apiserver (server-side dry run)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.controlplane.cluster import ControlPlane

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


def helm_template(*args: str) -> str:
    """``helm template kv charts/kubevec ARGS`` with the helm the repo builds (or reuses)."""
    built = subprocess.run(
        ["bash", str(REPO / "charts" / "tools" / "build-helm.sh")], capture_output=True, text=True, check=True
    )
    helm = built.stdout.strip().splitlines()[-1]
    return subprocess.run(
        [helm, "template", "kv", str(REPO / "charts" / "kubevec"), *args], capture_output=True, text=True, check=True
    ).stdout


def test_chart_and_kustomize_apply_cleanly(control_plane: ControlPlane) -> None:
    rendered = helm_template(
        "--namespace", "kubevec", "--set", "syncPolicy.configMapKeys=false", "--set", "peering.enabled=true"
    )
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    crds = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
    assert {c["metadata"]["name"] for c in crds} == {"syncpolicies.kubevec.io", "clusterkopfpeerings.kopf.dev"}
    control_plane.kubectl(
        "apply", "--server-side", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": crds})
    )
    control_plane.kubectl(
        "wait", "--for=condition=Established", "crd/syncpolicies.kubevec.io", "crd/clusterkopfpeerings.kopf.dev"
    )
    control_plane.kubectl("create", "namespace", "kubevec")
    out = control_plane.kubectl("apply", "--dry-run=server", "-f", "-", input=rendered)
    assert "deployment.apps/kv-kubevec created (server dry run)" in out
    assert "syncpolicy.kubevec.io/kv-kubevec created (server dry run)" in out
    assert "clusterkopfpeering.kopf.dev/kv-kubevec created (server dry run)" in out
    kustomized = control_plane.kubectl("apply", "--dry-run=server", "-k", str(REPO / "deploy"))
    assert "clusterrole.rbac.authorization.k8s.io/kubevec created (server dry run)" in kustomized
    assert "namespace/kubevec" in kustomized


def test_the_chart_pod_is_admitted_in_a_restricted_namespace(control_plane: ControlPlane) -> None:
    """Pod Security admission at ``restricted`` (enforced) admits the chart's pod as rendered."""
    namespace = "kubevec-restricted"
    control_plane.kubectl("create", "namespace", namespace)
    control_plane.kubectl("label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted")
    control_plane.kubectl("create", "serviceaccount", "kv-kubevec", "-n", namespace)
    rendered = helm_template("--namespace", namespace)
    (deployment,) = [d for d in yaml.safe_load_all(rendered) if d and d["kind"] == "Deployment"]
    template = deployment["spec"]["template"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**template["metadata"], "name": "kv-kubevec-admission", "namespace": namespace},
        "spec": template["spec"],
    }
    admitted = control_plane.kubectl("apply", "--dry-run=server", "-f", "-", input=json.dumps(pod))
    assert "pod/kv-kubevec-admission created (server dry run)" in admitted
    # The check is real: the same pod without the seccomp profile is refused.
    del pod["spec"]["securityContext"]["seccompProfile"]
    with pytest.raises(RuntimeError, match="violates PodSecurity"):
        control_plane.kubectl("apply", "--dry-run=server", "-f", "-", input=json.dumps(pod))
