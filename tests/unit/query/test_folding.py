"""A workload answers for its ReplicaSets, Pods and same-named ServiceAccount; "namespace" is a word
unless the question asks for Namespaces."""

from __future__ import annotations

from typing import Any

import pytest

from kubevec.query.folding import OWNED, fold, heads
from kubevec.query.search import SearchService
from kubevec.query.spelling import places
from tests.unit.query.test_intent import keys, read, service_of

POD_SPEC = {"serviceAccountName": "checkout", "containers": [{"name": "c", "image": "shop/checkout:1"}]}


def _owned(kind: str, name: str, owner: tuple[str, str]) -> dict[str, Any]:
    return {
        "namespace": "shop",
        "name": name,
        "labels": {"app": "checkout"},
        "ownerReferences": [{"kind": owner[0], "name": owner[1], "controller": True}],
    }


def objects() -> list[tuple[str, dict[str, Any]]]:
    template = {"metadata": {"labels": {"app": "checkout"}}, "spec": POD_SPEC}
    out: list[tuple[str, dict[str, Any]]] = [
        ("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        for name in ("shop", "shop-staging", "payments", "monitoring", "kube-system")
    ]
    out += [
        (
            "deployments",
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "checkout", "namespace": "shop", "labels": {"app": "checkout"}},
                "spec": {"selector": {"matchLabels": {"app": "checkout"}}, "template": template},
            },
        ),
        (
            "replicasets",
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": _owned("ReplicaSet", "checkout-5cb4d8b4b4", ("Deployment", "checkout")),
                "spec": {"selector": {"matchLabels": {"app": "checkout"}}, "template": template},
            },
        ),
        ("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "checkout", "namespace": "shop"}}),
        (
            "services",
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "cart", "namespace": "shop"},
                "spec": {"selector": {"app": "cart"}, "ports": [{"port": 80}]},
            },
        ),
    ]  # fmt: skip
    out += [
        (
            "pods",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": _owned("Pod", f"checkout-5cb4d8b4b4-{tail}", ("ReplicaSet", "checkout-5cb4d8b4b4")),
                "spec": POD_SPEC,
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
            },
        )
        for tail in ("x2k9p", "q8w7e", "m3n4b")
    ]
    return out


@pytest.fixture
async def service() -> SearchService:
    return await service_of(objects())


# -- the workload answers --------------------------------------------------------------------------


async def test_the_workload_ranks_first_and_its_children_follow(service: SearchService) -> None:
    for question in ("checkout", "what image does checkout run", "checkout in the shop"):
        found = await keys(service, question, k=10)
        assert found[0] == "Deployment/shop/checkout", (question, found)


async def test_a_child_whose_kind_is_asked_stands_on_its_own(service: SearchService) -> None:
    assert (await keys(service, "service account of checkout"))[0] == "ServiceAccount/shop/checkout"
    assert (await keys(service, "pods of checkout"))[0].startswith("Pod/shop/checkout-5cb4d8b4b4-")
    assert (await keys(service, "replica set of checkout"))[0] == "ReplicaSet/shop/checkout-5cb4d8b4b4"


def _meta(kind: str, name: str, owner: str = "") -> dict[str, Any]:
    return {"kind": kind, "namespace": "shop", "name": name, **({"owner": owner} if owner else {})}


def test_children_fold_under_their_head_and_leave_the_places_after_it() -> None:
    head = _meta("Deployment", "checkout")
    pod = _meta("Pod", "checkout-5cb4d8b4b4-x2k9p", "ReplicaSet/checkout-5cb4d8b4b4")
    account = _meta("ServiceAccount", "checkout")
    other = _meta("Service", "cart")
    scored = [(pod, 1.0), (account, 0.95), (head, 0.6), (other, 0.9)]
    folded = dict((m["kind"], s) for m, s in fold(scored, metadata=lambda m: m, asked=lambda kind: False))
    assert folded["Deployment"] == pytest.approx(1.0)  # the family's best place
    assert folded["Deployment"] > folded["Service"] > folded["Pod"] > folded["ServiceAccount"]
    assert folded["Pod"] == pytest.approx(1.0 + OWNED)
    # the kind asked: the Pod stands where it is
    asked = dict((m["kind"], s) for m, s in fold(scored, metadata=lambda m: m, asked=lambda kind: kind == "Pod"))
    assert asked["Pod"] == 1.0
    assert asked["Deployment"] == pytest.approx(0.95)  # still the account's head


def test_a_statefulsets_pods_named_like_it_leave_the_next_places_to_other_answers() -> None:
    # "what gives producers an HTTP interface to kafka": the broker and its three Pods all say "kafka"; the
    # Pods follow the broker below the next answer named less well, not in the places after the broker
    broker = _meta("StatefulSet", "kafka")
    pods = [_meta("Pod", f"kafka-{n}", "StatefulSet/kafka") for n in range(3)]
    proxy = _meta("Deployment", "pixy")
    scored = [(broker, 1.6), *((pod, 1.6) for pod in pods), (proxy, 1.3)]
    folded = fold(scored, metadata=lambda m: m, asked=lambda kind: False)
    ranked = [m["name"] for m, _ in sorted(folded, key=lambda p: -p[1])]
    assert ranked[:2] == ["kafka", "pixy"]


def test_an_owned_child_without_its_head_among_the_candidates_steps_back() -> None:
    pod = _meta("Pod", "checkout-5cb4d8b4b4-x2k9p", "ReplicaSet/checkout-5cb4d8b4b4")
    lone = _meta("Pod", "debug")
    folded = fold([(pod, 1.0), (lone, 0.9)], metadata=lambda m: m, asked=lambda kind: False)
    assert [m["name"] for m, _ in sorted(folded, key=lambda p: -p[1])] == ["debug", pod["name"]]


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (_meta("Pod", "web-5cb4d8b4b4-x2k9p", "ReplicaSet/web-5cb4d8b4b4"),
         ("Deployment/shop/web", "ReplicaSet/shop/web-5cb4d8b4b4")),
        (_meta("Pod", "backup-28472910-abcde", "Job/backup-28472910"), ("CronJob/shop/backup", "Job/shop/backup-28472910")),
        (_meta("ReplicaSet", "web-5cb4d8b4b4", "Deployment/web"), ("Deployment/shop/web",)),
        (_meta("Pod", "web-0", "StatefulSet/web"), ("StatefulSet/shop/web",)),
        (_meta("Service", "web"), ()),
    ],
)  # fmt: skip
def test_heads(metadata: dict[str, Any], expected: tuple[str, ...]) -> None:
    assert heads(metadata)[0] == expected


# -- "namespace" is a word -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("pods in namespace shop", "Pod/shop/checkout-"),
        ("which namespace does checkout run in", "Deployment/shop/checkout"),
        ("namespace of the cart service", "Service/shop/cart"),
    ],
)
async def test_namespace_as_a_word_does_not_return_namespaces(
    service: SearchService, question: str, first: str
) -> None:
    found = await keys(service, question)
    assert found[0].startswith(first), found
    assert not [key for key in found[:2] if key.startswith("Namespace/")], found


async def test_a_question_asking_for_namespaces_gets_them(service: SearchService) -> None:
    assert (await keys(service, "which namespaces are there"))[0].startswith("Namespace/")
    assert (await keys(service, "what is the monitoring namespace"))[0] == "Namespace/_cluster/monitoring"
    assert (await keys(service, "the namespace payments"))[0] == "Namespace/_cluster/payments"


def test_namespace_names_the_kind_only_when_asked() -> None:
    assert "Namespace" not in read("pods in namespace prod").kinds
    assert "Namespace" not in read("which namespace is web in").kinds
    assert "Namespace" in read("list namespaces").kinds
    candidates = read("what is the monitoring namespace").among(frozenset(), namespaces=frozenset({"monitoring"}))
    assert "Namespace" in candidates.kinds
    placed = read("the web service in the monitoring namespace").among(
        frozenset(), namespaces=frozenset({"monitoring"})
    )
    assert "Namespace" not in placed.kinds


# -- an application the question names scopes it --------------------------------------------------


def test_an_application_the_question_names_scopes_it() -> None:
    """Two applications in one namespace, each with a ``web``: the one of the application asked about first."""
    shop = {"kind": "Deployment", "name": "web", "namespace": "default", "labels": ["app.kubernetes.io/part-of=shop"]}
    blog = {"kind": "Deployment", "name": "web", "namespace": "default", "labels": ["app.kubernetes.io/part-of=blog"]}
    release = {"kind": "Service", "name": "web", "namespace": "default", "labels": ["app.kubernetes.io/instance=blog"]}
    intent = read("the blog web UI").among(frozenset({"web"}), namespaces=places(shop) | places(blog))
    assert intent.boost(blog) > intent.boost(shop)
    assert intent.boost(release) > read("the blog web UI").boost({**release, "labels": []})
    assert places(blog) == {"default", "blog"}
    # an object named like the application (an Argo CD Application deploying it) is its scope, not its subject
    deployer = {"kind": "Application", "name": "blog", "namespace": "argocd"}
    assert intent.boost(deployer) < intent.boost(blog)
