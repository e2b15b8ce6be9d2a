"""A workload running a well-known image says what it is: the catalogue's line, else the hand list's."""

from __future__ import annotations

import pytest

from kubevec.inference import catalogue, software
from kubevec.inference.instances import build_instance


@pytest.mark.parametrize(
    ("image", "repository"),
    [
        ("rabbitmq:3.6.8-management", "rabbitmq"),
        ("docker.io/library/redis:7-alpine@sha256:abc", "redis"),
        ("public.ecr.aws/docker/library/redis:8.10.1-alpine", "redis"),
        ("kbudde/rabbitmq-exporter", "rabbitmq-exporter"),
        ("localhost:5000/team/Postgres", "postgres"),
    ],
)
def test_the_repository_name_of_an_image(image: str, repository: str) -> None:
    assert software.repository(image) == repository


def test_well_known_images_are_described_each_once_unknown_ones_not() -> None:
    images = [
        "rabbitmq:3.6.8-management",
        "kbudde/rabbitmq-exporter",
        "mongo",
        "mongo:7",
        "weaveworksdemos/carts:0.4.8",
    ]
    rabbitmq, exporter, mongo = (catalogue.lookup(i) for i in ("rabbitmq", "kbudde/rabbitmq-exporter", "mongo"))
    assert "broker" in str(rabbitmq)
    assert "exporter" in str(exporter)
    assert "MongoDB" in str(mongo)
    assert software.described(images) == [rabbitmq, exporter, mongo]


@pytest.mark.parametrize(
    "image", ["prom/alertmanager:v0.27.0", "clickhouse/clickhouse-server:24", "confluentinc/cp-kafka:7.6"]
)
def test_the_hand_list_covers_what_the_catalogue_lacks(image: str) -> None:
    assert catalogue.lookup(image) is None
    assert software.describe(image) == software.SOFTWARE[software.repository(image)]


def test_the_hand_list_holds_only_what_the_catalogue_lacks() -> None:
    assert [name for name in software.SOFTWARE if catalogue.lookup(name)] == []


def test_a_workload_document_says_what_its_servers_are() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "session-db", "namespace": "shop"},
        "spec": {"template": {"spec": {"containers": [{"name": "db", "image": "redis:alpine"}]}}},
    }
    text = build_instance(deployment, plural="deployments").to_document().text
    assert text.endswith(f" | images: redis:alpine | software: {catalogue.lookup('redis')}")
    containers = deployment["spec"]["template"]["spec"]["containers"]
    containers.append({"name": "exporter", "image": "oliver006/redis_exporter:v1.62.0"})
    text = build_instance(deployment, plural="deployments").to_document().text
    assert f"software: {catalogue.lookup('redis')} {catalogue.lookup('oliver006/redis_exporter')}" in text
    containers[:] = [{"name": "cart", "image": "shop/cart:1"}]
    assert "software:" not in build_instance(deployment, plural="deployments").to_document().text


def test_recommended_labels_and_description_annotations_are_read_once_beside_the_software() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "tracing",
            "namespace": "observability",
            "labels": {
                "app.kubernetes.io/name": "jaeger",
                "app.kubernetes.io/component": "query",
                "app.kubernetes.io/part-of": "observability",
            },
            "annotations": {
                "kubernetes.io/description": "Trace UI for the shop",
                "app.kubernetes.io/description": "Jaeger query service",
            },
        },
        "spec": {"template": {"spec": {"containers": [{"name": "q", "image": "jaegertracing/jaeger:2.0"}]}}},
    }
    text = build_instance(deployment, plural="deployments").to_document().text
    for said in (
        "app.kubernetes.io/component=query",
        "app.kubernetes.io/name=jaeger",
        "app.kubernetes.io/part-of=observability",
        "description: Trace UI for the shop",
        "description: Jaeger query service",
    ):
        assert text.count(said) == 1, said
    assert text.count(f"software: {software.describe('jaegertracing/jaeger:2.0')}") == 1


def test_an_unknown_image_is_described_by_the_workloads_well_known_name() -> None:
    # jaegertracing/all-in-one is keyed by no source; a Deployment named jaeger (or labelled so) runs Jaeger
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "tracing", "namespace": "shop", "labels": {"app.kubernetes.io/name": "jaeger"}},
        "spec": {"template": {"spec": {"containers": [{"name": "j", "image": "jaegertracing/all-in-one:1.57"}]}}},
    }
    text = build_instance(deployment, plural="deployments").to_document().text
    assert f"software: {catalogue.lookup('jaeger')}" in text
    # a known image speaks for itself; a name says nothing when the image is known
    deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "redis:7"
    text = build_instance(deployment, plural="deployments").to_document().text
    assert f"software: {catalogue.lookup('redis')}" in text
    assert str(catalogue.lookup("jaeger")) not in text
    # an ordinary name is no software
    assert software.described(["shop/cart:1"], names=["cart", "frontend"]) == []
    assert software.described(["shop/x:1"], names=["grafana/loki"]) == []


def test_a_workload_scraped_by_prometheus_says_where() -> None:
    notes = {"prometheus.io/scrape": "true", "prometheus.io/port": "8080", "prometheus.io/path": "/actuator/prometheus"}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "carts", "namespace": "shop"},
        "spec": {
            "template": {"metadata": {"annotations": notes}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}
        },
    }
    text = build_instance(deployment, plural="deployments").to_document().text
    assert "metrics: scraped by Prometheus at :8080/actuator/prometheus" in text
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop", "annotations": notes},
           "spec": {"containers": [{"name": "c", "image": "x:1"}]}}  # fmt: skip
    assert "scraped by Prometheus at :8080/actuator/prometheus" in build_instance(pod, plural="pods").to_document().text
    notes["prometheus.io/scrape"] = "false"
    assert "metrics:" not in build_instance(deployment, plural="deployments").to_document().text


@pytest.mark.parametrize(
    ("program", "says"),
    [
        ("zookeeper-server-start.sh", "ZooKeeper"),
        ("redis-server", "Redis"),
        ("schema-registry-start", "Schema Registry"),
    ],
)
def test_a_program_named_for_its_software_says_what_it_is(program: str, says: str) -> None:
    line = software.program_line(program)
    assert line is not None
    assert says in line


@pytest.mark.parametrize("program", ["kafka-manager", "kafka-rest-start", "bash", "python", "entrypoint.sh", "agent"])
def test_a_tool_for_some_software_a_shell_or_an_unknown_program_says_nothing(program: str) -> None:
    assert software.program_line(program) is None


def _running(kind: str, *, image: str, command: list[str]) -> str:
    """The text of a one-container workload that runs ``command`` in ``image``."""
    container = {"name": "c", "image": image, "command": command}
    body = {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": "w", "namespace": "shop"},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }
    return build_instance(body, plural=kind.lower() + "s").text


def test_a_bundled_image_is_described_by_the_program_its_container_runs_first() -> None:
    text = _running("StatefulSet", image="solsson/kafka:2.5.1", command=["./bin/zookeeper-server-start.sh"])
    said = text.split("software: ", 1)[1]
    assert said.startswith("Apache ZooKeeper")
    assert "Kafka" in said  # what the image is still said, after


def test_a_server_started_through_a_shell_is_described_by_the_scripts_program() -> None:
    text = _running("Deployment", image="shop/base:1", command=["sh", "-c", "redis-server"])
    assert "software: Redis" in text
