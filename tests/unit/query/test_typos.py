"""Misspelt names are read as the names they miss, never an English word, never when two names are as near."""

from __future__ import annotations

import pytest

from kubevec.query.intent import Intent
from kubevec.query.typos import corrections, distance
from tests.doubles.kinds import vocabulary


@pytest.mark.parametrize(
    ("a", "b", "edits"),
    [("catalg", "catalog", 1), ("servcie", "service", 1), ("payemnt", "payment", 1), ("cart", "card", 1),
     ("recomendaton", "recommendation", 2), ("orders", "orders", 0), ("redis", "mysql", 5)],
)  # fmt: skip
def test_edits_count_a_swap_of_neighbours_as_one(a: str, b: str, edits: int) -> None:
    assert distance(a, b, limit=2) == min(edits, 3)


def test_misspelt_names_are_read_as_the_name_they_miss() -> None:
    known = ["catalog", "service", "theme", "store", "recommendation", "payment", "mongo", "carts", "carta"]
    fixed = corrections(["catalg", "servcie", "these", "stored", "recomendaton", "mongodb", "cartx"], known=known)
    # English words stay ("these" is not "theme", "stored" is not "store"), as does a word two names are
    # as near to ("cartx": carts or carta), and a longer name is no misspelling of a shorter one (mongodb)
    assert fixed == {"catalg": "catalog", "servcie": "service", "recomendaton": "recommendation"}


def test_a_question_with_misspelt_names_names_them_among_the_candidates() -> None:
    intent = Intent.of("catalg servcie port", vocabulary=vocabulary())
    service = {"kind": "Service", "name": "catalog", "namespace": "shop"}
    assert intent.boost(service) == 0.0
    among = intent.among(frozenset({"catalog", "cart", "frontend"}), namespaces=frozenset({"shop"}))
    # its name and its kind ("service" in lower case names the kind at half weight: see EVERYDAY_KINDS)
    assert among.boost(service) > among.boost({"kind": "Deployment", "name": "catalog", "namespace": "shop"}) >= 0.8
    assert among.boost({"kind": "Deployment", "name": "cart", "namespace": "shop"}) == 0.0


def test_a_name_misspelt_across_a_space_is_read_whole() -> None:
    intent = Intent.of("rabit mq for orders", vocabulary=vocabulary())
    among = intent.among(frozenset({"orders-rabbitmq", "orders"}), namespaces=frozenset({"shop"}))
    assert "rabbitmq" in among.words
    assert among.boost({"kind": "StatefulSet", "name": "orders-rabbitmq", "namespace": "shop"}) >= 0.8
    # words that are names, kinds or small words are never joined ("in namespace" is no misspelt "namespace")
    scoped = Intent.of("pods in namespace shop", vocabulary=vocabulary()).among(
        frozenset({"checkout"}), namespaces=frozenset({"shop"})
    )
    assert scoped.words == ("pods", "in", "namespace", "shop")


def test_a_corrected_word_keeps_its_case() -> None:
    # "Servcie" spelt as the kind is the Service kind in full, as "Service" would be
    intent = Intent.of("Which Servcie selects the catalg pods?", vocabulary=vocabulary())
    among = intent.among(frozenset({"catalog"}), namespaces=frozenset({"shop"}))
    assert among.question == "Which Service selects the catalog pods?"
    assert among.names_kind("Service") == 1.0


def test_a_known_word_in_the_plural_is_no_misspelling() -> None:
    """ "which namespaces are there" was read "which namespace are there", and no longer asked for Namespaces."""
    assert corrections(["namespaces", "statefulsets", "classes"], known=["namespace", "statefulset", "class"]) == {}
    intent = Intent.of("which namespaces are there", vocabulary=vocabulary()).among(frozenset({"checkout"}))
    assert intent.words == ("which", "namespaces", "are", "there")
    assert "Namespace" in intent.kinds


def test_a_short_word_is_read_as_a_name_only_with_a_letter_dropped() -> None:
    # "ordr" misses one letter of order alone; "cart" is English, "cagr" is a substitution (of cargo)
    fixed = corrections(["ordr", "cart", "cagr"], known=["order", "carts", "cater", "cargo"])
    assert fixed == {"ordr": "order"}
    assert corrections(["ordr"], known=["order", "ordor"]) == {}  # two names as near: neither
