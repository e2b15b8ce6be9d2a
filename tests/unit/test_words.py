"""The one camelCase splitter (core/words.py): the same words as each copy it replaced, on any text.

The copies stored documents depend on (capability text, a reference's kind) and the gate's verdicts
(a name's words) are kept here as they were, and compared on arbitrary identifiers and on any text:
a difference would re-embed documents or change what the gate drops.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubevec.core.words import camel_phrase, camel_words

#: The copies as they were: the gate's (inference/redaction.py), references' (inference/references.py),
#: capabilities' (inference/capabilities.py) and the query intent's (query/intent.py, still its own).
GATE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^\W\dA-Za-z_]+")
REFERENCES = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
CAPABILITIES = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
INTENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")

IDENTIFIERS = st.text(alphabet="aAbBzZ019_-. xX2ñÄп密", max_size=24)
ANY_TEXT = st.text(max_size=24)


@pytest.mark.parametrize(
    ("name", "words", "apart", "phrase"),
    [
        ("secretAccessKey", ["secret", "Access", "Key"], ["secret", "Access", "Key"], "secret access key"),
        ("HTTPRoute", ["HTTP", "Route"], ["HTTP", "Route"], "http route"),
        ("dbPassword2", ["db", "Password2"], ["db", "Password", "2"], "db password2"),
        ("EC2Instance", ["EC", "2", "Instance"], ["EC", "2", "Instance"], "ec2 instance"),
        ("x-forwarded_for", ["x", "forwarded", "for"], ["x", "forwarded", "for"], "x-forwarded for"),
        ("数据库密码", [], ["数据库密码"], "数据库密码"),
    ],
)
def test_words_as_written(name: str, words: list[str], apart: list[str], phrase: str) -> None:
    assert camel_words(name) == words
    assert camel_words(name, digits_apart=True) == apart
    assert camel_phrase(name) == phrase


@settings(max_examples=300, deadline=None)
@given(st.one_of(IDENTIFIERS, ANY_TEXT))
def test_the_same_words_as_each_copy_it_replaced(name: str) -> None:
    assert camel_words(name, digits_apart=True) == GATE.findall(name)
    assert camel_words(name) == REFERENCES.findall(name)
    assert camel_phrase(name) == " ".join(p.lower() for p in CAPABILITIES.split(name.replace("_", " ")) if p)


@settings(max_examples=300, deadline=None)
@given(IDENTIFIERS)
def test_the_query_intents_copy_differs_only_where_a_capital_stands_before_a_digit(name: str) -> None:
    """For the lead replacing query/intent.py's copy: ``X509`` reads X, 509 there and X509 here."""
    if re.search(r"[A-Z]\d", name) is None:
        assert camel_words(name) == INTENT.findall(name)
