"""Where instance documents live, (namespace, resource) pairs: what Kubernetes callers are reviewed about.

A Kubernetes caller's view of the instances is the resources it may list cluster-wide plus the
pairs it may list in their namespace (:func:`visible_instances`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from kubevec.backends.filters import MAX_VALUES, And, Eq, Filter
from kubevec.core import fields
from kubevec.inference.identity import plural_of
from kubevec.query.views import any_filter, chunks, in_values


@dataclasses.dataclass(frozen=True, order=True)
class Placement:
    """Where documents of one resource live: a namespace (None: cluster-scoped) and the resource."""

    namespace: str | None
    group: str  # "" for the core group, as RBAC spells it
    resource: str  # plural.group, the payload's ``resource``

    @property
    def plural(self) -> str:
        return plural_of(self.resource)


def placement_of(metadata: Mapping[str, Any]) -> Placement | None:
    resource, group = fields.RESOURCE.raw(metadata), fields.GROUP.raw(metadata)
    if not isinstance(resource, str) or not isinstance(group, str):
        return None
    namespace = fields.NAMESPACE.raw(metadata)
    return Placement(
        namespace=namespace if isinstance(namespace, str) and namespace else None,
        group="" if group == "core" else group,
        resource=resource,
    )


def visible_instances(
    *, cluster: str, everywhere: Iterable[str], per_namespace: Mapping[str, Iterable[str]]
) -> Filter | None:
    """The filter for resources listable cluster-wide plus (namespace, resources) pairs; None: nothing.

    Namespaces allowed the same resources share one clause, and long lists are split to the
    filter's limits (256 values, 64 children), so a view over hundreds of namespaces stays valid.
    """
    clauses: list[Filter] = [in_values("resource", chunk) for chunk in chunks(sorted(set(everywhere)), MAX_VALUES)]
    by_resources: dict[tuple[str, ...], list[str]] = {}
    for namespace, resources in per_namespace.items():
        wanted = tuple(sorted(set(resources) - set(everywhere)))
        if wanted:
            by_resources.setdefault(wanted, []).append(namespace)
    for resources, namespaces in sorted(by_resources.items()):
        for resource_chunk in chunks(list(resources), MAX_VALUES):
            for namespace_chunk in chunks(sorted(namespaces), MAX_VALUES):
                clauses.append(And((in_values("namespace", namespace_chunk), in_values("resource", resource_chunk))))
    if not clauses:
        return None
    return And((Eq("cluster", cluster), any_filter(clauses)))
