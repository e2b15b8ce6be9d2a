"""What an instance question names, and how much that weighs: names, namespaces, kinds, health.

A meaning ranking alone finds objects that sound like the question, which on a real cluster are
often the wrong ones: "pod sea-turtle" ranks ten other Pods above the Pod named sea-turtle, a
namespace or a ServiceAccount sharing the question's words beats the workload, 110 ``default``
ServiceAccounts and the cluster's IPAddress objects crowd the list. So the candidates of an
instance search are re-scored by what the question says outright:

- **names**: a candidate whose name is one of the question's words or hyphen-joined word runs
  (``node exporter`` -> ``node-exporter``; a word also as its singular and as names abbreviate it,
  "databases" -> ``db``) gains :data:`EXACT_NAME`; a generated name whose base
  is (a Pod ``cartservice-9479b6c-p6722`` of ReplicaSet ``cartservice-9479b6c``) gains
  :data:`BASE_NAME`; a name partly covered by the question's words a share of :data:`PARTIAL_NAME`;
- **namespaces, images, labels** the question names: small gains (they narrow, they do not answer);
  an object named like a namespace the question names (the Namespace itself, an Argo CD Application
  named after the namespace it deploys) gains no more than that unless the question names its kind;
- **kinds**: a kind the question names (``pod``, ``network policy``, ``hpa``, ``service account``;
  the longest phrase wins, so "service account" is not "Service") gains :data:`KIND`; its
  ``Cluster`` twin (ClusterRole for "role") a part. Which phrases name which kind is what the
  cluster's capability records say (``kind_vocabulary.py``: words, run-together names, short names);
- **references**: a candidate that references what the question names (the binding of the account
  it names) gains :data:`REFERENCE`; one that the object the question names references or selects
  (the Pods of the Service asked about, which say why it has no endpoints) :data:`NEIGHBOUR`. A
  question that asks for what points at the object it names ("which services call books", "what
  uses app-config") turns that round: what references it gains :data:`CALLER`, as much as a name,
  and the named object none of its name's gain (:data:`CALLED`);
- **health**: a question about trouble ("crashing", "failing", "not ready", "can't", "OOM") lifts
  degraded objects, more when their reasons or message meet its words ("out of memory": ``OOMKilled``);
- **noise**: kinds nobody asks about unless they name them (IPAddress, ControllerRevision,
  EndpointSlice, Lease, Namespace...) and ``default`` ServiceAccounts lose a little unless the question names
  their kind; a workload's own ReplicaSets, Pods and same-named ServiceAccount fold under it
  (``folding.py``);
- **"namespace"** names the Namespace kind only in the plural or beside a namespace's name that is
  not the question's place ("the monitoring namespace", not "pods in namespace prod").

Everything is read from the question and the candidates' payloads (no extra model), so the order
of the candidates is a pure function of the question and the store: the top ``k`` never depends on ``k``.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from collections.abc import Mapping
from typing import Any, Final

from kubevec.core import fields
from kubevec.core.words import camel_words
from kubevec.inference.software import repository
from kubevec.query.asking import (
    ASKS_ALSO_FOR_CALLEES,
    ASKS_ALSO_FOR_CALLERS,
    ASKS_FOR_CALLEES,
    ASKS_FOR_CALLERS,
    ASKS_FOR_VALUE,
    IN_NAMESPACE,
    TROUBLE,
)
from kubevec.query.folding import key_of
from kubevec.query.hearing import Heard, forms
from kubevec.query.kind_vocabulary import EMPTY, MEMBERS, WORKLOAD, KindVocabulary
from kubevec.query.kinds_asked import ASKING, CONTEXT_KIND, KindsAsked
from kubevec.query.pointing import MAX_REFS, acts_on, ref_named, selects_named, targets
from kubevec.query.software_words import describes, software_said, what_software_does
from kubevec.query.spelling import (
    APPLICATION_KEYS,
    MAX_RUN,
    NAME_ABBREVIATIONS,
    SPELLED_OUT,
    base_name,
    initials,
    inside_names,
    name_forms,
    namespace_of,
    places,
    title_initials,
    unversioned,
)
from kubevec.query.stems import stem, stems
from kubevec.query.subjects import Subject, acted_on, subject_of
from kubevec.query.trouble import health_of, says_why
from kubevec.query.typos import as_cased, corrections, dictionary

EXACT_NAME: Final = 0.8
BASE_NAME: Final = 0.6
PARTIAL_NAME: Final = 0.3
NAMESPACE: Final = 0.15
IMAGE: Final = 0.2
LABEL: Final = 0.1
KIND: Final = 0.8
DEGRADED: Final = 0.6
#: A troubled candidate whose reasons or message meet the question's words.
REASON: Final = 0.3
#: A candidate that references something the question names (a binding of the account it names).
REFERENCE: Final = 0.2
PROGRESSING: Final = 0.1
#: A candidate the object the question names points at: it references it or selects it by label (the
#: Pods of the Service asked about, which say why it has no endpoints).
NEIGHBOUR: Final = 0.3
NOISE: Final = -0.5
#: A program asked for by what it does or what its Pod template holds (:attr:`KindsAsked.program`), no kind
#: named: a workload gains over the ConfigMap or claim that shares its words.
DOER: Final = 0.2
DEFAULT_ACCOUNT: Final = -0.3

#: Kinds that fill a cluster and answer almost no question unless it names them.
NOISE_KINDS: Final = frozenset(
    {
        "IPAddress",
        "ControllerRevision",
        "EndpointSlice",
        "Endpoints",
        "Lease",
        "Event",
        "APIService",
        "FlowSchema",
        "PriorityLevelConfiguration",
        "ServiceCIDR",
        "CertificateSigningRequest",
        "ComponentStatus",
        "CSINode",
        "Namespace",
    }
)
_WORD = re.compile(r"[a-z0-9][a-z0-9_.:/-]*[a-z0-9]|[a-z0-9]")
#: Words too common in questions to name anything on their own.
_STOP: Final = frozenset(
    {"the", "a", "an", "of", "for", "in", "on", "to", "is", "are", "which", "what", "who", "how", "does", "do",
     "that", "it", "its", "by", "and", "or", "with", "any", "all", "my", "me", "there", "this", "run", "runs",
     "use", "uses", "used", "where", "why", "from", "into", "at", "be", "can", "has", "have", "many", "much"}
)  # fmt: skip
#: What a candidate that points at the object named gains when the question asks for what points at
#: it (as much as a name), and what the named object keeps of its name's gain: nothing, it is what the
#: answer points at, not the answer (it keeps what its place and kind gain).
CALLER: Final = EXACT_NAME
CALLED: Final = 0.0
#: What the object the question names points at gains when the question asks for that (as much as a
#: name), and the named object keeps of its name's gain: nothing, it is what points, not the answer.
CALLEE: Final = EXACT_NAME


def _family_name(name: str, *, kind: str, owner: str) -> str:
    """The name an object shares with its family: a Pod's workload's, a generated name's base."""
    return base_name(owner.rpartition("/")[2].lower()) if kind == "Pod" and owner else base_name(name)


def _own(metadata: Mapping[str, Any]) -> str:
    return _family_name(
        fields.NAME.of(metadata).lower(), kind=fields.KIND.of(metadata), owner=fields.OWNER.of(metadata)
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Intent:
    """A question read once: its words, their hyphen-joined runs, and whether it asks about trouble."""

    words: tuple[str, ...]
    phrases: frozenset[str]
    trouble: bool
    #: The question as asked (read again with its misspelt names corrected: see :meth:`among`).
    question: str = ""
    #: The question asks for what points at the object it names (``ASKS_FOR_CALLERS``).
    callers: bool = False
    #: The question asks for what the object it names points at (``ASKS_FOR_CALLEES``).
    callees: bool = False
    #: The question asks, beside the object it names, for what that points at (``ASKS_ALSO_FOR_CALLEES``).
    also_callees: bool = False
    #: The question asks, beside what it finds first, for what points at that (``ASKS_ALSO_FOR_CALLERS``).
    also_callers: bool = False
    #: What the question's "it" stands for when it asks for what points at it (:attr:`also_callers`): the keys
    #: (``Kind/namespace/name``) of the answer found first.
    referred: frozenset[str] = frozenset()
    #: Abbreviations of the question's words ("database" -> ``db``): they name a part of a name
    #: (``catalogue-db``), never a whole one (a ``db`` of another application is not "the geo database").
    abbreviated: frozenset[str] = frozenset()
    #: Words said only inside a longer name the question names whole ("jaeger-collector"): they name no
    #: object whole (``jaeger``), though they still name parts of names (``jaeger-collector-rules``).
    shadowed: frozenset[str] = frozenset()
    #: Stems of the question's words, to meet what a candidate's software is ("cache": memcached caches).
    stems: frozenset[str] = frozenset()
    #: Names of the candidates: a kind's word inside one of them ("node exporter") does not name the kind.
    names: frozenset[str] = frozenset()
    #: Namespaces of the candidates: a question naming one ("sock shop payment service") scopes, so an
    #: object named like the namespace (the Namespace, an Argo CD Application) is not what it names.
    namespaces: frozenset[str] = frozenset()
    #: Namespaces the question places itself in ("in the prod namespace", "in namespace prod"): there
    #: "namespace" says where, it does not ask for the Namespace object.
    scopes: frozenset[str] = frozenset()
    #: What the objects the question names point at: the keys they reference, and the label selectors
    #: (namespace, ``k=v`` pairs) they select Pods by.
    neighbours: frozenset[str] = frozenset()
    #: The (base) names of the objects the question names exactly: what shares one is their family.
    pointing: frozenset[str] = frozenset()
    selections: tuple[tuple[str, frozenset[str]], ...] = ()
    #: What the troubled candidates' messages name as the cause (:mod:`kubevec.query.blame`): a question about
    #: trouble wants it as much as what is in trouble.
    blamed: frozenset[str] = frozenset()
    #: The kinds the cluster has and the phrases that name them (its capability records).
    vocabulary: KindVocabulary = EMPTY

    def among(self, names: frozenset[str], *, namespaces: frozenset[str] = frozenset()) -> Intent:
        """This question read against the candidates' names and namespaces (see :attr:`names`), its
        misspelt names read as the names they miss (:mod:`kubevec.query.typos`)."""
        known = {part for name in names for part in re.split(r"[-.:]", name)} | names | namespaces
        known.update(word for phrase in self.vocabulary.phrases for word in phrase)
        fixed = corrections(self.words, known=known)
        # a name misspelt across a space ("rabit mq": rabbitmq), one word of it no English word
        english = dictionary()
        pairs = {
            f"{a}{b}": (a, b)
            for a, b in itertools.pairwise(self.words)
            if (a not in english or b not in english) and not {a, b} & (_STOP | known)
        }
        joined = corrections(list(pairs), known=known)
        read = self
        if (fixed or joined) and self.question:
            asked = self.question  # as asked: a kind spelt as the kind ("Service") still says so
            for run, name in joined.items():
                first, second = pairs[run]
                asked = re.sub(rf"\b{re.escape(first)}\s+{re.escape(second)}\b", name, asked, flags=re.IGNORECASE)
            asked = re.sub(r"[A-Za-z0-9]+", lambda m: as_cased(fixed.get(m.group(0).lower()), m.group(0)), asked)
            read = Intent.of(asked, vocabulary=self.vocabulary)
        inside = inside_names(read.words, names=names)
        shadowed = frozenset(form for word in inside for form in (word, *name_forms(word)))
        return dataclasses.replace(read, shadowed=shadowed, names=names, namespaces=namespaces)

    def around(self, candidates: list[Mapping[str, Any]]) -> Intent:
        """This question with what the candidates it names exactly point at (see :attr:`neighbours`).

        Asked for what a named object points at, a named object another named one points at is an answer,
        not what points ("which redis does the users service use": ``users-redis`` is named whole too)."""
        named = [metadata for metadata in candidates if self.names_exactly(metadata)]
        # what the question names, it names in the namespace it names: a namesake in another points at nothing asked
        # for (an application's label is a place that not all of its objects carry: it filters nothing here)
        spaces = self._scoping & {fields.NAMESPACE.of(metadata) for metadata in candidates}
        if spaces:
            named = [metadata for metadata in named if fields.NAMESPACE.of(metadata) in spaces | {""}]
        pointed = {key_of(metadata): (_own(metadata), targets(metadata)) for metadata in named}
        neighbours: set[str] = set()
        selections: list[tuple[str, frozenset[str]]] = []
        pointing: set[str] = set()
        # by name: the Service (or Secret) another named object uses and the workload behind it are one answer
        answers = {
            target
            for own, refs in pointed.values()
            for ref in refs
            if self.callees and (target := base_name(ref.rpartition("/")[2].lower())) != own
        }
        for metadata in named:
            key, own = key_of(metadata), _own(metadata)
            if own in answers:
                continue
            pointing.add(own)
            neighbours.update(pointed[key][1])
            selector = fields.SELECTOR.of(metadata)
            if selector and all("=" in pair for pair in selector):
                selections.append((fields.NAMESPACE.of(metadata), frozenset(selector)))
        return dataclasses.replace(
            self, neighbours=frozenset(neighbours), selections=tuple(selections[:16]), pointing=frozenset(pointing)
        )

    def names_exactly(self, metadata: Mapping[str, Any]) -> bool:
        """The question names this object's whole name (as one phrase or word by word: "the recommendation
        mongodb" names ``mongodb-recommendation``), not as the namespace it scopes itself to."""
        name = fields.NAME.of(metadata).lower()
        if not name or (name in self.namespaces and name not in self.names) or name in self.scopes:
            return False  # a place, unless objects there are named so too (``app.kubernetes.io/instance=checkout``)
        kind, owner, images = fields.KIND.of(metadata), fields.OWNER.of(metadata), fields.IMAGES.of(metadata)
        where = namespace_of(metadata)
        return self._name(name, kind=kind, owner=owner, images=images, where=where) >= EXACT_NAME

    @classmethod
    def of(cls, question: str, *, vocabulary: KindVocabulary = EMPTY) -> Intent:
        words = tuple(w.strip(".:/'\"") for w in _WORD.findall(question.lower()))
        words = tuple(w for w in words if w)
        phrases = {w for w in words if w not in _STOP}
        phrases.update(part for w in words for part in re.split(r"[-.:/]", w) if len(part) > 2 and part not in _STOP)
        phrases.update(w.replace("-", "") for w in words if "-" in w)  # "front-end" names ``frontend``
        phrases.update(initials(w) for w in words if len(initials(w)) >= 3)  # "point-of-sales" names ``pos``
        phrases.update(title_initials(question))  # "JSON Web Tokens" names ``jwt``
        phrases.update(form for w in tuple(phrases) for form in name_forms(w))
        abbreviated = frozenset(
            short for w in tuple(phrases) if (short := NAME_ABBREVIATIONS.get(w)) and short not in words
        )
        phrases -= abbreviated
        for size in range(2, MAX_RUN + 1):
            for start in range(len(words) - size + 1):
                run = words[start : start + size]
                if run[0] not in _STOP and run[-1] not in _STOP:
                    phrases.add("-".join(run))
                    phrases.add("".join(run))
        scopes = frozenset(m.group(1) or m.group(2) for m in IN_NAMESPACE.finditer(question.lower()))
        trouble = TROUBLE.search(question) is not None
        callees = ASKS_FOR_CALLEES.search(question) is not None and ASKS_FOR_VALUE.search(question) is None
        also_callees = not callees and ASKS_ALSO_FOR_CALLEES.search(question) is not None
        also_callers = not callees and not also_callees and ASKS_ALSO_FOR_CALLERS.search(question) is not None
        callers = not (callees or also_callees or also_callers) and ASKS_FOR_CALLERS.search(question) is not None
        return cls(
            question=question,
            words=words,
            phrases=frozenset(phrases),
            trouble=trouble,
            callers=callers,
            callees=callees,
            also_callees=also_callees,
            also_callers=also_callers,
            abbreviated=abbreviated,
            stems=stems(" ".join(SPELLED_OUT.get(w, w) for w in words if w not in _STOP)),
            scopes=scopes,
            vocabulary=vocabulary,
        )

    @functools.cached_property
    def _kinds(self) -> KindsAsked:
        """The kinds this question names and asks for (:mod:`kubevec.query.kinds_asked`), read once."""
        return KindsAsked(
            question=self.question,
            words=self.words,
            names=self.names,
            namespaces=self.namespaces,
            scopes=self.scopes,
            vocabulary=self.vocabulary,
            for_a_subject=self._subject is not None and self._subject.noun is None,
            verb=self._subject.verb if self._subject is not None else None,
            noun=self._subject.noun if self._subject is not None else None,
        )

    def names_kind(self, kind: str) -> float:
        """1 when the question names ``kind``, less as context, a Cluster twin or one word (see :class:`KindsAsked`)."""
        return self._kinds.weight(kind)

    @property
    def kinds(self) -> frozenset[str]:
        """The kinds the question names (:attr:`KindsAsked.named`)."""
        return self._kinds.named

    @property
    def asked_kind(self) -> str | None:
        """The kind the question asks for, when it names one first (:attr:`KindsAsked.asked`)."""
        return self._kinds.asked

    @functools.cached_property
    def _subject(self) -> Subject | None:
        """The subject the question asks for, when it asks for one (:mod:`kubevec.query.subjects`)."""
        return subject_of(self.question, names=self.names, vocabulary=self.vocabulary, asking=ASKING)

    def boost(self, metadata: Mapping[str, Any]) -> float:
        """What the question's names, kinds and health words add to a candidate's score (may be negative)."""
        kind = fields.KIND.of(metadata)
        name = fields.NAME.of(metadata).lower()
        kind_named = 0.0 if kind == "Namespace" and name in self.scopes else self.names_kind(kind)
        named = self._name(
            name,
            kind=kind,
            owner=fields.OWNER.of(metadata),
            images=fields.IMAGES.of(metadata),
            where=namespace_of(metadata),
        )
        said_whole = name in self.phrases or name.replace("-", "") in self.phrases  # "trainticket" too
        if named == EXACT_NAME and name in self.namespaces and said_whole and not kind_named:
            named = NAMESPACE  # the question's scope, not its subject (unless it names the kind too)
        # the place the question names is where, not what: a reference or label value of that name says nothing
        said = self.phrases - self.places_named - self.scopes
        named_refs = [ref for ref in fields.REFS.of(metadata)[:MAX_REFS] if ref_named(ref, said)]
        # its own namesakes (its account; a Pod's, by its base name; an autoscaler's workload) are no reference to
        # what the question names: the question named them both, once
        own = _own(metadata)
        referencing = any(ref.rpartition("/")[2].lower() not in (name, own) for ref in named_refs)
        referencing = referencing or selects_named(metadata, said, own=own)  # a policy that applies to it
        subject = self._subject
        if (
            subject is not None
            and subject.acts
            and named >= BASE_NAME
            and not acts_on(metadata, said)
            and not subject.asks_for_kind(kind)
            and not subject.names_the_doer(name, images=fields.IMAGES.of(metadata))
        ):
            # "what gives producers an HTTP interface to Kafka": Kafka is what it acts on, not the answer; one
            # that acts on what is named is, named like it or not ("what scales the T5 inference server")
            named = CALLED
        if self.callers and named >= BASE_NAME and not referencing:
            # "who calls books": books is what they call, not who; the kind said beside it says what it is
            named = CALLED
            kind_named = kind_named if self._kinds.asks_for(kind, default=False) else CALLED
        elif self.callers and not self._kinds.asks_for(kind, default=True):
            # "which workloads read the db-pass secret": the kind said beside what is called says what that is,
            # not what is asked; no Secret is the answer, named or not
            kind_named = CALLED
        if self._kinds.asks_for_another(kind) and named >= BASE_NAME:
            named = NEIGHBOUR  # "which secrets hold the heroes-db credentials": heroes-db is where, not what
        namespace = fields.NAMESPACE.of(metadata).lower()
        neighbour = self._neighbour(metadata, kind=kind, name=name, namespace=namespace)
        if self.elsewhere(metadata):  # what the question names, it names in the place it names
            named = kind_named = 0.0  # "which service books a room in the hotel app": not the books app's books
        callees = self.callees and bool(self.neighbours or self.selections)  # it points at something
        # the object named and its family (its Service, account, Pods: they share its name) point, they are
        # no answer; what it points at is, named or not ("which redis does the users service use")
        family = callees and named > 0 and own in self.pointing
        if family:
            named = CALLED  # "which database does orders use": orders is what uses it, not the answer
        elif callees and neighbour and named:  # the words that named what points do not name what it points at
            named = self._without_pointers._name(
                name, kind=kind, owner=fields.OWNER.of(metadata), images=fields.IMAGES.of(metadata)
            )
        score = KIND * kind_named + named
        acted_on = self.places_named - self._scoping  # the place acted on is no scope, its objects no answer
        if any(
            (p in self.phrases or p.replace("-", "") in self.phrases) and p not in acted_on for p in places(metadata)
        ):
            score += NAMESPACE
        images = fields.IMAGES.of(metadata)
        if any(repository(image) in self.phrases for image in images) or describes(metadata, does=self._does):
            score += IMAGE  # its image named, or what its software is said in words only it has
        if any(
            len(v := value.lower()) >= 3 and v in said and key not in APPLICATION_KEYS
            for key, _, value in (pair.partition("=") for pair in fields.LABELS.of(metadata))
        ):
            score += LABEL
        if referencing:
            score += CALLER if self.callers else REFERENCE
        elif self.referred and not self.referred.isdisjoint(targets(metadata)):
            score += CALLER  # "the config map with the Kafka settings and the workloads that load it"
        if key_of(metadata) in self.referred:
            score += CALLEE  # what "it" stands for is asked for as much as what points at it
        if neighbour and callees and not family:  # the named family points at each other: no answer
            score += CALLEE
        elif neighbour and self.also_callees and own not in self.pointing:
            score += CALLEE  # "the rate limit service and the store it depends on": both are asked for
        elif neighbour and name not in self.phrases and kind_named != CONTEXT_KIND:
            # one the question spells out gains as named already; one of a kind said as context ("which Service
            # exposes the router pods": Pods) is where the answer points, not the answer
            score += NEIGHBOUR
        if self.trouble:
            health = health_of(metadata)
            if health != "degraded" and (key_of(metadata) in self.blamed or kind in self._kinds.rules):
                # the cause the troubled ones name ("exceeded quota: default"); a rule that may keep out what
                # fails to get through ("the storefront cannot reach postgres: is anything blocking it")
                health = "degraded"
            score += DEGRADED if health == "degraded" else PROGRESSING if health == "progressing" else 0.0
            if health in ("degraded", "progressing") and says_why(metadata, words=set(self.words) - _STOP):
                score += REASON
        if self._kinds.program and kind in MEMBERS[WORKLOAD] and not self._kinds.named:
            score += DOER  # "what generates the narration text": a program, not its ConfigMap
        if not kind_named:
            if kind in NOISE_KINDS:
                score += NOISE
            elif kind == "ServiceAccount" and name == "default":
                score += DEFAULT_ACCOUNT
        return score

    @functools.cached_property
    def places_named(self) -> frozenset[str]:
        """The places (namespaces, applications) the question names, when none is also an object's name
        (``default`` names the default ServiceAccounts as well as the namespace)."""
        said = self.phrases | self.scopes
        return frozenset(p for p in self.namespaces - self.names if p in said or p.replace("-", "") in said)

    def elsewhere(self, metadata: Mapping[str, Any]) -> bool:
        """The question names places and this namespaced object is in none of them: neither its name nor its
        kind is what the question means (a namespace filter, softly: it keeps what its words gain)."""
        scoping = self._scoping
        return bool(scoping and fields.NAMESPACE.of(metadata)) and scoping.isdisjoint(places(metadata))

    @functools.cached_property
    def _scoping(self) -> frozenset[str]:
        """The places that scope the question: not those a subject it asks for acts on (:func:`acted_on`)."""
        subject = self._subject
        if subject is None or not subject.acts:
            return self.places_named
        return self.places_named - acted_on(self.places_named, words=self.words, verb=subject.verb)

    def _neighbour(self, metadata: Mapping[str, Any], *, kind: str, name: str, namespace: str) -> bool:
        if not (self.neighbours or self.selections):
            return False
        if f"{kind}/{namespace or '_cluster'}/{name}" in self.neighbours:
            return True
        if kind != "Pod" or not self.selections:
            return False
        have = frozenset(fields.LABELS.of(metadata))
        return any(where == namespace and pairs <= have for where, pairs in self.selections)

    def _name(
        self,
        name: str,
        *,
        kind: str,
        owner: str,
        images: list[str],
        where: frozenset[str] = frozenset(),
    ) -> float:
        """How well the question names ``name``: whole, by its generated name's base, or by its parts.

        A part is named by a word of the question, in the forms names are written in (:mod:`kubevec.query.hearing`:
        "collected" hears ``collector``, "the rate limiter" ``ratelimit``), by an abbreviation ("database":
        ``catalogue-db``), by the object's namespace (``where``: "the frontend" in namespace sourcegraph is
        ``sourcegraph-frontend``), or, when it is the name of the software the object runs, by what the
        question says that software is ("the geo database": ``mongodb-geo`` runs MongoDB, a database). Those
        only complete a name the question's own words have begun: alone they name every database, and a
        namespace alone names nothing there."""
        if not name:
            return 0.0
        if name in self.phrases and name not in self.shadowed:
            return EXACT_NAME
        base = _family_name(name, kind=kind, owner=owner)
        if base != name and base in self.phrases and base not in self.shadowed:
            return BASE_NAME
        program = unversioned(base)
        if program != base and program in self.phrases and program not in self.shadowed | self._place_words:
            return BASE_NAME  # "the claims service": each of ``claims-v1``, ``claims-v2`` runs it
        if "-" in name and name.replace("-", "") in self.phrases:
            return EXACT_NAME  # "trainticket", "nodeexporter": a name run together
        if self._names_an_image(images):  # "NATS Streaming": the StatefulSet ``stan`` runs ``nats-streaming``
            return BASE_NAME if base != name else EXACT_NAME
        parts = [p for p in re.split(r"[-.:]", base) if p]
        heard = [1.0 if p in self.phrases else self._heard.part(p) for p in parts]
        place_words = {w for place in where for w in place.split("-")}
        # "the postgres database of yelb": yelb-db
        implied = software_said(images, says=self._says_what_software_is) | self.abbreviated
        if not any(heard) or not any(
            h or p in implied for p, h in zip(parts, heard, strict=True) if p not in place_words
        ):
            return 0.0  # nothing said, or only its namespace ("the calculator"): that says where, not which
        covered = sum(heard)
        if covered < len(parts):  # what completes the name, read only when a part is left
            implied |= place_words
            covered += sum(1 - h for p, h in zip(parts, heard, strict=True) if h < 1 and p in implied)
        if len(parts) > 1 and covered == len(parts):
            return EXACT_NAME  # every word of the name, not side by side ("rules for node exporter")
        return PARTIAL_NAME * covered / len(parts)

    def _names_an_image(self, images: list[str]) -> bool:
        """The question says an image's name of several words whole ("NATS Streaming", "nats-box"): as
        specific as an object's name, where one word ("redis") names every workload of the software."""
        return any(
            "-" in (tail := repository(image))
            and (tail in self.phrases or tail.replace("-", "") in self.phrases)
            and tail not in self.shadowed
            for image in images
        )

    @functools.cached_property
    def _without_pointers(self) -> Intent:
        """This question read as if it had not said the names of what points (:attr:`pointing`), in any of
        their forms: they do not name what those objects point at. Read once per question."""
        gone = {form for pointer in self.pointing for word in pointer.split("-") for form in forms(word)}
        kept = frozenset(p for p in self.phrases if gone.isdisjoint(forms(p)))
        words = tuple(w for w in self.words if gone.isdisjoint(forms(w)))
        return dataclasses.replace(self, phrases=kept, words=words)

    @functools.cached_property
    def _place_words(self) -> frozenset[str]:
        """The places the question names and their words ("fraud-detection": ``fraud``, ``detection``)."""
        return frozenset(word for place in self.places_named | self.scopes for word in (place, *place.split("-")))

    @functools.cached_property
    def _heard(self) -> Heard:
        """The question's words in every form, but those that name its place ("the voting app" is no ``vote``)."""
        return Heard.of(w for w in self.words if w not in _STOP and w not in self._place_words)

    @functools.cached_property
    def _says_what_software_is(self) -> frozenset[str]:
        """The question's stems that may say what software is: not the words that name a kind ("service")."""
        return self.stems - {stem(word) for kind in self.kinds for word in camel_words(kind)}

    @functools.cached_property
    def _does(self) -> frozenset[str]:
        """What the question says software does, in words that tell software apart (:mod:`.software_words`)."""
        return what_software_does(set(self.words) - _STOP, says=self._says_what_software_is)
