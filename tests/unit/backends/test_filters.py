"""The portable filter AST: JSON round trips, shorthand, and clear errors for bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubevec.backends.filters import (
    MAX_DEPTH,
    And,
    Contains,
    Eq,
    Filter,
    Gt,
    In,
    Lte,
    Ne,
    Nin,
    Or,
    all_of,
    from_json,
    matches,
    to_json,
    validate,
)
from kubevec.core.errors import InvalidFilter

fields = st.from_regex(r"[a-z_][a-z0-9_.\-]{0,15}", fullmatch=True)
strings = st.text(max_size=20)
numbers = st.integers(-1000, 1000) | st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
scalars = strings | numbers | st.booleans()


def leaves() -> st.SearchStrategy[Filter]:
    same_type_values = (
        st.lists(strings, min_size=1, max_size=4)
        | st.lists(numbers, min_size=1, max_size=4)
        | st.lists(st.booleans(), min_size=1, max_size=2)
    ).map(tuple)
    return st.one_of(
        st.builds(Eq, fields, scalars),
        st.builds(Ne, fields, scalars),
        st.builds(Gt, fields, numbers),
        st.builds(Lte, fields, numbers),
        st.builds(In, fields, same_type_values),
        st.builds(Nin, fields, same_type_values),
        st.builds(Contains, st.from_regex(r"[A-Za-z0-9]{1,8}( [a-z]{1,5}){0,2}", fullmatch=True)),
    )


filters = st.recursive(
    leaves(),
    lambda children: st.one_of(
        st.builds(And, st.lists(children, min_size=1, max_size=3).map(tuple)),
        st.builds(Or, st.lists(children, min_size=1, max_size=3).map(tuple)),
    ),
    max_leaves=10,
)


@given(filters)
@settings(max_examples=300)
def test_json_round_trip(node: Filter) -> None:
    wire = json.loads(json.dumps(to_json(node)))
    assert from_json(wire) == node


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
@settings(max_examples=500)
def test_arbitrary_json_parses_or_raises_invalid_filter(data: Any) -> None:
    try:
        node = from_json(data)
    except InvalidFilter:
        return
    assert validate(node) is node  # whatever parses is a valid filter


@given(filters, st.dictionaries(fields, scalars, max_size=5), st.text(max_size=30))
@settings(max_examples=200)
def test_evaluation_never_crashes(node: Filter, metadata: dict[str, Any], text: str) -> None:
    assert matches(node, text=text, metadata=metadata) in (True, False)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"op": "regex", "field": "a", "value": "x"}, "Unknown filter operator 'regex'"),
        ({"op": "eq", "field": "a"}, "missing \\['value'\\]"),
        ({"op": "eq", "field": "a", "value": "x", "extra": 1}, "unexpected \\['extra'\\]"),
        ({"op": "gt", "field": "a", "value": "ten"}, "needs a number"),
        ({"op": "gt", "field": "a", "value": True}, "needs a number"),
        ({"op": "in", "field": "a", "values": []}, "non-empty list"),
        ({"op": "in", "field": "a", "values": "x"}, "needs a list"),
        ({"op": "in", "field": "a", "values": ["x", 1]}, "one type"),
        ({"op": "eq", "field": "1bad", "value": 1}, "Invalid field name"),
        ({"op": "eq", "field": "a", "value": {"x": 1}}, "string, number or boolean"),
        ({"op": "eq", "field": "a", "value": float("nan")}, "finite"),
        ({"op": "and", "filters": []}, "non-empty list of filters"),
        ({"op": "contains", "text": "---"}, "at least one word"),
        ({"kind": {"$regex": "x"}}, "Unknown operator '\\$regex'"),
        ({"$nor": []}, "Unknown filter operator '\\$nor'"),
        ({}, "Empty filter"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_invalid_input_names_the_problem(data: Any, message: str) -> None:
    with pytest.raises(InvalidFilter, match=message):
        from_json(data)


def test_too_deep_nesting_is_rejected() -> None:
    node: dict[str, Any] = {"op": "eq", "field": "a", "value": 1}
    for _ in range(MAX_DEPTH):
        node = {"op": "and", "filters": [node]}
    with pytest.raises(InvalidFilter, match="deeper than"):
        from_json(node)


def test_shorthand_builds_the_same_ast() -> None:
    node = from_json(
        {"kind": "Deployment", "namespace": {"$in": ["a", "b"]}, "replicas": {"$gt": 1}, "$contains": "tls"}
    )
    assert node == And((Eq("kind", "Deployment"), In("namespace", ("a", "b")), Gt("replicas", 1), Contains("tls")))
    assert from_json({"$or": [{"kind": "A"}, {"kind": "B"}]}) == Or((Eq("kind", "A"), Eq("kind", "B")))


def test_one_conjunction_skips_nothing_and_flattens_when_asked() -> None:
    a, b, c = Eq("kind", "A"), Eq("namespace", "b"), Contains("tls")
    assert all_of() is None
    assert all_of(None, None) is None
    assert all_of(None, a) == a
    assert all_of(a, None, b) == And((a, b))
    assert all_of(And((a, b)), c) == And((And((a, b)), c))  # as built: the depth is the caller's
    assert all_of(And((a, b)), c, flatten=True) == And((a, b, c))
    assert all_of(None, And((a, b)), flatten=True) == And((a, b))


def test_reference_semantics() -> None:
    meta = {"labels": ["app=web", "tier=db"], "n": 3, "flag": True}
    assert matches(Eq("labels", "app=web"), text="", metadata=meta)
    assert not matches(Ne("labels", "app=web"), text="", metadata=meta)
    assert matches(Ne("missing", "x"), text="", metadata=meta)
    assert not matches(Eq("flag", 1), text="", metadata=meta)  # booleans only equal booleans
    assert not matches(Gt("missing", 1), text="", metadata=meta)
    assert matches(Contains("Cert Manager"), text="the cert_manager issuer", metadata=meta)
    assert not matches(Contains("cert"), text="certificates", metadata=meta)  # whole words only
