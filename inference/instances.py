"""Instance documents: one per live object, with the metadata agents filter on.

Built only from ``metadata`` (name, namespace, labels, owner, selected annotations, uid, creation
time) and ``spec``-like content, after redaction: per kind, the facts agents ask for (containers'
resources, probes and placement, NetworkPolicy rules, Role rules, binding subjects, quota limits,
autoscaler targets; a custom resource's spec leaves by path), never a container's ``env``,
``command`` or ``args``. ``resourceVersion``, ``generation`` and timestamps other than creation are
never read, and ``status`` only for the health summary (``inference/health.py``) and a quota's usage,
both in the metadata, as are the latest Warning Event (``inference/warnings.py``), the references
to other objects (``inference/references.py``) and the facts for listing (:func:`facts_of`). So
churn does not change the text, and changes the metadata (hence the content hash) only when what
it shows changes; a label or image change does.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kubevec.core.errors import InferenceError, TooComplex
from kubevec.inference import software
from kubevec.inference.bodies import Body
from kubevec.inference.documents import INSTANCES, Document, make_document
from kubevec.inference.health import Health, health_of
from kubevec.inference.identity import ResourceRef
from kubevec.inference.redaction import REDACTED, Redacted, redact_object
from kubevec.inference.references import Links, links_of
from kubevec.inference.warnings import Warning

#: Labels written into the *text* (the payload's ``labels`` list always holds every label: filters are exact).
MAX_TEXT_LABELS: Final = 20
MAX_SPEC_FIELDS: Final = 24
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
    #: Kind-specific fields agents filter, list and count by (``images``, ``subjects``...): see :func:`facts_of`.
    facts: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: The object's latest Warning Event (``kubevec.inference.warnings``): metadata only.
    warning: Warning | None = None

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
) -> InstanceDoc:
    """An InstanceDoc for any object; raises :class:`InferenceError` naming the object if it is malformed.

    ``warning``: the object's latest Warning Event, if any (metadata only)."""
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
    return dataclasses.replace(built, health=health, links=links, warning=warning)


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
    try:
        facts = facts_of(obj)
    except (KeyError, TypeError, AttributeError, ValueError):
        facts = {}  # an odd field costs the facts, never the document
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
        out: dict[str, Any] = {"subjects": [s.replace(" ", "/") for s in _subjects(obj)][:64]}
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
    inits = [c for c in pod.get("initContainers") or [] if isinstance(c, Mapping)]
    images = [str(c.get("image")) for c in containers if c.get("image")]
    if images:
        out.append("images: " + ", ".join(images[:MAX_LIST_ITEMS]))
        if known := software.described(images[:MAX_LIST_ITEMS]):
            out.append("software: " + ", ".join(known))
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
    for container in containers[:MAX_LIST_ITEMS]:
        described = _container(container)
        if described:
            out.append(f"container {container.get('name', '?')}: {described}")
    for container in inits[:MAX_LIST_ITEMS]:
        described = _container(container, image=True)
        out.append(f"init container {container.get('name', '?')}: {described}")
    out.extend(_placement(pod))
    volumes = _volumes(pod.get("volumes"))  # the objects mounted are references (metadata); these are not
    if volumes:
        out.append("volumes: " + ", ".join(volumes[: MAX_LIST_ITEMS * 2]))
    return out


#: A container's securityContext switches worth saying when they are on.
_SECURITY_FLAGS: Final = ("privileged", "allowPrivilegeEscalation", "runAsNonRoot", "readOnlyRootFilesystem")
#: Capabilities listed per container and verb (the kernel has about 40).
_MAX_CAPABILITIES: Final = 12
#: Container fields that say how it runs, in the order they are written.
_PROBES: Final = (("readinessProbe", "readiness"), ("livenessProbe", "liveness"), ("startupProbe", "startup"))


def _container(container: Mapping[str, Any], *, image: bool = False) -> str:
    """``requests cpu=100m memory=64Mi; limits ...; readiness http /healthz 8080; runAsNonRoot``.

    ``env``, ``command`` and ``args`` are never read (see docs/security.md): they are where people
    paste credentials, and the objects a container takes its environment from are references already."""
    parts = []
    if image and container.get("image"):
        parts.append(f"image {container['image']}")
    resources = container.get("resources")
    if isinstance(resources, Mapping):
        for key in ("requests", "limits"):
            amounts = resources.get(key)
            if isinstance(amounts, Mapping) and amounts:
                parts.append(f"{key} " + " ".join(f"{k}={v}" for k, v in sorted(amounts.items())))
    for field, word in _PROBES:
        probe = container.get(field)
        if isinstance(probe, Mapping):
            parts.append(f"{word} {_probe(probe)}")
    security = container.get("securityContext")
    if isinstance(security, Mapping):
        parts += _security(security)
    return "; ".join(parts)


def _security(security: Mapping[str, Any]) -> list[str]:
    """``privileged runAsNonRoot``, ``runAsUser 0``, ``capabilities add NET_ADMIN drop ALL``: what security
    questions ask of a container (which run as root, which add capabilities)."""
    flags = [k for k in _SECURITY_FLAGS if security.get(k) is True]
    user = security.get("runAsUser")
    if isinstance(user, int) and not isinstance(user, bool):
        flags.append(f"runAsUser {user}")
    capabilities = security.get("capabilities")
    if isinstance(capabilities, Mapping):
        said = ((verb, _capability_names(capabilities.get(verb))) for verb in ("add", "drop"))
        flags += [f"capabilities {verb} {' '.join(names)}" for verb, names in said if names]
    return [" ".join(flags)] if flags else []


def _capability_names(value: Any) -> list[str]:
    """``NET_ADMIN``-like names only (a capability is one word), at most :data:`_MAX_CAPABILITIES`."""
    names = value[:_MAX_CAPABILITIES] if isinstance(value, list) else []
    return [n for n in names if isinstance(n, str) and n.replace("_", "").isalnum()]


def _probe(probe: Mapping[str, Any]) -> str:
    for kind in ("httpGet", "tcpSocket", "grpc", "exec"):
        how = probe.get(kind)
        if not isinstance(how, Mapping):
            continue
        if kind == "httpGet":
            return f"http {how.get('path', '/')} {how.get('port', '')}".strip()
        if kind == "exec":
            command = how.get("command")
            return "exec " + _short(" ".join(map(str, command)) if isinstance(command, list) else "", limit=60)
        return f"{'tcp' if kind == 'tcpSocket' else 'grpc'} {how.get('port', '')}".strip()
    return "set"


def _placement(pod: Mapping[str, Any]) -> list[str]:
    out = []
    selector = pod.get("nodeSelector")
    if isinstance(selector, Mapping) and selector:
        out.append("nodeSelector: " + ", ".join(f"{k}={v}" for k, v in sorted(selector.items())))
    tolerations = [
        f"{t.get('key', '*')}{'=' + str(t['value']) if t.get('value') else ''}:{t.get('effect', 'any')}"
        for t in pod.get("tolerations") or []
        if isinstance(t, Mapping)
    ]
    if tolerations:
        out.append("tolerations: " + ", ".join(tolerations[:MAX_LIST_ITEMS]))
    affinity = pod.get("affinity")
    if isinstance(affinity, Mapping) and affinity:
        out.append("affinity: " + ", ".join(sorted(str(k) for k in affinity)))
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(flag) is True:
            out.append(f"{flag}: true")
    if pod.get("priorityClassName"):
        out.append(f"priorityClass: {pod['priorityClassName']}")
    if pod.get("nodeName"):
        out.append(f"node: {pod['nodeName']}")
    return out


def _volumes(value: Any) -> list[str]:
    """Volumes that name no object (``emptyDir``, ``hostPath /var/log``): a ConfigMap, Secret or claim
    mounted is a reference, kept in metadata so that a new one re-uses the stored vector."""
    out = []
    for volume in value if isinstance(value, list) else []:
        if not isinstance(volume, Mapping):
            continue
        for key in ("emptyDir", "hostPath"):
            if key in volume:
                path = volume[key].get("path") if key == "hostPath" and isinstance(volume[key], Mapping) else None
                out.append(f"{key}{' ' + str(path) if path else ''}")
    return list(dict.fromkeys(out))


def workload_metadata(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What agents list and count by for anything that runs containers: ``images`` (init containers
    too) and ``resource_limits`` (``all``, ``some`` or ``none`` of the containers set a limit)."""
    pod = _pod_spec(obj)
    containers = [c for c in pod.get("containers") or [] if isinstance(c, Mapping)]
    if not containers:
        return {}
    inits = [c for c in pod.get("initContainers") or [] if isinstance(c, Mapping)]
    images = list(dict.fromkeys(str(c["image"]) for c in [*containers, *inits] if isinstance(c.get("image"), str)))
    limited = [
        isinstance(c.get("resources"), Mapping) and bool((c.get("resources") or {}).get("limits")) for c in containers
    ]
    limits = "all" if all(limited) else "some" if any(limited) else "none"
    out: dict[str, Any] = {"images": images[:32], "resource_limits": limits}
    if obj.get("kind") == "Pod":  # where it runs and its address: "pods per node", "the pod with IP x"
        node = pod.get("nodeName")
        if isinstance(node, str) and node:
            out["node"] = node
        status = obj.get("status")
        address = status.get("podIP") if isinstance(status, Mapping) else None
        if isinstance(address, str) and _is_ip(address):
            out["pod_ip"] = address
    return out


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


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
    targets = [
        f"{p.get('port')} -> {p.get('targetPort')}"
        for p in spec.get("ports") or []
        if isinstance(p, Mapping) and p.get("targetPort") not in (None, p.get("port"))
    ]
    if targets:
        out.append("targetPorts: " + ", ".join(map(str, targets[:MAX_LIST_ITEMS])))
    nodes = [  # NodePort and LoadBalancer: the port every node opens (the API server picks one if none is given)
        f"{p.get('port')} -> {p.get('nodePort')}"
        for p in spec.get("ports") or []
        if isinstance(p, Mapping) and p.get("nodePort")
    ]
    if nodes:
        out.append("nodePorts: " + ", ".join(nodes[:MAX_LIST_ITEMS]))
    for field in ("externalIPs", "loadBalancerSourceRanges"):
        values = spec.get(field)
        if isinstance(values, list) and values:
            out.append(f"{field}: " + ", ".join(map(str, values[:MAX_LIST_ITEMS])))
    for field in ("loadBalancerIP", "externalTrafficPolicy", "sessionAffinity"):
        if spec.get(field) and spec.get(field) != "None":
            out.append(f"{field}: {spec[field]}")
    if spec.get("clusterIP") == "None":
        out.append("headless: true")
    elif isinstance(spec.get("clusterIP"), str) and _is_ip(spec["clusterIP"]):
        out.append(f"clusterIP: {spec['clusterIP']}")  # assigned once at creation, then fixed
    return out


def _selector(value: Any) -> str:
    """A LabelSelector in words: ``app=web, tier in (a, b)``; ``every Pod`` for ``{}``."""
    if not isinstance(value, Mapping):
        return ""
    parts = [f"{k}={v}" for k, v in sorted((value.get("matchLabels") or {}).items())]
    for expression in value.get("matchExpressions") or []:
        if isinstance(expression, Mapping):
            values = ", ".join(map(str, expression.get("values") or []))
            parts.append(
                f"{expression.get('key')} {str(expression.get('operator', '')).lower()} ({values})".replace(" ()", "")
            )
    return ", ".join(parts) or "every Pod"


def _peers(rules: Any, *, field: str) -> list[str]:
    out = []
    for rule in rules if isinstance(rules, list) else []:
        if not isinstance(rule, Mapping):
            continue
        peers = []
        for peer in rule.get(field) or []:
            if not isinstance(peer, Mapping):
                continue
            if "podSelector" in peer:
                peers.append("pods " + _selector(peer["podSelector"]))
            if "namespaceSelector" in peer:
                peers.append("namespaces " + _selector(peer["namespaceSelector"]).replace("every Pod", "all"))
            block = peer.get("ipBlock")
            if isinstance(block, Mapping):
                peers.append(f"ipBlock {block.get('cidr')}")
        ports = [
            f"{p.get('port', 'any')}/{p.get('protocol', 'TCP')}"
            for p in rule.get("ports") or []
            if isinstance(p, Mapping)
        ]
        out.append((" + ".join(peers) or "anywhere") + (f" on {', '.join(ports)}" if ports else ""))
    return out


def _network_policy(source: Redacted, _: InstancePolicy) -> list[str]:
    spec = source.obj.get("spec") or {}
    out = [f"applies to: {_selector(spec.get('podSelector') or {})}"]
    if spec.get("policyTypes"):
        out.append("policyTypes: " + ", ".join(map(str, spec["policyTypes"])))
    for field, direction, word in (("ingress", "from", "ingress from"), ("egress", "to", "egress to")):
        if field in spec:
            peers = _peers(spec.get(field), field=direction)
            out.append(f"{word}: " + ("; ".join(peers[:MAX_LIST_ITEMS]) if peers else "nothing (denied)"))
        elif field.capitalize() in (spec.get("policyTypes") or []):
            out.append(f"{word}: nothing (denied)")
    return out


def _disruption_budget(source: Redacted, _: InstancePolicy) -> list[str]:
    spec = source.obj.get("spec") or {}
    out = [f"{key}: {spec[key]}" for key in ("minAvailable", "maxUnavailable") if key in spec]
    out.append(f"selector: {_selector(spec.get('selector'))}")
    return out


def _quota(source: Redacted, _: InstancePolicy) -> list[str]:
    spec = source.obj.get("spec") or {}
    out = []
    hard = spec.get("hard")
    if isinstance(hard, Mapping) and hard:
        out.append("hard: " + ", ".join(f"{k}={v}" for k, v in sorted(hard.items())))
    if spec.get("scopes"):
        out.append("scopes: " + ", ".join(map(str, spec["scopes"])))
    return out


def _limit_range(source: Redacted, _: InstancePolicy) -> list[str]:
    out = []
    for limit in (source.obj.get("spec") or {}).get("limits") or []:
        if not isinstance(limit, Mapping):
            continue
        parts = [
            f"{key} " + " ".join(f"{k}={v}" for k, v in sorted(limit[key].items()))
            for key in ("default", "defaultRequest", "min", "max")
            if isinstance(limit.get(key), Mapping)
        ]
        out.append(f"{limit.get('type', 'Container')} limits: " + "; ".join(parts))
    return out


def _role(source: Redacted, _: InstancePolicy) -> list[str]:
    """Rules as ``verbs on resources``: what an agent asks ("who can read Secrets?")."""
    obj = source.obj
    rules = []
    raw_rules = obj.get("rules")
    for rule in raw_rules if isinstance(raw_rules, list) else []:
        if not isinstance(rule, Mapping):
            continue
        verbs = ", ".join(map(str, rule.get("verbs") or []))
        groups = [str(g) for g in rule.get("apiGroups") or [] if g]
        things = [
            f"{r}.{groups[0]}" if len(groups) == 1 and groups[0] != "*" else str(r) for r in rule.get("resources") or []
        ]
        things += [str(u) for u in rule.get("nonResourceURLs") or []]
        names = rule.get("resourceNames")
        named = f" named {', '.join(map(str, names))}" if isinstance(names, list) and names else ""
        rules.append(f"{verbs} on {', '.join(things) or '-'}{named}")
    out = []
    if rules:
        more = len(rules) - MAX_SPEC_FIELDS
        out.append("rules: " + "; ".join(rules[:MAX_SPEC_FIELDS]) + (f" (+{more} more)" if more > 0 else ""))
    aggregation = obj.get("aggregationRule")
    if isinstance(aggregation, Mapping):
        selectors = [_selector(s) for s in aggregation.get("clusterRoleSelectors") or []]
        out.append("aggregates roles labelled: " + "; ".join(selectors))
    return out


def _binding(source: Redacted, _: InstancePolicy) -> list[str]:
    obj = source.obj
    role = obj.get("roleRef") or {}
    out = [f"role: {role.get('kind')}/{role.get('name')}"] if isinstance(role, Mapping) else []
    subjects = _subjects(obj)
    if subjects:
        out.append("subjects: " + ", ".join(subjects[:MAX_SPEC_FIELDS]))
    return out


def _subjects(obj: Mapping[str, Any]) -> list[str]:
    out = []
    for subject in obj.get("subjects") or []:
        if isinstance(subject, Mapping) and subject.get("name"):
            where = f"{subject['namespace']}/" if subject.get("namespace") else ""
            out.append(f"{subject.get('kind', 'User')} {where}{subject['name']}")
    return out


def _autoscaler(source: Redacted, _: InstancePolicy) -> list[str]:
    spec = source.obj.get("spec") or {}
    out = []
    target = spec.get("scaleTargetRef")
    if isinstance(target, Mapping):
        out.append(f"scales: {target.get('kind')}/{target.get('name')}")
    out.append(f"replicas: {spec.get('minReplicas', 1)}-{spec.get('maxReplicas', '?')}")
    metrics = []
    for metric in spec.get("metrics") or []:
        if not isinstance(metric, Mapping):
            continue
        body = metric.get(str(metric.get("type", "")).replace("Resource", "resource").lower()) or metric.get("resource")
        if not isinstance(body, Mapping):
            metrics.append(str(metric.get("type")))
            continue
        name = body.get("name") or (body.get("metric") or {}).get("name")
        goal = body.get("target") or {}
        amount = goal.get("averageUtilization")
        metrics.append(
            f"{name} {amount}% utilization" if amount is not None else f"{name} {goal.get('type', '')}".strip()
        )
    if spec.get("targetCPUUtilizationPercentage") is not None:
        metrics.append(f"cpu {spec['targetCPUUtilizationPercentage']}% utilization")
    if metrics:
        out.append("metrics: " + ", ".join(metrics[:MAX_LIST_ITEMS]))
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


#: Maps rendered as ``key=value`` pairs rather than one field per key.
_PAIR_MAPS = re.compile(r"(labels|selector|matchLabels|annotations|nodeSelector)$", re.IGNORECASE)


def _generic(source: Redacted, _: InstancePolicy) -> list[str]:
    """Any other kind (custom resources, schemaless or not): the spec's leaves by path, shallow first.

    ``endpoints.port: web, reloader-web`` for a list of maps, ``selector: app=web`` for a label map,
    ``issuerRef: ClusterIssuer/letsencrypt`` for a reference; at most :data:`MAX_SPEC_FIELDS` paths of
    :data:`MAX_LIST_ITEMS` values, so a huge spec costs a bounded line (the redaction already ran)."""
    spec = source.obj.get("spec")
    if not isinstance(spec, Mapping):
        return []
    paths: dict[str, list[str]] = {}
    depth_of: dict[str, int] = {}
    queue: list[tuple[str, Any, int]] = [(str(k), v, 0) for k, v in spec.items()]
    seen = 0
    while queue and seen < MAX_WALK:
        path, value, depth = queue.pop(0)
        seen += 1
        leaf = path.rsplit(".", 1)[-1]
        if isinstance(value, Mapping):
            if leaf.endswith("Ref") and value.get("name"):
                _keep(paths, depth_of, path, f"{value.get('kind', '')}/{value['name']}".lstrip("/"), depth)
            elif _PAIR_MAPS.search(leaf) and value and all(_render_scalarish(v) for v in value.values()):
                pairs = ", ".join(f"{k}={_render_scalarish(v)}" for k, v in sorted(value.items()))
                _keep(paths, depth_of, path, pairs, depth)
            elif depth < MAX_SPEC_DEPTH:
                queue.extend((f"{path}.{k}", v, depth + 1) for k, v in value.items())
        elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            if depth < MAX_SPEC_DEPTH:
                queue.extend((f"{path}.{k}", v, depth + 1) for item in value[:MAX_WALK] for k, v in item.items())
        else:
            rendered = _render_scalarish(value)
            if rendered is not None:
                _keep(paths, depth_of, path, rendered, depth)
    ordered = sorted(paths, key=lambda p: depth_of[p])[:MAX_SPEC_FIELDS]
    return [
        f"{path}: {_short(', '.join(paths[path][:MAX_LIST_ITEMS]), limit=MAX_FIELD_CHARS)}"
        for path in sorted(ordered, key=list(paths).index)
    ]


MAX_SPEC_DEPTH: Final = 5
#: One rendered field of a spec, values joined.
MAX_FIELD_CHARS: Final = 240
#: Values visited in one spec, whatever its size.
MAX_WALK: Final = 2000


def _keep(paths: dict[str, list[str]], depth_of: dict[str, int], path: str, value: str, depth: int) -> None:
    values = paths.setdefault(path, [])
    depth_of.setdefault(path, depth)
    if value not in values and len(values) < MAX_LIST_ITEMS:
        values.append(value)


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
    ("networking.k8s.io", "NetworkPolicy"): _network_policy,
    ("policy", "PodDisruptionBudget"): _disruption_budget,
    ("", "ResourceQuota"): _quota,
    ("", "LimitRange"): _limit_range,
    ("rbac.authorization.k8s.io", "Role"): _role,
    ("rbac.authorization.k8s.io", "ClusterRole"): _role,
    ("rbac.authorization.k8s.io", "RoleBinding"): _binding,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _binding,
    ("autoscaling", "HorizontalPodAutoscaler"): _autoscaler,
}
