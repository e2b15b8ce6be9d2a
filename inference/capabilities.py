"""Capability documents: one per resource type, saying in plain language what the type is for.

The default describer is schema-based, offline and deterministic. Its ``text`` is written for a
small embedding model that reads at most 256 word pieces: the kind, group and the type's own
description come first, then the most informative spec fields (required first, generic pod
plumbing last) with their first sentence, then inferred capability phrases and aliases. The full
description stays in the payload (``description``) for agents to read.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from kubevec.core.errors import InferenceError
from kubevec.core.words import camel_phrase
from kubevec.inference.documents import CAPABILITIES, Document, make_document
from kubevec.inference.identity import ResourceRef
from kubevec.inference.manifests import is_crd, iter_manifest_files, load_manifests
from kubevec.inference.redaction import redact_text
from kubevec.inference.schema import Field, SchemaView, clean, complexity, first_sentences
from kubevec.inference.tokens import MAX_TOKENS, count_tokens

DESCRIPTION_WORDS: Final = 70
FIELD_WORDS: Final = 16
MAX_FIELDS_IN_TEXT: Final = 10
MAX_FIELDS_IN_PAYLOAD: Final = 25
MAX_DESCRIPTION_CHARS: Final = 4000

#: Fields shared by countless kinds (mostly pod plumbing): they say nothing about what a type is for.
GENERIC_FIELDS: Final = frozenset(
    {
        "affinity",
        "annotations",
        "labels",
        "nodeSelector",
        "tolerations",
        "resources",
        "securityContext",
        "podSecurityContext",
        "imagePullSecrets",
        "imagePullPolicy",
        "serviceAccountName",
        "priorityClassName",
        "env",
        "envFrom",
        "volumes",
        "volumeMounts",
        "podMetadata",
        "podTemplate",
        "template",
        "metadata",
        "topologySpreadConstraints",
        "initContainers",
        "containers",
        "sidecars",
        "hostAliases",
        "dnsPolicy",
        "dnsConfig",
        "schedulerName",
        "runtimeClassName",
        "terminationGracePeriodSeconds",
        "suspend",
        "paused",
        "logLevel",
        "logFormat",
    }
)

#: (phrase, pattern over the schema's vocabulary). A phrase is kept when its pattern hits the
#: kind/group/description, or two different terms of it appear in field names and descriptions.
CAPABILITY_LEXICON: Final[tuple[tuple[str, str], ...]] = (
    ("TLS certificates", r"certificat|x509|tls|acme|issuer"),
    ("secrets management", r"secret|credential|password|vault|keyvault"),
    ("autoscaling", r"autoscal|scale|replica"),
    ("backup and restore", r"backup|restore|snapshot"),
    ("monitoring and metrics", r"metric|scrape|monitor|prometheus"),
    ("alerting and notifications", r"alert|notif|slack|pagerduty|webhook|receiver"),
    ("traffic routing", r"route|routing|gateway|listener|hostname|ingress"),
    ("service mesh", r"mesh|mtls|sidecar|envoy|istio"),
    ("policy enforcement", r"policy|polic|admission|validat|mutat"),
    ("GitOps delivery", r"gitops|git|helm|kustomiz|reconcil"),
    ("workflows and pipelines", r"workflow|pipeline|dag|step|task"),
    ("scheduled jobs", r"cron|schedule"),
    ("databases", r"database|postgres|mysql|sql|replication"),
    ("messaging and event streaming", r"kafka|topic|queue|stream|event|broker"),
    ("storage", r"storage|volume|disk|bucket|pvc|filesystem"),
    ("serverless", r"serverless|scale.to.zero|revision|knative"),
    ("access control", r"authoriz|authentic|rbac|permission|acl|jwt"),
    ("cloud infrastructure", r"provider|cloud|aws|gcp|azure|composit"),
)

#: The lexicon compiled once, to scan lowercased text: its patterns are lowercase, and 36
#: case-insensitive scans per type were half the time of describing one (2.4 of 4.4 s for the 118
#: CRDs of the shared corpus; the same texts either way).
_LEXICON: Final = tuple((phrase, re.compile(pattern)) for phrase, pattern in CAPABILITY_LEXICON)

PROVIDERS: Final[tuple[tuple[str, str], ...]] = (
    ("aws", r"\baws\b|amazon|\bec2\b|\bs3\b|\brds\b|\bsqs\b|\becr\b|\bkms\b|route53|dynamodb"),
    ("gcp", r"\bgcp\b|google|\bgcs\b|\bgke\b|pubsub|gcr\b"),
    ("azure", r"azure|\baks\b|keyvault|key vault"),
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class CapabilityDoc:
    """What an agent sees about one resource type."""

    id: str
    cluster: str
    kind: str
    group: str
    plural: str
    versions: tuple[str, ...]
    storage_version: str
    scope: str
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    description: str
    fields: tuple[str, ...]
    printer_columns: tuple[str, ...]
    capabilities: tuple[str, ...]
    providers: tuple[str, ...]
    complexity: str
    source: str
    text: str

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(group=self.group, version=self.storage_version, plural=self.plural, kind=self.kind)

    @property
    def api_version(self) -> str:
        return self.ref.api_version

    def to_document(self) -> Document:
        metadata: dict[str, Any] = {
            "cluster": self.cluster,
            "kind": self.kind,
            "group": self.ref.payload_group,
            "version": self.storage_version,
            "api_version": self.api_version,
            "resource": self.id,
            "scope": self.scope,
            "served_versions": list(self.versions),
            "short_names": list(self.short_names),
            "categories": list(self.categories),
            "capabilities": list(self.capabilities),
            "providers": list(self.providers),
            "complexity": self.complexity,
            "fields": list(self.fields),
            "printer_columns": list(self.printer_columns),
            "description": self.description,
            "source": self.source,
        }
        return make_document(id=self.id, collection=CAPABILITIES, text=self.text, metadata=metadata)


def describe_crd(crd: Mapping[str, Any], *, cluster: str = "default") -> CapabilityDoc:
    """A CapabilityDoc for an ``apiextensions.k8s.io/v1`` CustomResourceDefinition."""
    name = _crd_name(crd)
    try:
        spec = crd["spec"]
        names = spec["names"]
        group = str(spec["group"])
        kind = str(names["kind"])
        plural = str(names["plural"])
        versions = spec.get("versions") or []
        if not isinstance(versions, list) or not versions:
            raise InferenceError(f"CRD {name}: spec.versions is missing or empty")
        served = [v for v in versions if isinstance(v, Mapping) and v.get("served", True)]
        storage = next((v for v in versions if isinstance(v, Mapping) and v.get("storage")), None)
        chosen = storage or (served[-1] if served else versions[-1])
        schema = (chosen.get("schema") or {}).get("openAPIV3Schema") or spec.get("validation", {}).get(
            "openAPIV3Schema", {}
        )
        columns = chosen.get("additionalPrinterColumns") or spec.get("additionalPrinterColumns") or []
        return _describe(
            cluster=cluster,
            kind=kind,
            group=group,
            plural=plural,
            versions=tuple(str(v.get("name")) for v in served) or (str(chosen.get("name")),),
            storage_version=str(chosen.get("name")),
            scope=str(spec.get("scope", "Namespaced")),
            short_names=tuple(str(s) for s in names.get("shortNames") or ()),
            categories=tuple(str(c) for c in names.get("categories") or ()),
            schema=schema if isinstance(schema, Mapping) else {},
            view=SchemaView(),
            printer_columns=[c for c in columns if isinstance(c, Mapping)],
            source="crd",
        )
    except InferenceError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise InferenceError(f"CRD {name} is malformed: {type(exc).__name__}: {exc}") from exc


def describe_builtin(
    *,
    kind: str,
    group: str,
    version: str,
    plural: str,
    namespaced: bool,
    short_names: Sequence[str] = (),
    categories: Sequence[str] = (),
    schema: Mapping[str, Any] | None,
    components: Mapping[str, Any] | None = None,
    cluster: str = "default",
) -> CapabilityDoc:
    """A CapabilityDoc for a built-in kind from its discovery entry and ``/openapi/v3`` schema."""
    try:
        return _describe(
            cluster=cluster,
            kind=kind,
            group=group,
            plural=plural,
            versions=(version,),
            storage_version=version,
            scope="Namespaced" if namespaced else "Cluster",
            short_names=tuple(short_names),
            categories=tuple(categories),
            schema=schema or {},
            view=SchemaView(components=components),
            printer_columns=[],
            source="builtin",
        )
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise InferenceError(f"Built-in kind {kind} ({group or 'core'}/{version}) is malformed: {exc}") from exc


def _crd_name(crd: object) -> str:
    if isinstance(crd, Mapping):
        metadata = crd.get("metadata")
        if isinstance(metadata, Mapping) and metadata.get("name"):
            return str(metadata["name"])
    return "<unnamed>"


def _describe(
    *,
    cluster: str,
    kind: str,
    group: str,
    plural: str,
    versions: tuple[str, ...],
    storage_version: str,
    scope: str,
    short_names: tuple[str, ...],
    categories: tuple[str, ...],
    schema: Mapping[str, Any],
    view: SchemaView,
    printer_columns: Sequence[Mapping[str, Any]],
    source: str,
) -> CapabilityDoc:
    if not kind or not plural:
        raise InferenceError(f"Resource type in group {group!r} has no kind or plural name")
    root = view.resolve(schema)
    spec = view.child(root, "spec")
    # judged whole before anything cuts it (the payload's 4,000 characters, the text's first sentences):
    # a token the cut would halve no longer matches its format, a value cut from its cue reads as a word
    description = redact_text(_own_description(root=root, spec=spec), raw=False)
    if not view.properties(spec):
        # Some kinds keep their settings at the top level (ConfigMap, Secret, RBAC kinds...).
        spec = {"properties": {k: v for k, v in view.properties(root).items() if k not in _ENVELOPE}}
    fields = _rank_fields(list(view.walk(spec, max_depth=3)))
    stats = view.stats(spec)
    vocabulary = " ".join([kind, group, description, *(f.path + " " + f.description for f in fields[:60])])
    capabilities = _capabilities(head=f"{kind} {group} {description}", vocabulary=vocabulary)
    providers = tuple(name for name, pattern in PROVIDERS if re.search(pattern, vocabulary, re.IGNORECASE))
    text = _text(
        kind=kind,
        group=group,
        scope=scope,
        description=description,
        fields=fields,
        capabilities=capabilities,
        short_names=short_names,
        categories=categories,
    )
    return CapabilityDoc(
        id=ResourceRef(group=group, version=storage_version, plural=plural, kind=kind).resource_id,
        cluster=cluster,
        kind=kind,
        group=group,
        plural=plural,
        versions=versions,
        storage_version=storage_version,
        scope=scope,
        short_names=short_names,
        categories=categories,
        description=description[:MAX_DESCRIPTION_CHARS],
        fields=tuple(_field_line(f, words=FIELD_WORDS) for f in fields[:MAX_FIELDS_IN_PAYLOAD]),
        printer_columns=tuple(str(c.get("name")) for c in printer_columns if c.get("name") and c.get("name") != "Age"),
        capabilities=capabilities,
        providers=providers,
        complexity=complexity(stats),
        source=source,
        text=text,
    )


_ENVELOPE: Final = frozenset({"apiVersion", "kind", "metadata", "status"})


def _rank_fields(fields: list[Field]) -> list[Field]:
    """The fields that best say what a type is for, most informative first.

    Deprecated fields are dropped. Generic pod plumbing goes last. Otherwise: top-level fields
    before their children, required before optional, and among those the better-described first
    (a description's length, capped, is a fair proxy for how much a field matters to its authors).
    Schema order breaks ties, never the alphabet alone.
    """

    def score(item: tuple[int, Field]) -> tuple[int, int, int, int, int]:
        index, field = item
        parts = [p.removesuffix("[]") for p in field.path.split(".")]
        generic = any(part in GENERIC_FIELDS for part in parts)
        described = min(len(field.description.split()), 25)
        return (1 if generic else 0, min(field.depth, 2), 0 if field.required else 1, -described, index)

    live = [(i, f) for i, f in enumerate(fields) if not _deprecated(f.description)]
    return [f for _, f in sorted(live, key=score)]


def _deprecated(description: str) -> bool:
    head = description[:80].lower()
    return head.startswith("deprecated") or "deprecated:" in head or "deprecated," in head


_BOILERPLATE = re.compile(
    r"^\w+ is the schema for the \w+ api\.?$|^\w+ is a specification for an? \w+ resource\.?$"
    r"|^\w+ is the (?:top-level )?type for|^\w+ is the schema for",
    re.IGNORECASE,
)


_SPEC_BOILERPLATE = re.compile(
    r"^(?:\w+Spec (?:defines|is|specifies|configures) the (?:desired state|spec|specification|behavior)\b[^.]*"
    r"|(?:the )?specification of the desired (?:behavior of the )?\w+"
    r"|\w+Spec is the specification for an? \w+)\.?$",
    re.IGNORECASE,
)
_LINKS = re.compile(
    r"\s*(?:see more details at|more info|for more information(?:,? see)?|read more)\s*:?\s*https?://\S+"
    r"|\s*https?://\S+",
    re.IGNORECASE,
)


def _informative(description: str) -> str:
    """Drop generated boilerplate ("Alert is the Schema for the alerts API") that only repeats the kind."""
    return "" if _BOILERPLATE.match(description.strip()) else description


def _own_description(*, root: Mapping[str, Any], spec: Mapping[str, Any]) -> str:
    """The type's description, or its spec's when the type has none worth reading.

    44 of the 118 shared CRDs (Istio, Strimzi, Flux, KEDA...) describe the type only as
    "X is the Schema for the xs API" or not at all, while ``spec`` says "Configuration for access
    control on workloads" or "AlertSpec defines an alerting rule for events involving a list of
    objects". Links are dropped: URLs cost many word pieces and say nothing to a reader model.
    """
    own = _LINKS.sub("", clean(str(root.get("description", "")))).strip()
    if _informative(own):
        return own
    of_spec = _LINKS.sub("", clean(str(spec.get("description", "")))).strip()
    if of_spec and not _SPEC_BOILERPLATE.match(of_spec) and _informative(of_spec):
        return of_spec
    return own


def _capabilities(*, head: str, vocabulary: str) -> tuple[str, ...]:
    """Phrases whose pattern hits the kind, group or description, or two different terms elsewhere.

    One term repeated in field names is not enough: PriorityLevelConfiguration's ``queues`` and
    ``queueLengthLimit`` do not make API flow control "messaging and event streaming".
    """
    found: list[tuple[int, str]] = []
    head, vocabulary = head.lower(), vocabulary.lower()
    for phrase, pattern in _LEXICON:
        in_head = len(pattern.findall(head))
        terms: list[str] = pattern.findall(vocabulary)
        if in_head or len(set(terms)) >= 2:
            found.append((in_head * 10 + len(terms), phrase))
    found.sort(key=lambda item: (-item[0], item[1]))
    return tuple(phrase for _, phrase in found[:5])


def words_of(name: str) -> str:
    """``minReplicaCount`` -> ``min replica count``: what an embedding model can read."""
    return camel_phrase(name)


_SELF_REFERENCE = re.compile(
    r"^(?:the\s+)?`?\w+`?\s+(?:is|are|specifies|defines|holds|controls|configures|contains|sets|"
    r"describes|represents|indicates|determines|enables|allows)\s+(?:the\s+|a\s+|an\s+)?",
    re.IGNORECASE,
)


def _field_line(field: Field, *, words: int) -> str:
    name = " ".join(words_of(part.removesuffix("[]")) for part in field.path.split("."))
    leaf = field.path.rsplit(".", 1)[-1].removesuffix("[]")
    description = redact_text(field.description, raw=False)  # judged whole, then cut to its first sentences
    match = _SELF_REFERENCE.match(description)
    if match and description[: len(leaf) + 2].lower().lstrip("`").startswith(leaf.lower()):
        description = description[match.end() :]
    summary = first_sentences(description, max_words=words) if description else ""
    return f"{name}: {summary}" if summary else name


def _text(
    *,
    kind: str,
    group: str,
    scope: str,
    description: str,
    fields: list[Field],
    capabilities: tuple[str, ...],
    short_names: tuple[str, ...],
    categories: tuple[str, ...],
) -> str:
    kind_words = words_of(kind)
    head = f"{kind} ({group or 'core'})" + (f" {kind_words}" if kind_words.lower() != kind.lower() else "")
    parts = [head + "."]
    if _informative(description):
        parts.append(first_sentences(description, max_words=DESCRIPTION_WORDS))
    tail = []
    if capabilities:
        tail.append("Capabilities: " + ", ".join(capabilities) + ".")
    aliases = [*short_names, *categories]
    tail.append(f"{scope.lower()}-scoped" + (f"; also called {', '.join(aliases)}." if aliases else "."))
    # Spend what the window has left on fields, counting real word pieces.
    budget = MAX_TOKENS - count_tokens(" ".join([*parts, "Spec:", *tail]))
    lines: list[str] = []
    seen: set[str] = set()
    for field in fields:
        if len(lines) >= MAX_FIELDS_IN_TEXT or budget <= 4:
            break
        leaf = field.path.rsplit(".", 1)[-1].removesuffix("[]")
        if leaf in seen:
            continue
        line = _field_line(field, words=FIELD_WORDS)
        cost = count_tokens(line) - 2 + 1  # no [CLS]/[SEP] inside a text; one for the separator
        if cost > budget:
            continue
        seen.add(leaf)
        lines.append(line)
        budget -= cost
    if lines:
        parts.append("Spec: " + "; ".join(lines) + ".")
    parts.extend(tail)
    return " ".join(parts)


@dataclasses.dataclass
class CrdFileReport:
    """What reading CRD files produced: documents, how many files were read, and per-file errors."""

    documents: list[Document] = dataclasses.field(default_factory=list)
    files: int = 0
    errors: list[str] = dataclasses.field(default_factory=list)


def describe_crd_files(paths: Sequence[Path], *, cluster: str) -> CrdFileReport:
    """Capability documents for every CRD in files and folders; a bad file or CRD is an error line, not fatal.

    Raises :class:`InferenceError` only when a named path does not exist.
    """
    report = CrdFileReport()
    for path in iter_manifest_files(list(paths)):
        report.files += 1
        try:
            manifests = load_manifests(path.read_text(), source=str(path))
        except (InferenceError, OSError, UnicodeDecodeError) as exc:
            report.errors.append(str(exc))
            continue
        for manifest in manifests:
            if not is_crd(manifest):
                continue
            try:
                report.documents.append(describe_crd(manifest, cluster=cluster).to_document())
            except InferenceError as exc:
                report.errors.append(f"{path}: {exc}")
    return report
