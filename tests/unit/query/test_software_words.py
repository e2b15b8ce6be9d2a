"""A question that says what software does finds the workload running it, in words that tell software apart."""

from __future__ import annotations

from kubevec.query.software_words import describes, what_software_does
from kubevec.query.spelling import common_stems
from kubevec.query.stems import stems
from tests.unit.query.test_intent import read

REDIS = {"kind": "Deployment", "name": "redis", "namespace": "shop", "images": ["redis:7.2.3"]}
WEB = {"kind": "Deployment", "name": "web", "namespace": "shop", "images": ["shop/web:1"]}
MARIADB = {"kind": "StatefulSet", "name": "db", "namespace": "shop", "images": ["mariadb:11.6"]}
JAEGER = {"kind": "Deployment", "name": "jaeger", "namespace": "shop", "images": ["jaegertracing/all-in-one:1.53"]}


def _does(question: str) -> frozenset[str]:
    words = question.lower().split()
    return what_software_does(words, says=stems(question))


def test_what_software_does_meets_the_catalogue_line_of_its_image_or_name() -> None:
    assert describes(REDIS, does=_does("which in-memory cache do the services share"))
    assert not describes(WEB, does=_does("which in-memory cache do the services share"))
    assert describes(JAEGER, does=_does("the trace thing"))  # no line for the image: its name's


def test_words_much_software_shares_or_that_name_software_tell_nothing_apart() -> None:
    assert "databas" in common_stems()
    assert "databas" not in _does("which database does the shop use")
    assert not describes(MARIADB, does=_does("the mysql of the shop"))  # MariaDB is "forked from MySQL"


def test_a_workload_whose_software_the_question_describes_gains_as_by_its_image() -> None:
    intent = read("Which in-memory cache do the shop services share?")
    assert intent.boost(REDIS) > intent.boost(WEB)
