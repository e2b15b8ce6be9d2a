"""Bounded work on any object: hostile values are cut, skipped and named, never a stalled or failed sync.

Growth is counted in steps (the calls judging a value makes), never timed: a timed check failed on a
loaded machine (0.057 s against 0.05 s). Quadratic growth would be 16x for 4x the input; these allow 8x.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubevec.core.errors import InferenceError, TooComplex
from kubevec.inference.bounds import CUT, MAX_DEPTH, MAX_STRING_CHARS, Budget, cut_string
from kubevec.inference.change_records import Stored, change_record
from kubevec.inference.instances import build_instance
from kubevec.inference.redaction import REDACTED, redact_object, redact_text


def widget(spec: Any, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", "uid": "u-1", **meta},
        "spec": spec,
    }


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": [value]}
    return value


#: Values that made the redactor raise or take time growing with the square of their length.
PATHOLOGICAL = {
    "brackets": lambda n: "[" * n + "]" * n,
    "json objects": lambda n: '{"a":' * n + "1" + "}" * n,
    "dashed words": lambda n: "a-" * n,
    "dotted words": lambda n: "a." * n,
    "pairs in pairs": lambda n: "a=" * n,
    "mysql lines": lambda n: "mysql " * n,
    "scheme-like": lambda n: "ab+c." * n,
}


def steps(value: str) -> int:
    """The Python calls and returns judging ``value`` takes: the work done, counted, not timed (the same on
    any machine under any load; a regex's own backtracking is one step, so its patterns stay bounded by hand)."""
    count = 0

    def count_step(frame: object, event: str, arg: object) -> None:
        nonlocal count
        count += 1

    sys.setprofile(count_step)
    try:
        redact_text(value)
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_a_pathological_string_is_judged_in_linear_steps(name: str) -> None:
    make = PATHOLOGICAL[name]
    small, large = steps(make(2000)), steps(make(8000))  # 4x the input: quadratic would be 16x
    assert large <= max(small * 8, 1000), (name, small, large)


def test_a_10kb_string_of_nested_brackets_is_a_document_not_a_recursion_error() -> None:
    document = build_instance(widget({"payload": "[" * 5000 + "]" * 5000, "size": "small"}), plural="widgets")
    assert "size: small" in document.text


def test_values_nested_past_the_depth_bound_are_cut() -> None:
    cleaned = redact_object(widget(nested(MAX_DEPTH * 3))).obj
    value: Any = cleaned["spec"]
    depth = 0
    while isinstance(value, dict):
        value = value["a"][0]
        depth += 2
    assert value == CUT
    assert depth <= MAX_DEPTH + 2


def test_an_object_past_the_node_bound_is_skipped_with_its_reason() -> None:
    huge = {f"k{i}": list(range(60)) for i in range(5000)}  # 305,000 values
    with pytest.raises(TooComplex) as caught:
        build_instance(widget(huge), plural="widgets")
    assert caught.value.reason == "nodes"
    assert "Widget/w" in str(caught.value)
    assert isinstance(caught.value, InferenceError)


def test_the_time_bound_raises_too_complex() -> None:
    budget = Budget(nodes=1024, deadline=time.monotonic() - 1)
    budget.spend(511)
    with pytest.raises(TooComplex) as caught:
        budget.spend()
    assert caught.value.reason == "time"


def test_a_yaml_alias_bomb_in_a_string_is_dropped_not_expanded() -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for level in "bcdefghij":
        previous = chr(ord(level) - 1)
        lines.append(f"{level}: &{level} [" + ",".join([f"*{previous}"] * 9) + "]")
    lines.append("password: hunter2")
    assert redact_text("\n".join(lines)) == REDACTED
    # expanded, its 9**10 leaves would take billions of steps; read and dropped, under a million
    assert steps("\n".join(lines)) < 5_000_000


def test_a_long_string_is_judged_on_its_first_part_and_no_token_is_split() -> None:
    value = ("word " * (MAX_STRING_CHARS // 5)) + "Zx9Qm2Lp7Rt4Vb8Nk3Hs6Jd1"
    out = cut_string(value)
    assert out.endswith(CUT)
    assert len(out) <= MAX_STRING_CHARS + len(CUT) + 1
    assert "Zx9Q" not in redact_text(value)


def test_a_long_unbroken_string_keeps_none_of_its_cut_part() -> None:
    out = cut_string("A" * (MAX_STRING_CHARS * 2))
    assert out.strip() == CUT


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=200),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=20), children, max_size=6),
    max_leaves=60,
)
HOSTILE_TEXT = st.one_of(
    st.text(max_size=3000),
    st.builds(
        lambda unit, n: unit * n,
        st.sampled_from(["[", "{", "a-", "a.", "a=", "--a ", "x://", '"a":']),
        st.integers(1, 6000),
    ),
    st.builds(lambda a, b: a + b, st.text(alphabet="[]{}:=-./ ab\n", max_size=4000), st.text(max_size=100)),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=JSONISH, hostile=HOSTILE_TEXT, depth=st.integers(0, 400))
def test_builders_hold_their_bounds_on_any_value(spec: Any, hostile: str, depth: int) -> None:
    """Any JSON value, a hostile string and any nesting: a document or an InferenceError (how long it may
    take is the budget's bound, tested above on its own)."""
    body = widget({"data": spec, "note": hostile, "deep": nested(depth)}, annotations={"description": hostile})
    try:
        document = build_instance(body, plural="widgets").to_document()
    except InferenceError:
        pass
    else:
        assert document.id.endswith("/Widget/w")
    old = build_instance(widget({"note": "before"}), plural="widgets").to_document()
    try:
        new = build_instance(body, plural="widgets").to_document()
    except InferenceError:
        pass
    else:
        change_record(
            object_id=new.id,
            before=Stored(text=old.text, metadata=old.metadata),
            after=Stored(text=new.text, metadata=new.metadata),
            at=0.0,
        )
