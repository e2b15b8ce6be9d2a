"""A caller's view of the index: per collection nothing, everything, or what a portable filter matches.

Made by the access modules (``access``: Kubernetes callers and the single token; ``static_tokens``),
applied by :mod:`kubevec.query.scope` before any reader reads. The filter builders below keep a view
within the filter's limits (256 values, 64 children) however many namespaces it names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kubevec.backends.filters import MAX_CHILDREN, Eq, Filter, In, Or, all_of, matches
from kubevec.inference.documents import CAPABILITIES, INSTANCES
from kubevec.query.limits import Caller

COLLECTIONS: Final = (CAPABILITIES, INSTANCES)


@dataclasses.dataclass(frozen=True, kw_only=True)
class View:
    """What one caller may read: per collection nothing, everything (filter None) or what a filter matches."""

    caller: Caller
    filters: Mapping[str, Filter | None]
    #: The clusters it is limited to (None: every one). Capability records shared by clusters show only
    #: these clusters' parts: the filter alone matches a shared record by any one of its clusters.
    clusters: frozenset[str] | None = None

    def sees(self, collection: str) -> bool:
        return collection in self.filters

    def filter(self, collection: str) -> Filter | None:
        return self.filters.get(collection)

    def restrict(self, collection: str, conditions: Filter | None) -> Filter | None:
        """``conditions`` AND this view, flattened so the caller's own filter keeps its depth budget."""
        return all_of(conditions, self.filter(collection), flatten=True)

    def allows(self, collection: str, *, metadata: Mapping[str, Any], text: str = "") -> bool:
        if not self.sees(collection):
            return False
        scope = self.filter(collection)
        return scope is None or matches(scope, text=text, metadata=metadata)


def everything(caller: Caller) -> View:
    return View(caller=caller, filters=dict.fromkeys(COLLECTIONS))


def nothing(caller: Caller) -> View:
    return View(caller=caller, filters={})


# -- filters within the limits ---------------------------------------------------------------------


def in_values(field: str, values: Sequence[str]) -> Filter:
    return Eq(field, values[0]) if len(values) == 1 else In(field, tuple(values))


def any_filter(clauses: Sequence[Filter]) -> Filter:
    """OR of clauses, nested in groups of 64 (the filter's child limit)."""
    while len(clauses) > MAX_CHILDREN:
        clauses = [any_filter(list(chunk)) for chunk in chunks(list(clauses), MAX_CHILDREN)]
    return clauses[0] if len(clauses) == 1 else Or(tuple(clauses))


def chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
