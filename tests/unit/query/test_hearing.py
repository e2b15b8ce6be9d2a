"""How questions are read: name parts in the forms names are written in, places, relations, values and trouble."""

from __future__ import annotations

from typing import Any

import pytest

from kubevec.backends.filters import Eq
from kubevec.query.asking import place_of, without_place
from kubevec.query.hearing import Heard, forms
from kubevec.query.intent import CALLEE, KIND, Intent
from kubevec.query.kinds_asked import SINGLE_WORD_KIND
from kubevec.query.request import SearchRequest
from tests.doubles.kinds import vocabulary

KINDS = vocabulary()


def read(question: str, *, names: frozenset[str] = frozenset(), namespaces: frozenset[str] = frozenset()) -> Intent:
    return Intent.of(question, vocabulary=KINDS).among(names, namespaces=namespaces)


@pytest.mark.parametrize(
    ("word", "form"),
    [("collector", "collect"), ("limiter", "limit"), ("adder", "add"), ("runner", "run"), ("orders", "order")],
)
def test_an_agent_noun_is_heard_as_its_verb(word: str, form: str) -> None:
    assert form in forms(word)


@pytest.mark.parametrize(
    ("word", "form"),
    [("addition", "add"), ("division", "divide"), ("multiplication", "multiply"), ("subtraction", "subtract"),
     ("transformation", "transform"), ("compression", "compress")],
)  # fmt: skip
def test_an_action_noun_is_heard_as_its_verb(word: str, form: str) -> None:
    assert form in forms(word)
    assert "cre" not in forms("creation")  # a root too short to be a word of its own


def test_a_name_run_together_from_a_verb_is_heard_by_its_action_noun() -> None:
    assert Heard.of(["performs", "addition"]).part("addapp") == 0.5
    assert Heard.of(["the", "division"]).part("divideapp") == 0.5


@pytest.mark.parametrize(
    ("question", "part", "heard"),
    [
        ("where are traces collected", "collector", 1.0),  # the verb of an agent noun
        ("which redis does the rate limiter use", "ratelimit", 1.0),  # two words run together, both said
        ("which workload subtracts numbers", "subtractapp", 0.5),  # one said, the other a plain word
        ("which port does the go adder listen on", "addapp", 0.5),
        ("which workload subtracts numbers", "calculator", 0.0),
        # more than two words run together: all said, or some said and the others plain words
        ("where is the product catalog kept", "productcatalogservice", 0.5),
        ("the product catalog service", "productcatalogservice", 1.0),
        ("which service manages customers", "customermanagementapi", 0.5),
        ("which service sends invoices", "customermanagementapi", 0.0),
        ("which pod serves the page", "zipkin", 0.0),
    ],
)
def test_a_name_part_is_heard_in_the_forms_names_are_written_in(question: str, part: str, heard: float) -> None:
    assert read(question)._heard.part(part) == heard


def test_a_word_inside_a_hyphenated_one_is_heard_alone() -> None:
    assert Heard.of(["rate-limiter"]).part("ratelimit") == 1.0


def test_a_run_together_name_is_named_by_the_word_said_in_it() -> None:
    intent = read(
        "which workload subtracts numbers in the calculator namespace",
        names=frozenset({"subtractapp", "calculator-front-end", "addapp"}),
        namespaces=frozenset({"calculator"}),
    )
    subtract = {"kind": "Deployment", "name": "subtractapp", "namespace": "calculator"}
    add = {"kind": "Deployment", "name": "addapp", "namespace": "calculator"}
    assert intent.boost(subtract) > intent.boost(add)


def test_a_name_part_that_is_only_the_namespace_names_nothing() -> None:
    # "the calculator" is where, not which: calculator-front-end is not named by it
    intent = read(
        "which deployment multiplies numbers in the calculator",
        names=frozenset({"multiplyapp", "calculator-front-end"}),
        namespaces=frozenset({"calculator"}),
    )
    front = {"kind": "Deployment", "name": "calculator-front-end", "namespace": "calculator"}
    multiply = {"kind": "Deployment", "name": "multiplyapp", "namespace": "calculator"}
    assert intent.boost(multiply) > intent.boost(front)
    # a word said beside the namespace still names it, and so does what the question says it is
    assert read("the calculator front end").boost(front) >= 0.8
    yelb = read("the postgres database of yelb", names=frozenset({"yelb-db"}), namespaces=frozenset({"yelb"}))
    assert yelb.boost({"kind": "Deployment", "name": "yelb-db", "namespace": "yelb"}) > 0


def test_a_word_that_names_the_place_is_no_form_of_a_name() -> None:
    # "voting" is the application the question is in, not a form of ``vote``
    intent = read(
        "what port does the voting app database service listen on",
        names=frozenset({"vote", "db"}),
        namespaces=frozenset({"voting"}),
    )
    assert intent._heard.part("vote") == 0.0


def test_an_acronym_spelt_out_in_capitals_names_it() -> None:
    intent = read("which workload serves JSON Web Tokens and their keys")
    assert intent.boost({"kind": "Deployment", "name": "jwt-server", "namespace": "mesh"}) >= 0.8
    assert "jwt" not in read("which workload serves json web tokens").phrases  # a plain run of words is no acronym


def users_and_what_it_calls() -> list[dict[str, object]]:
    calls = ["Service/shop/users-redis", "Service/shop/users-mongo", "ServiceAccount/shop/users"]
    return [
        {"kind": "Deployment", "name": "users", "namespace": "shop", "refs": calls, "ref_relations": ["calls"] * 3},
        {"kind": "ServiceAccount", "name": "users", "namespace": "shop"},
        {"kind": "Service", "name": "users-redis", "namespace": "shop"},
        {"kind": "Deployment", "name": "users-redis", "namespace": "shop"},
        {"kind": "Service", "name": "users-mongo", "namespace": "shop"},
    ]


def test_what_the_named_object_calls_is_the_answer_though_the_question_names_it_too() -> None:
    candidates = users_and_what_it_calls()
    names = frozenset(str(c["name"]) for c in candidates)
    intent = read("which redis does the users service use", names=names).around(candidates)
    assert intent.pointing == {"users"}  # users-redis is named whole, but users calls it: it is the answer
    scores = {f"{c['kind']}/{c['name']}": intent.boost(c) for c in candidates}
    assert max(scores, key=lambda key: scores[key]) == "Service/users-redis"
    assert scores["Service/users-mongo"] > scores["ServiceAccount/users"]  # called, though not named
    # the words that name the caller do not name what it calls: users-mongo gains no part of a name
    other = read("which database does the users service use", names=names).around(candidates)
    assert other._name("users-mongo", kind="Service", owner="", images=[]) > 0
    assert other.boost(candidates[4]) == pytest.approx(KIND * SINGLE_WORD_KIND + CALLEE)


@pytest.mark.parametrize(
    ("question", "callees"),
    [
        ("which redis does the rate limiter use", True),
        ("what address does the cartservice use for redis", False),
        ("which URL does the webapp use to reach the authors service", False),
        ("find the configuration that sets the Redis address used by the rate limiter", False),
        ("the configmap mounted by the users database", True),
        ("What image does the t5-inference deployment use?", False),
        ("Which management endpoint of the model server does fastdash use?", False),
        ("Which health check paths do the rest-heroes probes call?", False),
    ],
)
def test_a_question_asking_for_a_value_asks_for_the_object_that_holds_it(question: str, callees: bool) -> None:
    assert read(question).callees == callees


async def test_a_question_placed_in_a_namespace_ranks_what_is_there_by_the_rest_of_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "What collects traces in the calculator namespace": every object there says "calculator", and one
    whose image repeats it would win on the word; the place is where to look, the rest is what."""
    from tests.unit.query.test_intent import objects, service_of

    service = await service_of(objects())
    store, embedder = service.sources.store, service.sources.active.embedder
    searched: list[tuple[list[float], object]] = []
    original = store.search

    async def recorded(name: str, **kwargs: Any) -> Any:
        searched.append((kwargs["vector"], kwargs.get("filter")))
        return await original(name, **kwargs)

    monkeypatch.setattr(store, "search", recorded)
    answer = await service.search(
        SearchRequest(collection="instances", query="which pods are crashing in the zoo namespace", k=5)
    )
    assert answer
    assert all(r.metadata.get("namespace") == "zoo" for r in answer)
    assert embedder is not None
    topic = await embedder.embed_query("which pods are crashing")
    assert (topic, Eq("namespace", "zoo")) in searched  # the rest of the question, in its place
    searched.clear()
    await service.search(SearchRequest(collection="instances", query="which pods are crashing", k=5))
    assert len(searched) == 1  # a question placed nowhere is searched once


@pytest.mark.parametrize(
    ("question", "place", "rest"),
    [
        (
            "What collects distributed traces in the calculator namespace?",
            "calculator",
            "what collects distributed traces ?",
        ),
        ("Which pods in namespace calculator are not healthy?", "calculator", "which pods are not healthy?"),
        ("which pods of prod talk to staging", None, "which pods of prod talk to staging"),
        ("mariadb in hotrod ns", "hotrod", "mariadb"),
        ("what uses dns in prod", None, "what uses dns in prod"),
    ],
)
def test_the_place_a_question_names_is_read_apart_from_its_topic(question: str, place: str | None, rest: str) -> None:
    assert place_of(question) == place
    assert without_place(question) == rest
    assert place_of("the web in namespace a calls the db in namespace b") is None  # two places: none


@pytest.mark.parametrize(
    "question",
    [
        "What in-memory store does the checkout service keep its state in?",
        "where does the cart service store its data",
        "Where does the frontend send precise code intel uploads?",
    ],
)
def test_keeping_storing_and_sending_somewhere_ask_for_what_the_named_object_uses(question: str) -> None:
    assert read(question).callees


def test_a_name_that_is_also_an_application_label_still_names_its_objects() -> None:
    # retail-store labels each component ``app.kubernetes.io/instance=checkout``: checkout is a place and a name
    intent = read(
        "which store does the checkout service keep its state in",
        names=frozenset({"checkout", "checkout-redis"}),
        namespaces=frozenset({"retail-store", "checkout"}),
    )
    assert intent.names_exactly({"kind": "Service", "name": "checkout", "namespace": "retail-store"})
    # a namespace no object is named like is a place only
    place = read("pods of retail-store", names=frozenset({"ui"}), namespaces=frozenset({"retail-store"}))
    assert not place.names_exactly({"kind": "Namespace", "name": "retail-store"})


def test_a_namespace_run_together_is_the_place_not_the_answer() -> None:
    intent = read("trainticket tracing ui", names=frozenset({"ui", "jaeger"}), namespaces=frozenset({"train-ticket"}))
    namespace = intent.boost({"kind": "Namespace", "name": "train-ticket"})
    assert namespace < 0.8


@pytest.mark.parametrize(
    ("question", "callers", "callees"),
    [
        ("which workloads read the cart-redis-pass secret", True, False),
        ("what loads the app-config configmap", True, False),
        ("Which Secret does the orders deployment load for its RabbitMQ connection?", False, True),
        ("Which Service does fastdash send its prediction requests to?", False, True),
        ("Which workload is the web front end that sends text to the T5 model?", True, False),
        ("what is the deployment that uses the db secret", True, False),
    ],
)
def test_reading_and_loading_are_relations(question: str, callers: bool, callees: bool) -> None:
    intent = read(question)
    assert (intent.callers, intent.callees) == (callers, callees)


def test_a_named_callers_question_does_not_ask_for_the_kind_said_beside_the_name() -> None:
    # "the cart-redis-pass secret" says what the named object is; the workloads that read it are the answer
    secret = {"kind": "Secret", "name": "cart-redis-pass", "namespace": "shop"}
    reader = {"kind": "Deployment", "name": "cart-redis", "namespace": "shop", "refs": ["Secret/shop/cart-redis-pass"]}
    intent = read("which workloads read the cart-redis-pass secret", names=frozenset({"cart-redis-pass", "cart-redis"}))
    assert intent.boost(reader) > intent.boost(secret)
    # the kind asked first is asked: "which Service routes traffic to the orders pods" wants the Service
    service = {"kind": "Service", "name": "orders", "namespace": "shop"}
    routes = read("Which Service routes traffic to the orders pods?", names=frozenset({"orders"}))
    assert routes.boost(service) >= KIND


def test_what_another_named_object_uses_is_an_answer_by_its_name() -> None:
    # orders uses Secret orders-rabbitmq: the StatefulSet orders-rabbitmq, named whole too, is no caller
    orders = {"kind": "Deployment", "name": "orders", "namespace": "shop", "refs": ["Secret/shop/orders-rabbitmq"]}
    broker = {"kind": "StatefulSet", "name": "orders-rabbitmq", "namespace": "shop"}
    intent = read(
        "which secret does the orders deployment load for its rabbitmq connection",
        names=frozenset({"orders", "orders-rabbitmq"}),
    ).around([orders, broker])
    assert intent.pointing == {"orders"}


@pytest.mark.parametrize(
    ("question", "trouble"),
    [
        ("Which pods in namespace calculator are not healthy, and why?", True),
        ("The NFS server in fileshare never starts", True),
        ("The autoscaler of the multiply service never scales", True),
        ("Find which claims in fileshare are not bound", True),
        ("what does the frontend serve", False),
    ],
)
def test_trouble_is_read_in_its_negative_forms(question: str, trouble: bool) -> None:
    assert read(question).trouble == trouble


def test_a_warning_says_why_as_the_status_does() -> None:
    intent = read("find the claim with the provisioning failure")
    assert intent.trouble
    warned = {"kind": "PersistentVolumeClaim", "name": "pgsql", "namespace": "sg", "health": "progressing",
              "warning_reason": "ProvisioningFailed"}  # fmt: skip
    pending = {"kind": "PersistentVolumeClaim", "name": "blobstore", "namespace": "sg", "health": "progressing"}
    assert intent.boost(warned) > intent.boost(pending)
