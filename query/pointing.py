"""What an object's references say to a question: what it points at, and whether at what the question names.

Read by :mod:`kubevec.query.intent` from a candidate's payload (``refs`` and, index by index, ``ref_relations``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kubevec.core import fields

#: How many of an object's references are read (a ClusterRole's or a big Service's can run long).
MAX_REFS: Final = 64
#: References by which an object acts on another (scales it, routes to it, selects it), not uses it.
ACTING: Final = frozenset({"scales", "routes-to", "selects"})


def targets(metadata: Mapping[str, Any]) -> frozenset[str]:
    """What an object references, but its owner: a Pod's ReplicaSet is its family, not what it uses."""
    refs, relations = fields.REFS.of(metadata)[:MAX_REFS], fields.REF_RELATIONS.of(metadata)
    return frozenset(ref for at, ref in enumerate(refs) if at >= len(relations) or relations[at] != "owned-by")


def acts_on(metadata: Mapping[str, Any], phrases: frozenset[str]) -> bool:
    """The object acts on one the question names (an autoscaler on the Deployment it scales)."""
    relations = fields.REF_RELATIONS.of(metadata)
    return any(
        at < len(relations) and relations[at] in ACTING and ref_named(ref, phrases)
        for at, ref in enumerate(fields.REFS.of(metadata)[:MAX_REFS])
    )


def ref_named(ref: str, phrases: frozenset[str]) -> bool:
    """A reference's target (``ClusterRole/_cluster/system:auth-delegator``) is named by the question,
    whole or by the last segment of a ``:`` name."""
    name = ref.rpartition("/")[2].lower()
    return name in phrases or name.rpartition(":")[2] in phrases


#: Kinds that point at Pods by a label selector and are no part of the program they select (a Service is).
SELECTING: Final = frozenset({"NetworkPolicy", "PodDisruptionBudget"})


def selects_named(metadata: Mapping[str, Any], phrases: frozenset[str], *, own: str) -> bool:
    """The object's selector picks the Pods of what the question names (``run=catalog`` for "catalog"), as a
    reference by name would: a policy that applies to catalog is about catalog, though named otherwise."""
    if fields.KIND.of(metadata) not in SELECTING:
        return False
    return any(
        (value := pair.partition("=")[2].lower()) in phrases and value != own for pair in fields.SELECTOR.of(metadata)
    )
