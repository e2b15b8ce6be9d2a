"""A mapping that keeps its most recently used entries: the one LRU for state a function cache cannot hold.

``functools.lru_cache`` serves wherever a value is a function of its arguments. Some caches are not:
entries are dropped by hand (a scan that ended, a document built again), listed (``kubevec status``
shows the objects skipped), or filled from outside the function that reads them. Those use this
instead of an ``OrderedDict`` with its eviction written out at each place (cachetools' ``LRUCache``
does the same; it is not a dependency, and this is all kubevec needs of it).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import ItemsView, Iterator, MutableMapping, ValuesView
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(MutableMapping[K, V]):
    """At most ``maxsize`` entries; reading or writing one makes it the newest, and the oldest goes first.

    Iteration runs from the oldest entry to the newest and does not touch them.
    """

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.maxsize = maxsize
        self._entries: OrderedDict[K, V] = OrderedDict()

    def __getitem__(self, key: K) -> V:
        value = self._entries[key]
        self._entries.move_to_end(key)
        return value

    def __setitem__(self, key: K, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.maxsize:
            self._entries.popitem(last=False)

    def __delitem__(self, key: K) -> None:
        del self._entries[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries  # a membership test is not a use

    def clear(self) -> None:
        self._entries.clear()

    def items(self) -> ItemsView[K, V]:
        """Oldest first, without touching them (reading through ``__getitem__`` would reorder mid-iteration)."""
        return self._entries.items()

    def values(self) -> ValuesView[V]:
        return self._entries.values()

    def __repr__(self) -> str:
        return f"LRU(maxsize={self.maxsize}, {dict(self._entries)!r})"
