"""The Helm chart: lint and render every ci/*-values.yaml, strict values, read-only RBAC, same CRDs."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "kubevec"
CI_VALUES = sorted((CHART / "ci").glob("*-values.yaml"))


@pytest.fixture(scope="session")
def helm() -> str:
    proc = subprocess.run(
        ["bash", str(REPO / "charts" / "tools" / "build-helm.sh")], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def render(helm: str, *args: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [helm, "template", "kv", str(CHART), "--namespace", "kubevec", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


@pytest.mark.parametrize("values", CI_VALUES, ids=lambda p: p.name)
def test_lint_and_render(helm: str, values: Path) -> None:
    lint = subprocess.run(
        [helm, "lint", str(CHART), "--strict", "-f", str(values)], capture_output=True, text=True, check=False
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    kinds = {d["kind"] for d in render(helm, "-f", str(values))}
    assert "Deployment" in kinds


def test_rbac_is_read_only_except_own_status(helm: str) -> None:
    (role,) = [d for d in render(helm) if d["kind"] == "ClusterRole"]
    for rule in role["rules"]:
        verbs = set(rule["verbs"])
        if verbs - {"get", "list", "watch"}:
            assert rule["resources"] == ["syncpolicies/status"], rule


def test_unknown_values_are_rejected(helm: str) -> None:
    proc = subprocess.run(
        [helm, "template", "kv", str(CHART), "--set", "bogus=1"], capture_output=True, text=True, check=False
    )
    assert proc.returncode != 0
    assert "bogus" in proc.stderr
    bad = subprocess.run(
        [helm, "template", "kv", str(CHART), "--set", "store.backend=mongo"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode != 0


def test_no_default_resources_and_names_truncated(helm: str) -> None:
    (deployment,) = [d for d in render(helm) if d["kind"] == "Deployment"]
    assert "resources" not in deployment["spec"]["template"]["spec"]["containers"][0]
    long_name = "a" * 70
    for doc in render(helm, "--set", f"fullnameOverride={long_name}"):
        assert len(doc["metadata"]["name"]) <= 63


def test_chart_and_deploy_ship_the_same_crd() -> None:
    assert (CHART / "crds" / "syncpolicies.kubevec.io.yaml").read_text() == (
        REPO / "deploy" / "crds" / "syncpolicies.kubevec.io.yaml"
    ).read_text()


def test_plain_manifests_match_the_chart(helm: str) -> None:
    proc = subprocess.run(
        [helm, "template", "kubevec", str(CHART), "--namespace", "kubevec"], capture_output=True, text=True, check=True
    )
    committed = (REPO / "deploy" / "kubevec.yaml").read_text().split("\n", 1)[1]
    assert committed == proc.stdout, "deploy/kubevec.yaml is stale: regenerate it with the command in its first line"


def test_no_secrets_rbac_grants_nothing_on_secrets(helm: str) -> None:
    docs = render(helm, "--set", "rbac.readSecrets=false", "--set", "rbac.extraApiGroups={cert-manager.io}")
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    for rule in role.get("rules", []):
        groups = rule.get("apiGroups", [])
        assert "*" not in groups, rule  # '*' includes the core group, hence Secrets
        if "" in groups:
            assert "secrets" not in rule["resources"]
            assert "*" not in rule["resources"]
    named = next(r for r in role["rules"] if "cert-manager.io" in r.get("apiGroups", []))
    assert "apps" in named["apiGroups"]
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert "cert-manager.io" in env["KUBEVEC_SYNC__API_GROUPS"]
    (default_role,) = [d for d in render(helm) if d["kind"] == "ClusterRole"]
    assert default_role["rules"][0] == {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}


def test_production_knobs_render(helm: str, tmp_path: Path) -> None:
    digest = "sha256:" + "ab" * 32
    values = tmp_path / "values.yaml"
    values.write_text(
        yaml.safe_dump(
            {
                "image": {"registry": "mirror.example:5000", "digest": digest},
                "priorityClassName": "platform-critical",
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}
                ],
                "extraVolumes": [{"name": "ca", "configMap": {"name": "corporate-ca"}}],
                "extraVolumeMounts": [{"name": "ca", "mountPath": "/etc/ssl/corporate"}],
                "envFrom": [{"secretRef": {"name": "kubevec-env"}}],
                "extraArgs": ["--reindex"],
                "probes": {"startup": {"periodSeconds": 2, "failureThreshold": 300, "timeoutSeconds": 5}},
                "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
            }
        )
    )
    docs = render(helm, "-f", str(values))
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == f"mirror.example:5000/kubevec/kubevec@{digest}"
    assert container["args"] == ["run", "--reindex"]
    assert container["envFrom"] == [{"secretRef": {"name": "kubevec-env"}}]
    assert {"name": "ca", "mountPath": "/etc/ssl/corporate"} in container["volumeMounts"]
    assert {"name": "ca", "configMap": {"name": "corporate-ca"}} in pod["volumes"]
    assert pod["priorityClassName"] == "platform-critical"
    assert pod["topologySpreadConstraints"][0]["topologyKey"] == "topology.kubernetes.io/zone"
    assert container["startupProbe"]["failureThreshold"] == 300
    assert container["livenessProbe"]["periodSeconds"] == 20
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (pdb,) = [d for d in docs if d["kind"] == "PodDisruptionBudget"]
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    plain = next(d for d in render(helm) if d["kind"] == "Deployment")["spec"]["template"]["spec"]
    assert (
        plain["containers"][0]["image"]
        == "ghcr.io/kubevec/kubevec:" + yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]
    )
    assert "priorityClassName" not in plain
    bad = subprocess.run(
        [helm, "template", "kv", str(CHART), "--set", "image.digest=latest"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode != 0


@pytest.mark.parametrize(
    ("args", "message", "fix"),
    [
        (["--set", "replicaCount=2"], "/peering/enabled", ["--set", "peering.enabled=true"]),  # one writer
        (["--set", "embedder.provider=voyage"], "/embedder/apiKeySecret", ["--set", "embedder.apiKeySecret=voyage"]),
    ],
)
def test_the_schema_refuses_what_cannot_work(helm: str, args: list[str], message: str, fix: list[str]) -> None:
    refused = subprocess.run([helm, "template", "kv", str(CHART), *args], capture_output=True, text=True, check=False)
    assert refused.returncode != 0
    assert message in refused.stderr
    assert render(helm, *args, *fix)  # the same values with the fix render


def test_storage_and_service_monitor_knobs(helm: str) -> None:
    docs = render(helm, "--set", "metrics.serviceMonitor.enabled=true")
    (pvc,) = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    assert pvc["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    existing = render(
        helm,
        "--set",
        "persistence.existingClaim=my-index",
        "--set",
        "metrics.serviceMonitor.enabled=true",
        "--set",
        "metrics.serviceMonitor.namespace=monitoring",
        "--set",
        "metrics.serviceMonitor.scrapeTimeout=10s",
        "--set",
        "metrics.serviceMonitor.relabelings[0].action=labeldrop",
        "--set",
        "metrics.serviceMonitor.relabelings[0].regex=pod",
    )
    assert not [d for d in existing if d["kind"] == "PersistentVolumeClaim"]
    (deployment,) = [d for d in existing if d["kind"] == "Deployment"]
    (data,) = [v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == "data"]
    assert data["persistentVolumeClaim"] == {"claimName": "my-index"}
    (monitor,) = [d for d in existing if d["kind"] == "ServiceMonitor"]
    assert monitor["metadata"]["namespace"] == "monitoring"
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["kubevec"]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["scrapeTimeout"] == "10s"
    assert endpoint["relabelings"] == [{"action": "labeldrop", "regex": "pod"}]
