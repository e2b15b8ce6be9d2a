""" "Workload" names a family of kinds: a question asking for one asks for any of them, and the kinds it
names after the word say where to look ("which workload uses the volume claim datadir-claim-1")."""

from __future__ import annotations

import pytest

from kubevec.query.intent import Intent
from kubevec.query.kind_vocabulary import WORKLOAD, KindVocabulary
from tests.doubles.kinds import vocabulary

KINDS = vocabulary()


def read(question: str, *names: str) -> Intent:
    return Intent.of(question, vocabulary=KINDS).among(frozenset(names))


def test_workload_asks_for_the_workload_kinds_and_gains_them_nothing() -> None:
    """Most of what a cluster runs is a workload: the word says what is asked for, it tells none apart."""
    intent = read("Which workloads mount the app-config ConfigMap?")
    assert intent.kinds == {WORKLOAD, "ConfigMap"}
    assert intent.asked_kind == WORKLOAD
    assert intent.names_kind("Deployment") == 0.0
    assert intent.names_kind("ConfigMap") == 0.5  # where to look, not what
    assert KindVocabulary.members(WORKLOAD) == {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"}
    assert KindVocabulary.members("Service") == frozenset({"Service"})


def test_a_cluster_without_workload_kinds_has_no_such_word() -> None:
    assert ("workload",) not in KindVocabulary(()).phrases


def test_the_workload_asked_for_comes_before_the_claim_it_uses() -> None:
    claim = {"kind": "PersistentVolumeClaim", "name": "datadir-claim-1", "namespace": "galera"}
    other = {"kind": "PersistentVolumeClaim", "name": "datadir-claim-2", "namespace": "galera"}
    node = {
        "kind": "Deployment",
        "name": "pxc-node1",
        "namespace": "galera",
        "refs": ["PersistentVolumeClaim/galera/datadir-claim-1"],
    }
    intent = read("Which workload uses the volume claim datadir-claim-1?", "datadir-claim-1", "datadir-claim-2")
    assert intent.asked_kind == WORKLOAD
    assert intent.boost(node) > intent.boost(other) > intent.boost(claim)
    # a claim is what is used: the sister claims, near the question in meaning, gain nothing from "volume claim"
    assert intent.callers
    assert intent.boost(other) < 0.3
    assert intent.boost(node) - intent.boost(other) >= 0.6


def test_a_workload_named_is_the_answer_when_workloads_are_asked_for() -> None:
    """The named Deployment is of the kind asked for: no neighbour of it, the answer."""
    deployment = {"kind": "Deployment", "name": "tb-node", "namespace": "thingsboard"}
    service = {"kind": "Service", "name": "tb-node", "namespace": "thingsboard"}
    intent = read("Which workload is tb-node and which claims does it mount?", "tb-node")
    assert intent.boost(deployment) > intent.boost(service)


def test_kinds_joined_by_and_are_asked_for_too() -> None:
    """ "Find the Deployment that scores fraud and the Secrets it reads": both kinds are the answer; in "which
    Deployment mounts the Secret", the Secret says where to look."""
    both = read("Find the Deployment that scores fraud and the Secrets it reads.")
    assert both.names_kind("Secret") == 1.0
    assert both.names_kind("Deployment") == 1.0
    one = read("Which Deployment mounts the Secret?")
    assert one.names_kind("Secret") < one.names_kind("Deployment") == 1.0


def test_what_a_pod_template_holds_is_asked_of_the_workload_not_the_service() -> None:
    """ "Which image does the claims service run": the Service named ``claims`` holds no image; the
    Deployments ``claims-v1`` and ``claims-v2`` (versions of the claims program) do."""
    service = {"kind": "Service", "name": "claims", "namespace": "fraud"}
    versions = [{"kind": "Deployment", "name": f"claims-v{n}", "namespace": "fraud"} for n in (1, 2)]
    names = ("claims", "claims-v1", "claims-v2")
    asked = read("Which image does the claims service run?", *names)
    assert all(asked.boost(deployment) > asked.boost(service) for deployment in versions)
    # what a Service holds is still the Service's, and so is a container port it forwards to
    for question in (
        "Which port does the claims service listen on?",
        "Which container port does the claims service use?",
    ):
        ported = read(question, *names)
        assert all(ported.boost(service) > ported.boost(deployment) for deployment in versions), question


@pytest.mark.parametrize(
    "question",
    [
        "memory limit of the carts service",
        "cpu request of the carts service",
        "How much memory is the carts service allowed to use?",
        "what are the resource limits of the carts service",
    ],
)
def test_resources_are_asked_of_the_workload_not_the_service(question: str) -> None:
    """A container's requests and limits are in the Pod template: the Deployment ``carts`` holds them, its
    Service of the same name does not (an "in-memory store" says nothing of limits)."""
    service = {"kind": "Service", "name": "carts", "namespace": "shop"}
    deployment = {"kind": "Deployment", "name": "carts", "namespace": "shop"}
    asked = read(question, "carts")
    assert asked.boost(deployment) > asked.boost(service)


@pytest.mark.parametrize(
    "question",
    [
        "On which node port is the cortex gateway reachable?",
        "Is the gateway load balancer internal or external?",
        "gateway LB",
        "is the gateway headless",
        "which port of the gateway maps to 53",
        "is the gateway exposed outside the cluster",
        "what exposes the gateway pods",
    ],
)
def test_what_only_a_service_has_is_asked_of_the_service(question: str) -> None:
    """A node port, a load balancer, a headless or internal address: the Service ``gateway`` has them, the
    Deployment of the same name does not."""
    service = {"kind": "Service", "name": "gateway", "namespace": "cortex"}
    deployment = {"kind": "Deployment", "name": "gateway", "namespace": "cortex"}
    asked = read(question, "gateway")
    assert asked.boost(service) > asked.boost(deployment)


def test_a_service_word_inside_a_name_asks_for_no_service() -> None:
    """ "Which deployments connect to kafka-headless": the name says "headless", the question asks for
    Deployments."""
    assert "Service" not in read("Which hotrod deployments connect to kafka-headless on port 9092?").kinds


def test_what_pods_template_holds_is_asked_of_their_workload() -> None:
    """ "What fsGroup do the percona pods run with": the Pods are copies of their Deployment's template, which
    is the answer; asked why a Pod restarted, or which account Pods run as, the Pod (or the account) is."""
    pod = {
        "kind": "Pod",
        "name": "percona-69964d6c49-2gc7p",
        "namespace": "percona",
        "owner": "ReplicaSet/percona-69964d6c49",
    }
    deployment = {"kind": "Deployment", "name": "percona", "namespace": "percona"}
    replicas = {
        "kind": "ReplicaSet",
        "name": "percona-69964d6c49",
        "namespace": "percona",
        "owner": "Deployment/percona",
    }
    template = read("What fsGroup do the percona pods run with?", "percona")
    assert template.boost(deployment) > template.boost(pod)
    assert template.names_kind("ReplicaSet") == 0.0  # it folds under its Deployment, as ever
    assert template.boost(deployment) > template.boost(replicas)
    assert template.names_kind("Pod") < 1.0
    assert read("Which percona pod has restarted 14 times?", "percona").names_kind("Pod") == 1.0
    assert read("Which service account do the percona pods run as?", "percona").names_kind("Deployment") == 0.0


def test_a_version_at_the_end_of_a_name_is_no_part_the_question_must_say() -> None:
    intent = read("What does the reviews service call?", "reviews", "reviews-v2")
    assert intent.boost({"kind": "Deployment", "name": "reviews-v2", "namespace": "shop"}) >= 0.6
    # a word of the place the question names is no program's name ("fraud" of fraud-detection)
    placed = read("which pod in fraud-detection cannot pull its image", "fraud-v1", "insurance-v2")
    placed = placed.among(frozenset({"fraud-v1", "insurance-v2"}), namespaces=frozenset({"fraud-detection"}))
    assert placed.boost({"kind": "Pod", "name": "fraud-v1-6cb9-x", "namespace": "fraud-detection"}) == placed.boost(
        {"kind": "Pod", "name": "insurance-v2-54c8-y", "namespace": "fraud-detection"}
    )


def test_what_is_let_through_is_asked_of_the_traffic_rules() -> None:
    """ "Which pods may connect to the shop database": the NetworkPolicy that says so, not the Pods."""
    policy = {"kind": "NetworkPolicy", "name": "db-allow-backends", "namespace": "shop"}
    pod = {"kind": "Pod", "name": "frontend-5b8f-x2k9p", "namespace": "shop"}
    for question in (
        "Which pods may connect to the shop database on port 5432?",
        "The storefront cannot reach postgres. Is anything blocking it?",
        "Who is allowed to reach the cards pods?",
    ):
        intent = read(question, "db", "frontend")
        assert intent.boost(policy) > intent.boost(pod), question
    # a rule's kind said outright is asked for as any kind is
    assert read("Which NetworkPolicy restricts traffic to the cards pods?").names_kind("NetworkPolicy") == 1.0
    # and a question that allows nothing asks for no rule
    assert read("Which pods run the shop database?").names_kind("NetworkPolicy") == 0.0


def test_what_an_identity_may_do_is_asked_of_roles_and_bindings() -> None:
    intent = read("What lets the broker init container label its own pod?")
    assert intent.names_kind("Role") == intent.names_kind("ClusterRoleBinding") > 0
    assert intent.names_kind("Pod") == intent.names_kind("NetworkPolicy") == 0.0


def test_the_program_that_does_the_work_is_its_workload_what_routes_to_it_its_service() -> None:
    service = {"kind": "Service", "name": "payments", "namespace": "shop"}
    deployment = {"kind": "Deployment", "name": "payments", "namespace": "shop"}
    for question in ("Which service handles payments?", "What runs the payments service?"):
        intent = read(question, "payments")
        assert intent.boost(deployment) > intent.boost(service), question
    routing = read("Which service exposes payments outside the cluster?", "payments")
    assert routing.boost(service) > routing.boost(deployment)


def test_a_rule_that_may_keep_out_what_fails_to_get_through_is_the_cause() -> None:
    policy = {"kind": "NetworkPolicy", "name": "db-allow-backends", "namespace": "shop"}
    crashing = {"kind": "Pod", "name": "db-backup", "namespace": "shop", "health": "degraded"}
    intent = read("The storefront cannot reach postgres. Is anything blocking it?", "db-backup")
    assert intent.boost(policy) >= intent.boost(crashing)
    # a question about trouble that asks about no rule lifts no rule
    assert read("Why is the storefront crashing?").boost(policy) == 0.0


def test_what_limits_evictions_is_asked_of_the_disruption_budget() -> None:
    for question in ("What limits voluntary disruptions of the MySQL pods in mysql1?",
                     "Why can't I drain the node that runs the Thanos querier?"):  # fmt: skip
        intent = read(question)
        assert intent.names_kind("PodDisruptionBudget") == 0.5, question
        assert intent.names_kind("Pod") == intent.names_kind("NetworkPolicy") == 0.0, question


def test_a_rule_kind_said_beside_what_is_allowed_is_the_answer() -> None:
    """ "Which pods are allowed to connect to Kafka under the network policy": the policy, not the Pods."""
    intent = read("Which pods are allowed to connect to Kafka under the network policy?")
    assert intent.names_kind("NetworkPolicy") == 1.0
    assert intent.names_kind("Pod") == 0.0
    assert read("What permissions does the default ServiceAccount get?").names_kind("Role") == 0.5
    rbac = read("Check which RBAC objects let the petclinic services discover Services and endpoints.")
    assert rbac.names_kind("Role") == rbac.names_kind("RoleBinding") == 0.5
    assert read("which argo cd rbac configmap sets the default role").names_kind("ConfigMap") == 1.0
