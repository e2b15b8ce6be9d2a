"""A Secret kubevec does not read is still an answer, known by what refers to it, and only to whom may read it."""

from __future__ import annotations

from typing import Any

from kubevec.backends import Record
from kubevec.inference.instances import build_instance
from kubevec.query.referenced import REFERENCED_ONLY, is_referenced_only
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService
from tests.unit.query.test_intent import service_of


def catalog() -> list[tuple[str, dict[str, Any]]]:
    env = [
        {"name": "MYSQL_USER", "valueFrom": {"secretKeyRef": {"name": "catalog-db", "key": "username"}}},
        {"name": "MYSQL_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "catalog-db", "key": "password"}}},
    ]
    template = {
        "metadata": {"labels": {"app": "catalog-mysql"}},
        "spec": {"containers": [{"name": "mysql", "image": "mysql:8.0", "env": env}]},
    }
    return [
        (
            "statefulsets",
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": "catalog-mysql", "namespace": "shop"},
                "spec": {"selector": {"matchLabels": {"app": "catalog-mysql"}}, "template": template},
            },
        ),
        (
            "pods",  # the StatefulSet's Pod refers to the Secret too: its workload answers for it
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": "catalog-mysql-0",
                    "namespace": "shop",
                    "labels": {"app": "catalog-mysql"},
                    "ownerReferences": [
                        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "catalog-mysql", "uid": "u"}
                    ],
                },
                "spec": template["spec"],
            },
        ),
        (
            "deployments",
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                    },
                },
            },
        ),
    ]


async def keys(service: SearchService, question: str, **more: Any) -> list[tuple[str, dict[str, Any]]]:
    answer = await service.search(SearchRequest(collection="instances", query=question, k=5, **more))
    return [
        (f"{r.metadata['kind']}/{r.metadata.get('namespace', '_cluster')}/{r.metadata['name']}", dict(r.metadata))
        for r in answer
    ]


async def test_a_secret_asked_for_is_known_by_what_refers_to_it() -> None:
    service = await service_of(catalog())
    found = await keys(service, "which Secret holds the credentials of the catalog mysql database")
    key, metadata = found[0]
    assert key == "Secret/shop/catalog-db"
    assert is_referenced_only(metadata)
    assert metadata[REFERENCED_ONLY] == "StatefulSet/catalog-mysql"
    answer = await service.search(SearchRequest(collection="instances", query="catalog db", k=3))
    secret = next(r for r in answer if r.metadata["kind"] == "Secret")
    assert "keys password, username" in secret.text  # its key names, as its user's document says them
    assert "8.0" not in secret.text  # nothing of the user's own


async def test_a_question_that_asks_for_no_secret_gets_none() -> None:
    service = await service_of(catalog())
    assert all(key.split("/")[0] != "Secret" for key, _ in await keys(service, "which database runs mysql"))


async def test_a_caller_who_may_not_read_secrets_is_shown_none() -> None:
    service = await service_of(catalog())
    # a view (or a filter) that reads StatefulSets and Deployments only: the Secret is not in it
    found = await keys(
        service,
        "which Secret holds the credentials of the catalog mysql database",
        filter={"resource": {"$in": ["statefulsets.apps", "deployments.apps"]}},
    )
    assert found
    assert all(key.split("/")[0] != "Secret" for key, _ in found)


async def test_a_secret_the_store_holds_is_answered_as_stored() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "catalog-db", "namespace": "shop"},
        "type": "Opaque",
        "data": {"username": "dXNlcg==", "password": "cGFzcw=="},
    }
    service = await service_of(catalog())
    document = build_instance(secret, plural="secrets").to_document()
    embedder = service.sources.active.embedder
    assert embedder is not None
    await service.sources.store.upsert(
        "instances",
        [
            Record(
                id=document.id,
                vector=await embedder.embed_query(document.text),
                text=document.text,
                metadata=document.metadata,
            )
        ],
    )
    found = await keys(service, "which Secret holds the credentials of the catalog mysql database")
    secrets = [metadata for key, metadata in found if key == "Secret/shop/catalog-db"]
    assert len(secrets) == 1
    assert not is_referenced_only(secrets[0])
