"""The one LRU mapping (core/bounded.py): newest kept, oldest out first, a membership test is not a use."""

from __future__ import annotations

import pytest

from kubevec.backends.paging import IdOrder
from kubevec.core.bounded import LRU


def test_the_oldest_goes_first_and_a_read_makes_an_entry_the_newest() -> None:
    cache: LRU[str, int] = LRU(2)
    cache["a"], cache["b"] = 1, 2
    assert cache["a"] == 1  # now the newest
    cache["c"] = 3
    assert list(cache) == ["a", "c"]
    assert "b" not in cache
    assert cache.get("b") is None
    cache["a"] = 10  # a write is a use too
    cache["d"] = 4
    assert dict(cache) == {"a": 10, "d": 4}


def test_membership_and_iteration_do_not_touch() -> None:
    cache: LRU[str, int] = LRU(2)
    cache["a"], cache["b"] = 1, 2
    assert "a" in cache
    assert list(cache.keys()) == ["a", "b"]
    cache["c"] = 3
    assert list(cache) == ["b", "c"]
    assert cache.pop("b") == 2
    cache.clear()
    assert len(cache) == 0


def test_a_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        LRU(0)


def test_id_order_keeps_a_few_listings_and_lets_a_finished_scan_go() -> None:
    listed: list[str] = []

    def ids_of(name: str, _filter: object) -> list[str]:
        listed.append(name)
        return ["c", "a", "b"]

    order = IdOrder(ids_of)  # type: ignore[arg-type]
    assert order.page("x", None, None, 2) == (["a", "b"], "b")
    for other in ("p", "q", "r", "s"):  # four newer scans push the first one's listing out
        order.page(other, None, None, 1)
    assert order.page("x", None, "b", 2) == (["c"], None)  # listed again, from the cursor on
    assert listed == ["x", "p", "q", "r", "s", "x"]


def test_items_and_values_read_oldest_first_without_reordering() -> None:
    """``kubevec status`` lists the skipped objects with ``items()``: reading each through ``__getitem__``
    would move it to the end while the mapping is being iterated."""
    lru: LRU[str, int] = LRU(3)
    for key, value in (("a", 1), ("b", 2), ("c", 3)):
        lru[key] = value
    assert list(lru.items()) == [("a", 1), ("b", 2), ("c", 3)]
    assert list(lru.values()) == [1, 2, 3]
    assert list(lru) == ["a", "b", "c"]
