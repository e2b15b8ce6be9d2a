"""Which kinds a question names, and which of those it asks for.

"Which Service routes traffic to the orders pods" names Service and Pod: the first kind, after nothing
but asking words, is what it asks for; the kinds named after it say where to look (:data:`CONTEXT_KIND`),
unless "and" joins them to it ("find the workload that scores fraud and the services it depends on":
both are asked for). A word for a family of kinds ("workload": :data:`~kubevec.query.kind_vocabulary.MEMBERS`)
asks for any of its members; it gains none of them anything by itself, as they are most of what a
cluster runs. A question about what only a Pod template holds (an image, a container, env variables,
probes: :data:`~kubevec.query.asking.ASKS_FOR_TEMPLATE`) asks for a workload or its Pods, whatever else it
names: "which image does the claims service run" is answered by the Deployment, not the Service; so is
one asking for the program that does something ("what runs the payments service", "which service handles
payments"), where one asking what exposes, routes or selects (:data:`ROUTING`) asks for the Service. A
question about what is allowed asks for the rules that decide it (:meth:`KindsAsked.rules`): kinds whose
names say they let traffic through, let an identity act or limit evictions, read from the cluster's own
kind names; the kinds it names besides are what the rules apply to.

Read by :mod:`kubevec.query.intent` once per question.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Final

from kubevec.core.words import camel_words
from kubevec.query.asking import (
    ASKS_FOR_SERVICE,
    ASKS_FOR_TEMPLATE,
    ASKS_WHAT_EVICTS,
    ASKS_WHAT_LETS_THROUGH,
    ASKS_WHAT_MAY_DO,
    TROUBLE,
)
from kubevec.query.folding import WORKLOADS
from kubevec.query.kind_vocabulary import MEMBERS, WORKLOAD, KindVocabulary
from kubevec.query.spelling import asks_for_namespaces, kind_places, says

#: ``role`` names Role fully and ClusterRole by this share (and RoleBinding/ClusterRoleBinding alike).
CLUSTER_TWIN: Final = 0.6
#: A custom kind of one word (``Prometheus``) named by that word: it may be the product, not the kind.
SINGLE_WORD_KIND: Final = 0.5
#: A kind the question names after the kind it asks for ("which Service ... the orders pods").
CONTEXT_KIND: Final = 0.5
#: Words before the kind a question asks for ("which", "list the", "what are all the").
ASKING: Final = frozenset(
    {"which", "what", "list", "show", "find", "get", "the", "all", "every", "are", "is", "how", "many", "me", "of",
     "my"}
)  # fmt: skip
#: Words between "and" and a kind asked for as well ("and the services it depends on").
_DETERMINERS: Final = frozenset({"the", "its", "their", "which", "what", "all", "every", "any"})
#: Kinds whose name is an everyday word ("the payments service" is the program as much as its Service): in
#: lower case they count as :data:`SINGLE_WORD_KIND`, spelt as the kind ("which Service selects") in full.
EVERYDAY_KINDS: Final = frozenset({"Service"})
#: Kinds with a Pod template (or a Pod's own spec): what holds images, containers, env and probes.
TEMPLATED: Final = frozenset({*WORKLOADS, "ReplicationController", "Pod"})

#: Words of the names of kinds that let traffic through or keep it out (NetworkPolicy, Istio's
#: AuthorizationPolicy, Consul's ServiceIntentions), and of kinds that let an identity act in the API.
TRAFFIC_RULES: Final = frozenset({"policy", "intention", "intentions", "authorization"})
ACCESS_RULES: Final = frozenset({"role", "binding"})
#: ... and of kinds that limit how many Pods may be evicted at once (PodDisruptionBudget).
EVICTION_RULES: Final = frozenset({"disruption", "budget"})
#: What a kind of rule gains in a question about what such rules decide, naming none of them.
RULE: Final = SINGLE_WORD_KIND

#: What a Service does ("which service exposes postgres", "which service selects the web pods"): a question
#: asking for the subject of one of these asks for the Service, not for the program behind it.
ROUTING: Final = frozenset(
    {"exposes", "expose", "routes", "route", "selects", "select", "forwards", "forward", "balances", "fronts",
     "listens", "listen", "targets", "points", "load-balances"}
)  # fmt: skip
#: Nouns a question asks for a program by ("which service", "which component"; "what" says none).
_PROGRAM_NOUNS: Final = frozenset({None, "service", "services", "component", "components", "app", "program"})


@dataclasses.dataclass(frozen=True, kw_only=True)
class KindsAsked:
    """A question's kinds: those it names (:attr:`named`), what each weighs (:meth:`weight`), and which it asks for."""

    question: str
    words: tuple[str, ...]
    #: Names of the candidates: a kind's word inside one of them ("node exporter") does not name the kind.
    names: frozenset[str]
    namespaces: frozenset[str]
    scopes: frozenset[str]
    vocabulary: KindVocabulary
    #: The question asks for what does something to the objects it names ("what limits evictions of the
    #: MySQL pods"): their kinds say what it acts on, not what it asks for.
    for_a_subject: bool = False
    #: The verb whose subject the question asks for and the noun it asks for it by ("which service manages
    #: customers": ``manages``, ``service``), when it asks for one.
    verb: str | None = None
    noun: str | None = None

    @functools.cached_property
    def _places(self) -> list[tuple[int, str]]:
        """Where the question names each kind (:func:`~kubevec.query.spelling.kind_places`), read once."""
        return kind_places(self.words, names=self.names, vocabulary=self.vocabulary)

    @functools.cached_property
    def named(self) -> frozenset[str]:
        """The kinds the question names; "namespace" names Namespace only when it asks for Namespaces."""
        kinds = frozenset(kind for _, kind in self._places)
        if "Namespace" in kinds and not asks_for_namespaces(
            self.words, known=(self.namespaces | self.names) - self.scopes
        ):
            kinds -= {"Namespace"}
        if self.service:
            kinds |= {"Service"}
        return kinds

    @functools.cached_property
    def service(self) -> bool:
        """The question asks for what only a Service has (:data:`ASKS_FOR_SERVICE`), or for what routes to a
        program ("what exposes the shop's web pages", "which service routes to the api pods": :data:`ROUTING`)."""
        if ASKS_FOR_SERVICE.search(self.question) is not None:
            return True
        return self.verb in ROUTING and self.noun in (None, "service", "services")

    def weight(self, kind: str) -> float:
        """1 when the question names ``kind`` (longest phrase wins), :data:`CLUSTER_TWIN` for its Cluster twin, else 0."""
        named = self.named
        if self.rules:  # "which pods may connect to the shop database": a NetworkPolicy says which
            if kind in self.rules:
                return 1.0 if kind in named else RULE
            return 0.0  # the kinds it names are what the rules apply to
        if self.of_the_template_of_pods:
            # "which image do the gceme canary pods run": the Pods are copies of their workload's template
            if kind == "Pod":
                return CONTEXT_KIND
            if kind in MEMBERS[WORKLOAD]:
                return 1.0  # not a ReplicaSet: it folds under its Deployment
        if kind in named and (not self.asks_for(kind, default=True) or self.for_a_subject):
            return CONTEXT_KIND  # "which Service routes traffic to the orders pods": Pods say where
        if kind in named:
            if kind in EVERYDAY_KINDS and self.says_only_the_everyday_word(kind):
                if self.template and self.asked is None:
                    return 0.0  # "which image does the claims service run": the program, not its Service
                return SINGLE_WORD_KIND  # "which service handles payments": the program as much as its Service
            return 1.0
        if kind.startswith("Cluster") and kind.removeprefix("Cluster") in named:
            return CLUSTER_TWIN
        phrase = tuple(w.lower() for w in camel_words(kind))
        if kind not in self.vocabulary.known and says(self.words, phrase):
            # A custom kind the question spells out ("database", "pipeline run"); one word may be a
            # product's name as well (Prometheus, Alertmanager, Application), so it counts half.
            return 1.0 if len(phrase) > 1 else SINGLE_WORD_KIND
        return 0.0

    @functools.cached_property
    def asked(self) -> str | None:
        """The kind the question asks for, when it names one first ("which Service routes traffic to the
        orders pods", "list the StatefulSets"): the kinds named after it say where to look, not what."""
        if len(self._places) < 2:
            return None
        at, kind = self._places[0]
        before = self.words[:at]
        if before[:1] in (("which",), ("what",)) and len(before) >= 2 and before[-1] not in self.names:
            before = before[:-1]  # a word that says which one ("which governing Service", "what headless service")
        return kind if all(w in ASKING for w in before) else None

    @functools.cached_property
    def _asked_kinds(self) -> frozenset[str]:
        """The kinds asked for: :attr:`asked` and the kinds "and" joins to it, a family's word as its members."""
        if self.asked is None:
            return frozenset()
        asked = {self.asked}
        for at, kind in self._places[1:]:
            before = list(self.words[:at])
            while before and before[-1] in _DETERMINERS:
                before.pop()
            if before[-1:] == ["and"]:
                asked.add(kind)
        return frozenset(member for kind in asked for member in self.vocabulary.members(kind))

    def asks_for(self, kind: str, *, default: bool) -> bool:
        """The question asks for ``kind`` (first, or joined to the first by "and"); ``default`` when it asks for none."""
        return default if self.asked is None else kind in self._asked_kinds

    def asks_for_another(self, kind: str) -> bool:
        """The question asks first for a kind, spelt as the kind ("which Secrets", not "which service"), not this
        one; or, naming none, for what a Pod template holds and this kind has none."""
        if self.rules:
            return kind not in self.rules
        if self._asked_as_kind is None:
            return self.template and kind not in TEMPLATED
        return kind not in self._asked_kinds

    @functools.cached_property
    def rules(self) -> frozenset[str]:
        """The kinds of rule a question about what is allowed asks for: "what lets the init container label its
        pod" (a Role, a binding), "is anything blocking it" (a NetworkPolicy), "why can't I drain the node" (a
        PodDisruptionBudget). Those of them it names, when it names some ("which pods are allowed to connect to
        Kafka under the network policy": the NetworkPolicy, not the Pods)."""
        if ASKS_WHAT_MAY_DO.search(self.question):
            words = ACCESS_RULES
        elif ASKS_WHAT_EVICTS.search(self.question):
            words = EVICTION_RULES
        elif ASKS_WHAT_LETS_THROUGH.search(self.question):
            words = TRAFFIC_RULES
        else:
            return frozenset()
        kinds = frozenset(kind for kind, said in self.vocabulary.kind_words.items() if words & said)
        return (kinds & self.named) or kinds

    @functools.cached_property
    def template(self) -> bool:
        """The question asks about what only a Pod template holds ("which image", "the bank container"), or
        for the program that does something ("what runs the cards service", "which service manages
        customers"): a Service only routes to it (:data:`ROUTING`)."""
        if ASKS_FOR_TEMPLATE.search(self.question) is not None:
            return True
        return self.verb is not None and self.noun in _PROGRAM_NOUNS and self.verb not in ROUTING

    @functools.cached_property
    def of_the_template_of_pods(self) -> bool:
        """The question asks what Pods' template holds ("what fsGroup do the percona pods run with"), not
        about trouble ("which container has restarted 14 times": the Pod's own count)."""
        return (
            "Pod" in self.named
            and self.named <= TEMPLATED  # "which service account do the pods run as": the account
            and ASKS_FOR_TEMPLATE.search(self.question) is not None
            and TROUBLE.search(self.question) is None
        )

    @functools.cached_property
    def program(self) -> bool:
        """The question asks for a program (:attr:`template`) and says no other noun for it: "what generates
        the narration text", "which component caches chunks", "which image runs the cart", not "which
        pipeline builds the image" or "what command starts the container" (a pipeline, a command)."""
        return self.template and self.noun in _PROGRAM_NOUNS

    @functools.cached_property
    def _asked_as_kind(self) -> str | None:
        asked = self.asked
        return None if asked in EVERYDAY_KINDS and self.says_only_the_everyday_word(asked) else asked

    def says_only_the_everyday_word(self, kind: str) -> bool:
        """The kind is named by its everyday word in lower case or first in the question, not spelt as the
        kind ("which Service selects ...") nor by a short name (``svc``)."""
        word = kind.lower()
        if not any(w in (word, word + "s") for w in self.words):
            return False  # a short name
        return not re.search(rf"(?<!^)(?<![.?!] )\b{kind}s?\b", self.question.strip())
