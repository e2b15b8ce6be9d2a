"""Instance search reads what a question names: names, kinds and trouble rank first; the top k never depends on k."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.inference.capabilities import describe_builtin, describe_crd
from kubevec.inference.instances import build_instance
from kubevec.query.asking import pointed_kinds
from kubevec.query.intent import Intent
from kubevec.query.request import SearchRequest
from kubevec.query.search import SearchService
from kubevec.query.spelling import base_name, image_names
from tests.doubles.embedders import CountingEmbedder
from tests.doubles.kinds import BUILTIN, vocabulary

KINDS = vocabulary()


def read(question: str) -> Intent:
    """The question read against a cluster's kinds (what its capability records name)."""
    return Intent.of(question, vocabulary=KINDS)


ANIMALS = ["sea-turtle", "sea-lion", "sea-otter", "turtle-dove", "red-panda", "snow-leopard", "grey-wolf", "koala"]


def objects() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for animal in ANIMALS:
        meta = {"namespace": "zoo", "labels": {"app": animal}}
        out.append(
            (
                "pods",
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": animal, **meta},
                    "spec": {"containers": [{"name": "c", "image": f"zoo/{animal}:1"}]},
                    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
                },
            )
        )
        out.append(
            (
                "services",
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": animal, **meta},
                    "spec": {"selector": {"app": animal}},
                },
            )
        )
        out.append(
            ("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": animal, **meta}})
        )
    for i in range(30):
        out.append(
            (
                "ipaddresses",
                {
                    "apiVersion": "networking.k8s.io/v1",
                    "kind": "IPAddress",
                    "metadata": {"name": f"10.0.0.{i}"},
                    "spec": {"parentRef": {"resource": "services", "namespace": "zoo", "name": "koala"}},
                },
            )
        )
    out.append(
        (
            "serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": "zoo"}},
        )
    )
    out.append(
        (
            "deployments",
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "keeper", "namespace": "zoo"},
                "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "keeper:1"}]}}},
            },
        )
    )
    out.append(
        (
            "replicasets",
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": "keeper-5cb4d8b4b4",
                    "namespace": "zoo",
                    "ownerReferences": [{"kind": "Deployment", "name": "keeper", "controller": True}],
                },
                "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "keeper:1"}]}}},
            },
        )
    )
    out.append(
        (
            "pods",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": "keeper-5cb4d8b4b4-x2k9p",
                    "namespace": "zoo",
                    "ownerReferences": [{"kind": "ReplicaSet", "name": "keeper-5cb4d8b4b4", "controller": True}],
                },
                "spec": {"containers": [{"name": "c", "image": "keeper:1"}]},
                "status": {
                    "phase": "Running",
                    "containerStatuses": [
                        {
                            "name": "c",
                            "restartCount": 4,
                            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                            "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
                        }
                    ],
                },
            },
        )
    )
    return out  # fmt: skip


async def capability_records(store: MemoryStore, embedder: CountingEmbedder) -> None:
    """The built-in kinds' capability records, as the controller writes them from discovery."""
    await store.ensure_collection("capabilities", dimension=embedder.dimension, embedder=embedder.name)
    docs = [
        describe_builtin(
            kind=kind,
            group="" if group == "core" else group,
            version="v1",
            plural=kind.lower() + "s",
            namespaced=True,
            short_names=short,
            schema=None,
        ).to_document()
        for kind, group, short in BUILTIN
    ]
    await store.upsert(
        "capabilities",
        [Record(id=d.id, vector=embedder.vector(d.text), text=d.text, metadata=d.metadata) for d in docs],
    )


async def service_of(found: list[tuple[str, dict[str, Any]]]) -> SearchService:
    """A search service over a memory store holding ``found`` (plural, object) and the built-in kinds."""
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection("instances", dimension=embedder.dimension, embedder=embedder.name)
    docs = [build_instance(obj, plural=plural).to_document() for plural, obj in found]
    records = [Record(id=d.id, vector=embedder.vector(d.text), text=d.text, metadata=d.metadata) for d in docs]
    await store.upsert("instances", records)
    await capability_records(store, embedder)
    return SearchService(
        store=store, embedder=embedder, collections={"instances": "instances", "capabilities": "capabilities"}
    )


@pytest.fixture
async def service() -> SearchService:
    return await service_of(objects())


async def keys(service: SearchService, question: str, *, k: int = 5, names: bool = True) -> list[str]:
    answer = await service.search(SearchRequest(collection="instances", query=question, k=k, names=names))
    return [f"{r.metadata['kind']}/{r.metadata.get('namespace', '_cluster')}/{r.metadata['name']}" for r in answer]


async def test_a_question_naming_an_object_finds_it_first(service: SearchService) -> None:
    assert (await keys(service, "pod sea-turtle"))[0] == "Pod/zoo/sea-turtle"
    assert (await keys(service, "Service sea-lion"))[0] == "Service/zoo/sea-lion"
    assert (await keys(service, "service account of the red panda"))[0] == "ServiceAccount/zoo/red-panda"
    assert (await keys(service, "the keeper deployment"))[0] == "Deployment/zoo/keeper"
    assert (await keys(service, "pod of keeper"))[
        0
    ] == "Pod/zoo/keeper-5cb4d8b4b4-x2k9p"  # by its generated name's base


async def test_a_question_about_trouble_finds_the_degraded_object(service: SearchService) -> None:
    assert (await keys(service, "which pod is crashing"))[0] == "Pod/zoo/keeper-5cb4d8b4b4-x2k9p"


async def test_noise_kinds_and_default_accounts_do_not_crowd_out_targets(service: SearchService) -> None:
    found = await keys(service, "koala", k=10)
    assert not [key for key in found[:3] if key.startswith(("IPAddress/", "ServiceAccount/zoo/default"))]
    assert "IPAddress/_cluster/10.0.0.3" in await keys(service, "ip address 10.0.0.3", k=3)  # named: found


async def test_the_top_k_does_not_depend_on_k(service: SearchService) -> None:
    for question in ("pod sea-turtle", "turtle", "which pod is crashing", "zoo services"):
        longest = await keys(service, question, k=20)
        for k in (1, 3, 5, 10):
            assert await keys(service, question, k=k) == longest[:k], (question, k)


async def test_without_names_the_meaning_ranking_stands_alone(service: SearchService) -> None:
    plain = await keys(service, "pod sea-turtle", k=10, names=False)
    assert plain != await keys(service, "pod sea-turtle", k=10)  # the switch is real (the test embedder hashes)


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("pod of cartservice", {"Pod"}),
        ("service account used by checkout", {"ServiceAccount"}),
        ("which Service exposes the shop", {"Service"}),
        ("network policies in prod", {"NetworkPolicy"}),
        ("pdb for prometheus", {"PodDisruptionBudget"}),
        ("disruption budget of alertmanager", {"PodDisruptionBudget"}),
        ("hpa of web", {"HorizontalPodAutoscaler"}),
        ("what is running", set()),
    ],
)
def test_the_longest_kind_phrase_wins(question: str, kinds: set[str]) -> None:
    assert read(question).kinds == kinds


def test_a_name_spelled_as_words_is_a_name_not_a_kind() -> None:
    question = "node exporter host network"
    assert read(question).kinds == {"Node"}
    assert read(question).among(frozenset({"node-exporter"})).kinds == frozenset()
    assert read("role binding of x").names_kind("ClusterRoleBinding") == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("name", "base"),
    [("web-5cb4d8b4b4-x2k9p", "web"), ("web-5cb4d8b4b4", "web"), ("prometheus-k8s", "prometheus-k8s"),
     ("kube-state-metrics", "kube-state-metrics"), ("cart-9479b6c-p6722", "cart")],
)  # fmt: skip
def test_base_names(name: str, base: str) -> None:
    assert base_name(name) == base


def test_a_namespace_the_question_names_is_its_scope_not_its_subject() -> None:
    namespace = {"kind": "Namespace", "name": "sock-shop"}
    application = {"kind": "Application", "name": "sock-shop", "namespace": "argocd"}
    service = {"kind": "Service", "name": "payment", "namespace": "sock-shop"}
    inside = {"kind": "Deployment", "name": "orders", "namespace": "sock-shop"}
    candidates = frozenset({"sock-shop", "payment", "orders"})
    scoped = read("what node port does the sock shop use").among(candidates, namespaces=frozenset({"sock-shop"}))
    assert scoped.boost(namespace) <= scoped.boost(inside)
    assert scoped.boost(application) <= scoped.boost(inside)
    assert scoped.boost(service) > scoped.boost(inside)  # a node port is a Service's: the kind asked, not the place
    # naming the kind makes it the subject again
    asked = read("the sock-shop namespace").among(candidates, namespaces=frozenset({"sock-shop"}))
    assert asked.boost(namespace) > asked.boost(inside)
    # and without candidates in that namespace the name is a name
    unscoped = read("what node port does the sock shop use").among(candidates)
    assert unscoped.boost(application) > unscoped.boost(inside)


@pytest.mark.parametrize(
    ("question", "name", "covered"),
    [
        ("which database backs the catalogue", "catalogue-db", True),
        ("databases of the user accounts", "user-db", True),
        ("where are the user sessions kept", "session", True),
        ("policies of the shop", "policy", True),
        ("status of the payments svc", "payment", True),
        ("which class is it", "clas", False),
        ("the redis service", "redis-svc", True),
        ("zk ensemble for thingsboard", "zookeeper", True),  # an abbreviation names what it stands for
        ("petclinic gw lb", "api-gateway", False),  # "api" is not said
        ("petclinic gw lb", "gateway", True),
        ("gceme backend prod", "gceme-backend-production", True),
    ],
)
def test_names_are_read_in_the_forms_names_take(question: str, name: str, covered: bool) -> None:
    intent = read(question)
    parts = name.split("-")
    assert all(p in intent.phrases | intent.abbreviated for p in parts) == covered


@pytest.mark.parametrize(
    ("question", "trouble"),
    [
        ("The 'web-app-service' service in the 'node-selector-test' namespace has no endpoints", True),
        ("why is my pod pending", True),
        ("the checkout page is not working", True),
        ("which pods are unschedulable", True),
        ("requests to payments time out", True),
        ("which image tag does not exist in the registry", True),
        ("image not found", True),
        ("why are some gceme pods never created", True),
        ("what port does the payments service listen on", False),
        ("which deployment runs the storefront", False),
    ],
)
def test_questions_about_trouble(question: str, trouble: bool) -> None:
    assert read(question).trouble == trouble


def test_in_the_namespace_says_where_not_what() -> None:
    namespace = {"kind": "Namespace", "name": "node-selector-test"}
    service = {"kind": "Service", "name": "web-app-service", "namespace": "node-selector-test"}
    question = "The web-app-service service in the 'node-selector-test' namespace has no endpoints. Why?"
    intent = read(question).among(
        frozenset({"node-selector-test", "web-app-service"}), namespaces=frozenset({"node-selector-test"})
    )
    assert intent.scopes == {"node-selector-test"}
    assert intent.boost(namespace) < intent.boost(service)
    assert read("pods in namespace prod").scopes == {"prod"}
    asked = read("what is the monitoring namespace")
    assert asked.scopes == frozenset()
    assert asked.boost({"kind": "Namespace", "name": "monitoring"}) > 0


def test_a_reason_is_met_inside_its_words() -> None:
    unplaced = {"kind": "Pod", "name": "web-1", "health": "degraded", "health_reason": "Unschedulable"}
    crashing = {"kind": "Pod", "name": "web-2", "health": "degraded", "health_reason": "CrashLoopBackOff"}
    intent = read("which pods cannot be scheduled")
    assert intent.boost(unplaced) > intent.boost(crashing)


def test_what_the_named_object_points_at_comes_next() -> None:
    service = {"kind": "Service", "name": "web-app-service", "namespace": "shop", "selector": ["app=web-app"]}
    binding = {"kind": "RoleBinding", "name": "web-app-reader", "namespace": "shop", "refs": ["Role/shop/viewer"]}
    selected = {"kind": "Pod", "name": "web-app-1", "namespace": "shop", "labels": ["app=web-app", "x=y"]}
    elsewhere = {"kind": "Pod", "name": "web-app-2", "namespace": "other", "labels": ["app=web-app"]}
    other = {"kind": "Pod", "name": "api-1", "namespace": "shop", "labels": ["app=api"]}
    role = {"kind": "Role", "name": "viewer", "namespace": "shop"}
    question = "the web-app-service has no endpoints"
    intent = read(question).among(frozenset({"web-app-service"})).around([service, selected, elsewhere, other])
    assert intent.boost(selected) > intent.boost(elsewhere)
    assert intent.boost(selected) > intent.boost(other)
    plain = read(question).among(frozenset({"web-app-service"}))
    assert intent.boost(selected) - plain.boost(selected) == pytest.approx(0.3)
    asked = read("what does web-app-reader grant").among(frozenset()).around([binding, role])
    assert asked.boost(role) > read("what does web-app-reader grant").boost(role)


def test_everyday_words_that_are_short_names_stay_words() -> None:
    """``no`` (Node), ``limits`` (LimitRange), ``deploy`` and ``ip`` are discovery short names too."""
    assert read("pods with no limits").kinds == {"Pod"}
    assert read("how do I deploy the shop").kinds == set()
    assert read("what is the pod ip of web").kinds == {"Pod"}


def test_a_custom_kind_is_named_by_its_words_short_names_and_run_together_name() -> None:
    assert read("service monitors of the shop").kinds == {"ServiceMonitor"}
    assert read("which servicemonitor scrapes web").kinds == {"ServiceMonitor"}
    assert read("certs expiring soon").kinds == {"Certificate"}
    # one word may be a product as well: read at half weight, not named outright
    assert read("prometheus of the cluster").kinds == set()
    assert read("prometheus of the cluster").names_kind("Prometheus") == pytest.approx(0.5)
    assert read("gateway of the shop").kinds == {"Gateway"}  # a kind of the project's own groups


def test_without_the_clusters_kinds_only_a_kinds_own_words_name_it() -> None:
    assert Intent.of("hpa of web").kinds == set()
    assert Intent.of("the web horizontal pod autoscaler").names_kind("HorizontalPodAutoscaler") == 1.0


async def test_the_kinds_come_from_the_capability_records_and_follow_them(service: SearchService) -> None:
    sources = service.sources
    before = await sources.kinds()
    assert ("hpa",) in before.phrases
    assert ("smon",) not in before.phrases
    embedder = CountingEmbedder()
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "servicemonitors.monitoring.coreos.com"},
        "spec": {
            "group": "monitoring.coreos.com",
            "names": {"kind": "ServiceMonitor", "plural": "servicemonitors", "shortNames": ["smon"]},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {}}}],
        },
    }
    doc = describe_crd(crd).to_document()
    await sources.store.upsert(
        "capabilities", [Record(id=doc.id, vector=embedder.vector(doc.text), text=doc.text, metadata=doc.metadata)]
    )
    after = await sources.kinds()
    assert after.phrases[("smon",)] == "ServiceMonitor"
    assert after.phrases[("service", "monitor")] == "ServiceMonitor"
    assert await sources.kinds() is after  # read once per write


async def test_objects_a_question_names_are_found_by_the_keyword_index_not_a_store_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A name filter costs Chroma ~100 ms at 100,000 documents whatever it keeps (it scans the metadata);
    with no filter to apply first, the named objects come from the keyword index's name terms."""
    service = await service_of(objects())
    store = service.sources.store
    scans: list[object] = []
    original = store.iter_records

    def recorded(name: str, **kwargs: Any) -> Any:
        scans.append(kwargs.get("filter"))
        return original(name, **kwargs)

    monkeypatch.setattr(store, "iter_records", recorded)
    assert (await keys(service, "the keeper deployment"))[0] == "Deployment/zoo/keeper"
    assert (await keys(service, "Service sea-lion"))[0] == "Service/zoo/sea-lion"
    assert not [f for f in scans if "name" in repr(f)]
    # Under a filter (a caller's view, a namespace asked), the store applies it with the name, as before.
    answer = await service.search(
        SearchRequest(collection="instances", query="the keeper deployment", k=3, namespace="zoo")
    )
    assert answer[0].metadata["name"] == "keeper"
    assert [f for f in scans if "name" in repr(f)]


@pytest.mark.parametrize(
    ("question", "callers"),
    [
        ("which booksapp components call the books API", True),
        ("who talks to redis", True),
        ("what uses the app-config configmap", True),
        ("show deployments using redis", True),
        ("which database does the orders service use", False),
        ("which service does the frontend call", False),
        ("what does the frontend call", False),
        ("pods that use a lot of memory", False),
    ],
)
def test_a_question_may_ask_for_what_points_at_what_it_names(question: str, callers: bool) -> None:
    assert read(question).callers == callers


def test_what_calls_the_named_object_outranks_it_when_the_question_asks_for_callers() -> None:
    books = {"kind": "Deployment", "name": "books", "namespace": "booksapp", "refs": ["ServiceAccount/booksapp/books"]}
    webapp = {"kind": "Deployment", "name": "webapp", "namespace": "booksapp", "refs": ["Service/booksapp/books"]}
    names = frozenset({"books", "webapp"})
    pod = {
        "kind": "Pod",
        "name": "books-6d5b86fdb9-qczqt",
        "namespace": "booksapp",
        "owner": "ReplicaSet/books-6d5b86fdb9",
    }
    pod["refs"] = ["ServiceAccount/booksapp/books"]
    asked = read("which components call the books API").among(names)
    assert asked.boost(webapp) > asked.boost(books)  # books's own account, named like it, is no call
    assert asked.boost(webapp) > asked.boost(pod)  # nor its Pod's
    # asked the other way, the named object is the subject and what it calls a neighbour
    other = read("what does the books service call").among(names)
    assert other.boost(books) > other.boost(webapp)


def test_an_abbreviation_names_a_part_of_a_name_never_a_whole_one() -> None:
    # "database" spells ``db`` inside ``catalogue-db``, but another application's ``db`` is not "the profile database"
    intent = read("hostname of the profile database pod")
    other = {"kind": "Deployment", "name": "db", "namespace": "voting", "images": ["postgres:15-alpine"]}
    assert intent.boost(other) == 0.0
    catalogue = read("which database backs the catalogue")
    assert catalogue.boost({"kind": "Deployment", "name": "catalogue-db", "namespace": "shop"}) > 0.5


@pytest.mark.parametrize(
    ("question", "name", "image"),
    [
        ("mount path of the geo database data", "mongodb-geo", "mongo:4.4.6"),
        ("which cache sits in front of hotel rates", "memcached-rate", "memcached:1.6.7"),
        ("what stores the shopping cart data", "cart-redis", "bitnami/redis:6.2"),
        ("the orders db", "orders-postgres", "postgres:16"),
    ],
)
def test_a_name_part_that_is_the_software_it_runs_is_named_by_what_that_software_is(
    question: str, name: str, image: str
) -> None:
    intent = read(question)
    runs = {"kind": "Deployment", "name": name, "namespace": "shop", "images": [image]}
    unknown = {"kind": "Deployment", "name": name, "namespace": "shop", "images": ["example.com/shop/thing:1"]}
    assert intent.boost(runs) >= 0.8  # the whole name: one word asked, the other what its software is
    assert intent.boost(unknown) < intent.boost(runs)


def test_what_software_is_only_completes_a_name_the_question_began() -> None:
    # "which database" alone names every database a little at most, never one fully
    intent = read("which database is used")
    assert intent.boost({"kind": "Deployment", "name": "mongodb-geo", "images": ["mongo:4.4.6"]}) == 0.0
    # nor does a word that names the kind ("service") say what the software is
    service = read("port of the geo service")
    assert service.boost({"kind": "Deployment", "name": "consul-geo", "images": ["hashicorp/consul:1.15"]}) < 0.8


def test_a_hyphenated_word_also_names_the_name_it_runs_together() -> None:
    assert read("rs of the front-end").boost({"kind": "Deployment", "name": "frontend", "namespace": "shop"}) >= 0.8


def test_a_place_the_question_names_scopes_the_names_it_says() -> None:
    # "books" is a word of the question, and the booksapp's books Deployment's name; the question is in the hotel
    intent = read("which service books a room in the hotel app").among(
        frozenset({"books", "reservation", "frontend"}), namespaces=frozenset({"hotel", "booksapp"})
    )
    elsewhere = {"kind": "Deployment", "name": "books", "namespace": "booksapp"}
    inside = {"kind": "Deployment", "name": "books", "namespace": "hotel"}
    assert intent.boost(elsewhere) == 0.0
    assert intent.boost(inside) >= 0.8
    # a place that is also an object's name (the default ServiceAccounts) scopes nothing
    default = read("the default account of books").among(
        frozenset({"books", "default"}), namespaces=frozenset({"default", "booksapp"})
    )
    assert default.boost(elsewhere) >= 0.8


def test_a_name_part_that_is_the_objects_place_is_implied() -> None:
    # "the frontend" of the sourcegraph namespace is sourcegraph-frontend; elsewhere the part is missing
    intent = read("which database does the frontend use")
    inside = {"kind": "Deployment", "name": "sourcegraph-frontend", "namespace": "sourcegraph"}
    elsewhere = {"kind": "Deployment", "name": "sourcegraph-frontend", "namespace": "tools"}
    assert intent.boost(inside) >= 0.8
    assert intent.boost(elsewhere) < 0.8
    assert intent.names_exactly(inside)


def test_a_name_or_place_run_together_is_named() -> None:
    intent = read("trainticket tracing ui").among(
        frozenset({"ui", "jaeger"}), namespaces=frozenset({"train-ticket", "retail-store"})
    )
    assert intent.places_named == {"train-ticket"}
    assert intent.boost({"kind": "Deployment", "name": "ui", "namespace": "retail-store"}) == 0.0
    assert read("the nodeexporter").boost({"kind": "DaemonSet", "name": "node-exporter", "namespace": "m"}) >= 0.8


def test_a_claim_is_a_volume_claim() -> None:
    assert read("which claim is stuck pending").kinds == {"PersistentVolumeClaim"}


def test_a_container_is_in_every_workload_not_a_pod_kind() -> None:
    # "which container image serves the voting page": a Deployment's template holds the container as a Pod does
    assert read("which container image serves the voting page").kinds == frozenset()
    assert read("container name of the reservation cache").kinds == frozenset()


def _app_objects(filler: int) -> list[tuple[str, dict[str, Any]]]:
    """A frontend that calls codeintel-db through PGHOST, its family, and ``filler`` look-alike Services."""
    labels = {"app": "frontend"}
    template = {
        "metadata": {"labels": labels},
        "spec": {
            "serviceAccountName": "sourcegraph-frontend",
            "containers": [{"name": "f", "image": "sg/frontend:1", "env": [{"name": "CODEINTEL_PGHOST", "value": "codeintel-db"}]}],
        },
    }  # fmt: skip
    ns = {"namespace": "sourcegraph"}
    out: list[tuple[str, dict[str, Any]]] = [
        ("deployments", {"apiVersion": "apps/v1", "kind": "Deployment",
                         "metadata": {"name": "sourcegraph-frontend", **ns}, "spec": {"template": template}}),
        ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "sourcegraph-frontend", **ns},
                      "spec": {"selector": labels, "ports": [{"port": 80}]}}),
        ("serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sourcegraph-frontend", **ns}}),
        ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "codeintel-db", **ns},
                      "spec": {"selector": {"app": "codeintel-db"}, "ports": [{"port": 5432}]}}),
    ]  # fmt: skip
    out += [
        ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"frontend-data-{i}", **ns},
                      "spec": {"selector": {"app": f"d{i}"}, "ports": [{"port": 5432}]}})
        for i in range(filler)
    ]  # fmt: skip
    return out


async def test_a_question_for_what_the_named_object_uses_ranks_that_first_even_unfound() -> None:
    # with 300 look-alike Services the dense ranking's 100 candidates may miss codeintel-db: it is fetched
    service = await service_of(_app_objects(300))
    found = await keys(service, "which database does the frontend use", k=3)
    assert found[0] == "Service/sourcegraph/codeintel-db"
    # the frontend's own family (its Service, its account) points at each other: none of them is the answer
    assert "Service/sourcegraph/sourcegraph-frontend" not in found[:1]
    # asked the other way round, the frontend itself comes first
    assert (await keys(service, "the frontend deployment", k=1)) == ["Deployment/sourcegraph/sourcegraph-frontend"]


def test_the_place_the_question_names_is_where_not_what() -> None:
    # a claim of storage class "sourcegraph" and a label deploy=sourcegraph say nothing of "metrics in sourcegraph"
    intent = read("which component collects metrics in the sourcegraph namespace").among(
        frozenset({"pgsql", "prometheus"}), namespaces=frozenset({"sourcegraph"})
    )
    claim = {"kind": "PersistentVolumeClaim", "name": "pgsql", "namespace": "sourcegraph",
             "labels": ["deploy=sourcegraph"], "refs": ["StorageClass/_cluster/sourcegraph"]}  # fmt: skip
    plain = {"kind": "PersistentVolumeClaim", "name": "pgsql", "namespace": "sourcegraph"}
    assert intent.boost(claim) == intent.boost(plain)


@pytest.mark.parametrize(
    ("question", "weight"),
    [("which service exposes payments", 0.5), ("Service sea-lion", 0.5), ("Which Service selects the db pods?", 1.0),
     ("which service handles payments", 0.0),  # the program that handles them: its workload, not its Service
     ("list Services in prod", 1.0), ("the payments svc", 1.0)],
)  # fmt: skip
def test_service_in_lower_case_is_the_program_as_much_as_the_kind(question: str, weight: float) -> None:
    assert read(question).names_kind("Service") == weight


def test_the_longest_name_the_question_says_wins() -> None:
    names = frozenset({"jaeger", "jaeger-collector", "node", "node-exporter", "node-exporter-rules"})
    collector = read("what kind of object is jaeger-collector").among(names)
    assert collector.boost({"kind": "Service", "name": "jaeger-collector", "namespace": "t"}) >= 0.8
    assert collector.boost({"kind": "Deployment", "name": "jaeger", "namespace": "t"}) < 0.8
    pod = {"kind": "Pod", "name": "jaeger-685c765567-khqmc", "namespace": "t", "owner": "ReplicaSet/jaeger-685c765567"}
    assert collector.boost(pod) < 0.6  # nor is jaeger the base of its Pods' names
    exporter = read("alerting rules for node exporter on node worker-1").among(names)
    assert exporter.boost({"kind": "Node", "name": "node"}) >= 0.8  # "node" is said alone too
    assert exporter.boost({"kind": "PrometheusRule", "name": "node-exporter-rules", "namespace": "m"}) >= 0.8


def test_an_image_name_of_several_words_names_its_workloads_as_their_names_do() -> None:
    stan = {"kind": "StatefulSet", "name": "stan", "namespace": "m", "images": ["nats-streaming:0.23.0"]}
    nats = {"kind": "StatefulSet", "name": "nats", "namespace": "m", "images": ["nats:2.6.5-alpine"]}
    pod = {"kind": "Pod", "name": "stan-0", "namespace": "m", "owner": "StatefulSet/stan", "images": ["nats-streaming"]}
    names = frozenset({"stan", "nats", "stan-0"}) | image_names([stan, nats, pod])
    asked = read("How much disk does each NATS Streaming replica claim?").among(names)
    assert asked.boost(stan) >= 0.8
    assert asked.boost(nats) < 0.8  # "nats" is said only inside the image's name
    assert 0 < asked.boost(pod) < asked.boost(stan)  # its Pods are its family, as by name
    # one word names every workload of the software: that narrows, it does not name ("which redis")
    redis = {"kind": "Deployment", "name": "cache", "namespace": "m", "images": ["redis:7"]}
    assert read("which redis").among(frozenset({"cache"}) | image_names([redis])).boost(redis) < 0.8


@pytest.mark.parametrize(
    ("question", "asked", "context"),
    [("Which Service routes traffic to the orders pods?", "Service", "Pod"),
     ("which pods does the db Service select", "Pod", "Service"),
     ("what storage class do the volume claims use", "StorageClass", "PersistentVolumeClaim"),
     ("pods of the frontend deployment", "Pod", "Deployment"),
     ("Which governing Service does the dbc1 StatefulSet use?", "Service", "StatefulSet")],
)  # fmt: skip
def test_the_kind_asked_for_first_counts_the_others_say_where(question: str, asked: str, context: str) -> None:
    intent = read(question)
    assert intent.names_kind(asked) == 1.0
    assert intent.names_kind(context) == 0.5


@pytest.mark.parametrize(
    ("question", "context", "asked"),
    [("What scales the MySQL pods in mysql1?", "Pod", None),
     ("what exposes the frontend deployment", "Deployment", None),
     ("what limits does the frontend deployment have", None, "Deployment"),
     ("what pods are crashing", None, "Pod"),
     ("which Services call the books deployment", "Deployment", "Service")],
)  # fmt: skip
def test_a_question_asking_for_what_acts_on_an_object_says_its_kind_as_context(
    question: str, context: str | None, asked: str | None
) -> None:
    intent = read(question)
    if context:
        assert intent.names_kind(context) == 0.5
    if asked:
        assert intent.names_kind(asked) == 1.0


def test_what_the_named_object_selects_gains_nothing_when_its_kind_is_only_context() -> None:
    router = {"kind": "Service", "name": "mysql-router", "namespace": "db", "selector": ["app=mysql-router"]}
    pod = {"kind": "Pod", "name": "mysql-router-6cf9749cc5-b2vkz", "namespace": "db", "labels": ["app=mysql-router"],
           "owner": "ReplicaSet/mysql-router-6cf9749cc5"}  # fmt: skip
    names = frozenset({"mysql-router", "mysql-router-6cf9749cc5-b2vkz"})
    exposes = read("Which Service exposes the mysql-router pods?").among(names)
    selects = read("which pods does the mysql-router Service select").among(names)
    assert exposes.around([router, pod]).boost(pod) == exposes.around([pod]).boost(pod)  # no gain for being selected
    assert selects.around([router, pod]).boost(pod) > selects.around([pod]).boost(pod)


def test_a_named_place_scopes_the_kinds_the_question_names_too() -> None:
    intent = read("which deployment runs with nodeSelector linux in monitoring").among(
        frozenset({"grafana", "front-end"}), namespaces=frozenset({"monitoring", "sock-shop"})
    )
    inside = {"kind": "Deployment", "name": "grafana", "namespace": "monitoring"}
    elsewhere = {"kind": "Deployment", "name": "front-end", "namespace": "sock-shop"}
    assert intent.boost(inside) >= intent.boost(elsewhere) + 0.8


def test_a_compound_names_the_name_of_its_initials() -> None:
    assert read("what image does the point-of-sales app run").boost({"kind": "Deployment", "name": "pos"}) >= 0.8
    assert read("the front-end").boost({"kind": "Deployment", "name": "fe"}) == 0.0  # two letters say nothing


@pytest.mark.parametrize(
    "question",
    ["What runs on every node to forward telemetry to the OpenTelemetry collector?",
     "Which Services point at the jaeger all-in-one pods?", "what pushes metrics to the gateway"],
)  # fmt: skip
def test_sending_forwarding_and_pointing_ask_for_what_points_at_the_named(question: str) -> None:
    assert read(question).callers


def test_what_runs_on_every_node_is_a_daemon_set() -> None:
    assert "DaemonSet" in read("what runs on every node to collect logs").kinds
    assert "DaemonSet" in read("the agent on each node").kinds


def test_a_reference_to_its_own_namesake_gains_nothing() -> None:
    # the autoscaler named like its Deployment is no better answer to a question about the Deployment's containers
    names = frozenset({"t5-inference"})
    hpa = {"kind": "HorizontalPodAutoscaler", "name": "t5-inference", "namespace": "t5",
           "refs": ["Deployment/t5/t5-inference"], "ref_relations": ["scaleTargetRef"]}  # fmt: skip
    workload = {"kind": "Deployment", "name": "t5-inference", "namespace": "t5"}
    intent = read("Which labels does the t5-inference deployment carry?").among(names)
    assert intent.boost(hpa) == pytest.approx(intent.boost(workload) - 0.8)  # the kind named, not a reference
    # a container is a Pod template's: the autoscaler holds none
    intent = read("How much memory does the t5-inference container request?").among(names)
    assert intent.boost(hpa) < intent.boost(workload)
    # a binding of the account the question names still references it
    binding = {"kind": "RoleBinding", "name": "reader", "namespace": "t5", "refs": ["ServiceAccount/t5/t5-inference"]}
    assert intent.boost(binding) > 0


def test_what_a_subject_question_acts_on_is_not_its_answer() -> None:
    kafka = {"kind": "StatefulSet", "name": "kafka", "namespace": "k", "images": ["solsson/kafka:2.4"]}
    names = frozenset({"kafka", "pixy", "stan"})
    acting = read("What gives producers an HTTP interface to Kafka?").among(names)
    assert acting.boost(kafka) < 0.8  # Kafka is what the answer acts on
    being = read("What runs the Kafka brokers in the kafka namespace?").among(names)
    assert being.boost(kafka) >= 0.8  # what runs the brokers is the brokers' workload


def test_what_acts_on_the_object_named_is_the_answer_though_named_like_it() -> None:
    names = frozenset({"t5-inference"})
    deployment = {"kind": "Deployment", "name": "t5-inference", "namespace": "t"}
    autoscaler = {"kind": "HorizontalPodAutoscaler", "name": "t5-inference", "namespace": "t",
                  "refs": ["Deployment/t/t5-inference"], "ref_relations": ["scales"]}  # fmt: skip
    asked = read("What scales the T5 inference server up and down?").among(names)
    assert asked.boost(autoscaler) > asked.boost(deployment)


@pytest.mark.parametrize(
    ("question", "name"),
    [("Which headless service governs the stan pods?", "stan"),
     ("Which NATS address does the streaming server connect to?", "nats"),
     ("Which Postgres user and database does the Sourcegraph frontend connect with?", "sourcegraph-frontend")],
)  # fmt: skip
def test_a_noun_ending_in_s_is_no_verb_of_a_subject_question(question: str, name: str) -> None:
    named = {"kind": "StatefulSet", "name": name, "namespace": "s"}
    asked = read(question).among(frozenset({"sourcegraph-frontend", "stan", "nats"}))
    assert asked.boost(named) >= 0.8  # what the question names is not what an answer acts on


def test_configuration_names_the_config_map_unless_a_word_is_an_objects_name() -> None:
    assert read("Find the configuration that sets the Redis address").names_kind("ConfigMap") == 1.0
    assert read("otel colector config").names_kind("ConfigMap") == 1.0
    configs = read("Which database does the configs service connect to?").among(frozenset({"configs", "configs-db"}))
    assert configs.names_kind("ConfigMap") == 0.0  # Cortex's ``configs`` component, not ConfigMaps


def test_a_noun_and_a_verb_that_acts_ask_for_what_acts_not_for_what_it_names() -> None:
    kafka = {"kind": "StatefulSet", "name": "kafka", "namespace": "k"}
    asked = read("Which workload exports Kafka consumer group lag as Prometheus metrics?").among(frozenset({"kafka"}))
    assert asked.boost(kafka) < 0.8
    # the kind the noun names is asked for: one named like what it acts on is the answer
    service = {"kind": "Service", "name": "frontend", "namespace": "b"}
    deployment = {"kind": "Deployment", "name": "frontend", "namespace": "b"}
    exposes = read("Which Service exposes the frontend deployment to the internet?").among(frozenset({"frontend"}))
    assert exposes.boost(service) > exposes.boost(deployment)
    # a name that says the verb names what does it
    run = {"kind": "PipelineRun", "name": "build-frontend-7xk2p", "namespace": "b"}
    builds = read("which pipeline builds the frontend image").among(frozenset({"frontend", "build-frontend-7xk2p"}))
    assert builds.boost(run) > builds.boost(deployment)


def test_the_application_a_subject_question_acts_on_is_no_scope() -> None:
    """ "which component tells the fights service where a fight is": the answer acts on that application, it
    need not be in it; asked what runs in it, the application is where to look."""
    locations = {"kind": "Deployment", "name": "grpc-locations", "namespace": "heroes", "labels": [
        "app.kubernetes.io/part-of=locations-service"]}  # fmt: skip
    candidates = frozenset({"grpc-locations", "fights-db"})
    places = frozenset({"heroes", "locations-service", "fights-service"})
    acting = read("Which component tells the fights service where a fight takes place, over gRPC?").among(
        candidates, namespaces=places
    )
    assert not acting.elsewhere(locations)
    assert acting.boost(locations) > 0  # "gRPC" names a part of it, where before the place took every gain
    scoped = read("Which component of the fights service talks gRPC?").among(candidates, namespaces=places)
    assert scoped.elsewhere(locations)


def test_a_namespace_not_asked_for_is_noise_though_its_name_is_said() -> None:
    """ "what is the front proxy of the shop in ewolff-shop": the Namespace, a short document of little but its
    name, would top both rankings; it is where to look unless the question asks for Namespaces."""
    namespace = {"kind": "Namespace", "name": "ewolff-shop"}
    proxy = {"kind": "Deployment", "name": "apache", "namespace": "ewolff-shop"}
    places = frozenset({"ewolff-shop"})
    said = read("What is the front reverse proxy of the shop in ewolff-shop?").among(
        frozenset({"apache"}), namespaces=places
    )
    assert said.boost(namespace) < 0 < said.boost(proxy)
    asked = read("what is the ewolff-shop namespace").among(frozenset({"apache"}), namespaces=places)
    assert asked.boost(namespace) > asked.boost(proxy)


def test_a_policy_that_selects_what_the_question_names_refers_to_it() -> None:
    """ "what could block order from calling catalog": the NetworkPolicy applying to ``run=catalog`` is about
    catalog, as a reference by name would be; one selecting other Pods is not."""
    policy = {"kind": "NetworkPolicy", "name": "allow-apache-only", "namespace": "shop", "selector": ["run=catalog"]}
    other = {**policy, "name": "allow-web-only", "selector": ["run=web"]}
    intent = read("What could block order from calling catalog?").among(frozenset({"catalog", "order", "web"}))
    assert intent.boost(policy) > intent.boost(other)
    # a Service selecting it is part of the program, named as it is, not a reference to it
    service = {"kind": "Service", "name": "front", "namespace": "shop", "selector": ["run=catalog"]}
    assert intent.boost(service) == intent.boost({**service, "selector": ["run=web"]})


def test_objects_of_another_kind_than_the_one_asked_for_say_where_to_look() -> None:
    """ "which secrets hold the credentials of the heroes-db deployment": the Deployment named is where the
    answer is found, not the answer; a Secret it names partly still comes first."""
    deployment = {"kind": "Deployment", "name": "heroes-db", "namespace": "heroes"}
    secret = {"kind": "Secret", "name": "heroes-db-config", "namespace": "heroes"}
    intent = read("Which secrets hold the credentials of the heroes-db deployment?").among(
        frozenset({"heroes-db", "heroes-db-config"})
    )
    assert intent.asked_kind == "Secret"
    assert intent.boost(secret) > intent.boost(deployment)


def test_a_namesake_in_another_place_points_at_nothing_the_question_asks_for() -> None:
    """ "Which storage class do the galera data claims use": the Service ``claims`` of another namespace is
    named too, but its Pods are no answer (they were: its neighbours gained as what it uses)."""
    service = {"kind": "Service", "name": "claims", "namespace": "fraud", "selector": ["app=claims"]}
    pod = {"kind": "Pod", "name": "claims-v1-57f5b45bfc-b4h4w", "namespace": "fraud", "labels": ["app=claims"]}
    claim = {"kind": "PersistentVolumeClaim", "name": "datadir-claim-1", "namespace": "galera"}
    intent = (
        read("Which storage class do the galera data claims use?")
        .among(frozenset({"claims", "datadir-claim-1"}), namespaces=frozenset({"galera", "fraud"}))
        .around([service, pod, claim])
    )
    assert intent.boost(pod) < intent.boost(claim)


@pytest.mark.parametrize(
    "question",
    [
        "Find the ratelimit service, the store it depends on, and why it is not serving.",
        "Find the ratelimit workload and the database it is configured to use",
        "find the ratelimit deployment and what it depends on",
        "the ratelimit service and the cache it tries to reach",
        "Find the ratelimit workload and the claim it mounts",
        "the ratelimit deployment, the Secret it reads and the key that is missing",
        "find the ratelimit deployment and the storage it needs",
    ],
)
def test_a_pronoun_clause_asks_for_what_the_named_object_points_at_beside_it(question: str) -> None:
    """An agent's task names an object and, through "it", what that object uses: both are wanted (a
    question "which store does ratelimit use" wants only the store)."""
    deployment = {"kind": "Deployment", "name": "ratelimit", "namespace": "mesh", "refs": ["Service/mesh/redis"]}
    redis = {"kind": "Service", "name": "redis", "namespace": "mesh"}
    unrelated = {"kind": "Service", "name": "httpbin", "namespace": "mesh"}
    asked = read(question)
    assert asked.also_callees
    assert not asked.callees
    assert not asked.callers
    intent = asked.among(frozenset({"ratelimit", "redis", "httpbin"})).around([deployment, redis, unrelated])
    assert intent.boost(redis) > intent.boost(unrelated) + 0.5
    assert intent.boost(deployment) == asked.among(frozenset({"ratelimit", "redis", "httpbin"})).boost(deployment)
    assert not read("which store does the ratelimit service use").also_callees
    assert not read("is it running, and which port does it listen on").also_callees


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("Find the object that holds the Kafka settings and the workloads that load it.", {"ConfigMap", "Secret"}),
        ("Which ConfigMap provides zoo.cfg, and which workload mounts it?", {"ConfigMap", "Secret", "PersistentVolumeClaim"}),
        ("find the cache and everything that connects to it", {"Service"}),
        ("the orders database and what depends on it", set()),
    ],
)  # fmt: skip
def test_a_pronoun_object_asks_for_what_points_at_the_answer_beside_it(question: str, kinds: set[str]) -> None:
    """ "... and the workloads that load it": what "it" stands for and what points at it are both wanted, so
    what the question names keeps its name's gain (a question "which workloads load X" wants only them); the
    verb says what "it" can be (a Service is called, a ConfigMap loaded)."""
    asked = read(question)
    assert asked.also_callers
    assert not asked.callers
    assert not asked.callees
    assert pointed_kinds(question) == kinds


def test_what_points_at_the_answer_gains_as_much_as_the_answer() -> None:
    """Once the first answer is known (:attr:`Intent.referred`), what points at it gains as a caller, and it
    gains as what the question asks for beside them."""
    config = {"kind": "ConfigMap", "name": "tb-kafka-config", "namespace": "iot"}
    loader = {"kind": "StatefulSet", "name": "tb-node", "namespace": "iot", "refs": ["ConfigMap/iot/tb-kafka-config"]}
    other = {"kind": "StatefulSet", "name": "tb-web", "namespace": "iot", "refs": ["ConfigMap/iot/tb-web-config"]}
    asked = read("Find the object that holds the Kafka settings and the workloads that load it.")
    names = frozenset({"tb-kafka-config", "tb-node", "tb-web"})
    plain = asked.among(names).around([config, loader, other])
    referred = dataclasses.replace(plain, referred=frozenset({"ConfigMap/iot/tb-kafka-config"}))
    assert referred.boost(loader) >= plain.boost(loader) + 0.5
    assert referred.boost(config) >= plain.boost(config) + 0.5
    assert referred.boost(other) == plain.boost(other)
    assert not read("which workloads load the tb-kafka-config map").also_callers
    assert not read("does it use too much memory").also_callers
    assert not read("which secret does the app use it for").also_callers


@pytest.mark.parametrize(
    ("question", "program"),
    [
        ("What generates the narration text for a fight?", True),
        ("Which component caches chunks for the queriers?", True),
        ("what serves the web UI", True),
        ("What exposes the narration server outside the cluster?", False),  # a Service does that
        ("which image does the narration deployment run", True),  # what a Pod template holds
        ("what command starts the narration container", False),  # a command, not a program
        ("What tells the receivers which endpoints belong to the hashring?", False),  # a ConfigMap may
        ("which pipeline builds the narration image", False),  # a noun that is no program's
        ("which ConfigMap configures the narration service", False),  # a kind asked for
    ],
)
def test_what_only_a_program_does_asks_for_a_workload(question: str, program: bool) -> None:
    """Asked for a program (by what it does, or what its Pod template holds) and no kind, the answer is a
    workload: the narration service's Deployment, not its ConfigMap, though both carry the words."""
    deployment = {"kind": "Deployment", "name": "rest-narration", "namespace": "heroes"}
    config = {"kind": "ConfigMap", "name": "rest-narration-config", "namespace": "heroes"}
    intent = read(question).among(frozenset({"rest-narration", "rest-narration-config"}))
    gained = intent.boost(deployment) - intent.boost(config)
    assert (gained > 0.1) is program
