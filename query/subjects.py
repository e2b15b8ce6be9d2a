"""A question asking for the subject of a verb: "what scales the inference server", "which workload exports
Kafka lag", "what runs the NATS servers".

Such a question names two things: what the answer is (the noun it asks for, the verb's subject) and, after
the verb, what the answer does something to. When the verb acts on its object ("scales", "exports",
"gives ... to"), the objects it names there are not the answer, though they are named: the answer acts on
them. When the verb says what the answer is ("runs", "serves", "provides"), they are. Read by
:mod:`kubevec.query.intent`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Final

from kubevec.query.asking import ASKS_FOR_SUBJECT, VERB_S
from kubevec.query.hearing import Heard
from kubevec.query.kind_vocabulary import KindVocabulary
from kubevec.query.software_words import software_said
from kubevec.query.spelling import base_name, kinds_named
from kubevec.query.stems import stems

#: Verbs whose object says what the answer is ("what runs the NATS servers": the servers' workload), where
#: another verb's object is what the answer acts on ("what scales the inference server": not the server).
BEING: Final = frozenset(
    {"runs", "serves", "processes", "handles", "hosts", "provides", "stores", "holds", "keeps", "caches", "backs",
     "implements", "powers", "contains", "exists", "does", "means"}
)  # fmt: skip
_DO: Final = re.compile(r"\b(?:does|do|did)\b", re.IGNORECASE)


#: "which workload exports Kafka lag", "which component caches chunks": a noun, then the verb whose subject
#: it asks for (see :data:`ASKS_FOR_SUBJECT`).
ASKS_FOR_NOUN_SUBJECT: Final = re.compile(r"^\W*(?:what|which)\s+([a-z]+)\s+" + VERB_S, re.IGNORECASE)


def _verb_after(pattern: re.Pattern[str], question: str, *, names: frozenset[str]) -> re.Match[str] | None:
    """``pattern``'s match whose last group is a verb: None when there is none, or the word is a name
    (``names``: "which NATS address") or a noun another verb follows ("which Postgres user ... does the
    frontend connect with")."""
    found = pattern.search(question)
    if found is None:
        return None
    verb = found.group(found.lastindex or 0).lower()
    if any(verb in name.split("-") for name in names) or _DO.search(question, found.end()):
        return None
    return found


def noun_subject_verb(question: str, *, names: frozenset[str]) -> tuple[str, str] | None:
    """The noun a question asks for and the verb after it (:data:`ASKS_FOR_NOUN_SUBJECT`), lower case."""
    found = _verb_after(ASKS_FOR_NOUN_SUBJECT, question, names=names)
    return (found.group(1).lower(), found.group(2).lower()) if found else None


def subject_verb(question: str, *, names: frozenset[str]) -> str | None:
    """The verb whose subject the question asks for (:data:`ASKS_FOR_SUBJECT`), lower case; None for none."""
    found = _verb_after(ASKS_FOR_SUBJECT, question, names=names)
    return found.group(1).lower() if found else None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Subject:
    """The verb a question asks the subject of, and the noun it asks for when it says one."""

    verb: str
    noun: str | None = None
    #: The kinds the noun names ("which Service exposes ...": Service).
    kinds: frozenset[str] = frozenset()

    @property
    def acts(self) -> bool:
        """The verb acts on its object ("scales", "exports"), where one of :data:`BEING` says what the answer is."""
        return self.verb not in BEING

    def asks_for_kind(self, kind: str) -> bool:
        """The noun names ``kind``, a custom kind by its one word too ("which pipeline builds ...": Pipeline)."""
        return kind in self.kinds or (
            self.noun is not None and kind.lower() in (self.noun, self.noun.removesuffix("s"))
        )

    @functools.cached_property
    def _said(self) -> tuple[Heard, frozenset[str]]:
        """The verb and noun in every form names take, and their stems (read once per question)."""
        said = [word for word in (self.verb, self.noun) if word]
        return Heard.of(said), stems(" ".join(said))

    def names_the_doer(self, name: str, *, images: list[str]) -> bool:
        """A name that says the verb or the noun names what does it ("which pipeline builds the frontend
        image": ``build-frontend``; "what generates load": ``loadgenerator``; "which cache sits in front of
        hotel rates": ``memcached-rate``, Memcached being a cache), not what it acts on."""
        heard, said = self._said
        implied = software_said(images, says=said)
        return any(heard.part(part) > 0 or part in implied for part in re.split(r"[-.:]", base_name(name)) if part)


def subject_of(
    question: str, *, names: frozenset[str], vocabulary: KindVocabulary, asking: frozenset[str]
) -> Subject | None:
    """The subject a question asks for (None for none): after "what"/"which" its verb, or a noun then its
    verb; a verb that is a kind's word ("which services call ...") or one of ``asking`` is none."""
    verb = subject_verb(question, names=names)
    if verb is not None and verb not in asking and not kinds_named((verb,), names=frozenset(), vocabulary=vocabulary):
        return Subject(verb=verb)
    found = noun_subject_verb(question, names=names)
    if found is None:
        return None
    noun, verb = found
    return Subject(verb=verb, noun=noun, kinds=kinds_named((noun,), names=frozenset(), vocabulary=vocabulary))


def acted_on(places: frozenset[str], *, words: tuple[str, ...], verb: str) -> frozenset[str]:
    """The ``places`` (namespaces, applications) a question says only after the verb of the subject it asks
    for: what that verb acts on, not where to look ("which component tells the fights service where a fight
    is": the answer acts on that application, it need not be in it)."""
    if verb not in words:
        return frozenset()
    after = words.index(verb)
    found = set()
    for place in places:
        run = tuple(place.split("-"))
        starts = [at for at in range(len(words)) if words[at : at + len(run)] == run]
        starts += [at for at, word in enumerate(words) if word == place.replace("-", "")]
        if starts and min(starts) > after:
            found.add(place)
    return frozenset(found)
