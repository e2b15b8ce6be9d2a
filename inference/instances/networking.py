"""How traffic reaches and leaves: Services, Ingresses, Gateway API routes, NetworkPolicies.

Ports, selectors, hosts, routes and backends, and for a NetworkPolicy its peers in words
(``ingress from: pods app=web on 8080/TCP``; ``nothing (denied)``): what agents ask of a network
("what can reach the database?", "which Service fronts this Deployment?").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kubevec.inference.addresses import is_ip
from kubevec.inference.instances.summary import MAX_LIST_ITEMS, InstancePolicy, Summariser, label_selector
from kubevec.inference.redaction import Redacted

#: What a Service's type means for who can reach it, in the words questions use ("which services expose
#: the shop outside the cluster"): a model cannot tell that from ``type: NodePort``.
#: A ClusterIP Service (the default) says nothing more: "inside the cluster only" reads, to a small model,
#: much like "outside the cluster".
REACH: Final = {
    "NodePort": "exposed outside the cluster on a port of every node",
    "LoadBalancer": "exposed outside the cluster through an external load balancer",
    "ExternalName": "an alias for a name outside the cluster",
}


def _service(source: Redacted, _: InstancePolicy) -> list[str]:
    obj = source.obj
    spec = obj.get("spec") or {}
    kind = str(spec.get("type") or "ClusterIP")
    out = [f"type: {kind}" + (f" ({REACH[kind]})" if kind in REACH else "")]
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
    elif isinstance(spec.get("clusterIP"), str) and is_ip(spec["clusterIP"]):
        out.append(f"clusterIP: {spec['clusterIP']}")  # assigned once at creation, then fixed
    return out


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
                peers.append("pods " + label_selector(peer["podSelector"]))
            if "namespaceSelector" in peer:
                peers.append("namespaces " + label_selector(peer["namespaceSelector"]).replace("every Pod", "all"))
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
    out = [f"applies to: {label_selector(spec.get('podSelector') or {})}"]
    if spec.get("policyTypes"):
        out.append("policyTypes: " + ", ".join(map(str, spec["policyTypes"])))
    for field, direction, word in (("ingress", "from", "ingress from"), ("egress", "to", "egress to")):
        if field in spec:
            peers = _peers(spec.get(field), field=direction)
            out.append(f"{word}: " + ("; ".join(peers[:MAX_LIST_ITEMS]) if peers else "nothing (denied)"))
        elif field.capitalize() in (spec.get("policyTypes") or []):
            out.append(f"{word}: nothing (denied)")
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
    # what an Ingress is for, in the words questions use ("which services expose the shop outside the cluster"),
    # as a NodePort Service says it (``REACH``): a small model does not know it from the kind's name
    out = ["exposes: HTTP from outside the cluster to Services"]
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


SUMMARISERS: Final[dict[tuple[str, str], Summariser]] = {
    ("", "Service"): _service,
    ("networking.k8s.io", "Ingress"): _ingress,
    ("gateway.networking.k8s.io", "HTTPRoute"): _http_route,
    ("gateway.networking.k8s.io", "GRPCRoute"): _http_route,
    ("networking.k8s.io", "NetworkPolicy"): _network_policy,
}
