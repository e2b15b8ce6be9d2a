"""The fields of a document's payload: one registry of what each one is, for every writer and reader.

A payload is a flat mapping of scalars and lists of scalars (what every store can filter on), so
nothing in its type says which fields exist or what they mean. This registry does: each field's
name, the type of its value, what it means, which collections carry it, and whether stores index it
(exact-value filters on a server backend), answers can be counted by it (``count_by``) and
``list_facets`` suggests it. From it come the fields a store is asked to index, the ``count_by``
choices, the facet help and the field table in docs/searching.md; readers read a value through its
field (``KIND.of(payload)``), typed, instead of by a string key with a default of their own.

Adding a field is two places: its entry here and the builder that writes it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Final, TypeVar

V = TypeVar("V")

CAPABILITIES: Final = "capabilities"
INSTANCES: Final = "instances"
CHANGES: Final = "changes"
STATUS: Final = "status"
#: Short for the collections of resource types and objects, which share their identity fields.
DOCUMENTS: Final = (CAPABILITIES, INSTANCES)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Field:
    """One payload field: what it holds and how readers may use it."""

    #: How the docs table names the value's type.
    type_name: ClassVar[str] = "value"

    name: str
    meaning: str
    collections: tuple[str, ...]
    #: Stores index it for exact-value filters (``ensure_collection(indexed=...)``).
    indexed: bool = False
    #: ``count_by`` accepts it: an answer of counts per value.
    countable: bool = False
    #: ``list_facets`` and the CLI's ``facets`` suggest it.
    facet: bool = False
    #: On a capability record clusters share, a list of each cluster's value.
    shared_list: bool = False

    def raw(self, payload: Mapping[str, Any], default: Any = None) -> Any:
        """The value as stored (an answer that shows payloads as they are), ``default`` when absent."""
        return payload.get(self.name, default)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Text(Field):
    """A string (any other stored scalar read as its text); ``""`` when absent."""

    type_name: ClassVar[str] = "text"

    def of(self, payload: Mapping[str, Any]) -> str:
        value = self.raw(payload)
        return "" if value is None else str(value)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Texts(Field):
    """A list of strings (a scalar read as a list of one); empty when absent."""

    type_name: ClassVar[str] = "list of text"

    def of(self, payload: Mapping[str, Any]) -> list[str]:
        value = self.raw(payload)
        if value is None:
            return []
        if isinstance(value, list | tuple):
            return [str(item) for item in value]
        return [str(value)]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Number(Field):
    """A number (never a bool); ``None`` when absent or not a number."""

    type_name: ClassVar[str] = "number"

    def of(self, payload: Mapping[str, Any]) -> int | float | None:
        value = self.raw(payload)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Flag(Field):
    """A boolean; ``None`` when absent or not a boolean."""

    type_name: ClassVar[str] = "yes/no"

    def of(self, payload: Mapping[str, Any]) -> bool | None:
        value = self.raw(payload)
        return value if isinstance(value, bool) else None


# Identity: every capability and instance document. The indexed fields keep the order stores were
# first given them in (a store that records its index list sees the same list).
CLUSTER: Final = Text(
    name="cluster",
    meaning="the cluster the document describes",
    shared_list=True,
    collections=(*DOCUMENTS, CHANGES),
    indexed=True,
    countable=True,
    facet=True,
)
KIND: Final = Text(
    name="kind",
    meaning="the resource's kind, e.g. Deployment",
    collections=(*DOCUMENTS, CHANGES),
    indexed=True,
    countable=True,
    facet=True,
)
GROUP: Final = Text(
    name="group",
    meaning="the API group (core for the core group)",
    collections=(*DOCUMENTS, CHANGES),
    indexed=True,
    countable=True,
    facet=True,
)
VERSION: Final = Text(
    name="version",
    meaning="the API version the object is read at",
    shared_list=True,
    collections=(*DOCUMENTS, CHANGES),
    indexed=True,
)
API_VERSION: Final = Text(
    name="api_version",
    meaning="group/version as apiVersion spells it",
    shared_list=True,
    collections=DOCUMENTS,
    indexed=True,
)
RESOURCE: Final = Text(
    name="resource", meaning="plural.group, e.g. deployments.apps", collections=(*DOCUMENTS, CHANGES), indexed=True
)
NAMESPACE: Final = Text(
    name="namespace",
    meaning="the object's namespace (absent for cluster-scoped objects)",
    collections=(INSTANCES, CHANGES),
    indexed=True,
    countable=True,
    facet=True,
)
NAME: Final = Text(name="name", meaning="the object's name", collections=(INSTANCES, CHANGES), indexed=True)
UID: Final = Text(name="uid", meaning="the object's uid", collections=(INSTANCES,), indexed=True)
LABELS: Final = Texts(
    name="labels",
    meaning="the object's labels as key=value",
    collections=(INSTANCES, CHANGES),
    indexed=True,
    countable=True,
    facet=True,
)
OWNER: Final = Text(
    name="owner",
    meaning="the controlling owner as Kind/name",
    collections=(INSTANCES,),
    indexed=True,
    countable=True,
)
# What a capability says of its type.
SCOPE: Final = Text(
    name="scope", meaning="Namespaced or Cluster", collections=(CAPABILITIES,), indexed=True, facet=True
)
PROVIDERS: Final = Texts(
    name="providers",
    meaning="clouds or products the type provisions (aws, gcp, postgres ...)",
    collections=(CAPABILITIES,),
    indexed=True,
    facet=True,
)
CATEGORIES: Final = Texts(
    name="categories", meaning="the CRD's categories (kubectl get all ...)", collections=(CAPABILITIES,), indexed=True
)
SHORT_NAMES: Final = Texts(
    name="short_names", meaning="the CRD's short names (kubectl get cert)", collections=(CAPABILITIES,), indexed=True
)
COMPLEXITY: Final = Text(
    name="complexity",
    meaning="simple, moderate or complex, by the size of the schema",
    collections=(CAPABILITIES,),
    indexed=True,
)
HEALTH: Final = Text(
    name="health",
    meaning="healthy, progressing, degraded or unknown (objects with a status)",
    collections=(INSTANCES, CHANGES),
    indexed=True,
    countable=True,
    facet=True,
)
REFS: Final = Texts(
    name="refs",
    meaning="the objects this one references, as Kind/namespace/name (_cluster when cluster-scoped)",
    collections=(INSTANCES,),
    indexed=True,
)
POD_LABELS: Final = Texts(
    name="pod_labels", meaning="a workload's pod-template labels as key=value", collections=(INSTANCES,), indexed=True
)
# Bookkeeping on every document.
CONTENT_HASH: Final = Text(
    name="content_hash",
    meaning="sha256 of the text, the payload and the schema version",
    collections=(*DOCUMENTS, CHANGES),
)
TEXT_HASH: Final = Text(
    name="text_hash", meaning="sha256 of the text alone (equal: the stored vector is re-used)", collections=DOCUMENTS
)
SCHEMA_VERSION: Final = Number(name="schema_version", meaning="the document layout's version", collections=DOCUMENTS)
BUILT_FROM: Final = Text(
    name="built_from",
    meaning="what the document was built from (uid and resourceVersion, a CRD's generation); not hashed",
    collections=DOCUMENTS,
)
# Instances.
CREATED_AT: Final = Text(name="created_at", meaning="the object's creationTimestamp", collections=(INSTANCES,))
READY: Final = Flag(
    name="ready", meaning="whether the object is ready (objects with a status)", collections=(INSTANCES,)
)
PHASE: Final = Text(
    name="phase", meaning="status.phase (Pods, claims, namespaces ...)", collections=(INSTANCES,), countable=True
)
HEALTH_REASON: Final = Text(
    name="health_reason",
    meaning="the reason of the deciding condition, e.g. ProgressDeadlineExceeded",
    collections=(INSTANCES,),
    countable=True,
    facet=True,
)
HEALTH_MESSAGE: Final = Text(
    name="health_message", meaning="the deciding condition's message, one gated line", collections=(INSTANCES,)
)
CONTAINER_REASONS: Final = Texts(
    name="container_reasons",
    meaning="a Pod's containers' current and last reasons (CrashLoopBackOff, OOMKilled)",
    collections=(INSTANCES,),
    countable=True,
    facet=True,
)
EXIT_CODES: Final = Texts(name="exit_codes", meaning="a Pod's containers' last exit codes", collections=(INSTANCES,))
RESTARTS: Final = Number(name="restarts", meaning="a Pod's container restarts", collections=(INSTANCES,))
WARNING_REASON: Final = Text(
    name="warning_reason", meaning="the reason of the object's latest Warning Event", collections=(INSTANCES,)
)
WARNING_MESSAGE: Final = Text(name="warning_message", meaning="that Event's message, gated", collections=(INSTANCES,))
IMAGES: Final = Texts(
    name="images",
    meaning="the images of anything that runs containers",
    collections=(INSTANCES,),
    countable=True,
    facet=True,
)
RESOURCE_LIMITS: Final = Text(
    name="resource_limits",
    meaning="all, some or none of the containers set a limit",
    collections=(INSTANCES,),
    countable=True,
    facet=True,
)
ROLE: Final = Text(
    name="role", meaning="a binding's role as Kind/name", collections=(INSTANCES,), countable=True, facet=True
)
SUBJECTS: Final = Texts(
    name="subjects",
    meaning="a binding's subjects as Kind/namespace/name",
    collections=(INSTANCES,),
    countable=True,
    facet=True,
)
QUOTA_HARD: Final = Texts(
    name="quota_hard", meaning="a quota's hard limits as resource=amount", collections=(INSTANCES,)
)
QUOTA_USED: Final = Texts(name="quota_used", meaning="a quota's use as resource=amount", collections=(INSTANCES,))
SERVICE_TYPE: Final = Text(
    name="service_type",
    meaning="a Service's type (ClusterIP, NodePort, LoadBalancer ...)",
    collections=(INSTANCES,),
    countable=True,
    facet=True,
)
NODE: Final = Text(name="node", meaning="the node a Pod runs on", collections=(INSTANCES,), countable=True, facet=True)
POD_IP: Final = Text(name="pod_ip", meaning="a Pod's IP address", collections=(INSTANCES,))
REF_RELATIONS: Final = Texts(
    name="ref_relations", meaning="the relation of each of refs, in the same order", collections=(INSTANCES,)
)
CALL_EVIDENCE: Final = Texts(
    name="call_evidence",
    meaning="what names each calls reference, in the order of refs: env variable names (comma-joined) or args",
    collections=(INSTANCES,),
)
SELECTOR: Final = Texts(
    name="selector",
    meaning="the Pod labels a Service, NetworkPolicy, PodDisruptionBudget or PodMonitor selects (* for all)",
    collections=(INSTANCES,),
)
SERVICE_SELECTOR: Final = Texts(
    name="service_selector", meaning="the Service labels a ServiceMonitor selects", collections=(INSTANCES,)
)
SELECTOR_NAMESPACES: Final = Texts(
    name="selector_namespaces", meaning="the namespaces a ServiceMonitor looks in", collections=(INSTANCES,)
)
# Capabilities.
CAPABILITY_WORDS: Final = Texts(
    name="capabilities", meaning="what the type does, in a few words each", collections=(CAPABILITIES,), facet=True
)
FIELDS: Final = Texts(
    name="fields",
    meaning="the most telling spec fields (capabilities); what changed (changes)",
    collections=(CAPABILITIES, CHANGES),
)
DESCRIPTION: Final = Text(name="description", meaning="the type's own description", collections=(CAPABILITIES,))
SERVED_VERSIONS: Final = Texts(
    name="served_versions", meaning="the versions the API serves", collections=(CAPABILITIES,)
)
PRINTER_COLUMNS: Final = Texts(
    name="printer_columns", meaning="the CRD's additional printer columns", collections=(CAPABILITIES,)
)
SOURCE: Final = Text(
    name="source",
    meaning="where the description came from (a CRD, a built-in kind, a file)",
    collections=(CAPABILITIES,),
)
SERVED_BY: Final = Texts(
    name="served_by",
    meaning="on a shared record: each cluster and the group/version it serves, e.g. prod-eu=cert-manager.io/v1 (v1)",
    collections=(CAPABILITIES,),
)
PARTS: Final = Texts(
    name="parts",
    meaning="on a shared record: each cluster's versions and the hash of the document its controller built",
    collections=(CAPABILITIES,),
)
# Change records.
OBJECT: Final = Text(name="object", meaning="the instance id the change happened to", collections=(CHANGES,))
CHANGE: Final = Text(name="change", meaning="created, updated or deleted", collections=(CHANGES,))
TIME: Final = Number(name="time", meaning="when the change was seen, Unix seconds", collections=(CHANGES,))
AT: Final = Text(name="at", meaning="when the change was seen, ISO 8601", collections=(CHANGES,))
# The controller's status record.
HISTORY_JUDGED_BY: Final = Text(
    name="history_judged_by",
    meaning="the gate version the change history was last judged by",
    collections=(STATUS,),
)


def _registry() -> dict[str, Field]:
    fields = {value.name: value for value in globals().values() if isinstance(value, Field)}
    return fields


#: Every field, by name, in the order written above.
REGISTRY: Final[Mapping[str, Field]] = _registry()


def value(payload: Mapping[str, V], name: str) -> V | None:
    """The stored value of a field named at run time (``count_by``, facets, a filter's field), or None."""
    return payload.get(name)


def named(name: str) -> Field | None:
    """The field called ``name``, or ``None`` for a name no builder writes."""
    return REGISTRY.get(name)


def indexed() -> tuple[str, ...]:
    """The fields stores index for exact-value filters."""
    return tuple(name for name, field in REGISTRY.items() if field.indexed)


def countable() -> tuple[str, ...]:
    """The fields ``count_by`` accepts."""
    return tuple(name for name, field in REGISTRY.items() if field.countable)


def facets(collection: str | None = None) -> tuple[str, ...]:
    """The fields ``list_facets`` suggests (for one collection, or any)."""
    return tuple(
        name
        for name, field in REGISTRY.items()
        if field.facet and (collection is None or collection in field.collections)
    )


def rows() -> Iterator[tuple[str, ...]]:
    """The docs table's rows: field, type, collections, uses, meaning."""
    for field in REGISTRY.values():
        uses = [
            use
            for use, on in (("filter index", field.indexed), ("count_by", field.countable), ("facet", field.facet))
            if on
        ]
        type_name = f"{field.type_name} (a list on shared records)" if field.shared_list else field.type_name
        yield (f"`{field.name}`", type_name, ", ".join(field.collections), ", ".join(uses), field.meaning)


def table() -> str:
    """The payload fields as a Markdown table (docs/searching.md holds it; a test keeps it current)."""
    lines = ["| field | type | in | used for | meaning |", "| --- | --- | --- | --- | --- |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows()]
    return "\n".join(lines)
