"""A workload running a well-known server says what it is, matched on the image's repository name alone."""

from __future__ import annotations

import pytest

from kubevec.inference import software
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


def test_only_exact_repository_names_are_described_each_once() -> None:
    images = [
        "rabbitmq:3.6.8-management",
        "kbudde/rabbitmq-exporter",
        "mongo",
        "mongo:7",
        "weaveworksdemos/carts:0.4.8",
    ]
    assert software.described(images) == ["RabbitMQ (message broker, queue)", "MongoDB (document database)"]


def test_a_workload_document_says_what_its_servers_are() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "session-db", "namespace": "shop"},
        "spec": {"template": {"spec": {"containers": [{"name": "db", "image": "redis:alpine"}]}}},
    }
    text = build_instance(deployment, plural="deployments").to_document().text
    assert "software: Redis (in-memory key-value store, cache)" in text
    deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "shop/cart:1"
    assert "software:" not in build_instance(deployment, plural="deployments").to_document().text
