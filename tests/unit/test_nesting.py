"""The one JSON depth guard (core/nesting.py): linear, never recursing, the same answers as the copies it replaced."""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from kubevec.core.nesting import json_too_deep

_BRACKETS = re.compile(r"[\[\]{}]")
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _gate_nesting(value: str) -> int:
    """The gate's copy (inference/redaction.py): quotes ignored, a stray closer never below zero."""
    deepest = depth = 0
    for opened in _BRACKETS.finditer(value):
        depth = depth + 1 if opened.group(0) in "[{" else max(0, depth - 1)
        deepest = max(deepest, depth)
    return deepest


def _filters_too_deep(text: str, *, limit: int) -> bool:
    """The filters' copy (backends/filters.py), also used by the MCP transports."""
    depth = 0
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in "{[":
            depth += 1
            if depth > limit:
                return True
        elif token in "}]":
            depth -= 1
    return False


TEXTS = st.text(alphabet="[]{}\"\\ab:,\n'", max_size=60)


@settings(max_examples=400, deadline=None)
@given(TEXTS, st.integers(min_value=0, max_value=6))
def test_the_same_answers_as_each_copy_it_replaced(text: str, limit: int) -> None:
    assert json_too_deep(text, limit=limit, strings=False) == (_gate_nesting(text) > limit)
    assert json_too_deep(text, limit=limit) == _filters_too_deep(text, limit=limit)


def test_brackets_in_a_json_string_are_text_and_count_when_quotes_may_not_be_json() -> None:
    text = '{"a": "[[[[["}'
    assert not json_too_deep(text, limit=1)
    assert json_too_deep(text, limit=1, strings=False)
    assert json_too_deep("x: a]]]]\ny: [[[", limit=2, strings=False)  # a stray closer hides nothing after it


def test_a_document_deeper_than_the_stack_is_refused_without_recursing() -> None:
    hostile = "[" * (sys.getrecursionlimit() * 10)
    assert json_too_deep(hostile, limit=64)
    assert json_too_deep(hostile, limit=64, strings=False)
