"""Who a workload calls (issue 51): addresses in env values and arguments, the ``calls`` line, the evidence."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubevec.inference.addresses import ARGS, container_addresses, value_addresses
from kubevec.inference.instances import build_instance
from tests.unit.inference.gate_cases import CANARIES


def _one(value: str, *, via: str = "PEER_ADDR") -> tuple[str, tuple[str, str | None] | None, bool]:
    (address,) = value_addresses(value, via=via)
    return address.shown, address.service, address.in_cluster


@pytest.mark.parametrize(
    ("value", "shown", "service", "in_cluster"),
    [
        ("redis-cart:6379", "redis-cart:6379", ("redis-cart", None), True),
        ("http://backend:9898/api/v1?x=1", "http://backend:9898", ("backend", None), True),
        ("http://backend/healthz", "http://backend", ("backend", None), True),
        ("db.payments.svc.cluster.local:5432", "db.payments.svc.cluster.local:5432", ("db", "payments"), True),
        ("grpc://db.payments.svc:5432", "grpc://db.payments.svc:5432", ("db", "payments"), True),
        (
            "kafka-0.kafka.data.svc.cluster.local:9092",
            "kafka-0.kafka.data.svc.cluster.local:9092",
            ("kafka", "data"),
            True,
        ),
        # name.ns: a Service only if the cluster has it (example.com is not Service example in namespace com)
        ("backend.other:80", "backend.other:80", ("backend", "other"), False),
        ("https://api.example.com:443/v1", "https://api.example.com:443", None, False),
        ("--catalog=productcatalog:3550", "productcatalog:3550", ("productcatalog", None), True),
    ],
)
def test_an_address_is_read_as_scheme_host_and_port(
    value: str, shown: str, service: tuple[str, str | None] | None, in_cluster: bool
) -> None:
    assert _one(value) == (shown, service, in_cluster)


def test_a_bare_host_is_an_address_only_under_a_variable_named_like_one() -> None:
    assert _one("mysql", via="DB_HOST") == ("mysql", ("mysql", None), True)
    assert _one("kafka", via="KAFKA_BOOTSTRAP_SERVERS")[0] == "kafka"
    assert value_addresses("frontend", via="OTEL_SERVICE_NAME") == []
    assert value_addresses("backend", via="MODE") == []
    assert value_addresses("mysql", via=ARGS) == []  # a word in args is no host
    # the address word run into a prefix, as libpq and many images name theirs
    assert _one("codeintel-db", via="CODEINTEL_PGHOST")[0] == "codeintel-db"
    assert _one("cache", via="REDISADDR")[0] == "cache"
    assert value_addresses("ghosted", via="POSTS") == []


@pytest.mark.parametrize(
    "value",
    [
        "10.0.0.5:7946",
        "http://127.0.0.1:8081/",
        "localhost:19115",
        "http://localhost:19115/-/reload",
        "0.0.0.0:8080",
        ":8443",
        "[$(IP)]:9100",
        "12:30",
        "file:/dev/urandom",
        "-Xms64m -Xmx128m -Djava.security.egd=file:/dev/urandom",
        "docker://springcloud/spring-cloud-dataflow-composed-task-runner:2.11.3-SNAPSHOT",  # an image, not a host
        "oci://registry/charts/app:1.0",
        "maven://org.springframework.cloud.stream.app:log-sink-kafka:3.2.1",
        "file://config/app.yaml",
    ],
)
def test_ips_localhost_listen_addresses_and_times_are_no_peers(value: str) -> None:
    assert value_addresses(value, via=ARGS) == []


def test_userinfo_path_and_query_are_never_kept() -> None:
    (address,) = value_addresses("postgres://user:hunter2pw@db:5432/app?sslmode=require&token=abc", via="DSN_URL")
    assert (address.shown, address.service) == ("postgres://db:5432", ("db", None))
    assert "hunter2pw" not in repr(address)
    assert "token" not in repr(address)


def test_each_address_is_read_once_per_source() -> None:
    containers: list[dict[str, Any]] = [
        {"env": [{"name": "A_ADDR", "value": "cart:7070"}], "args": ["--cart=cart:7070", "--x=cart:7070"]},
        {"env": [{"name": "A_ADDR", "value": "cart:7070"}, {"name": "B", "valueFrom": {"fieldRef": {}}}]},
    ]
    assert [(a.shown, a.via) for a in container_addresses(containers)] == [("cart:7070", "A_ADDR"), ("cart:7070", ARGS)]


def _deployment(*, env: list[dict[str, Any]], args: list[str] | None = None, namespace: str = "shop") -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "ghcr.io/acme/app:1", "env": env}
    if args is not None:
        container["args"] = args
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "frontend", "namespace": namespace, "uid": "u-1"},
        "spec": {"template": {"metadata": {"labels": {"app": "frontend"}}, "spec": {"containers": [container]}}},
    }


def test_a_workload_document_says_whom_it_calls_and_from_which_variable() -> None:
    body = _deployment(
        env=[
            {"name": "CART_SERVICE_ADDR", "value": "cartservice:7070"},
            {"name": "CART_FALLBACK_ADDR", "value": "cartservice:7070"},
            {"name": "DATABASE_URL", "value": "postgres://app:Qz7mapleRiver@db.payments.svc.cluster.local:5432/app"},
            {"name": "API_URL", "value": "https://api.example.com/v1"},
        ],
        args=["--backend=http://backend:9898/api"],
    )
    document = build_instance(body, plural="deployments").to_document()
    assert (
        "calls: Service cartservice:7070 (CART_SERVICE_ADDR, CART_FALLBACK_ADDR), "
        "Service postgres://db.payments.svc.cluster.local:5432 (DATABASE_URL), "
        "https://api.example.com (API_URL), Service http://backend:9898 (args)"
    ) in document.text
    relations = dict(zip(document.metadata["refs"], document.metadata["ref_relations"], strict=True))
    calls = [key for key, relation in relations.items() if relation == "calls"]
    assert calls == ["Service/shop/cartservice", "Service/payments/db", "Service/shop/backend"]
    # the evidence, one per calls reference in the order of refs
    assert document.metadata["call_evidence"] == ["CART_SERVICE_ADDR,CART_FALLBACK_ADDR", "DATABASE_URL", "args"]
    assert "Qz7mapleRiver" not in json.dumps([document.text, document.metadata])


def test_a_value_the_gate_drops_names_nothing() -> None:
    """``PASSWORD=mysql`` is a credential to the gate: the builder reads the judged copy, so no edge and no line."""
    document = build_instance(_deployment(env=[{"name": "DB_PASSWORD", "value": "mysql"}]), plural="x").to_document()
    assert "calls" not in document.metadata.get("ref_relations", [])
    assert "calls:" not in document.text
    assert "mysql" not in document.text


def test_a_variable_from_a_secret_or_configmap_shows_the_key_name_never_a_value() -> None:
    env = [
        {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db-creds", "key": "password"}}},
        {"name": "LOG_LEVEL", "valueFrom": {"configMapKeyRef": {"name": "app-config", "key": "log.level"}}},
    ]
    document = build_instance(_deployment(env=env), plural="deployments").to_document()
    assert (
        "env DB_PASSWORD from Secret db-creds key password, LOG_LEVEL from ConfigMap app-config key log.level"
        in document.text
    )


def test_key_references_are_bounded() -> None:
    env = [{"name": f"V{i}", "valueFrom": {"configMapKeyRef": {"name": "c", "key": f"k{i}"}}} for i in range(9)]
    document = build_instance(_deployment(env=env), plural="deployments").to_document()
    assert "V5 from ConfigMap c key k5 (+3 more)" in document.text
    assert "key k6" not in document.text


@pytest.mark.parametrize(
    ("kind", "field", "value", "secret"), CANARIES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CANARIES)]
)
def test_no_canary_reaches_a_document_through_an_address(kind: str, field: str, value: str, secret: str) -> None:
    """Every public canary as an env value (under its own name and under an address-like name) and as an
    argument: the address read from it keeps no part of the credential, in the text or the payload."""
    env = [{"name": field, "value": value}, {"name": "UPSTREAM_URL", "value": value}]
    document = build_instance(_deployment(env=env, args=[value, f"--peer={value}"]), plural="x").to_document()
    assert secret not in json.dumps([document.text, document.metadata])


def test_a_cluster_scoped_object_with_containers_names_no_service_by_a_bare_host() -> None:
    body = {
        "apiVersion": "example.io/v1",
        "kind": "ClusterRunner",
        "metadata": {"name": "r", "uid": "u"},
        "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "A_ADDR", "value": "cart:7070"}]}]},
    }
    document = build_instance(body, plural="clusterrunners").to_document()
    assert "calls" not in document.metadata.get("ref_relations", [])


@pytest.mark.parametrize(
    "value",
    [
        "http://${SKIPPER_SERVICE_HOST}:${SKIPPER_SERVICE_PORT}/api",
        "$(SKIPPER_SERVICE_HOST):$(SKIPPER_SERVICE_PORT_HTTP)",
    ],
)
def test_a_services_link_variables_name_the_service(value: str) -> None:
    """Kubernetes sets ``<NAME>_SERVICE_HOST`` and ``_PORT`` for each Service; a value built of them calls it."""
    assert _one(value, via="SKIPPER_URI") == ("skipper", ("skipper", None), True)
    (address,) = value_addresses("${KAFKA_BROKER_SERVICE_HOST}", via="BROKERS")
    assert address.service == ("kafka-broker", None)


def test_dns_service_discovery_names_its_host() -> None:
    """Thanos, Prometheus and Cortex find peers by DNS: ``dnssrv+_grpc._tcp.<service>`` and ``dns+<host>:<port>``."""
    assert _one("--endpoint=dnssrv+_grpc._tcp.thanos-store.thanos:10901", via=ARGS) == (
        "thanos-store.thanos:10901",
        ("thanos-store", "thanos"),
        False,  # ``name.ns``: a Service only if the cluster has it
    )
    assert _one("-memcached.addresses=dns+memcached:11211", via=ARGS) == ("memcached:11211", ("memcached", None), True)
    assert _one("dnssrvnoa+_http._tcp.querier.cortex.svc.cluster.local", via="QUERIER_URL")[1] == ("querier", "cortex")
