"""One instance document: the head every kind shares, the kind's summary, and the metadata agents filter on.

:func:`build_instance` redacts the object first (:mod:`kubevec.inference.redaction`), renders the
head (kind, name, namespace, labels, owner, descriptive annotations) and the summary of the kind's
family, and adds what is metadata only: the facts for listing (:func:`facts_of`), the health
summary, the references to other objects and the latest Warning Event.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kubevec.core.errors import InferenceError, TooComplex
from kubevec.inference.bodies import Body
from kubevec.inference.documents import INSTANCES, Document, make_document
from kubevec.inference.health import Health, health_of
from kubevec.inference.identity import ResourceRef
from kubevec.inference.instances import config, networking, rbac, workloads
from kubevec.inference.instances.generic import spec_summary
from kubevec.inference.instances.rbac import subjects_of
from kubevec.inference.instances.summary import MAX_TEXT_LABELS, InstancePolicy, Summariser, short
from kubevec.inference.instances.workloads import workload_metadata
from kubevec.inference.redaction import Redacted, redact_object, redact_text
from kubevec.inference.references import Links, links_of
from kubevec.inference.warnings import Warning

#: Annotation keys whose values describe an object in words.
DESCRIPTIVE_ANNOTATION = re.compile(r"(description|summary|purpose|documentation|owner|team|contact)$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True, kw_only=True)
class InstanceDoc:
    id: str
    cluster: str
    kind: str
    group: str
    version: str
    plural: str
    namespace: str | None
    name: str
    uid: str
    labels: tuple[str, ...]
    owner: str | None
    created_at: str
    summary: tuple[str, ...]
    annotations: tuple[str, ...]
    text: str
    health: Health | None = None
    links: Links = dataclasses.field(default_factory=Links)
    #: Kind-specific fields agents filter, list and count by (``images``, ``subjects``...): see :func:`facts_of`.
    facts: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: The object's latest Warning Event (``kubevec.inference.warnings``): metadata only.
    warning: Warning | None = None
    #: What an LLM is (or would be) told about a workload's template (``workloads.template_facts``).
    template: str | None = None
    #: What the LLM said the software is, when it was asked already: a ``does:`` line in the text.
    note: str | None = None

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(group=self.group, version=self.version, plural=self.plural, kind=self.kind)

    @property
    def api_version(self) -> str:
        return self.ref.api_version

    def to_document(self) -> Document:
        ref = self.ref
        metadata: dict[str, Any] = {
            "cluster": self.cluster,
            "kind": self.kind,
            "group": ref.payload_group,
            "version": self.version,
            "api_version": ref.api_version,
            "resource": ref.resource_id,
            "name": self.name,
            "uid": self.uid,
            "labels": list(self.labels),
            "created_at": self.created_at,
        }
        if self.namespace:
            metadata["namespace"] = self.namespace
        if self.owner:
            metadata["owner"] = self.owner
        metadata.update(self.facts)
        if self.health is not None:
            metadata.update(self.health.metadata())
        if self.warning is not None:
            metadata.update(self.warning.metadata())
        metadata.update(self.links.metadata())
        owner = self.owner.rpartition("/")[2] if self.owner else ""
        identity = tuple(v for v in (self.name, self.namespace or "", self.uid, owner) if v)
        return make_document(id=self.id, collection=INSTANCES, text=self.text, metadata=metadata, identity=identity)


def build_instance(
    obj: Body,
    *,
    plural: str,
    cluster: str = "default",
    policy: InstancePolicy | None = None,
    warning: Warning | None = None,
    id: str | None = None,
    notes: Callable[[str], str | None] | None = None,
) -> InstanceDoc:
    """An InstanceDoc for any object; raises :class:`InferenceError` naming the object if it is malformed.

    ``warning``: the object's latest Warning Event, if any (metadata only). ``id``: the document id the
    caller computed from the same identity already (a watch event computes it once); else computed here.
    ``notes``: what an LLM said about a workload's template facts, if it was asked (None: not asked);
    the caller asks for the ones missing (``InstanceDoc.template`` set, ``note`` None)."""
    policy = policy or InstancePolicy()
    raw_meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    kind = str(obj.get("kind", "")) if isinstance(obj, Mapping) else ""
    name = str(raw_meta.get("name", "")) if isinstance(raw_meta, Mapping) else ""
    if not isinstance(raw_meta, Mapping) or not name or not kind or not obj.get("apiVersion"):
        raise InferenceError(f"Object {kind or '<no kind>'}/{name or '<no name>'} lacks apiVersion, kind or name")
    try:
        source = redact_object(obj)  # the body judged once: everything below reads the judged copy
        template = workloads.template_facts(source.obj) if notes is not None else None
        note = notes(template) if notes is not None and template is not None else None
        built = _build(source, plural=plural, cluster=cluster, policy=policy, id=id, note=note)
    except TooComplex as exc:
        exc.args = (f"Object {kind}/{name} is past a bound: {exc}",)
        raise
    except (KeyError, TypeError, AttributeError, ValueError, RecursionError) as exc:
        raise InferenceError(f"Object {kind}/{name} is malformed: {type(exc).__name__}: {exc}") from exc
    try:
        health = health_of(source.obj)
    except (KeyError, TypeError, AttributeError, ValueError, RecursionError):
        health = None  # an odd status only costs the summary, never the document
    try:
        links = links_of(source.obj)
    except (KeyError, TypeError, AttributeError, ValueError, RecursionError):
        links = Links()  # the same for odd references
    return dataclasses.replace(built, health=health, links=links, warning=warning, template=template, note=note)


def _build(
    source: Redacted, *, plural: str, cluster: str, policy: InstancePolicy, id: str | None, note: str | None = None
) -> InstanceDoc:
    obj = source.obj
    meta = obj["metadata"]
    kind = str(obj["kind"])
    ref = ResourceRef.from_api_version(str(obj["apiVersion"]), kind=kind, plural=plural)
    name = str(meta["name"])
    namespace = str(meta["namespace"]) if meta.get("namespace") else None
    labels_map = meta.get("labels")
    labels = tuple(sorted(f"{k}={v}" for k, v in labels_map.items())) if isinstance(labels_map, Mapping) else ()
    owner = _owner(meta.get("ownerReferences"))
    annotations = _annotations(meta.get("annotations"), allow=policy.annotation_allowlist)
    summary = tuple(_summarise(kind=kind, group=ref.group, source=source, policy=policy))
    head = [f"{kind} {name}"]
    if namespace:
        head.append(f"namespace: {namespace}")
    head.append(f"apiVersion: {ref.api_version}")
    if labels:
        more = len(labels) - MAX_TEXT_LABELS
        head.append("labels: " + ", ".join(labels[:MAX_TEXT_LABELS]) + (f" (+{more} more)" if more > 0 else ""))
    if owner:
        head.append(f"owner: {owner}")
    if note:  # an LLM's words about the template, judged like any text
        head.append(f"does: {short(redact_text(note), limit=300)}")
    text = " | ".join([*head, *summary, *annotations])
    try:
        facts = facts_of(obj)
    except (KeyError, TypeError, AttributeError, ValueError):
        facts = {}  # an odd field costs the facts, never the document
    return InstanceDoc(
        id=id if id is not None else ref.instance_id(cluster=cluster, namespace=namespace, name=name),
        cluster=cluster,
        kind=kind,
        group=ref.group,
        version=ref.version,
        plural=plural,
        namespace=namespace,
        name=name,
        uid=str(meta.get("uid", "")),
        labels=labels,
        owner=owner,
        created_at=str(meta.get("creationTimestamp", "")),
        summary=summary,
        annotations=annotations,
        text=text,
        facts=facts,
    )


_RUNS_CONTAINERS: Final = frozenset({"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"})


def facts_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata for listing questions ("images of every Pod", "Deployments with no limits", "who is bound
    to cluster-admin", "quota usage"), from the redacted object: scalars and lists of strings only."""
    kind = str(obj.get("kind", ""))
    if kind in _RUNS_CONTAINERS:
        return workload_metadata(obj)
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        role = obj.get("roleRef")
        out: dict[str, Any] = {"subjects": [s.replace(" ", "/") for s in subjects_of(obj)][:64]}
        if isinstance(role, Mapping) and role.get("name"):
            out["role"] = f"{role.get('kind')}/{role['name']}"
        return out
    if kind == "ResourceQuota":
        status = obj.get("status") or {}
        out = {}
        for field, key in (("hard", "quota_hard"), ("used", "quota_used")):
            amounts = status.get(field) if isinstance(status, Mapping) else None
            if isinstance(amounts, Mapping) and amounts:
                out[key] = [f"{k}={v}" for k, v in sorted(amounts.items())][:64]
        return out
    if kind == "Service":
        spec = obj.get("spec") or {}
        return {"service_type": str(spec.get("type") or "ClusterIP")} if isinstance(spec, Mapping) else {}
    return {}


def _owner(refs: Any) -> str | None:
    if not isinstance(refs, list) or not refs:
        return None
    controller = next((r for r in refs if isinstance(r, Mapping) and r.get("controller")), refs[0])
    if not isinstance(controller, Mapping):
        return None
    return f"{controller.get('kind')}/{controller.get('name')}"


def _annotations(annotations: Any, *, allow: Sequence[str]) -> tuple[str, ...]:
    if not isinstance(annotations, Mapping):
        return ()
    out = []
    for key in sorted(annotations):
        value = annotations[key]
        if not isinstance(value, str) or not value.strip():
            continue
        if key in allow or DESCRIPTIVE_ANNOTATION.search(key.rsplit("/", 1)[-1]):
            out.append(f"{key.rsplit('/', 1)[-1]}: {short(value, limit=200)}")
    return tuple(out)


def _summarise(*, kind: str, group: str, source: Redacted, policy: InstancePolicy) -> list[str]:
    summariser = _SUMMARISERS.get((group, kind), spec_summary)
    return summariser(source, policy)


_SUMMARISERS: Final[dict[tuple[str, str], Summariser]] = {
    **workloads.SUMMARISERS,
    **networking.SUMMARISERS,
    **rbac.SUMMARISERS,
    **config.SUMMARISERS,
}
