"""Instance documents: one per live object, with the metadata agents filter on.

Built only from ``metadata`` (name, namespace, labels, owner, selected annotations, uid, creation
time) and ``spec``-like content, after redaction. ``resourceVersion``, ``generation`` and
timestamps other than creation are never read, and ``status`` only for a coarse health summary in
the metadata (``inference/health.py``); references to other objects are metadata too
(``inference/references.py``). So churn does not change the text, and changes the
metadata (hence the content hash) only when the summary changes; a label or image change does.
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
from kubevec.inference.redaction import REDACTED, Redacted, redact_object
from kubevec.inference.references import Links, links_of

#: Labels written into the *text* (the payload's ``labels`` list always holds every label: filters are exact).
MAX_TEXT_LABELS: Final = 20
MAX_SPEC_FIELDS: Final = 12
MAX_VALUE_CHARS: Final = 80
MAX_LIST_ITEMS: Final = 6
#: Annotation keys whose values describe an object in words.
DESCRIPTIVE_ANNOTATION = re.compile(r"(description|summary|purpose|documentation|owner|team|contact)$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True, kw_only=True)
class InstancePolicy:
    """What the SyncPolicy lets into instance documents (defaults: ConfigMap key names, no extra annotations)."""

    annotation_allowlist: tuple[str, ...] = ()
    configmap_keys: bool = True


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
        if self.health is not None:
            metadata.update(self.health.metadata())
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
) -> InstanceDoc:
    """An InstanceDoc for any object; raises :class:`InferenceError` naming the object if it is malformed."""
    policy = policy or InstancePolicy()
    raw_meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    kind = str(obj.get("kind", "")) if isinstance(obj, Mapping) else ""
    name = str(raw_meta.get("name", "")) if isinstance(raw_meta, Mapping) else ""
    if not isinstance(raw_meta, Mapping) or not name or not kind or not obj.get("apiVersion"):
        raise InferenceError(f"Object {kind or '<no kind>'}/{name or '<no name>'} lacks apiVersion, kind or name")
    try:
        built = _build(redact_object(obj), plural=plural, cluster=cluster, policy=policy)
    except TooComplex as exc:
        exc.args = (f"Object {kind}/{name} is past a bound: {exc}",)
        raise
    except (KeyError, TypeError, AttributeError, ValueError, RecursionError) as exc:
        raise InferenceError(f"Object {kind}/{name} is malformed: {type(exc).__name__}: {exc}") from exc
    try:
        health = health_of(obj)
    except (KeyError, TypeError, AttributeError, ValueError, RecursionError):
        health = None  # an odd status only costs the summary, never the document
    try:
        links = links_of(obj)
    except (KeyError, TypeError, AttributeError, ValueError, RecursionError):
        links = Links()  # the same for odd references
    return dataclasses.replace(built, health=health, links=links)


def _build(source: Redacted, *, plural: str, cluster: str, policy: InstancePolicy) -> InstanceDoc:
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
    text = " | ".join([*head, *summary, *annotations])
    return InstanceDoc(
        id=ref.instance_id(cluster=cluster, namespace=namespace, name=name),
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
    )


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
            out.append(f"{key.rsplit('/', 1)[-1]}: {_short(value, limit=200)}")
    return tuple(out)


# -- kind-aware summaries --------------------------------------------------------------------------


def _summarise(*, kind: str, group: str, source: Redacted, policy: InstancePolicy) -> list[str]:
    summariser = _SUMMARISERS.get((group, kind), _generic)
    return summariser(source, policy)


def _pod_spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template", {}).get("spec") or {}
    elif obj.get("kind") != "Pod":
        spec = (spec.get("template") or {}).get("spec") or {}
    return spec if isinstance(spec, Mapping) else {}


def _workload(source: Redacted, _: InstancePolicy) -> list[str]:
    obj = source.obj
    spec = obj.get("spec") or {}
    pod = _pod_spec(obj)
    out = []
    containers = [c for c in pod.get("containers") or [] if isinstance(c, Mapping)]
    images = [str(c.get("image")) for c in containers if c.get("image")]
    if images:
        out.append("images: " + ", ".join(images[:MAX_LIST_ITEMS]))
    ports = [
        f"{p.get('containerPort')}/{p.get('protocol', 'TCP')}"
        for c in containers
        for p in c.get("ports") or []
        if isinstance(p, Mapping) and p.get("containerPort")
    ]
    if ports:
        out.append("ports: " + ", ".join(ports[:MAX_LIST_ITEMS]))
    if isinstance(spec, Mapping):
        if "replicas" in spec:
            out.append(f"replicas: {spec['replicas']}")
        if obj.get("kind") == "CronJob" and spec.get("schedule"):
            out.append(f"schedule: {spec['schedule']}")
    if pod.get("serviceAccountName"):
        out.append(f"serviceAccount: {pod['serviceAccountName']}")
    return out


def _service(source: Redacted, _: InstancePolicy) -> list[str]:
    obj = source.obj
    spec = obj.get("spec") or {}
    out = [f"type: {spec.get('type', 'ClusterIP')}"]
    ports = [
        f"{p.get('port')}/{p.get('protocol', 'TCP')}" + (f" ({p['name']})" if p.get("name") else "")
        for p in spec.get("ports") or []
        if isinstance(p, Mapping)
    ]
    if ports:
        out.append("ports: " + ", ".join(ports[:MAX_LIST_ITEMS]))
    selector = spec.get("selector")
    if isinstance(selector, Mapping) and selector:
        out.append("selector: " + ", ".join(f"{k}={v}" for k, v in sorted(selector.items())))
    if spec.get("externalName"):
        out.append(f"externalName: {spec['externalName']}")
    return out


def _ingress(source: Redacted, _: InstancePolicy) -> list[str]:
    obj = source.obj
    spec = obj.get("spec") or {}
    hosts = [str(r.get("host")) for r in spec.get("rules") or [] if isinstance(r, Mapping) and r.get("host")]
    backends = []
    for rule in spec.get("rules") or []:
        for path in ((rule or {}).get("http") or {}).get("paths") or []:
            service = ((path or {}).get("backend") or {}).get("service") or {}
            if service.get("name"):
                backends.append(f"{path.get('path', '/')} -> {service['name']}")
    out = []
    if hosts:
        out.append("hosts: " + ", ".join(hosts[:MAX_LIST_ITEMS]))
    if backends:
        out.append("routes: " + ", ".join(backends[:MAX_LIST_ITEMS]))
    if spec.get("ingressClassName"):
        out.append(f"class: {spec['ingressClassName']}")
    return out


def _http_route(source: Redacted, _: InstancePolicy) -> list[str]:
    obj = source.obj
    spec = obj.get("spec") or {}
    out = []
    hostnames = [str(h) for h in spec.get("hostnames") or []]
    if hostnames:
        out.append("hosts: " + ", ".join(hostnames[:MAX_LIST_ITEMS]))
    parents = [str(p.get("name")) for p in spec.get("parentRefs") or [] if isinstance(p, Mapping)]
    if parents:
        out.append("gateways: " + ", ".join(parents[:MAX_LIST_ITEMS]))
    backends = [
        str(b.get("name"))
        for rule in spec.get("rules") or []
        for b in (rule or {}).get("backendRefs") or []
        if isinstance(b, Mapping)
    ]
    if backends:
        out.append("backends: " + ", ".join(dict.fromkeys(backends[:MAX_LIST_ITEMS])))
    return out


def _pvc(source: Redacted, _: InstancePolicy) -> list[str]:
    obj = source.obj
    spec = obj.get("spec") or {}
    out = []
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if size:
        out.append(f"size: {size}")
    if spec.get("storageClassName"):
        out.append(f"storageClass: {spec['storageClassName']}")
    if spec.get("accessModes"):
        out.append("accessModes: " + ", ".join(map(str, spec["accessModes"])))
    return out


def _keys_only(source: Redacted, policy: InstancePolicy) -> list[str]:
    obj, keys = source.obj, source.data_keys
    out = []
    if obj.get("kind") == "Secret" and obj.get("type"):
        out.append(f"type: {obj['type']}")
    if keys and (obj.get("kind") == "Secret" or policy.configmap_keys):
        out.append("keys: " + ", ".join(keys[:20]))
    return out


def _generic(source: Redacted, _: InstancePolicy) -> list[str]:
    """Top-level scalar (and short scalar-list) spec fields, for custom resources and the rest."""
    obj = source.obj
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return []
    out = []
    for key in sorted(spec):
        value = spec[key]
        rendered = _render_scalarish(value)
        if rendered is None:
            continue
        out.append(f"{key}: {rendered}")
        if len(out) >= MAX_SPEC_FIELDS:
            break
    for key in sorted(spec):
        ref = spec[key]
        if key.endswith("Ref") and isinstance(ref, Mapping) and ref.get("name") and len(out) < MAX_SPEC_FIELDS:
            out.append(f"{key}: {ref.get('kind', '')}/{ref['name']}".replace(": /", ": "))
    return out


def _render_scalarish(value: Any) -> str | None:
    if isinstance(value, bool | int | float):
        return str(value).lower() if isinstance(value, bool) else str(value)
    if isinstance(value, str):
        return None if value == REDACTED or not value.strip() else _short(value, limit=MAX_VALUE_CHARS)
    if isinstance(value, list) and value and all(isinstance(v, str | int | float | bool) for v in value):
        items = [str(v) for v in value if v != REDACTED][:MAX_LIST_ITEMS]
        return ", ".join(_short(i, limit=MAX_VALUE_CHARS) for i in items) or None
    return None


def _short(value: str, *, limit: int) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


_Summariser = Callable[[Redacted, InstancePolicy], list[str]]
_SUMMARISERS: Final[dict[tuple[str, str], _Summariser]] = {
    ("apps", "Deployment"): _workload,
    ("apps", "StatefulSet"): _workload,
    ("apps", "DaemonSet"): _workload,
    ("apps", "ReplicaSet"): _workload,
    ("batch", "Job"): _workload,
    ("batch", "CronJob"): _workload,
    ("", "Pod"): _workload,
    ("", "Service"): _service,
    ("networking.k8s.io", "Ingress"): _ingress,
    ("gateway.networking.k8s.io", "HTTPRoute"): _http_route,
    ("gateway.networking.k8s.io", "GRPCRoute"): _http_route,
    ("", "PersistentVolumeClaim"): _pvc,
    ("", "Secret"): _keys_only,
    ("", "ConfigMap"): _keys_only,
}
