"""What every store refuses before a backend sees it: a vector no index can hold."""

from __future__ import annotations

import pytest

from kubevec.backends import Record
from kubevec.backends.checks import check_record
from kubevec.core.errors import InvalidRecord


def record(vector: list[object]) -> Record:
    return Record(id="a", vector=vector, text="t", metadata={"content_hash": "h"})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "vector",
    [
        [1.0, float("nan")],
        [float("inf"), 0.5],
        [float("inf"), float("-inf")],  # their sum is nan, each alone is infinite
        ["0.5", 0.5],
        [None, 0.5],
    ],
)
def test_a_vector_with_a_non_finite_or_non_numeric_component_is_refused(vector: list[object]) -> None:
    with pytest.raises(InvalidRecord, match="non-finite"):
        check_record(record(vector), dimension=2)


@pytest.mark.parametrize("vector", [[0.6, 0.8], [1, 0], [1e308, 1e308], [-1e308, 1e308]])
def test_finite_numbers_are_taken_even_where_their_sum_would_overflow(vector: list[object]) -> None:
    check_record(record(vector), dimension=2)
