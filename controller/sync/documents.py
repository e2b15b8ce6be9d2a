"""Object bodies into documents, for events and the resync alike: bad input is counted and logged once.

A malformed or hostile object, CRD or built-in schema never stops anything else: it gets
``kubevec_errors_total{stage="inference"}``, ``kubevec_documents_skipped_total{reason}``, one
warning per object and problem, and a place in :attr:`DocumentBuilder.skipped` (``kubevec status``
names them) until it builds again. Anything a builder raises counts, not only the errors it
means to raise: one object no rule foresaw must not fail a resync.

Every document says what it was built from (``built_from``: the object's uid and
``resourceVersion``, a CRD's uid and ``generation``, the policy and kubevec's version). When the
store already holds a document built from exactly that, building is skipped and :class:`Unchanged`
returned: on a restart against an unchanged cluster kopf's listing and the resync both see every
object, and describing a large CRD schema or building thousands of instances only to learn that
nothing changed was most of the restart.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from kubevec import core, inference
from kubevec.controller.kube.resources import ApiResource
from kubevec.controller.runtime.metrics import DOCUMENT_SKIP_REASONS, Metrics
from kubevec.controller.sync.notes import Described, WorkloadNotes
from kubevec.core.bounded import LRU
from kubevec.core.errors import InferenceError
from kubevec.core.version import kubevec_version
from kubevec.inference.bodies import Body, metadata_of
from kubevec.inference.capabilities import describe_builtin, describe_crd
from kubevec.inference.documents import CAPABILITIES, INSTANCES, SCHEMA_VERSION, Collection, Document, with_built_from
from kubevec.inference.identity import ObjectName, ResourceRef
from kubevec.inference.instances import InstancePolicy, build_instance
from kubevec.inference.redaction import redact_text
from kubevec.inference.warnings import Warnings, named_of

logger = logging.getLogger(__name__)


#: capability documents remembered by (uid, resourceVersion); far more than clusters have CRDs.
CAPABILITY_CACHE_SIZE = 4096


#: What under ``inference/`` builds documents: its code and the data it reads (rule sets, catalogues).
BUILDER_FILES: Final = ("*.py", "*.toml", "*.json")


@functools.cache
def builder_fingerprint() -> str:
    """A digest of the code and data that turn objects into documents (``inference/`` but its providers,
    with the data files the builders read, such as the gate's rule sets; ``core/``; this module).

    Part of every ``built_from``: a change to that code rebuilds every document once (its content
    hash still spares the embedding when the text did not change), even where nobody bumped
    ``SCHEMA_VERSION`` or the package version, as in a development checkout. The providers
    (embedders, rerankers, the LLM client) do not build documents: editing their retry code
    rebuilt every document on the next start before they had a package of their own.
    """
    root = Path(inference.__file__).parent
    providers = root / "providers"
    shared = Path(core.__file__).parent  # the words, nesting guard and payload fields the builders use
    digest = hashlib.sha256()
    code_and_data = (p for pattern in BUILDER_FILES for p in root.rglob(pattern) if providers not in p.parents)
    built = [*code_and_data, *shared.rglob("*.py"), Path(__file__)]
    for path in sorted(built):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@dataclasses.dataclass(frozen=True)
class Unchanged:
    """The store holds this document as building it now would give: nothing to build or write."""

    collection: Collection
    id: str


#: What the store says a stored document was built from (``None``: no such document).
BuiltFrom = Callable[[Collection, str], str | None]


def _nothing_stored(collection: Collection, document_id: str) -> str | None:
    return None


class DocumentBuilder:
    def __init__(self, *, cluster: str, metrics: Metrics, built_from: BuiltFrom = _nothing_stored) -> None:
        self.cluster = cluster
        self._metrics = metrics
        self._reported: set[str] = set()
        #: Objects skipped and not built since, by identity: why (bounded, oldest out first).
        self.skipped: LRU[str, str] = LRU(MAX_SKIPPED)
        self._capabilities: LRU[tuple[str, str], Document] = LRU(CAPABILITY_CACHE_SIZE)
        self.built_from = built_from
        #: Each object's latest Warning Event, by uid: fed by the Event watch and each resync's listing.
        self.warnings = Warnings()
        #: What an LLM says workloads are (``describer.llm.workloads``); None when off. A document built
        #: while its template's note is still to come says so in ``built_from`` (``/pending``), so the
        #: next event, the refetch when the answer comes, a resync or a restart builds it again.
        self.notes: WorkloadNotes | None = None
        self._version = f"{SCHEMA_VERSION}/{kubevec_version()}/{builder_fingerprint()}"

    def instance(
        self, body: Body, *, plural: str, policy: InstancePolicy, document_id: str | None = None
    ) -> Document | Unchanged | None:
        """The object's document, or Unchanged when the store holds it built from this version.

        ``document_id``: the id the caller computed already (a watch event's); the document gets it as
        it is, so one event computes its id once."""
        key = self._instance_key(body, plural=plural, policy=policy, document_id=document_id)
        uid = str(metadata_of(body).get("uid") or "")
        if key is not None and self.built_from(INSTANCES, key[0]) == key[1]:
            return Unchanged(INSTANCES, key[0])
        identity = _identity(body, plural=plural)
        warning = self.warnings.latest(uid, key=named_of(body))
        notes = self.notes
        try:
            built = build_instance(
                body,
                plural=plural,
                cluster=self.cluster,
                policy=policy,
                warning=warning,
                id=key[0] if key else None,
                notes=notes.get if notes is not None else None,
            )
            document = built.to_document()
        except Exception as exc:
            self._report(identity, exc)
            return None
        self.skipped.pop(identity, None)
        pending = ""
        if notes is not None and built.template is not None and built.note is None and uid:
            described = Described(
                uid=uid, api_version=built.api_version, kind=built.kind, name=built.name, namespace=built.namespace
            )
            pending = "/pending" if notes.want(built.template, described=described) else ""
        return with_built_from(document, key[1] + pending) if key is not None else document

    def _instance_key(
        self, body: Body, *, plural: str, policy: InstancePolicy, document_id: str | None
    ) -> tuple[str, str] | None:
        """``(document id, built_from)`` from the body's identity alone, or None when it lacks one."""
        who = ObjectName.of(metadata_of(body))
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if not (
            who.uid and who.resource_version and who.name and isinstance(api_version, str) and isinstance(kind, str)
        ):
            return None
        if document_id is None:
            ref = ResourceRef.from_api_version(api_version, kind=kind, plural=plural)
            document_id = ref.instance_id(cluster=self.cluster, namespace=who.namespace or None, name=who.name)
        digest = hashlib.sha256(repr(policy).encode()).hexdigest()[:12]  # every field of the (frozen) policy
        warning = self.warnings.latest(who.uid, key=named_of(body))
        said = f"/w{warning.digest}" if warning is not None else ""  # a new warning rebuilds; a repeat does not
        noted = "/n" if self.notes is not None else ""  # turning workload notes on builds every object once
        return document_id, f"{who.uid}/{who.resource_version}/{digest}{said}{noted}/{self._version}"

    def capability(self, crd: Mapping[str, Any]) -> Document | Unchanged | None:
        """The CRD's capability document; one CRD version is described once.

        kopf's listing and the resync both see every CRD at start-up, and each resync sees it
        again: describing a large schema is the costliest step of a restart, so the document is
        kept per (uid, resourceVersion) (bounded, least recently used first out).
        """
        meta = metadata_of(crd)
        if (unchanged := self.capability_unchanged(meta)) is not None:
            return unchanged
        who = ObjectName.of(meta)
        built_from = self._crd_built_from(who)
        key = (who.uid, who.resource_version)
        if all(key) and (cached := self._capabilities.get(key)) is not None:
            return cached
        try:
            document = describe_crd(crd, cluster=self.cluster).to_document()
        except Exception as exc:
            self._report(f"crd/{who.name}", exc)
            return None
        self.skipped.pop(f"crd/{who.name}", None)
        if built_from is not None and document.id == who.name:
            document = with_built_from(document, built_from)
        if all(key):
            self._capabilities[key] = document
        return document

    def capability_unchanged(self, meta: Mapping[str, Any]) -> Unchanged | None:
        """From a CRD's metadata alone: Unchanged when the store holds its document built from it.

        The resync lists CRDs as metadata only and fetches the body of those this returns None for.
        """
        who = ObjectName.of(meta)
        built_from = self._crd_built_from(who)
        if built_from is not None and self.built_from(CAPABILITIES, who.name) == built_from:
            return Unchanged(CAPABILITIES, who.name)
        return None

    def _crd_built_from(self, who: ObjectName) -> str | None:
        if who.name and who.uid and who.generation:
            return f"{who.uid}/{who.generation}/{self._version}"
        return None

    def builtin_key(self, resource: ApiResource, *, schema_hash: str | None) -> str | None:
        """What a built-in kind's document is built from: its group-version's schema hash and discovery facts."""
        if not schema_hash:
            return None
        facts = repr((resource.namespaced, resource.short_names, resource.categories, resource.verbs))
        return f"{schema_hash}/{hashlib.sha256(facts.encode()).hexdigest()[:12]}/{self._version}"

    def builtin_unchanged(self, resource: ApiResource, *, key: str | None) -> Unchanged | None:
        if key is not None and self.built_from(CAPABILITIES, resource.ref.resource_id) == key:
            return Unchanged(CAPABILITIES, resource.ref.resource_id)
        return None

    def builtin(
        self, resource: ApiResource, *, components: Mapping[str, Any], key: str | None = None
    ) -> Document | None:
        schema = _find_schema(
            components, group=resource.ref.group, version=resource.ref.version, kind=resource.ref.kind
        )
        try:
            document = describe_builtin(
                kind=resource.ref.kind,
                group=resource.ref.group,
                version=resource.ref.version,
                plural=resource.ref.plural,
                namespaced=resource.namespaced,
                short_names=resource.short_names,
                categories=resource.categories,
                schema=schema,
                components=components,
                cluster=self.cluster,
            ).to_document()
        except Exception as exc:
            self._report(f"builtin/{resource.ref.resource_id}", exc)
            return None
        return (
            with_built_from(document, key) if key is not None and document.id == resource.ref.resource_id else document
        )

    def _report(self, identity: str, exc: Exception) -> None:
        reason = exc.reason if isinstance(exc, InferenceError) else "error"
        reason = reason if reason in DOCUMENT_SKIP_REASONS else "error"
        error = str(exc) if isinstance(exc, InferenceError) else f"{type(exc).__name__}: {redact_text(str(exc))[:200]}"
        self._metrics.errors.labels(stage="inference").inc()
        self._metrics.documents_skipped.labels(reason=reason).inc()
        self.skipped[identity] = reason
        key = f"{identity}:{error}"
        if key not in self._reported:  # once per object and problem, not on every event
            if len(self._reported) > 10_000:
                self._reported.clear()  # bounded; a problem that persists is logged again, once
            self._reported.add(key)
            logger.warning(
                "Skipped an object that cannot be indexed object=%s reason=%s error=%s", identity, reason, error
            )


#: Skipped objects remembered for ``kubevec status`` (the metric counts every one).
MAX_SKIPPED = 1000


def _identity(body: Body, *, plural: str) -> str:
    """``plural/namespace/name`` (``plural/name`` cluster-wide): how logs and status name an object."""
    return ObjectName.of(metadata_of(body)).key(plural)


def _find_schema(components: Mapping[str, Any], *, group: str, version: str, kind: str) -> Mapping[str, Any] | None:
    for schema in components.values():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            if gvk.get("group", "") == group and gvk.get("version") == version and gvk.get("kind") == kind:
                return schema  # type: ignore[no-any-return]
    return None
