"""Outgoing object references: what an object names, so agents can ask "what depends on this?".

An instance payload carries ``refs`` (target keys, ``Kind/namespace/name``, ``_cluster`` for
cluster-scoped targets, see :func:`kubevec.inference.identity.object_key`) and ``ref_relations`` (the
relation of each, same order), plus, for label selection, ``selector`` (a Service's) and
``pod_labels`` (a workload's pod-template labels). Read from:

- every object: ``ownerReferences`` (``owned-by``);
- pod specs, wherever they sit (Pods, workloads, CronJobs, and any custom resource with a
  ``containers`` list): ConfigMaps and Secrets in volumes, projected volumes, ``env`` and
  ``envFrom`` (``uses-configmap``, ``uses-secret``), volume claims (``mounts-claim``), the service
  account (``runs-as``), image pull secrets (``pulls-with``), the node (``scheduled-on``), and the
  Services the containers' env values and arguments address (``calls``, with ``call_evidence``: the
  variable's name or ``args``; a candidate the related query keeps only if the Service is stored);
- Ingress (``routes-to`` Service, ``uses-secret`` for TLS, ``uses-class``), HTTPRoute/GRPCRoute
  (``routes-to`` backends, ``attached-to`` parents), PersistentVolumeClaim (``uses-class``,
  ``bound-to``), PersistentVolume (``bound-to``), RoleBinding/ClusterRoleBinding (``grants``
  the role, ``binds`` subjects), HorizontalPodAutoscaler (``scales``);
- custom-resource specs: fields named ``*Ref``/``*Refs`` holding a ``name`` (the kind from the
  field's ``kind`` or its name: ``issuerRef`` -> Issuer, ``passwordSecretRef`` -> Secret), and
  ``*Name`` fields whose name says the kind (``secretName``, ``serviceAccountName``...); the
  relation is the field's name.

Names only: values are read from fields that hold object names (and the host of an address, from the
gate's judged copy of the object), and a value that is not a valid Kubernetes name (a credential
pasted where a name belongs) is ignored. Everything is metadata,
never text: adding or changing a reference re-uses the stored vector.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from kubevec.core.words import camel_words
from kubevec.inference.addresses import container_addresses
from kubevec.inference.identity import object_key

#: Relations read from fields whose meaning Kubernetes defines (owner references, pod specs, the
#: built-in kinds' own references) or computed from a selector that matches: ``definite``. Every
#: other relation is a custom resource's field named like a reference (``issuerRef``, ``secretName``):
#: ``inferred`` from the convention, not from the schema.
DEFINITE_RELATIONS: Final = frozenset(
    {
        "owned-by",
        "uses-configmap",
        "uses-secret",
        "mounts-claim",
        "runs-as",
        "pulls-with",
        "scheduled-on",
        "uses-class",
        "routes-to",
        "attached-to",
        "bound-to",
        "scales",
        "grants",
        "binds",
        "selects",
        "priority-level",
    }
)

#: A workload calls a Service its env values or arguments address (:mod:`kubevec.inference.addresses`):
#: ``inferred`` from a value's shape, and a candidate until the store has that Service.
CALLS: Final = "calls"
#: Relations an earlier builder wrote under another name: a store it wrote answers until it re-syncs.
RENAMED_RELATIONS: Final = {"connects-to": CALLS}
MAX_REFS: Final = 64
MAX_DEPTH: Final = 10
MAX_NODES: Final = 5000
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
#: RBAC objects are named by path segments: ``system:controller:job-controller`` is a real ClusterRole.
_RBAC_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9.:_@]{0,251}[A-Za-z0-9])?$")
_RBAC_KINDS: Final = frozenset({"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"})
#: Built-in resources named by plural (``parentRef: {resource: services}``): their kinds.
_BUILTIN_PLURALS: Final = {
    "services": "Service",
    "pods": "Pod",
    "nodes": "Node",
    "namespaces": "Namespace",
    "configmaps": "ConfigMap",
    "secrets": "Secret",
    "deployments": "Deployment",
    "statefulsets": "StatefulSet",
    "daemonsets": "DaemonSet",
    "gateways": "Gateway",
    "servicecidrs": "ServiceCIDR",
}
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]{0,62}$")
#: Built-in kinds without a namespace; any other kind starting with ``Cluster`` counts too.
CLUSTER_SCOPED_KINDS: Final = frozenset(
    {
        "Node",
        "Namespace",
        "PersistentVolume",
        "StorageClass",
        "IngressClass",
        "PriorityClass",
        "RuntimeClass",
        "CustomResourceDefinition",
        "GatewayClass",
        "APIService",
        "CSIDriver",
        "VolumeAttachment",
        "FlowSchema",
        "PriorityLevelConfiguration",
        "IPAddress",
        "ServiceCIDR",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
        "CertificateSigningRequest",
    }
)
#: ``*Name`` fields that name an object of a known kind.
NAME_FIELDS: Final = {
    "secretName": "Secret",
    "configMapName": "ConfigMap",
    "serviceAccountName": "ServiceAccount",
    "serviceName": "Service",
    "claimName": "PersistentVolumeClaim",
    "storageClassName": "StorageClass",
    "ingressClassName": "IngressClass",
    "priorityClassName": "PriorityClass",
    "issuerName": "Issuer",
    "clusterIssuerName": "ClusterIssuer",
}
#: ``*Ref`` fields whose kind is not their capitalised stem.
_REF_KINDS: Final = {
    "secretKey": "Secret",
    "configMapKey": "ConfigMap",
    "claim": "PersistentVolumeClaim",
    "certificate": "Secret",  # Gateway API ``certificateRefs``
}
#: A selector that selects everything (``podSelector: {}``), or a selector's namespaces when it is ``any: true``.
EVERY: Final = "*"
#: Kinds whose selector picks the Pods they act on, the field it is in, and the relation it makes.
POD_SELECTORS: Final = {
    "Service": "selector",
    "NetworkPolicy": "podSelector",
    "PodDisruptionBudget": "selector",
    "PodMonitor": "selector",
}
#: Relations read from a label selector: the relation of the kind that holds it.
SELECTOR_RELATIONS: Final = {"PodMonitor": "monitors", "ServiceMonitor": "monitors"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Reference:
    relation: str
    kind: str
    namespace: str | None
    name: str
    #: What names it, where the relation is read from a value (``calls``): env variable names or ``args``.
    via: str = ""

    @property
    def key(self) -> str:
        return object_key(kind=self.kind, namespace=self.namespace, name=self.name)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Links:
    """What an object's payload says about its neighbours (see the module docstring)."""

    refs: tuple[Reference, ...] = ()
    #: The Pods it selects by label (a Service, NetworkPolicy, PodDisruptionBudget, PodMonitor);
    #: :data:`EVERY` alone for an empty selector, which selects every Pod of the namespace.
    selector: tuple[str, ...] = ()
    #: The Services it selects by label (a ServiceMonitor).
    service_selector: tuple[str, ...] = ()
    #: Where a selector looks besides the object's own namespace: names, or :data:`EVERY` for all.
    selector_namespaces: tuple[str, ...] = ()
    pod_labels: tuple[str, ...] = ()

    def metadata(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        if self.refs:
            out["refs"] = [r.key for r in self.refs]
            out["ref_relations"] = [r.relation for r in self.refs]
            if evidence := [r.via for r in self.refs if r.relation == CALLS]:
                out["call_evidence"] = evidence
        for key in ("selector", "service_selector", "selector_namespaces", "pod_labels"):
            value: tuple[str, ...] = getattr(self, key)
            if value:
                out[key] = list(value)
        return out


def evidence_of(relation: str) -> str:
    """``definite`` (Kubernetes defines the field, or a selector matches) or ``inferred`` (a field's name)."""
    return "definite" if relation in DEFINITE_RELATIONS else "inferred"


def is_cluster_scoped(kind: str) -> bool:
    return kind in CLUSTER_SCOPED_KINDS or (kind.startswith("Cluster") and kind != "Cluster")


def links_of(obj: Mapping[str, Any]) -> Links:
    """The references, selector and pod labels of one object; odd shapes are skipped, never raised."""
    kind = str(obj.get("kind", ""))
    raw_meta = obj.get("metadata")
    meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
    namespace = str(meta["namespace"]) if isinstance(meta.get("namespace"), str) and meta["namespace"] else None
    collector = _Collector(namespace=namespace)
    for owner in _maps(meta.get("ownerReferences")):
        collector.add("owned-by", owner.get("kind"), owner.get("name"))
    raw_spec = obj.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    rule = _RULES.get(kind)
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        _binding(obj, collector)
    elif rule is not None:
        rule(spec, collector)
    else:
        _walk(spec, collector, depth=0)
    selector: tuple[str, ...] = ()
    service_selector: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    if kind == "Service" and isinstance(spec.get("selector"), Mapping):
        selector = _pairs(spec["selector"])
    elif kind in POD_SELECTORS:
        selector = _label_selector(spec.get(POD_SELECTORS[kind]))
    elif kind == "ServiceMonitor":
        service_selector = _label_selector(spec.get("selector"))
    if kind in ("PodMonitor", "ServiceMonitor"):
        namespaces = _namespaces(spec.get("namespaceSelector"))
    pod_labels: tuple[str, ...] = ()
    template = spec.get("template")
    if kind == "CronJob":
        job = spec.get("jobTemplate")
        template = _get(_get(job, "spec"), "template")
    if kind != "Pod" and isinstance(template, Mapping):
        pod_labels = _pairs(_get(template.get("metadata"), "labels"))
    return Links(
        refs=tuple(collector.refs.values()),
        selector=selector,
        service_selector=service_selector,
        selector_namespaces=namespaces,
        pod_labels=pod_labels,
    )


def _label_selector(value: Any) -> tuple[str, ...]:
    """A ``LabelSelector``'s ``matchLabels`` as pairs; :data:`EVERY` for ``{}``.

    A selector with ``matchExpressions`` gives nothing: the store filters on exact pairs, and an
    edge guessed from half a selector would be wrong (precision over recall)."""
    if not isinstance(value, Mapping) or value.get("matchExpressions"):
        return ()
    labels = value.get("matchLabels")
    if not labels:
        return (EVERY,) if not any(value.values()) else ()
    return _pairs(labels)


def _namespaces(value: Any) -> tuple[str, ...]:
    """A monitor's ``namespaceSelector``: ``any: true`` is every namespace, ``matchNames`` those."""
    if not isinstance(value, Mapping):
        return ()
    if value.get("any") is True:
        return (EVERY,)
    names = value.get("matchNames")
    return (
        tuple(sorted(str(n) for n in names if isinstance(n, str) and _NAME.match(n)))[:32]
        if isinstance(names, list)
        else ()
    )


class _Collector:
    def __init__(self, *, namespace: str | None) -> None:
        self.namespace = namespace
        self.refs: dict[tuple[str, str], Reference] = {}
        self.nodes = 0

    def add(self, relation: str, kind: Any, name: Any, namespace: Any = None, *, via: str = "") -> None:
        if not isinstance(kind, str) or not isinstance(name, str):
            return
        if not _KIND.match(kind) or not (_NAME.match(name) or (kind in _RBAC_KINDS and _RBAC_NAME.match(name))):
            return
        if is_cluster_scoped(kind):
            where = None
        elif isinstance(namespace, str) and _NAME.match(namespace):
            where = namespace
        else:
            where = self.namespace
        if where is None and relation == CALLS:
            return  # a bare host in a cluster-scoped object names no namespace to look in
        ref = Reference(relation=relation, kind=kind, namespace=where, name=name, via=via)
        known = self.refs.get((relation, ref.key))
        if known is not None:
            if via and via not in known.via.split(","):  # two variables naming one Service: both are evidence
                self.refs[(relation, ref.key)] = dataclasses.replace(known, via=f"{known.via},{via}".strip(","))
        elif len(self.refs) < MAX_REFS:
            self.refs[(relation, ref.key)] = ref


def _maps(value: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, Mapping))


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, Mapping) else None


def _pairs(value: Any) -> tuple[str, ...]:
    if not isinstance(value, Mapping):
        return ()
    return tuple(sorted(f"{k}={v}" for k, v in value.items() if isinstance(k, str) and isinstance(v, str)))[:32]


# -- pod specs -------------------------------------------------------------------------------------


def _pod_spec(pod: Mapping[str, Any], out: _Collector) -> None:
    for volume in _maps(pod.get("volumes")):
        out.add("uses-configmap", "ConfigMap", _get(volume.get("configMap"), "name"))
        out.add("uses-secret", "Secret", _get(volume.get("secret"), "secretName"))
        out.add("mounts-claim", "PersistentVolumeClaim", _get(volume.get("persistentVolumeClaim"), "claimName"))
        for source in _maps(_get(volume.get("projected"), "sources")):
            out.add("uses-configmap", "ConfigMap", _get(source.get("configMap"), "name"))
            out.add("uses-secret", "Secret", _get(source.get("secret"), "name"))
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in _maps(pod.get(field)):
            for source in _maps(container.get("envFrom")):
                out.add("uses-configmap", "ConfigMap", _get(source.get("configMapRef"), "name"))
                out.add("uses-secret", "Secret", _get(source.get("secretRef"), "name"))
            for env in _maps(container.get("env")):
                value_from = env.get("valueFrom")
                out.add("uses-configmap", "ConfigMap", _get(_get(value_from, "configMapKeyRef"), "name"))
                out.add("uses-secret", "Secret", _get(_get(value_from, "secretKeyRef"), "name"))
    containers = [c for field in ("initContainers", "containers") for c in _maps(pod.get(field))]
    _calls(containers, out)
    out.add("runs-as", "ServiceAccount", pod.get("serviceAccountName") or pod.get("serviceAccount"))
    for secret in _maps(pod.get("imagePullSecrets")):
        out.add("pulls-with", "Secret", secret.get("name"))
    out.add("scheduled-on", "Node", pod.get("nodeName"))
    out.add("uses-class", "PriorityClass", pod.get("priorityClassName"))


def _calls(containers: list[Mapping[str, Any]], out: _Collector) -> None:
    """A ``calls`` reference to each Service an address may name (:mod:`kubevec.inference.addresses`), with
    the variable (or ``args``) it was read from: a candidate, kept only if the store has that Service."""
    for address in container_addresses(containers):
        if address.service is not None:
            name, namespace = address.service
            out.add("calls", "Service", name, namespace, via=address.via)


def _pod(spec: Mapping[str, Any], out: _Collector) -> None:
    _pod_spec(spec, out)


def _templated(spec: Mapping[str, Any], out: _Collector) -> None:
    pod = _get(spec.get("template"), "spec")
    if isinstance(pod, Mapping):
        _pod_spec(pod, out)


def _cron_job(spec: Mapping[str, Any], out: _Collector) -> None:
    pod = _get(_get(_get(spec.get("jobTemplate"), "spec"), "template"), "spec")
    if isinstance(pod, Mapping):
        _pod_spec(pod, out)


def _ingress(spec: Mapping[str, Any], out: _Collector) -> None:
    out.add("routes-to", "Service", _get(_get(spec.get("defaultBackend"), "service"), "name"))
    for rule in _maps(spec.get("rules")):
        for path in _maps(_get(rule.get("http"), "paths")):
            out.add("routes-to", "Service", _get(_get(path.get("backend"), "service"), "name"))
    for tls in _maps(spec.get("tls")):
        out.add("uses-secret", "Secret", tls.get("secretName"))
    out.add("uses-class", "IngressClass", spec.get("ingressClassName"))


def _route(spec: Mapping[str, Any], out: _Collector) -> None:
    for parent in _maps(spec.get("parentRefs")):
        out.add("attached-to", parent.get("kind") or "Gateway", parent.get("name"), parent.get("namespace"))
    for rule in _maps(spec.get("rules")):
        for backend in _maps(rule.get("backendRefs")):
            out.add("routes-to", backend.get("kind") or "Service", backend.get("name"), backend.get("namespace"))


def _claim(spec: Mapping[str, Any], out: _Collector) -> None:
    out.add("uses-class", "StorageClass", spec.get("storageClassName"))
    out.add("bound-to", "PersistentVolume", spec.get("volumeName"))


def _volume(spec: Mapping[str, Any], out: _Collector) -> None:
    claim = spec.get("claimRef")
    out.add("bound-to", "PersistentVolumeClaim", _get(claim, "name"), _get(claim, "namespace"))
    out.add("uses-class", "StorageClass", spec.get("storageClassName"))


def _autoscaler(spec: Mapping[str, Any], out: _Collector) -> None:
    target = spec.get("scaleTargetRef")
    out.add("scales", _get(target, "kind"), _get(target, "name"))


def _flow_schema(spec: Mapping[str, Any], out: _Collector) -> None:
    out.add("priority-level", "PriorityLevelConfiguration", _get(spec.get("priorityLevelConfiguration"), "name"))


def _istio_route(spec: Mapping[str, Any], out: _Collector) -> None:
    """VirtualService destinations and gateways: Istio's own fields, named as relations (``inferred``)."""
    for section in ("http", "tcp", "tls", "grpc"):
        for rule in _maps(spec.get(section)):
            for route in _maps(rule.get("route")):
                _istio_host(_get(route.get("destination"), "host"), "destination", out)
            _istio_host(_get(_get(rule.get("mirror"), "host"), "host"), "mirror", out)
    gateways = spec.get("gateways")
    for gateway in gateways if isinstance(gateways, list) else []:
        if isinstance(gateway, str) and gateway != "mesh":
            namespace, _, name = gateway.rpartition("/")
            out.add("gateways", "Gateway", name, namespace or None)


def _destination_rule(spec: Mapping[str, Any], out: _Collector) -> None:
    _istio_host(spec.get("host"), "host", out)


def _istio_host(host: Any, relation: str, out: _Collector) -> None:
    """A Service from an Istio host: ``name``, ``name.ns``, ``name.ns.svc[.cluster.local]``; never a wildcard
    or an outside name (``api.example.com`` is not a Service of namespace ``example``)."""
    if not isinstance(host, str) or "*" in host:
        return
    parts = host.split(".")
    if len(parts) > 2 and parts[2] != "svc":
        return
    out.add(relation, "Service", parts[0], parts[1] if len(parts) > 1 else None)


_RULES: Final = {
    "FlowSchema": _flow_schema,
    "VirtualService": _istio_route,
    "DestinationRule": _destination_rule,
    "Pod": _pod,
    "Deployment": _templated,
    "StatefulSet": _templated,
    "DaemonSet": _templated,
    "ReplicaSet": _templated,
    "ReplicationController": _templated,
    "Job": _templated,
    "CronJob": _cron_job,
    "Ingress": _ingress,
    "HTTPRoute": _route,
    "GRPCRoute": _route,
    "TLSRoute": _route,
    "TCPRoute": _route,
    "UDPRoute": _route,
    "PersistentVolumeClaim": _claim,
    "PersistentVolume": _volume,
    "HorizontalPodAutoscaler": _autoscaler,
}


def _binding(obj: Mapping[str, Any], out: _Collector) -> None:
    """RoleBindings keep ``roleRef`` and ``subjects`` beside ``metadata``, not in a spec."""
    role = obj.get("roleRef")
    out.add("grants", _get(role, "kind"), _get(role, "name"))
    for subject in _maps(obj.get("subjects")):
        if subject.get("kind") == "ServiceAccount":
            out.add("binds", "ServiceAccount", subject.get("name"), subject.get("namespace"))


# -- custom resources ------------------------------------------------------------------------------


def _walk(value: Any, out: _Collector, *, depth: int) -> None:
    """Reference-shaped fields anywhere in a spec, and pod specs wherever they sit."""
    out.nodes += 1
    if depth > MAX_DEPTH or out.nodes > MAX_NODES or len(out.refs) >= MAX_REFS:
        return
    if isinstance(value, list):
        for item in value:
            _walk(item, out, depth=depth + 1)
        return
    if not isinstance(value, Mapping):
        return
    if isinstance(value.get("containers"), list):
        _pod_spec(value, out)  # named relations for what pods use; not walked again under field names
        return
    for key, item in value.items():
        if not isinstance(key, str):
            continue
        if key.endswith("Ref") and isinstance(item, Mapping):
            kind = item.get("kind") or _BUILTIN_PLURALS.get(str(item.get("resource"))) or _kind_of(key[:-3])
            out.add(key, kind, item.get("name"), item.get("namespace"))
        elif key.endswith("Refs") and isinstance(item, list):
            for ref in _maps(item):
                out.add(key, ref.get("kind") or _kind_of(key[:-4]), ref.get("name"), ref.get("namespace"))
        elif key in NAME_FIELDS and isinstance(item, str):
            out.add(key, NAME_FIELDS[key], item)
        else:
            _walk(item, out, depth=depth + 1)


def _kind_of(stem: str) -> str:
    """``issuer`` -> Issuer, ``passwordSecret`` -> Secret, ``providerConfig`` -> ProviderConfig."""
    if stem in _REF_KINDS:
        return _REF_KINDS[stem]
    words = camel_words(stem)
    lowered = [w.lower() for w in words]
    if "secret" in lowered:
        return "Secret"
    if lowered[-2:] == ["config", "map"]:
        return "ConfigMap"
    return "".join(w[:1].upper() + w[1:] for w in words)
