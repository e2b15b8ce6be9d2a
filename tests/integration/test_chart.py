"""The Helm chart: lint and render every ci/*-values.yaml, strict values, read-only RBAC, same CRDs."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from collections.abc import Iterator
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


def template(helm: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``helm template kv`` of the chart, whatever its outcome."""
    return subprocess.run([helm, "template", "kv", str(CHART), *args], capture_output=True, text=True, check=False)


def render(helm: str, *args: str) -> list[dict[str, Any]]:
    proc = template(helm, "--namespace", "kubevec", *args)
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
    proc = template(helm, "--set", "bogus=1")
    assert proc.returncode != 0
    assert "bogus" in proc.stderr
    bad = template(helm, "--set", "store.backend=mongo")
    assert bad.returncode != 0


def test_no_default_resources_and_names_truncated(helm: str) -> None:
    (deployment,) = [d for d in render(helm) if d["kind"] == "Deployment"]
    assert "resources" not in deployment["spec"]["template"]["spec"]["containers"][0]
    long_name = "a" * 70
    for doc in render(helm, "--set", f"fullnameOverride={long_name}"):
        assert len(doc["metadata"]["name"]) <= 63


def _plain_manifests() -> Any:
    spec = importlib.util.spec_from_file_location("plain_manifests", REPO / "charts" / "tools" / "plain_manifests.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_plain_manifests_match_the_chart(helm: str) -> None:
    """deploy/kubevec.yaml: the Namespace, then the chart's objects one for one, without Helm's labels."""
    plain = _plain_manifests()
    expected = plain.plain_documents(plain.render_chart(helm))
    committed = [d for d in yaml.safe_load_all((REPO / "deploy" / "kubevec.yaml").read_text()) if d]
    assert committed == expected, "deploy/kubevec.yaml is stale: run `make manifests`"
    assert committed[0] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubevec"}}
    text = (REPO / "deploy" / "kubevec.yaml").read_text()
    assert "helm.sh" not in text
    assert "managed-by" not in text
    kinds = [d["kind"] for d in committed]
    assert kinds.count("CustomResourceDefinition") == 1  # SyncPolicy; kopf's peering CRD only with peering


def test_crds_are_upgradeable_templates_kept_on_uninstall(helm: str) -> None:
    crds = [d for d in render(helm) if d["kind"] == "CustomResourceDefinition"]
    assert [c["metadata"]["name"] for c in crds] == ["syncpolicies.kubevec.io"]
    assert crds[0]["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}
    assert crds[0]["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
    assert not (CHART / "crds").exists()  # helm never upgrades crds/: the CRDs are templates
    with_peering = [d for d in render(helm, "--set", "peering.enabled=true") if d["kind"] == "CustomResourceDefinition"]
    assert {c["metadata"]["name"] for c in with_peering} == {"syncpolicies.kubevec.io", "clusterkopfpeerings.kopf.dev"}
    assert not [d for d in render(helm, "--set", "crds.install=false") if d["kind"] == "CustomResourceDefinition"]
    unkept = [d for d in render(helm, "--set", "crds.keep=false") if d["kind"] == "CustomResourceDefinition"]
    assert "annotations" not in unkept[0]["metadata"]


def test_cluster_scoped_objects_are_named_per_release(helm: str) -> None:
    """Two releases (here: `a` and `b`) never claim the same cluster-scoped object, CRDs aside."""
    args = ("--set", "peering.enabled=true", "--set", "syncPolicy.configMapKeys=false", "--set", "crds.install=false")
    names = {}
    for release in ("a", "b"):
        proc = subprocess.run(
            [helm, "template", release, str(CHART), "--namespace", f"ns-{release}", *args],
            capture_output=True,
            text=True,
            check=True,
        )
        docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
        names[release] = {(d["kind"], d["metadata"]["name"]) for d in docs if "namespace" not in d["metadata"]}
        (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
        env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert ("ClusterKopfPeering", env["KUBEVEC_PEERING"]) in names[release]
    kinds = {kind for kind, _ in names["a"]}
    assert kinds >= {"ClusterRole", "ClusterRoleBinding", "ClusterKopfPeering", "SyncPolicy"}
    assert not names["a"] & names["b"]


def test_no_secrets_rbac_grants_nothing_on_secrets(helm: str) -> None:
    """The default (issue 27: the pod that serves agents could read every Secret); Secrets are opt-in."""
    docs = render(helm, "--set", "rbac.extraApiGroups={cert-manager.io}")
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
    (opted_in,) = [d for d in render(helm, "--set", "rbac.readSecrets=true") if d["kind"] == "ClusterRole"]
    assert opted_in["rules"][0] == {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}


def test_mcp_with_kubernetes_tokens_gets_review_rights_and_no_more(helm: str) -> None:
    docs = render(helm, "--set", "mcp.enabled=true", "--set", "mcp.tokensSecret=agent-tokens")
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    creates = [r for r in role["rules"] if "create" in r.get("verbs", [])]
    assert sorted(r["resources"][0] for r in creates) == ["subjectaccessreviews", "tokenreviews"]
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["KUBEVEC_MCP_KUBERNETES_AUTH"] == "true"
    assert env["KUBEVEC_MCP_TOKENS_FILE"] == "/etc/kubevec/mcp-tokens/tokens.yaml"
    assert "KUBEVEC_MCP_TOKEN" not in env
    assert {"name": "mcp-tokens", "secret": {"secretName": "agent-tokens"}} in pod["volumes"]
    (plain,) = [d for d in render(helm) if d["kind"] == "ClusterRole"]
    assert not [r for r in plain["rules"] if "create" in r.get("verbs", [])]


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
    bad = template(helm, "--set", "image.digest=latest")
    assert bad.returncode != 0


@pytest.mark.parametrize(
    ("args", "message", "fix"),
    [
        (["--set", "replicaCount=2"], "/peering/enabled", ["--set", "peering.enabled=true"]),  # one writer
        (["--set", "embedder.provider=voyage"], "/embedder/apiKeySecret", ["--set", "embedder.apiKeySecret=voyage"]),
        (
            ["--set", "mcp.enabled=true", "--set", "mcp.kubernetesAuth=false"],
            "/mcp/tokenSecret",
            ["--set", "mcp.tokenSecret=mcp"],
        ),  # never open
        (["--set", "llm.enabled=true"], "/llm/apiKeySecret", ["--set", "llm.apiKeySecret=llm"]),
        (["--set", "llm.workloads=true"], "/llm/enabled", ["--set", "llm.enabled=true", "--set", "llm.apiKeySecret=l"]),
        (
            ["--set", "store.backend=pgvector"],
            "/store/url",
            ["--set", "store.url=postgresql://kubevec@pg:5432/kubevec"],
        ),
        (
            ["--set", "store.backend=pgvector", "--set", "store.url=postgresql://kubevec:hunter2@pg:5432/kubevec"],
            "/store/url",
            ["--set", "store.url=postgresql://kubevec@pg:5432/kubevec", "--set", "store.passwordSecret=pg-app"],
        ),
        (["--set", "store.backend=redis"], "/store/url", ["--set", "store.url=redis://redis:6379/0"]),
        (
            ["--set", "store.backend=redis", "--set", "store.url=redis://default:hunter2@redis:6379/0"],
            "/store/url",
            ["--set", "store.url=redis://redis:6379/0", "--set", "store.passwordSecret=redis"],
        ),
        (
            ["--set", "mcp.enabled=true", "--set", "mcp.mode=standalone"],
            "/store/url",
            ["--set", "store.url=http://chroma:8000"],
        ),  # a second process over the embedded store would not see the controller's writes
        (
            ["--set", "mcp.enabled=true", "--set", "mcp.tokenSecret=t", "--set", "mcp.ingress.enabled=true"],
            "/mcp/ingress/hosts",
            ["--set", "mcp.ingress.hosts={kubevec.example.com}"],
        ),
        (["--set", "clusterName=prod/eu"], "/clusterName", ["--set", "clusterName=prod-eu"]),  # ids are /-separated
        (["--set", "history.maxRecords=10"], "/history/maxRecords", ["--set", "history.maxRecords=1000"]),
        (
            ["--set", "mcp.enabled=true", "--set", "mcp.tokenSecret=t", "--set", "mcp.httpRoute.enabled=true"],
            "/mcp/httpRoute/parentRefs",
            ["--set", "mcp.httpRoute.parentRefs[0].name=public"],
        ),
    ],
)
def test_the_schema_refuses_what_cannot_work(helm: str, args: list[str], message: str, fix: list[str]) -> None:
    refused = template(helm, *args)
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


def test_mcp_service_ingress_route_and_network_policy(helm: str) -> None:
    docs = render(
        helm,
        *("--set", "mcp.enabled=true", "--set", "mcp.tokenSecret=agents", "--set", "mcp.ingress.enabled=true"),
        *("--set", "mcp.ingress.hosts={kubevec.example.com}", "--set", "mcp.httpRoute.enabled=true"),
        *("--set", "mcp.httpRoute.parentRefs[0].name=public", "--set", "mcp.httpRoute.hostnames={agents.example.com}"),
        *("--set", "networkPolicy.enabled=true", "--set", "networkPolicy.mcpFrom[0].podSelector.matchLabels.agent=yes"),
    )
    by_kind = {d["kind"]: d for d in docs if d["kind"] != "Service"}
    (service,) = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "kv-kubevec-mcp"]
    assert service["spec"]["ports"] == [{"name": "mcp", "port": 8765, "targetPort": "mcp"}]
    container = by_kind["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "mcp", "containerPort": 8765} in container["ports"]
    env = {e["name"]: e for e in container["env"]}
    assert env["KUBEVEC_MCP_PORT"]["value"] == "8765"
    assert env["KUBEVEC_MCP_TOKEN"]["valueFrom"] == {"secretKeyRef": {"name": "agents", "key": "token"}}
    hosts = json.loads(env["KUBEVEC_MCP_ALLOWED_HOSTS"]["value"])
    for host in ("kv-kubevec-mcp.kubevec.svc", "kv-kubevec-mcp.kubevec.svc.cluster.local:*", "kubevec.example.com"):
        assert host in hosts
    assert "agents.example.com:*" in hosts
    (rule,) = by_kind["Ingress"]["spec"]["rules"]
    assert rule["host"] == "kubevec.example.com"
    assert rule["http"]["paths"][0]["backend"]["service"] == {"name": "kv-kubevec-mcp", "port": {"name": "mcp"}}
    route = by_kind["HTTPRoute"]["spec"]
    assert route["parentRefs"] == [{"name": "public"}]
    assert route["rules"][0]["backendRefs"] == [{"name": "kv-kubevec-mcp", "port": 8765}]
    policy = by_kind["NetworkPolicy"]["spec"]
    assert policy["policyTypes"] == ["Ingress"]
    mcp_rule = next(r for r in policy["ingress"] if r["ports"] == [{"port": "mcp"}])
    assert mcp_rule["from"] == [{"podSelector": {"matchLabels": {"agent": "yes"}}}]
    assert not [d for d in render(helm) if d["kind"] in ("NetworkPolicy", "Ingress", "HTTPRoute")]


def test_llm_describer_values(helm: str) -> None:
    docs = render(helm, "--set", "llm.enabled=true", "--set", "llm.apiKeySecret=llm", "--set", "llm.provider=openai")
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    env = {e["name"]: e for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["KUBEVEC_DESCRIBER__LLM__ENABLED"]["value"] == "true"
    assert env["KUBEVEC_DESCRIBER__LLM__PROVIDER"]["value"] == "openai"
    assert env["KUBEVEC_DESCRIBER__LLM__API_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "llm"
    assert "KUBEVEC_DESCRIBER__LLM__WORKLOADS" not in env
    docs = render(helm, "--set", "llm.enabled=true", "--set", "llm.apiKeySecret=llm", "--set", "llm.workloads=true")
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    env = {e["name"]: e for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["KUBEVEC_DESCRIBER__LLM__WORKLOADS"]["value"] == "true"
    (plain,) = [d for d in render(helm) if d["kind"] == "Deployment"]
    names = {e["name"] for e in plain["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert not {n for n in names if "__LLM__" in n and n != "KUBEVEC_DESCRIBER__LLM__CACHE_DIR"}


def test_tracing_values(helm: str) -> None:
    (deployment,) = [
        d
        for d in render(helm, "--set", "tracing.endpoint=http://otel:4317", "--set-json", "tracing.sampleRatio=0.25")
        if d["kind"] == "Deployment"
    ]
    env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert (env["KUBEVEC_TRACING__ENDPOINT"], env["KUBEVEC_TRACING__SAMPLE_RATIO"]) == ("http://otel:4317", "0.25")
    (plain,) = [d for d in render(helm) if d["kind"] == "Deployment"]
    assert not [e for e in plain["spec"]["template"]["spec"]["containers"][0]["env"] if "TRACING" in e["name"]]


def test_pgvector_values(helm: str) -> None:
    docs = render(
        helm,
        "--set", "store.backend=pgvector",
        "--set", "store.url=postgresql://app@pg-rw.db:5432/app",
        "--set", "store.passwordSecret=pg-app",
    )  # fmt: skip
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    env = {e["name"]: e for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["KUBEVEC_STORE__BACKEND"]["value"] == "pgvector"
    assert env["KUBEVEC_STORE__URL"]["value"] == "postgresql://app@pg-rw.db:5432/app"
    assert env["KUBEVEC_STORE__PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "pg-app", "key": "password"}
    assert not [d for d in docs if d["kind"] == "PersistentVolumeClaim"]  # the store is elsewhere


def test_redis_values(helm: str) -> None:
    docs = render(
        helm,
        "--set", "store.backend=redis",
        "--set", "store.url=rediss://redis.data:6379/0",
        "--set", "store.passwordSecret=redis",
        "--set", "store.passwordKey=redis-password",
        "--set", "store.keyPrefix=kubevec-prod:",
    )  # fmt: skip
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    env = {e["name"]: e for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["KUBEVEC_STORE__BACKEND"]["value"] == "redis"
    assert env["KUBEVEC_STORE__URL"]["value"] == "rediss://redis.data:6379/0"
    assert env["KUBEVEC_STORE__KEY_PREFIX"]["value"] == "kubevec-prod:"
    assert env["KUBEVEC_STORE__PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "redis", "key": "redis-password"}
    assert not [d for d in docs if d["kind"] == "PersistentVolumeClaim"]  # the store is elsewhere


def test_chart_readme_is_generated_and_documents_every_value() -> None:
    built = subprocess.run(
        ["bash", str(REPO / "charts" / "tools" / "build-helm-docs.sh")], capture_output=True, text=True, check=False
    )
    assert built.returncode == 0, built.stderr
    helm_docs = built.stdout.strip().splitlines()[-1]
    generated = subprocess.run(
        [helm_docs, "--chart-search-root", str(REPO / "charts"), "--skip-version-footer", "--dry-run"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    readme = (CHART / "README.md").read_text()
    assert generated.strip() == readme.strip(), "charts/kubevec/README.md is stale: run `make chart-docs`"
    rows = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 4 and cells[0] not in ("Key", ""):
            rows[cells[0]] = cells[3]

    def leaves(values: Any, prefix: str = "") -> Iterator[str]:
        if isinstance(values, dict) and values:
            for key, value in values.items():
                yield from leaves(value, f"{prefix}{key}.")
        else:
            yield prefix.rstrip(".")

    values = yaml.safe_load((CHART / "values.yaml").read_text())
    for leaf in leaves(values):
        parts = leaf.split(".")
        documented = [".".join(parts[:i]) for i in range(len(parts), 0, -1) if ".".join(parts[:i]) in rows]
        assert documented, f"{leaf} is not in the chart README: give it a `# --` comment in values.yaml"
        assert rows[documented[0]], f"{documented[0]} has no description"


def exported_metric_names() -> set[str]:
    """Every series name the controller's registry can export (counters with _total, histogram parts)."""
    from kubevec.controller.runtime.metrics import Metrics

    metrics = Metrics()
    metrics.describe_build(embedder="local", model="m", dimension=8, backend="chroma")
    names: set[str] = set()
    for family in metrics.registry.collect():
        if family.type == "counter":
            names.add(f"{family.name}_total")
        elif family.type == "histogram":
            names.update(f"{family.name}{suffix}" for suffix in ("_bucket", "_sum", "_count"))
        else:
            names.add(family.name)
    return names


def promql_metric_names(expr: str) -> set[str]:
    """The metric names an expression selects, from a real PromQL parser (so a typo'd expression fails too)."""
    import promql_parser

    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            assert node.name, f"selector without a metric name in {expr!r}"
            found.add(node.name)
            return
        for attribute in ("lhs", "rhs", "expr", "param", "vector_selector"):
            child = getattr(node, attribute, None)
            if child is not None and not isinstance(child, str | int | float):
                walk(child)
        for child in getattr(node, "args", None) or []:
            walk(child)

    walk(promql_parser.parse(expr))
    return found


def test_alerts_and_dashboard_name_only_metrics_the_controller_exports(helm: str) -> None:
    docs = render(helm, "--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.dashboard.enabled=true")
    (rule,) = [d for d in docs if d["kind"] == "PrometheusRule"]
    (dashboard_cm,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-dashboard")]
    alerts = rule["spec"]["groups"][0]["rules"]
    assert {a["alert"] for a in alerts} >= {
        "KubevecDegraded",
        "KubevecResyncStale",
        "KubevecNotExactlyOneActive",
        "KubevecQueueGrowing",
        "KubevecEmbeddingErrors",
    }
    dashboard = json.loads(dashboard_cm["data"]["kubevec.json"])
    exprs = [a["expr"] for a in alerts] + [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    exported = exported_metric_names()
    for expr in exprs:
        names = promql_metric_names(expr.replace("$job", ".*"))
        assert names, expr
        assert names <= exported, f"{expr!r} names {names - exported}, which the controller does not export"
    assert promql_metric_names("rate(kubevec_not_a_metric_total[5m]) > 0") == {"kubevec_not_a_metric_total"}
    assert 'job="kv-kubevec-metrics", namespace="kubevec"' in alerts[0]["expr"]  # this release's scrape job only


def test_a_standalone_mcp_server_holds_review_rights_and_nothing_else(helm: str) -> None:
    """issue 27: the process agents talk to held the controller's cluster-wide read token."""
    docs = render(helm, "-f", str(CHART / "ci" / "mcp-standalone-values.yaml"))
    by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    mcp = by["Deployment", "kv-kubevec-mcp"]["spec"]["template"]
    pod = mcp["spec"]
    assert pod["serviceAccountName"] == "kv-kubevec-mcp"
    assert pod["automountServiceAccountToken"] is False
    assert by["ServiceAccount", "kv-kubevec-mcp"]["automountServiceAccountToken"] is False
    binding = by["ClusterRoleBinding", "kv-kubevec-mcp"]
    assert binding["roleRef"]["name"] == "system:auth-delegator"
    bound = [d for d in docs if d["kind"] in ("ClusterRoleBinding", "RoleBinding")]
    assert [b["metadata"]["name"] for b in bound if any(s["name"] == "kv-kubevec-mcp" for s in b["subjects"])] == [
        "kv-kubevec-mcp",
        "kv-kubevec-mcp-rbac-reader",
    ]  # no other binding for its ServiceAccount
    reader = by["ClusterRole", "kv-kubevec-mcp"]  # mcp.authorization rbac: it lists RBAC objects, nothing else
    assert reader["rules"] == [
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["roles", "rolebindings", "clusterroles", "clusterrolebindings"],
            "verbs": ["list"],
        }
    ]
    reviews = render(helm, "-f", str(CHART / "ci" / "mcp-standalone-values.yaml"), "--set", "mcp.authorization=reviews")
    assert not [d for d in reviews if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "kv-kubevec-mcp"]
    (container,) = pod["containers"]
    assert container["args"][:3] == ["mcp", "--transport", "http"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["KUBEVEC_STORE__URL"] == "http://chroma.vector.svc:8000"
    assert env["KUBEVEC_MCP_KUBERNETES_AUTH"] == "true"
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert "/var/run/secrets/kubernetes.io/serviceaccount" in mounts
    assert {"kind", "apiVersion"} <= set(by["Service", "kv-kubevec-mcp"])
    assert by["Service", "kv-kubevec-mcp"]["spec"]["selector"] == mcp["metadata"]["labels"]
    controller = by["Deployment", "kv-kubevec"]["spec"]["template"]["spec"]["containers"][0]
    assert "KUBEVEC_MCP_PORT" not in {e["name"] for e in controller["env"]}  # the controller serves nothing
    (role,) = [d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "kv-kubevec"]
    assert not [r for r in role["rules"] if "create" in r.get("verbs", [])]
    assert ("NetworkPolicy", "kv-kubevec-mcp") in by


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def pods(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d["spec"]["template"]["spec"] for d in docs if d["kind"] == "Deployment"}


def test_model_recipes_reach_the_settings_they_name(helm: str) -> None:
    """Each ci/ recipe becomes the KUBEVEC_EMBEDDER__*/KUBEVEC_RERANKER__* its docs promise; keys only by Secret."""
    tei = env_of(pods(render(helm, "-f", str(CHART / "ci" / "tei-values.yaml")))["kv-kubevec"]["containers"][0])
    assert tei["KUBEVEC_EMBEDDER__PROVIDER"] == "openai"
    assert tei["KUBEVEC_EMBEDDER__BASE_URL"] == "http://tei-embed.models.svc:8080/v1"
    assert tei["KUBEVEC_EMBEDDER__DIMENSION"] == "384"
    assert tei["KUBEVEC_EMBEDDER__QUERY_PREFIX"].startswith("Represent this sentence")
    assert "KUBEVEC_EMBEDDER__API_KEY" not in tei  # a server in the cluster: no key
    assert tei["KUBEVEC_RERANKER__PROVIDER"] == "tei"
    vllm = env_of(pods(render(helm, "-f", str(CHART / "ci" / "vllm-values.yaml")))["kv-kubevec"]["containers"][0])
    assert vllm["KUBEVEC_EMBEDDER__HEADERS"] == {"secretKeyRef": {"name": "vllm", "key": "headers"}}
    assert vllm["KUBEVEC_EMBEDDER__API_KEY"] == {"secretKeyRef": {"name": "vllm", "key": "api-key"}}
    assert vllm["KUBEVEC_RERANKER__API_KEY"] == {"secretKeyRef": {"name": "vllm", "key": "api-key"}}
    assert (vllm["KUBEVEC_EMBEDDER__QUERY_PREFIX"], vllm["KUBEVEC_EMBEDDER__DOCUMENT_PREFIX"]) == (
        "query: ",
        "passage: ",
    )
    azure = env_of(
        pods(render(helm, "-f", str(CHART / "ci" / "azure-openai-values.yaml")))["kv-kubevec"]["containers"][0]
    )
    assert azure["KUBEVEC_EMBEDDER__API_VERSION"] == "2024-10-21"
    # Bedrock with IRSA: no key anywhere, the role on both ServiceAccounts (the MCP pod embeds queries too)
    docs = render(helm, "-f", str(CHART / "ci" / "bedrock-irsa-values.yaml"))
    accounts = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ServiceAccount"}
    role = "arn:aws:iam::123456789012:role/kubevec-bedrock"
    assert {a["metadata"].get("annotations", {}).get("eks.amazonaws.com/role-arn") for a in accounts.values()} == {role}
    for pod in pods(docs).values():
        bedrock = env_of(pod["containers"][0])
        assert bedrock["KUBEVEC_EMBEDDER__PROVIDER"] == "bedrock"
        assert bedrock["KUBEVEC_EMBEDDER__REGION"] == "eu-west-1"
        assert not [name for name in bedrock if name.endswith("API_KEY") and name.startswith("KUBEVEC_EMBEDDER")]
    # air-gapped: the model folders come from a volume, read-only, in the controller and the MCP server alike
    docs = render(
        helm, "-f", str(CHART / "ci" / "airgapped-bge-values.yaml"), "--set", "store.url=http://chroma:8000",
        "--set", "mcp.enabled=true", "--set", "mcp.mode=standalone",
    )  # fmt: skip
    for pod in pods(docs).values():
        local = env_of(pod["containers"][0])
        assert local["KUBEVEC_EMBEDDER__MODEL_DIR"] == "/models/embedder/bge-small-en-v1.5"
        assert len(local["KUBEVEC_EMBEDDER__MODEL_SHA256"]) == 64
        assert local["KUBEVEC_RERANKER__MODEL_DIR"] == "/models/reranker/ms-marco-MiniLM-L-6-v2"
        mounts = {m["name"]: m for m in pod["containers"][0]["volumeMounts"]}
        assert mounts["embedder-model"] == {"name": "embedder-model", "mountPath": "/models/embedder", "readOnly": True}
        assert mounts["reranker-model"]["readOnly"] is True
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert volumes["embedder-model"]["persistentVolumeClaim"]["claimName"] == "kubevec-models"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--set", "embedder.provider=cohere"],
            "/embedder/apiKeySecret",
        ),
        (["--set", "embedder.provider=openai"], "/embedder/apiKeySecret"),
        (["--set", "embedder.modelVolume.emptyDir.medium=Memory"], "/embedder/modelSha256"),
        (["--set", "reranker.provider=local"], "/reranker/modelSha256"),
        (["--set", "reranker.provider=tei"], "/reranker/baseUrl"),
        (["--set", "embedder.apiVersion=2024-10-21"], "/embedder/baseUrl"),
        (["--set", "embedder.modelSubPath=../etc"], "/embedder/modelSubPath"),
        (["--set", "embedder.provider=openai", "--set", "embedder.baseUrl=tei:8080"], "/embedder/baseUrl"),
    ],
)
def test_the_schema_refuses_model_settings_that_cannot_work(helm: str, args: list[str], message: str) -> None:
    """(helm names the field; values.schema.json's descriptions say why, for whoever reads it)"""
    refused = template(helm, *args)
    assert refused.returncode != 0
    assert message in refused.stderr, refused.stderr


def test_mcp_authorization_discovery_reaches_both_servers(helm: str) -> None:
    issuer = "https://login.example.com/realms/platform"
    for mode, extra in (("controller", []), ("standalone", ["--set", "store.url=http://chroma:8000"])):
        docs = render(
            helm, "--set", "mcp.enabled=true", "--set", f"mcp.mode={mode}", "--set", f"mcp.oidcIssuer={issuer}",
            "--set", "mcp.resourceUrl=https://kubevec.example.com/mcp", *extra,
        )  # fmt: skip
        served = [
            env_of(pod["containers"][0])
            for pod in pods(docs).values()
            if "KUBEVEC_MCP_OIDC_ISSUER" in env_of(pod["containers"][0])
        ]
        assert len(served) == 1
        assert served[0]["KUBEVEC_MCP_RESOURCE_URL"] == "https://kubevec.example.com/mcp"
    refused = template(helm, "--set", "mcp.oidcIssuer=http://login.example.com")  # an issuer is https
    assert refused.returncode != 0
    assert "/mcp/oidcIssuer" in refused.stderr


def test_history_values_reach_the_controller_and_the_standalone_server(helm: str) -> None:
    docs = render(
        helm, "--set", "history.embed=false", "--set", "history.maxAgeHours=48", "--set", "history.maxRecords=250000",
        "--set", "mcp.enabled=true", "--set", "mcp.mode=standalone", "--set", "store.url=http://chroma:8000",
    )  # fmt: skip
    by_name = {name: env_of(pod["containers"][0]) for name, pod in pods(docs).items()}
    controller, server = by_name["kv-kubevec"], by_name["kv-kubevec-mcp"]
    assert controller["KUBEVEC_HISTORY__ENABLED"] == "true"
    assert controller["KUBEVEC_HISTORY__EMBED"] == "false"
    assert controller["KUBEVEC_HISTORY__MAX_AGE_HOURS"] == "48"
    assert controller["KUBEVEC_HISTORY__MAX_RECORDS"] == "250000"  # not 2.5e+05
    assert server["KUBEVEC_HISTORY__EMBED"] == "false"  # it answers list_changes by words then


def test_lancedb_keeps_its_tables_on_the_persistent_volume(helm: str) -> None:
    docs = render(helm, "--set", "store.backend=lancedb")
    controller = pods(docs)["kv-kubevec"]
    env = env_of(controller["containers"][0])
    assert (env["KUBEVEC_STORE__BACKEND"], env["KUBEVEC_STORE__PATH"]) == ("lancedb", "/data/store")
    assert any(m["mountPath"] == "/data" for m in controller["containers"][0]["volumeMounts"])
    refused = template(
        helm, "--set", "store.backend=lancedb", "--set", "mcp.enabled=true", "--set", "mcp.mode=standalone"
    )
    assert refused.returncode != 0  # a second pod cannot read the controller's volume


def test_weaviate_values_reach_both_servers(helm: str) -> None:
    docs = render(
        helm, "--set", "store.backend=weaviate", "--set", "store.url=https://weaviate.db.svc:8080",
        "--set", "store.grpcPort=50052", "--set", "store.apiKeySecret=weaviate-key", "--set", "store.consistencyLevel=ALL",
        "--set", "store.replicationFactor=3", "--set", "mcp.enabled=true", "--set", "mcp.mode=standalone",
    )  # fmt: skip
    for pod in pods(docs).values():
        env = env_of(pod["containers"][0])
        assert env["KUBEVEC_STORE__BACKEND"] == "weaviate"
        assert env["KUBEVEC_STORE__URL"] == "https://weaviate.db.svc:8080"
        assert (env["KUBEVEC_STORE__GRPC_PORT"], env["KUBEVEC_STORE__CONSISTENCY_LEVEL"]) == ("50052", "ALL")
        assert env["KUBEVEC_STORE__REPLICATION_FACTOR"] == "3"
        assert env["KUBEVEC_STORE__API_KEY"] == {"secretKeyRef": {"name": "weaviate-key", "key": "api-key"}}
    refused = template(helm, "--set", "store.backend=weaviate")
    assert refused.returncode != 0
    assert "/store" in refused.stderr
    leaked = template(helm, "--set", "store.backend=weaviate", "--set", "store.url=http://admin:key@weaviate:8080")
    assert leaked.returncode != 0


def test_no_resident_reader_in_the_servers_containers(helm: str) -> None:
    """`kubectl exec deploy/kubevec -- kubevec search` (NOTES.txt) would leave a reader holding a model in
    the controller's memory limit for minutes: every kubevec container turns it off."""
    docs = render(helm, "-f", str(CHART / "ci" / "mcp-standalone-values.yaml"))
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    assert len(deployments) == 2
    for deployment in deployments:
        env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert env["KUBEVEC_CLI_RESIDENT_SECONDS"] == "0", deployment["metadata"]["name"]


def test_outside_identities_reach_whoever_serves_mcp_with_review_rights_only(helm: str) -> None:
    """issue 53: `mcp.authentication` (no Kubernetes tokens) becomes the AuthenticationConfiguration file of the
    pod serving MCP, in either mode; that pod may ask SubjectAccessReviews (and list RBAC objects), not TokenReviews."""
    from kubevec.query.oidc import issuers_of

    values = CHART / "ci" / "outside-identities-values.yaml"
    path = "/etc/kubevec/mcp-authentication/authentication-config.yaml"
    for mode in ("standalone", "controller"):
        docs = render(helm, "-f", str(values), "--set", f"mcp.mode={mode}")
        by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
        config = by["ConfigMap", "kv-kubevec-mcp-authentication"]["data"]["authentication-config.yaml"]
        issuers = issuers_of(yaml.safe_load(config))  # kubevec reads what the chart writes
        assert [i.url for i in issuers] == [
            "https://keycloak.example.com/realms/platform",
            "https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000/v2.0",
        ]
        assert issuers[0].certificate_authority is not None
        assert issuers[0].certificate_authority.startswith("-----BEGIN CERTIFICATE-----")
        assert (issuers[0].username.claim, issuers[0].username.prefix) == ("preferred_username", "keycloak:")
        assert issuers[1].groups is not None
        assert issuers[1].groups.prefix == "entra:"
        serving = "kv-kubevec-mcp" if mode == "standalone" else "kv-kubevec"
        for name, pod in pods(docs).items():
            (container,) = pod["containers"]
            env = env_of(container)
            mounted = {m["name"]: m for m in container["volumeMounts"]}
            if name != serving:  # the controller beside a standalone server serves nothing
                assert "KUBEVEC_MCP_AUTHENTICATION_CONFIG" not in env
                assert "mcp-authentication" not in mounted
                continue
            assert env["KUBEVEC_MCP_AUTHENTICATION_CONFIG"] == path
            assert "KUBEVEC_MCP_KUBERNETES_AUTH" not in env  # TokenReview stays off
            assert mounted["mcp-authentication"] == {
                "name": "mcp-authentication",
                "mountPath": "/etc/kubevec/mcp-authentication",
                "readOnly": True,
            }
            assert {"name": "mcp-authentication", "configMap": {"name": "kv-kubevec-mcp-authentication"}} in pod[
                "volumes"
            ]
            # the file is read at start: a change of issuers rolls the pods
            template_annotations = by["Deployment", name]["spec"]["template"]["metadata"]["annotations"]
            assert len(template_annotations["checksum/mcp-authentication"]) == 64
        rules = [
            rule
            for role in docs
            if role["kind"] == "ClusterRole"
            and any(
                s["name"] == serving
                for b in docs
                if b["kind"] == "ClusterRoleBinding" and b["roleRef"]["name"] == role["metadata"]["name"]
                for s in b["subjects"]
            )
            for rule in role["rules"]
        ]
        resources = {r: rule["verbs"] for rule in rules for r in rule.get("resources", [])}
        assert resources["subjectaccessreviews"] == ["create"]
        assert "tokenreviews" not in resources
        assert "system:auth-delegator" not in {b["roleRef"]["name"] for b in docs if b["kind"] == "ClusterRoleBinding"}
        for rbac in ("roles", "rolebindings", "clusterroles", "clusterrolebindings"):
            assert resources[rbac] == ["list"]
        if mode == "standalone":
            pod = pods(docs)[serving]
            assert pod["automountServiceAccountToken"] is False
            (container,) = pod["containers"]
            tokens = [m for m in container["volumeMounts"] if m["name"] == "review-token"]
            assert tokens[0]["mountPath"] == "/var/run/secrets/kubernetes.io/serviceaccount"
        reviews = render(helm, "-f", str(values), "--set", f"mcp.mode={mode}", "--set", "mcp.authorization=reviews")
        assert not [
            r
            for d in reviews
            if d["kind"] == "ClusterRole"
            for r in d["rules"]
            if "roles" in r.get("resources", []) and r["verbs"] == ["list"]
        ]
    # nothing about outside identities without them; with Kubernetes tokens too, the built-in delegator role
    plain = render(helm, "--set", "mcp.enabled=true", "--set", "mcp.tokenSecret=t", "--set", "mcp.kubernetesAuth=false")
    assert not [d for d in plain if d["kind"] == "ConfigMap" and "authentication" in d["metadata"]["name"]]
    both = render(helm, "-f", str(values), "--set", "mcp.kubernetesAuth=true")
    by = {(d["kind"], d["metadata"]["name"]): d for d in both}
    assert by["ClusterRoleBinding", "kv-kubevec-mcp"]["roleRef"]["name"] == "system:auth-delegator"
    assert ("ClusterRole", "kv-kubevec-mcp-reviewer") not in by
    assert env_of(pods(both)["kv-kubevec-mcp"]["containers"][0])["KUBEVEC_MCP_KUBERNETES_AUTH"] == "true"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"issuer": {"url": "http://login.example.com", "audiences": ["kubevec"]}}, "/url"),
        ({"issuer": {"url": "https://login.example.com", "audiences": []}}, "/audiences"),
        (
            {
                "issuer": {"url": "https://login.example.com", "audiences": ["kubevec"]},
                "claimMappings": {"username": {"claim": "sub", "prefix": ""}},
                "claimValidationRules": [{"expression": "claims.hd == 'example.com'"}],
            },
            "claimValidationRules",
        ),
        (
            {
                "issuer": {"url": "https://login.example.com", "audiences": ["kubevec"]},
                "claimMappings": {"username": {"expression": "claims.sub"}},
            },
            "expression",
        ),
    ],
)
def test_the_schema_refuses_issuers_kubevec_cannot_honour(
    helm: str, tmp_path: Path, entry: dict[str, Any], message: str
) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump({"mcp": {"enabled": True, "authentication": {"jwt": [entry]}}}))
    refused = template(helm, "-f", str(values))
    assert refused.returncode != 0
    assert message in refused.stderr, refused.stderr
