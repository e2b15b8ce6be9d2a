"""A workload answers for its own ReplicaSets, Pods and the ServiceAccount named after it.

A question about ``cartservice`` meets the Deployment, its ReplicaSet, three Pods and the account
the Deployment runs as: all named alike, all sounding alike, so on meaning alone any of them can
come first and together they push every other answer out of the top five. Unless the question
names their kind ("pod of cartservice", "service account of checkout"), these children fold under
their workload, the *head* of their family:

- the head takes the best score of its family (the workload answers where its child would have);
- a child ranks below its head, and loses :data:`OWNED` as well, so it follows its workload rather
  than fill the places after it (a child whose head is not among the candidates only loses
  :data:`OWNED`: its owner still answers for it).

A Pod's head is its ReplicaSet's Deployment when that is a candidate (read from the ReplicaSet's
generated name, as the Pod's own base name is), else its ReplicaSet; a ServiceAccount's head is a
workload of the same name and namespace among the candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from kubevec.core import fields
from kubevec.query.spelling import base_name

T = TypeVar("T")

#: What a child loses beside its head, or when its owner answers for it: its family's name gain and more
#: (0.25 left a StatefulSet's three Pods in the three places after it, above the next answer).
OWNED: Final = -0.5
#: How far below its head a child stays (scores are compared, never shown before rescaling).
BELOW: Final = 1e-6
#: Kinds that run Pods and answer for them.
WORKLOADS: Final = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicaSet")
#: Kinds that fold under a workload.
CHILDREN: Final = frozenset({"ReplicaSet", "Pod", "Job", "ServiceAccount"})


def key_of(metadata: Mapping[str, Any]) -> str:
    return f"{fields.KIND.of(metadata)}/{fields.NAMESPACE.of(metadata) or '_cluster'}/{fields.NAME.of(metadata)}"


def heads(metadata: Mapping[str, Any]) -> tuple[tuple[str, ...], bool]:
    """The keys of the workloads that may answer for this object, nearest last, and whether it has an owner."""
    kind, namespace, name = fields.KIND.of(metadata), fields.NAMESPACE.of(metadata), fields.NAME.of(metadata)
    owner = fields.OWNER.of(metadata)
    if kind == "ServiceAccount":
        return tuple(f"{workload}/{namespace}/{name}" for workload in WORKLOADS), False
    if kind not in CHILDREN or not owner:
        return (), False
    owner_kind, _, owner_name = owner.partition("/")
    found = [f"{owner_kind}/{namespace}/{owner_name}"]
    if owner_kind == "ReplicaSet":
        found.insert(0, f"Deployment/{namespace}/{base_name(owner_name)}")
    elif owner_kind == "Job":
        found.insert(0, f"CronJob/{namespace}/{base_name(owner_name)}")
    return tuple(found), True


def fold(
    scored: Sequence[tuple[T, float]], *, metadata: Callable[[T], Mapping[str, Any]], asked: Callable[[str], bool]
) -> list[tuple[T, float]]:
    """``scored`` with children folded under their heads (see the module docstring); ``asked(kind)``
    says whether the question names a kind, whose objects then stand on their own."""
    index = {key_of(metadata(item)): at for at, (item, _) in enumerate(scored)}
    scores = [score for _, score in scored]
    families: dict[int, list[int]] = {}
    for at, (item, _) in enumerate(scored):
        meta = metadata(item)
        if asked(fields.KIND.of(meta)):
            continue
        keys, owned = heads(meta)
        head = next((index[key] for key in keys if key in index and index[key] != at), None)
        if head is not None:
            families.setdefault(head, []).append(at)
        elif owned:
            scores[at] += OWNED
    for head, children in families.items():
        best = max(scores[head], *(scored[child][1] for child in children))
        scores[head] = best
        for child in children:
            scores[child] = min(scores[child] + OWNED, best - BELOW)
    return [(item, scores[at]) for at, (item, _) in enumerate(scored)]
