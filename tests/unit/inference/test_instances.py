"""Instance documents: absolute redaction, stability under churn, kind-aware summaries."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kubevec.core.errors import InferenceError
from kubevec.inference.instances import InstancePolicy, build_instance

SECRET_VALUE = "c3VwZXItc2VjcmV0LXBhc3N3b3Jk"
LAST_APPLIED = '{"apiVersion":"v1","kind":"Secret","data":{"password":"c3VwZXItc2VjcmV0LXBhc3N3b3Jk"}}'


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "payments-api",
            "namespace": "prod",
            "uid": "u-1",
            "resourceVersion": "100",
            "generation": 3,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"app": "payments", "tier": "api"},
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": LAST_APPLIED,
                "example.com/description": "Serves the payments API for checkout",
            },
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
            "ownerReferences": [{"kind": "Application", "name": "shop", "controller": True}],
        },
        "spec": {
            "replicas": 3,
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "api",
                            "image": "ghcr.io/acme/payments:1.4.2",
                            "ports": [{"containerPort": 8080}],
                            "env": [{"name": "DB_PASSWORD", "value": "hunter2"}],
                        }
                    ]
                }
            },
        },
        "status": {
            "observedGeneration": 3,
            "readyReplicas": 3,
            "conditions": [{"lastTransitionTime": "2026-01-02T00:00:00Z"}],
        },
    }


def dump(obj: dict[str, Any], plural: str) -> str:
    doc = build_instance(obj, plural=plural, cluster="prod-eu").to_document()
    return doc.text + json.dumps(dict(doc.metadata))


def test_deployment_document() -> None:
    doc = build_instance(deployment(), plural="deployments", cluster="prod-eu")
    assert doc.id == "prod-eu/prod/apps/v1/Deployment/payments-api"
    assert doc.text.startswith(
        "Deployment payments-api | namespace: prod | apiVersion: apps/v1 | labels: app=payments, tier=api"
    )
    assert "owner: Application/shop" in doc.text
    assert "images: ghcr.io/acme/payments:1.4.2" in doc.text
    assert "replicas: 3" in doc.text
    assert "description: Serves the payments API" in doc.text
    metadata = doc.to_document().metadata
    assert metadata["labels"] == ["app=payments", "tier=api"]
    assert metadata["resource"] == "deployments.apps"
    assert metadata["owner"] == "Application/shop"
    assert metadata["namespace"] == "prod"
    assert metadata["uid"] == "u-1"
    assert metadata["created_at"] == "2026-01-01T00:00:00Z"


def test_secret_values_and_last_applied_never_appear() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": "db",
            "namespace": "prod",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": LAST_APPLIED},
        },
        "data": {"password": SECRET_VALUE},
        "stringData": {"token": "plain-token-value"},
    }
    everything = dump(secret, "secrets")
    assert SECRET_VALUE not in everything
    assert "plain-token-value" not in everything
    assert "last-applied" not in everything
    assert "keys: password, token" in everything
    deploy = dump(deployment(), "deployments")
    assert "managedFields" not in deploy
    assert "f:spec" not in deploy
    assert "last-applied" not in deploy


def test_configmap_values_never_appear_and_keys_follow_policy() -> None:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "shop"},
        "data": {"LOG_LEVEL": "debug-value-xyz"},
        "binaryData": {"blob": "AAAA"},
    }
    with_keys = build_instance(cm, plural="configmaps").text
    assert "debug-value-xyz" not in with_keys
    assert "keys: LOG_LEVEL, blob" in with_keys
    without = build_instance(cm, plural="configmaps", policy=InstancePolicy(configmap_keys=False)).text
    assert "LOG_LEVEL" not in without


def test_credentials_in_custom_resources_are_dropped() -> None:
    cr = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "a"},
        "spec": {
            "size": "large",
            "apiToken": "tok-123",
            "password": "pw-456",
            "tlsKey": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSj\n-----END PRIVATE KEY-----",
            "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
        },
    }
    text = build_instance(cr, plural="widgets").text
    assert "size: large" in text
    for leaked in ("tok-123", "pw-456", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSj", "eyJhbGci"):
        assert leaked not in text


def test_a_certificate_is_public_and_kept() -> None:
    """issue 52: a CA bundle (a certificate, public by construction) was dropped as if it were a key."""
    bundle = "-----BEGIN CERTIFICATE-----\nMIIBtjCCAV2gAwIBAgIUDABMiIRomPz0\n-----END CERTIFICATE-----"
    cr = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"caBundle": bundle},
    }
    text = build_instance(cr, plural="widgets").text
    assert "caBundle: <certificate: unreadable>" in text  # kept as what it says; this block is no real one


def test_churn_does_not_change_the_hash_but_labels_and_images_do() -> None:
    base = build_instance(deployment(), plural="deployments").to_document()
    churned = deployment()
    churned["metadata"]["resourceVersion"] = "101"
    churned["metadata"]["generation"] = 4
    churned["metadata"]["managedFields"] = [{"manager": "other"}]
    churned["status"] = {"observedGeneration": 4, "conditions": [{"lastTransitionTime": "2026-02-02T00:00:00Z"}]}
    same = build_instance(churned, plural="deployments").to_document()
    assert same.content_hash == base.content_hash
    assert same.text == base.text
    relabelled = copy.deepcopy(churned)
    relabelled["metadata"]["labels"]["tier"] = "web"
    assert build_instance(relabelled, plural="deployments").to_document().content_hash != base.content_hash
    reimaged = copy.deepcopy(churned)
    reimaged["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/payments:1.5.0"
    assert build_instance(reimaged, plural="deployments").to_document().content_hash != base.content_hash


@pytest.mark.parametrize(
    ("obj", "plural", "expected"),
    [
        (
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "payments-api", "namespace": "shop"},
                "spec": {
                    "type": "ClusterIP",
                    "ports": [{"port": 8080, "protocol": "TCP"}],
                    "selector": {"app": "payments"},
                },
            },
            "services",
            ["type: ClusterIP", "ports: 8080/TCP", "selector: app=payments"],
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data-0", "namespace": "db"},
                "spec": {"storageClassName": "fast-ssd", "resources": {"requests": {"storage": "20Gi"}}},
            },
            "persistentvolumeclaims",
            ["size: 20Gi", "storageClass: fast-ssd"],
        ),
        (
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "Ingress",
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {
                    "rules": [
                        {
                            "host": "shop.example.com",
                            "http": {"paths": [{"path": "/", "backend": {"service": {"name": "web"}}}]},
                        }
                    ]
                },
            },
            "ingresses",
            ["exposes: HTTP from outside the cluster to Services", "hosts: shop.example.com", "routes: / -> web"],
        ),
        (
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "HTTPRoute",
                "metadata": {"name": "r", "namespace": "shop"},
                "spec": {
                    "hostnames": ["api.example.com"],
                    "parentRefs": [{"name": "gw"}],
                    "rules": [{"backendRefs": [{"name": "api"}]}],
                },
            },
            "httproutes",
            ["hosts: api.example.com", "gateways: gw", "backends: api"],
        ),
        (
            {
                "apiVersion": "cert-manager.io/v1",
                "kind": "Certificate",
                "metadata": {"name": "api-tls", "namespace": "prod"},
                "spec": {
                    "secretName": "api-tls",
                    "dnsNames": ["api.example.com"],
                    "issuerRef": {"kind": "ClusterIssuer", "name": "letsencrypt"},
                },
            },
            "certificates",
            ["dnsNames: api.example.com", "secretName: api-tls", "issuerRef: ClusterIssuer/letsencrypt"],
        ),
        (
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": {"name": "nightly", "namespace": "ops"},
                "spec": {
                    "schedule": "0 2 * * *",
                    "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"image": "report:1"}]}}}},
                },
            },
            "cronjobs",
            ["images: report:1", "schedule: 0 2 * * *"],
        ),
    ],
)
def test_kind_summaries(obj: dict[str, Any], plural: str, expected: list[str]) -> None:
    text = build_instance(obj, plural=plural).text
    for part in expected:
        assert part in text


def test_cluster_scoped_objects() -> None:
    doc = build_instance({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}}, plural="namespaces")
    assert doc.id == "default/_cluster/core/v1/Namespace/prod"
    assert "namespace" not in doc.to_document().metadata


@pytest.mark.parametrize(
    "obj",
    [
        {"kind": "Pod", "metadata": {"name": "x"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": "nope"},
        {"apiVersion": "v1", "metadata": {"name": "x"}},
    ],
)
def test_malformed_objects_raise_inference_error(obj: dict[str, Any]) -> None:
    with pytest.raises(InferenceError, match="lacks apiVersion, kind or name"):
        build_instance(obj, plural="pods")


def test_odd_spec_shapes_do_not_crash() -> None:
    odd = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "x", "namespace": "a", "labels": None},
        "spec": {"template": {"spec": {"containers": ["not-a-mapping", {"image": None}]}}},
    }
    assert build_instance(odd, plural="deployments").text.startswith("Deployment x")


def test_every_label_is_stored_in_the_payload_even_past_the_text_cap() -> None:
    obj = deployment()
    obj["metadata"]["labels"] = {f"l{i}": f"v{i}" for i in range(200)}
    document = build_instance(obj, plural="deployments").to_document()
    labels = document.metadata["labels"]
    assert isinstance(labels, list)
    assert len(labels) == 200
    assert "l150=v150" in labels
    assert "(+180 more)" in document.text


def _widget_text(spec: dict[str, Any]) -> tuple[str, str]:
    """A Widget with ``spec``: its document's text, and the text with every metadata value."""
    cr = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "a"}, "spec": spec}
    document = build_instance(cr, plural="widgets").to_document()
    return document.text, document.text + json.dumps(dict(document.metadata))


def test_credentials_in_custom_resource_specs_by_name_and_value() -> None:
    canary = "Zq4canaryW2"
    text, dumped = _widget_text(
        {
            "connectionString": f"Server=x;Password={canary}",
            "dsn": f"postgres://u:{canary}@h/db",
            "clientSecret": canary,
            "password": 972089767740,
            "passwordList": [canary],
            "endpoint": f"https://user:{canary}@api.example.com",
            "note": f"call with Authorization: Bearer {canary}abc",
            "region": "eu-west-1",
        }
    )
    assert canary not in dumped
    assert "972089767740" not in dumped
    assert "region: eu-west-1" in text


def test_credentials_under_short_names_flags_and_embedded_pairs_are_dropped() -> None:
    """Found by trying it: each of these reached the instance text before."""
    canary = "Zq4canaryW2"
    text, dumped = _widget_text(
        {
            "adminPass": canary,
            "rootPw": canary,
            "hmacKey": canary,
            "args": ["--password", canary, "--port", "5432"],
            "envFile": f"DB_USER=app DB_PASSWORD={canary}",
            "header": f"X-Api-Key: {canary}",
            "region": "eu-west-1",
        }
    )
    assert canary not in dumped
    assert "args: --password, --port, 5432" in text
    assert "envFile: DB_USER=app DB_PASSWORD=<redacted>" in text


def test_invisible_and_bidi_characters_never_reach_a_document() -> None:
    cr = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {
            "name": "w",
            "namespace": "a",
            "annotations": {"example.com/description": "pay\u202eexe.jpg\u200b"},
        },
        "spec": {"note": "nul\x00here", "title": "\u2066isolated\u2069 \ufeffbom"},
    }
    document = build_instance(cr, plural="widgets").to_document()
    blob = document.text + json.dumps(dict(document.metadata), ensure_ascii=False)
    for char in ("\x00", "\u202e", "\u200b", "\u2066", "\u2069", "\ufeff"):
        assert char not in blob
    assert "note: nulhere" in document.text
    assert "description: payexe.jpg" in document.text


FACTS_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "cart", "namespace": "shop"},
    "spec": {"replicas": 2, "template": {"spec": {
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "dedicated", "value": "shop", "effect": "NoSchedule"}],
        "hostNetwork": True,
        "initContainers": [{"name": "wait", "image": "busybox:1.36"}],
        "containers": [
            {"name": "server", "image": "cart:1", "env": [
                {"name": "REDIS_ADDR", "value": "redis-cart:6379"},
                {"name": "DB_PASSWORD", "value": "Qz7mapleRiver"},
                {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "cart-token", "key": "t"}}}],
             "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
             "readinessProbe": {"grpc": {"port": 7070}},
             "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}}},
            {"name": "sidecar", "image": "proxy:2"},
        ],
        "volumes": [{"name": "tmp", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "cart"}}],
    }}},
}  # fmt: skip


def test_a_workload_document_holds_resources_probes_env_init_containers_and_placement() -> None:
    doc = build_instance(FACTS_DEPLOYMENT, plural="deployments").to_document()
    for part in (
        "container server: requests cpu=100m memory=64Mi; limits memory=128Mi",
        "readiness grpc 7070; liveness http /healthz 8080",
        "init container wait: image busybox:1.36",
        "nodeSelector: kubernetes.io/os=linux",
        "tolerations: dedicated=shop:NoSchedule",
        "hostNetwork: true",
        "volumes: emptyDir",
    ):
        assert part in doc.text, part
    assert "Qz7mapleRiver" not in doc.text + str(dict(doc.metadata))
    assert "env REDIS_ADDR DB_PASSWORD TOKEN" in doc.text  # env by name (what is configured), never its values
    assert "ConfigMap/cart" not in doc.text  # a reference: metadata only, so a new mount keeps the vector
    assert doc.metadata["images"] == ["cart:1", "proxy:2", "busybox:1.36"]
    assert doc.metadata["resource_limits"] == "some"


@pytest.mark.parametrize(
    ("obj", "plural", "expected", "metadata"),
    [
        ({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "redis", "namespace": "shop"},
          "spec": {"podSelector": {"matchLabels": {"app": "redis"}}, "policyTypes": ["Ingress", "Egress"],
                   "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "cart"}}}], "ports": [{"port": 6379}]}],
                   "egress": []}},
         "networkpolicies",
         ["applies to: app=redis", "policyTypes: Ingress, Egress", "ingress from: pods app=cart on 6379/TCP",
          "egress to: nothing (denied)"], {}),
        ({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "deny", "namespace": "shop"},
          "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}},
         "networkpolicies", ["applies to: every Pod", "ingress from: nothing (denied)"], {}),
        ({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p", "namespace": "m"},
          "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "prometheus"}}}},
         "poddisruptionbudgets", ["minAvailable: 1", "selector: app=prometheus"], {}),
        ({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "s"},
          "spec": {"hard": {"pods": "10", "limits.memory": "4Gi"}},
          "status": {"hard": {"pods": "10"}, "used": {"pods": "3"}}},
         "resourcequotas", ["hard: limits.memory=4Gi, pods=10"], {"quota_used": ["pods=3"], "quota_hard": ["pods=10"]}),
        ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "reader"},
          "rules": [{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "list"]},
                    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"], "resourceNames": ["web"]},
                    {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]},
         "clusterroles",
         ["rules: get, list on configmaps, secrets; * on deployments.apps named web; get on /metrics"], {}),
        ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "anon"},
          "roleRef": {"kind": "ClusterRole", "name": "view"},
          "subjects": [{"kind": "User", "name": "system:anonymous"},
                       {"kind": "ServiceAccount", "name": "prometheus-k8s", "namespace": "monitoring"}]},
         "clusterrolebindings",
         ["role: ClusterRole/view", "subjects: User system:anonymous, ServiceAccount monitoring/prometheus-k8s"],
         {"subjects": ["User/system:anonymous", "ServiceAccount/monitoring/prometheus-k8s"], "role": "ClusterRole/view"}),
        ({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web", "namespace": "s"},
          "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 2, "maxReplicas": 5,
                   "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 70}}}]}},
         "horizontalpodautoscalers", ["scales: Deployment/web", "replicas: 2-5", "metrics: cpu 70% utilization"], {}),
        ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "s"},
          "spec": {"type": "LoadBalancer", "ports": [{"port": 80, "targetPort": 8080}], "externalIPs": ["203.0.113.7"]}},
         "services", ["type: LoadBalancer", "targetPorts: 80 -> 8080", "externalIPs: 203.0.113.7"],
         {"service_type": "LoadBalancer"}),
        ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "s"},
          "spec": {"type": "NodePort", "ports": [{"port": 80, "targetPort": 8079, "nodePort": 30001}]}},
         "services", ["type: NodePort", "nodePorts: 80 -> 30001"], {"service_type": "NodePort"}),
        ({"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "g", "namespace": "m"},
          "spec": {"selector": {"matchLabels": {"app": "grafana"}},
                   "endpoints": [{"port": "http", "interval": "15s"}, {"port": "metrics"}]}},
         "servicemonitors", ["selector.matchLabels: app=grafana", "endpoints.port: http, metrics", "endpoints.interval: 15s"],
         {}),
    ],
)  # fmt: skip
def test_kind_facts_in_text_and_metadata(
    obj: dict[str, Any], plural: str, expected: list[str], metadata: dict[str, Any]
) -> None:
    doc = build_instance(obj, plural=plural).to_document()
    for part in expected:
        assert part in doc.text, (part, doc.text)
    for key, value in metadata.items():
        assert doc.metadata[key] == value


def test_a_huge_custom_resource_spec_costs_a_bounded_line() -> None:
    spec = {
        f"field{i}": {"nested": [{"value": f"v{j} " * 100, "more": {"deeper": j}} for j in range(20)]}
        for i in range(60)
    }
    body = {"apiVersion": "example.com/v1", "kind": "Huge", "metadata": {"name": "h", "namespace": "n"}, "spec": spec}
    doc = build_instance(body, plural="huges")
    assert len(doc.summary) <= 24
    assert len(doc.text) < 24 * 260 + 500


def test_a_container_says_who_it_runs_as_and_which_capabilities_it_adds() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "net", "namespace": "s"},
        "spec": {
            "containers": [
                {
                    "name": "proxy",
                    "image": "envoy:1",
                    "securityContext": {
                        "runAsUser": 0,
                        "allowPrivilegeEscalation": True,
                        "capabilities": {"add": ["NET_ADMIN", "NET_BIND_SERVICE"], "drop": ["ALL"]},
                    },
                },
                {
                    "name": "odd",
                    "image": "x:1",
                    "securityContext": {"runAsUser": True, "capabilities": {"add": ["a b; rm"]}},
                },
            ]
        },
    }
    text = build_instance(pod, plural="pods").to_document().text
    assert (
        "allowPrivilegeEscalation runAsUser 0 capabilities add NET_ADMIN NET_BIND_SERVICE capabilities drop ALL" in text
    )
    assert "a b; rm" not in text  # only capability names, never free text
    assert "container odd" not in text  # nothing it says is read (runAsUser true is not a user)


def test_where_a_pod_runs_and_the_addresses_agents_ask_for() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "s"},
        "spec": {"nodeName": "worker-2", "containers": [{"name": "c", "image": "web:1"}]},
        "status": {"phase": "Running", "podIP": "10.244.1.17"},
    }
    metadata = build_instance(pod, plural="pods").to_document().metadata
    assert (metadata["node"], metadata["pod_ip"]) == ("worker-2", "10.244.1.17")
    pod["status"]["podIP"] = "not an address; rm -rf /"
    assert "pod_ip" not in build_instance(pod, plural="pods").to_document().metadata
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "s"},
        "spec": {"clusterIP": "10.96.12.7", "ports": [{"port": 80}]},
    }
    assert "clusterIP: 10.96.12.7" in build_instance(service, plural="services").to_document().text
    service["spec"]["clusterIP"] = "None"
    assert "headless: true" in build_instance(service, plural="services").to_document().text


def test_probes_are_stored_as_kind_path_and_port_or_the_program_they_run() -> None:
    """issue 52: exec probes were stored with their arguments (``mysqladmin ping -pQz7mapleRiver``) and HTTP
    probe paths with their query strings (``/healthz?token=...``); a probe is what it checks, by name."""
    container = {
        "name": "db",
        "image": "mysql:8.4",
        "readinessProbe": {"exec": {"command": ["mysqladmin", "ping", "-uroot", "-pQz7mapleRiver"]}},
        "livenessProbe": {"httpGet": {"path": "/healthz?token=Zx9Qm2Lp7Rt4Vb8Nk3Hs", "port": 8080}},
        "startupProbe": {"exec": {"command": ["/bin/sh", "-c", "pg_isready -h localhost -U app"]}},
    }
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "db", "namespace": "shop", "uid": "u-1"},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }
    text = build_instance(body, plural="deployments").to_document().text
    assert "exec mysqladmin" in text
    assert "http /healthz 8080" in text
    assert "exec sh: pg_isready" in text  # through the shell, the program its script runs
    for secret in ("Qz7mapleRiver", "Zx9Qm2Lp7Rt4Vb8Nk3Hs", "-uroot", "token=", "-U app"):
        assert secret not in text, secret


@pytest.mark.parametrize(
    ("kind", "words"),
    [("NodePort", "exposed outside the cluster"), ("LoadBalancer", "exposed outside the cluster"),
     ("ClusterIP", ""), (None, "")],
)  # fmt: skip
def test_a_service_says_who_can_reach_it_in_words(kind: str | None, words: str) -> None:
    spec: dict[str, Any] = {"ports": [{"port": 80}]} | ({"type": kind} if kind else {})
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "s"}, "spec": spec}
    text = build_instance(service, plural="services").to_document().text
    assert (words in text) if words else ("outside" not in text and "inside" not in text)
