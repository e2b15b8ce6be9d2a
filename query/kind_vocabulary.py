"""The kinds a question can name, read from what the cluster says: its capability records.

A question names a kind in the words people use: its CamelCase words (``network policy``), its name
run together (``configmap``), a short name kubectl knows (``hpa``, ``pvc``, ``netpol``). Every one of
these is in the capabilities collection already (each built-in kind and CRD with its discovery
short names), so the vocabulary is read from there, cluster by cluster, and follows the cluster: a
new CRD's kind is named from its first document on, and nobody keeps a list of kinds.

Kinds of the Kubernetes project's own API groups (the core group, ``apps``, ``batch``, any
``*.k8s.io``) are named at full weight by any of their phrases. A custom kind is named by its
several-word phrase, its short names or its run-together name; by one word alone it is not (one
word may be a product's name as well: Prometheus, Alertmanager, Application), and the ranking reads
such a word at half weight (``SINGLE_WORD_KIND`` in ``kinds_asked.py``).

:data:`SYNONYMS` are English words for a kind that no API spells (``autoscaler``, ``claim``,
``configuration``: "find the configuration that sets the Redis address" asks for a ConfigMap):
language, not cluster state, used only for kinds the cluster has.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Final

from kubevec.core import fields
from kubevec.core.words import camel_words

#: API groups of Kubernetes itself besides ``*.k8s.io`` (the core group is ``core`` in payloads).
_PROJECT_GROUPS: Final = frozenset({"", "core", "apps", "batch", "autoscaling", "policy"})

#: Short names that are everyday words of questions ("pods with no limits", "how do I deploy", "the
#: pod ip"): read as words, never as the kind (Node, LimitRange, Deployment, IPAddress).
ORDINARY_WORDS: Final = frozenset({"no", "limits", "deploy", "ip"})
#: Words people use for a kind that are none of its API names.
SYNONYMS: Final[Mapping[tuple[str, ...], str]] = {
    ("autoscaler",): "HorizontalPodAutoscaler",
    ("disruption", "budget"): "PodDisruptionBudget",
    ("volume", "claim"): "PersistentVolumeClaim",
    ("claim",): "PersistentVolumeClaim",
    ("every", "node"): "DaemonSet",  # what a DaemonSet is: one Pod on each node
    ("each", "node"): "DaemonSet",
    ("configuration",): "ConfigMap",
    ("config",): "ConfigMap",
}

#: Words that name a family of kinds, as Kubernetes' own documentation groups them ("which workload
#: mounts the claim": a Deployment, StatefulSet, DaemonSet, Job or CronJob), read as a kind of its own
#: that stands for its members (:meth:`KindVocabulary.members`).
WORKLOAD: Final = "Workload"
CATEGORIES: Final[Mapping[tuple[str, ...], str]] = {("workload",): WORKLOAD}
MEMBERS: Final[Mapping[str, frozenset[str]]] = {
    WORKLOAD: frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"}),
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Kind:
    """One resource type as its capability record says it."""

    name: str
    group: str
    short_names: tuple[str, ...] = ()

    @property
    def of_the_project(self) -> bool:
        return self.group in _PROJECT_GROUPS or self.group.endswith(".k8s.io")


class KindVocabulary:
    """Phrase (lowercase words) -> kind, and which kinds the phrases name at full weight."""

    def __init__(self, kinds: Iterable[Kind]) -> None:
        phrases: dict[tuple[str, ...], str] = {}
        named: set[str] = set()
        listed = sorted(set(kinds), key=lambda k: (not k.of_the_project, k.name, k.group))
        for kind in listed:
            words = tuple(word.lower() for word in camel_words(kind.name))
            if not words:
                continue
            own: list[tuple[str, ...]] = [
                (short.lower(),) for short in kind.short_names if short and short.lower() not in ORDINARY_WORDS
            ]
            if kind.of_the_project or len(words) > 1:
                own += [words, (kind.name.lower(),)]
                named.add(kind.name)
            for phrase in own:
                phrases.setdefault(phrase, kind.name)  # a kind of the project keeps a phrase others share
        for phrase, name in SYNONYMS.items():
            if name in named:
                phrases.setdefault(phrase, name)
        for phrase, name in CATEGORIES.items():
            if MEMBERS[name] & named:
                phrases.setdefault(phrase, name)
        self.phrases: Mapping[tuple[str, ...], str] = phrases
        #: Each kind a phrase names, by the words of its name ("NetworkPolicy": network, policy), read once
        #: here rather than per question (a question about what is allowed looks for kinds by these words).
        self.kind_words: Mapping[str, frozenset[str]] = {
            kind: frozenset(word.lower() for word in camel_words(kind)) for kind in set(phrases.values())
        }
        #: Kinds named at full weight (the rest are read by their own words: see the module docstring).
        self.known: frozenset[str] = frozenset(named)

    @classmethod
    def of_records(cls, payloads: Iterable[Mapping[str, object]]) -> KindVocabulary:
        """From capability records' payloads (a shared record's kind is the same in every cluster)."""
        kinds = [
            Kind(name=name, group=fields.GROUP.of(payload), short_names=tuple(fields.SHORT_NAMES.of(payload)))
            for payload in payloads
            if (name := fields.KIND.of(payload))
        ]
        return cls(kinds)

    @staticmethod
    def members(kind: str) -> frozenset[str]:
        """The kinds a phrase's kind stands for: a category's members (:data:`MEMBERS`), else itself."""
        return MEMBERS.get(kind, frozenset({kind}))

    def __len__(self) -> int:
        return len(self.phrases)


#: No capability records (a store holding instances only): kinds are read by their own words alone.
EMPTY: Final = KindVocabulary(())
