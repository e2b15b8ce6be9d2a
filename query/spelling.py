"""How questions spell names and kinds: forms of a word, a generated name's base, a compound's initials,
the longest name said, the kind phrases a question holds, and the software an image is, in stems.

Read by :mod:`kubevec.query.intent`; kept apart so each stays small enough to read in one sitting.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Final

from kubevec.core import fields
from kubevec.inference import catalogue
from kubevec.inference.software import SOFTWARE, describe, repository
from kubevec.query.kind_vocabulary import KindVocabulary
from kubevec.query.stems import stems

#: A generated name segment (a ReplicaSet's hash, a Pod's suffix): letters and digits, at least one digit.
GENERATED: Final = re.compile(r"^(?=[a-z0-9]*[0-9])[a-z0-9]{4,10}$")
#: The longest run of question words read as one name ("kube state metrics exporter").
MAX_RUN: Final = 4
#: Labels that say which application an object is part of: a question naming it scopes itself as by a namespace.
APPLICATION_KEYS: Final = frozenset({"app.kubernetes.io/part-of", "app.kubernetes.io/instance"})
#: How names abbreviate the words questions spell out (``catalogue-db`` is the catalogue's database).
NAME_ABBREVIATIONS: Final = {
    "database": "db",
    "service": "svc",
    "configuration": "config",
    "application": "app",
    "authentication": "auth",
    "kubernetes": "k8s",
    "message": "msg",
    "management": "mgmt",
    "gateway": "gw",
    "zookeeper": "zk",
    "production": "prod",
    "development": "dev",
    "repository": "repo",
    "environment": "env",
    "controller": "ctrl",
    "manager": "mgr",
}
#: The word each abbreviation stands for ("zk" -> zookeeper).
SPELLED_OUT: Final = {short: word for word, short in NAME_ABBREVIATIONS.items()}
#: Shorthand of questions that names seldom use but documents spell out ("LB": ``type: LoadBalancer
#: (exposed ... through an external load balancer)``; "mem lim": ``limits: memory=512Mi``).
SHORTHAND: Final = {
    **SPELLED_OUT,
    "lb": "load balancer",
    "pw": "password",
    "pwd": "password",
    "passwd": "password",
    "creds": "credentials",
    "mem": "memory",
    "lim": "limit",
    "qry": "query",
    "img": "image",
    "cfg": "configuration",
    "ver": "version",
    "vol": "volume",
}
_SHORT: Final = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, SHORTHAND), key=len, reverse=True)) + r")\b", re.IGNORECASE
)


def spell_out(question: str) -> str:
    """The question with its shorthand spelt out beside it ("LB for gceme" -> "LB (load balancer) for
    gceme"): the embedder and the word ranking meet the words documents use, and the shorthand stays for
    names that use it (``catalog-db``)."""
    return _SHORT.sub(lambda m: f"{m.group(0)} ({SHORTHAND[m.group(0).lower()]})", question)


@functools.cache
def software_line(image: str) -> tuple[str, frozenset[str]]:
    """An image's repository name and the stems of what it is (its catalogue line and its own name);
    ``("", ∅)`` for software nobody describes."""
    name = repository(image)
    line = describe(image)
    return (name, stems(f"{name} {line}")) if line else ("", frozenset())


#: A stem in more of the catalogue's lines than this share says what much software is ("open source",
#: "database", "server", "platform"), not what one is ("cache", "tracing", "broker", "load").
COMMON_SHARE: Final = 0.03


@functools.cache
def common_stems() -> frozenset[str]:
    """Stems in more than :data:`COMMON_SHARE` of the catalogue's lines: they tell no software apart."""
    lines = set(catalogue.images().values()) | set(SOFTWARE.values())
    counts = Counter(stem for line in lines for stem in stems(line))
    return frozenset(stem for stem, count in counts.items() if count > COMMON_SHARE * len(lines))


@functools.cache
def software_names() -> frozenset[str]:
    """The names software goes by in the catalogue (``mysql``, ``redis``, ``zipkin``): a question saying one
    names it (its image), it does not say what some other software is ("forked from MySQL")."""
    return frozenset(key.rpartition("/")[2] for key in [*catalogue.images(), *SOFTWARE])


@functools.cache
def line_stems(line: str) -> frozenset[str]:
    return stems(line)


def line_names(name: str, line: frozenset[str]) -> frozenset[str]:
    """How an object's name may spell its software: the repository's name, and the words of its
    catalogue line that begin with it or it with them (``mongo`` and ``mongodb``)."""
    return frozenset({name} | {w for w in line if len(w) >= 4 and (w.startswith(name) or name.startswith(w))})


def namespace_of(metadata: Mapping[str, Any]) -> frozenset[str]:
    """The object's namespace, as a place that may complete its name ("the frontend" of sourcegraph)."""
    return frozenset({fields.NAMESPACE.of(metadata).lower()} - {""})


def places(metadata: Mapping[str, Any]) -> frozenset[str]:
    """Where an object lives, as a question scopes itself: its namespace and the application its
    recommended labels say it is part of (``app.kubernetes.io/part-of``, ``.../instance``)."""
    found = {fields.NAMESPACE.of(metadata).lower()}
    for key, _, value in (pair.partition("=") for pair in fields.LABELS.of(metadata)):
        if key in APPLICATION_KEYS and len(value) >= 3:
            found.add(value.lower())
    return frozenset(found - {""})


def name_forms(word: str) -> tuple[str, ...]:
    """Other ways a name spells ``word``: its singular ("sessions" -> ``session-db``), its abbreviation
    ("database" -> ``catalogue-db``) and, for an abbreviation, the word it stands for ("gw" -> ``api-gateway``)."""
    forms = []
    if len(word) > 4 and word.endswith("ies"):
        forms.append(word[:-3] + "y")
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and word.isalpha():
        forms.append(word[:-1])
    return tuple(
        forms
        + [NAME_ABBREVIATIONS[f] for f in (word, *forms) if f in NAME_ABBREVIATIONS]
        + ([SPELLED_OUT[word]] if word in SPELLED_OUT else [])  # "zk" names ``zookeeper``
    )


def base_name(name: str) -> str:
    """A generated name without its generated tail: ``web-5cb4d8b4b4`` -> ``web``, ``web-5cb4d8b4b4-x2k9p`` -> ``web``."""
    parts = name.split("-")
    while len(parts) > 1 and GENERATED.match(parts[-1]):
        parts.pop()
    return "-".join(parts)


#: A version a name ends with (``claims-v3``, ``reviews-v2``): versions of one program, side by side.
_VERSION_TAIL: Final = re.compile(r"-v[0-9]+$")


def unversioned(name: str) -> str:
    """A name without the version it ends with: ``claims-v3`` -> ``claims`` (the name itself without one)."""
    return _VERSION_TAIL.sub("", name)


def initials(word: str) -> str:
    """A compound's initials: ``point-of-sales`` -> ``pos`` (``""`` for a plain word)."""
    parts = [p for p in word.split("-") if p]
    return "".join(p[0] for p in parts) if len(parts) > 1 else ""


def title_initials(question: str) -> set[str]:
    """The initials of runs of three or more capitalised words, as acronyms are spelt out: "JSON Web
    Tokens" names ``jwt-server``, "Open Policy Agent" names ``opa``."""
    found: set[str] = set()
    for run in re.findall(r"(?:\b[A-Z][A-Za-z0-9]*\b[ -]+){2,}\b[A-Z][A-Za-z0-9]*\b", question):
        letters = "".join(word[0] for word in re.split(r"[ -]+", run.strip())).lower()
        found.update(letters[a:b] for a in range(len(letters)) for b in range(a + 3, len(letters) + 1))
    return found


def inside_names(words: tuple[str, ...], *, names: frozenset[str]) -> set[str]:
    """Words the question says only inside a longer name it names whole ("what kind of object is
    jaeger-collector", "the node exporter"): the longest name wins, so ``jaeger`` alone is not named."""
    covered = [False] * len(words)
    for size in range(2, MAX_RUN + 1):
        for start in range(len(words) - size + 1):
            if "-".join(words[start : start + size]) in names:
                covered[start : start + size] = [True] * size
    inside: set[str] = set()
    for at, word in enumerate(words):
        parts = [p for p in re.split(r"[-.:/]", word) if p]
        if len(parts) > 1 and word in names:
            inside.update(parts)
        if covered[at]:
            inside.add(word)
    return inside - {word for at, word in enumerate(words) if not covered[at]}


def kinds_named(words: tuple[str, ...], *, names: frozenset[str], vocabulary: KindVocabulary) -> frozenset[str]:
    """Kinds a question names: the longest phrase at each place wins ("service account" is not "Service"),
    and a word or word run that spells one of ``names`` is a name, not a kind ("node exporter", "the configs
    service")."""
    return frozenset(kind for _, kind in kind_places(words, names=names, vocabulary=vocabulary))


def kind_places(words: tuple[str, ...], *, names: frozenset[str], vocabulary: KindVocabulary) -> list[tuple[int, str]]:
    """``(where, kind)`` for each kind the question names (see :func:`kinds_named`), in question order."""
    spans: list[tuple[int, int, str]] = [
        (start, start + size, "")
        for size in range(1, MAX_RUN + 1)
        for start in range(len(words) - size + 1)
        if "-".join(words[start : start + size]) in names
    ]
    for phrase, kind in vocabulary.phrases.items():
        size = len(phrase)
        for start in range(len(words) - size + 1):
            if all(same_word(words[start + i], phrase[i], last=i == size - 1) for i in range(size)):
                spans.append((start, start + size, kind))
    spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
    taken: set[int] = set()
    found = []
    for start, end, kind in spans:
        if taken.isdisjoint(range(start, end)):
            taken.update(range(start, end))
            if kind:
                found.append((start, kind))
    return sorted(found)


def says(words: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    size = len(phrase)
    return size > 0 and any(
        all(same_word(words[start + i], phrase[i], last=i == size - 1) for i in range(size))
        for start in range(len(words) - size + 1)
    )


def same_word(word: str, wanted: str, *, last: bool) -> bool:
    if word == wanted:
        return True
    if not last:
        return False
    return word in (wanted + "s", wanted + "es") or (wanted.endswith("y") and word == wanted[:-1] + "ies")


def image_names(candidates: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The names of several words of the candidates' images (``nats-streaming``, ``kube-state-metrics``):
    said whole, they name the workloads that run them as their own names do (``Intent._name``)."""
    return frozenset(
        tail for metadata in candidates for image in fields.IMAGES.of(metadata) if "-" in (tail := repository(image))
    )


def asks_for_namespaces(words: tuple[str, ...], *, known: frozenset[str]) -> bool:
    """ "namespace" is mostly a word of place ("pods in namespace prod", "which namespace is web in"): a
    question asks for Namespace objects only in the plural ("which namespaces have quotas") or beside a name
    it ``known`` that is not its place ("the monitoring namespace", "namespace argocd")."""
    if "namespaces" in words:
        return True
    for at, word in enumerate(words):
        if word not in ("namespace", "ns"):
            continue
        beside = [words[max(0, at - size) : at] for size in range(1, MAX_RUN + 1)]
        beside += [words[at + 1 : at + 1 + size] for size in range(1, MAX_RUN + 1)]
        if any(run and "-".join(run) in known for run in beside):
            return True
    return False
