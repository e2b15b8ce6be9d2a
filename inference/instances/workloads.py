"""Whatever runs containers (Pods, Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs).

One pod template, read the same way for every such kind: images and the software they are,
ports, replicas, schedule, update strategy, each container's resources, mounts, probes and
security switches, placement (and the pod's own hostname) and the volumes that name no object.
``env`` values and arguments are not shown (see docs/security.md): env variables by name, the
ConfigMap or Secret *key* a variable is taken from, the program a container runs and its flags by
name, and the network addresses in values and arguments (:mod:`kubevec.inference.addresses`), by
scheme, host and port, with the variable that holds each. A StatefulSet adds its governing Service
and the claims of each replica. :func:`workload_metadata` is what agents list and count such objects by.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from kubevec.inference import software
from kubevec.inference.addresses import Address, container_addresses, is_ip
from kubevec.inference.instances.summary import MAX_LIST_ITEMS, InstancePolicy, Summariser
from kubevec.inference.redaction import Redacted

_MAX_PATH: Final = 200


def _scraped(obj: Mapping[str, Any]) -> str:
    """``metrics: scraped by Prometheus at :8080/actuator/prometheus``, from the ``prometheus.io/*``
    annotations of the pod template (a Pod's own): the common convention that says a workload exposes
    metrics and where ("which workloads expose Prometheus metrics")."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
    template = spec.get("template") if obj.get("kind") != "Pod" and isinstance(spec, Mapping) else obj
    metadata = template.get("metadata") if isinstance(template, Mapping) else None
    notes = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    if not isinstance(notes, Mapping) or str(notes.get("prometheus.io/scrape", "")).lower() != "true":
        return ""
    port, path = notes.get("prometheus.io/port"), str(notes.get("prometheus.io/path") or "/metrics")
    if len(path) > _MAX_PATH or " " in path:
        path = "/metrics"  # no path is that long: it says nothing (and is never cut)
    where = (f":{port}" if isinstance(port, (str, int)) and str(port).isdigit() else "") + path
    return f"metrics: scraped by Prometheus at {where}"


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
        metadata: Mapping[str, Any] = m if isinstance(m := obj.get("metadata"), Mapping) else {}
        labels: Mapping[str, Any] = v if isinstance(v := metadata.get("labels"), Mapping) else {}
        names = [str(metadata.get("name") or ""), *(str(labels.get(k) or "") for k in NAME_LABELS)]
        programs = []
        for container in containers[:MAX_LIST_ITEMS]:
            program, _colon, script = _runs(container).partition(": ")  # through a shell: its script's first word
            if (said := (script or program).split(" ", 1)[0]) and not said.startswith("-"):
                programs.append(said)
        if known := software.described(images[:MAX_LIST_ITEMS], names=[n for n in names if n], programs=programs):
            out.append("software: " + " ".join(known))  # sentences (the catalogue's and the hand list's)
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
        for field in ("strategy", "updateStrategy"):  # Deployments; StatefulSets and DaemonSets
            how = spec.get(field)
            if isinstance(how, Mapping) and isinstance(how.get("type"), str):
                out.append(f"strategy: {how['type']}")
        out.extend(_stateful(spec))
    if pod.get("serviceAccountName"):
        out.append(f"serviceAccount: {pod['serviceAccountName']}")
    if scraped := _scraped(obj):
        out.append(scraped)
    for container in containers[:MAX_LIST_ITEMS]:
        described = _container(container)
        if described:
            out.append(f"container {container.get('name', '?')}: {described}")
    for container in inits[:MAX_LIST_ITEMS]:
        described = _container(container, image=True)
        out.append(f"init container {container.get('name', '?')}: {described}")
    if calls := _calls(container_addresses(containers + inits)):
        out.append("calls: " + calls)
    out.extend(_placement(pod))
    volumes = _volumes(pod.get("volumes"))  # the objects mounted are references (metadata); these are not
    if volumes:
        out.append("volumes: " + ", ".join(volumes[: MAX_LIST_ITEMS * 2]))
    return out


#: A container's securityContext switches worth saying when they are on.
#: Labels that name the software a workload runs (the recommended one, and the common ``app``).
NAME_LABELS: Final = ("app.kubernetes.io/name", "app")
_SECURITY_FLAGS: Final = ("privileged", "allowPrivilegeEscalation", "runAsNonRoot", "readOnlyRootFilesystem")
#: Capabilities listed per container and verb (the kernel has about 40).
_MAX_CAPABILITIES: Final = 12
#: Container fields that say how it runs, in the order they are written.
_PROBES: Final = (("readinessProbe", "readiness"), ("livenessProbe", "liveness"), ("startupProbe", "startup"))


#: Environment variable names shown per container.
MAX_ENV_NAMES: Final = 24
#: Addresses in a ``calls:`` line (a storefront calls a dozen services; each is a question's answer).
MAX_CALLS: Final = 16
#: Variables shown with the ConfigMap or Secret key they are taken from, per container.
MAX_KEY_REFS: Final = 6


def _calls(addresses: list[Address]) -> str:
    """``Service cartservice:7070 (CART_SERVICE_ADDR), api.example.com:443 (API_URL)``: each address once,
    with the variables (or ``args``) naming it; ``Service`` where the host's shape is in-cluster."""
    via: dict[str, list[str]] = {}
    shape: dict[str, bool] = {}
    for address in addresses:
        via.setdefault(address.shown, []).append(address.via)
        shape[address.shown] = address.in_cluster
    parts = [
        f"{'Service ' if shape[shown] else ''}{shown} ({', '.join(sources)})"
        for shown, sources in list(via.items())[:MAX_CALLS]
    ]
    return ", ".join(parts)


def _key_refs(container: Mapping[str, Any]) -> str:
    """``DB_PASSWORD from Secret db-creds key password``: the key's name, never its value (not read)."""
    out = []
    for env in container.get("env") or []:
        source = env.get("valueFrom") if isinstance(env, Mapping) else None
        if not isinstance(source, Mapping):
            continue
        for field, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
            ref = source.get(field)
            if isinstance(ref, Mapping) and ref.get("name") and ref.get("key"):
                out.append(f"{env.get('name')} from {kind} {ref['name']} key {ref['key']}")
    more = len(out) - MAX_KEY_REFS
    return ", ".join(out[:MAX_KEY_REFS]) + (f" (+{more} more)" if more > 0 else "")


def _container(container: Mapping[str, Any], *, image: bool = False) -> str:
    """``requests cpu=100m memory=64Mi; limits ...; env NAME OTHER; readiness http /healthz 8080; runAsNonRoot``.

    ``env`` values and arguments are not shown (see docs/security.md): they are where people paste
    credentials (the program and its flag names are: :func:`_runs`), and the objects a container takes its environment from are references already (the
    addresses in them are read apart: :func:`addresses`)."""
    parts = []
    if image and container.get("image"):
        parts.append(f"image {container['image']}")
    if runs := _runs(container):
        parts.append(f"runs {runs}")
    resources = container.get("resources")
    if isinstance(resources, Mapping):
        for key in ("requests", "limits"):
            amounts = resources.get(key)
            if isinstance(amounts, Mapping) and amounts:
                parts.append(f"{key} " + " ".join(f"{k}={v}" for k, v in sorted(amounts.items())))
    names = [str(e["name"]) for e in container.get("env") or [] if isinstance(e, Mapping) and e.get("name")]
    if names:  # what is configured, by name: the values are where people paste credentials
        more = len(names) - MAX_ENV_NAMES
        parts.append("env " + " ".join(names[:MAX_ENV_NAMES]) + (f" (+{more} more)" if more > 0 else ""))
    if keys := _key_refs(container):
        parts.append("env " + keys)
    if mounts := _mounts(container.get("volumeMounts")):
        parts.append("mounts " + mounts)
    for field, word in _PROBES:
        probe = container.get(field)
        if isinstance(probe, Mapping):
            parts.append(f"{word} {_probe(probe)}")
    security = container.get("securityContext")
    if isinstance(security, Mapping):
        parts += _security(security)
    return "; ".join(parts)


#: Mounts said per container, at most.
_MAX_MOUNTS: Final = 8


def _mounts(value: Any) -> str:
    """``/data/db (geo), /etc/app (config, read-only)``: where a container keeps or reads its files, by
    path and volume name ("where does the database store its data", "mount path of the config")."""
    out = []
    for mount in value[:_MAX_MOUNTS] if isinstance(value, list) else []:
        if not isinstance(mount, Mapping) or not isinstance(mount.get("mountPath"), str):
            continue
        notes = [str(mount["name"])] if mount.get("name") else []
        if mount.get("readOnly") is True:
            notes.append("read-only")
        out.append(f"{mount['mountPath']}" + (f" ({', '.join(notes)})" if notes else ""))
    return ", ".join(out)


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
            # the path, not its query string (a token passed as ?key=... is the credential itself)
            path = str(how.get("path", "/")).split("?", 1)[0].split("#", 1)[0]
            return f"http {path} {how.get('port', '')}".strip()
        if kind == "exec":
            command = how.get("command")
            return ("exec " + _program(command)).strip() if isinstance(command, list) else "exec"
        return f"{'tcp' if kind == 'tcpSocket' else 'grpc'} {how.get('port', '')}".strip()
    return "set"


#: Shells whose ``-c`` script names the program a probe really runs.
_SHELLS: Final = frozenset({"sh", "bash", "ash", "dash", "zsh"})
_PROGRAM: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]{0,59}")


def _program(command: list[Any]) -> str:
    """The program a probe runs, by name alone: its arguments (``-pSecret``, ``-a <password>``) are not
    stored. Through a shell's ``-c``, the script's first word (``sh -c 'redis-cli -a x ping'`` -> redis-cli)."""
    words = [str(word) for word in command]
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1]
    if program in _SHELLS and "-c" in words[1:-1]:
        script = words[words.index("-c", 1) + 1].split()
        inner = next((w for w in script if "=" not in w), "").rsplit("/", 1)[-1]  # past VAR=value assignments
        return f"{program}: {inner}" if _PROGRAM.fullmatch(inner) else program  # a name, not a redacted script
    return program[:60]


#: A flag by name (``--autostart``, ``--config=<value>`` says ``--config``); single-dash clusters
#: (``-pSecret``) are not flags to say.
_FLAG: Final = re.compile(r"--[A-Za-z][A-Za-z0-9-]{0,40}(?==|$)")
#: The first argument when it names a program or subcommand (``torchserve``, ``driver``), not a file.
_SUBCOMMAND: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")
#: Flags said per container.
_MAX_FLAGS: Final = 8


def _runs(container: Mapping[str, Any]) -> str:
    """``torchserve --start --foreground``: the program a container starts and its flags, by name alone
    ("what command starts the load generator", "torchserve memory"). Values and positional arguments
    are not stored (``--password=x`` says ``--password``); a shell says the first word of its script."""
    command, args = container.get("command"), container.get("args")
    words = [str(w) for w in (command if isinstance(command, list) else [])]
    words += [str(w) for w in (args if isinstance(args, list) else [])]
    if not words:
        return ""
    program = _program(words) if not words[0].startswith("-") else ""
    name = program.split(": ", 1)[-1]
    if not _PROGRAM.fullmatch(name) or (not command and not _SUBCOMMAND.fullmatch(words[0])):
        program = ""  # a redacted value, or a path handed to the image's own program: no program's name
    flags = list(dict.fromkeys(m.group(0) for w in words[1 if program else 0 :] if (m := _FLAG.match(w))))
    return " ".join([program, *flags[:_MAX_FLAGS]]).strip()


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
        out.append("affinity: " + ", ".join(_affinity(affinity)))
    spread = [
        f"{c['topologyKey']} (maxSkew {c.get('maxSkew', 1)}, {c.get('whenUnsatisfiable', 'DoNotSchedule')})"
        for c in pod.get("topologySpreadConstraints") or []
        if isinstance(c, Mapping) and isinstance(c.get("topologyKey"), str)
    ]
    if spread:
        out.append("spread across: " + ", ".join(spread[:MAX_LIST_ITEMS]))
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(flag) is True:
            out.append(f"{flag}: true")
    for field in ("hostname", "subdomain"):  # the name the pod answers to in DNS
        if isinstance(pod.get(field), str) and pod[field]:
            out.append(f"{field}: {pod[field]}")
    if pod.get("priorityClassName"):
        out.append(f"priorityClass: {pod['priorityClassName']}")
    if pod.get("nodeName"):
        out.append(f"node: {pod['nodeName']}")
    return out


def _affinity(affinity: Mapping[str, Any]) -> list[str]:
    """``podAntiAffinity by kubernetes.io/hostname``: each kind of affinity with the topology keys its
    terms spread or gather by ("how are the database pods spread across hosts and zones")."""
    out = []
    for kind in sorted(str(k) for k in affinity):
        rules = affinity[kind] if isinstance(affinity[kind], Mapping) else {}
        terms = [t for how in rules.values() if isinstance(how, list) for t in how if isinstance(t, Mapping)]
        keys = {
            str(term.get("topologyKey") or (term.get("podAffinityTerm") or {}).get("topologyKey") or "")
            for term in terms
            if isinstance(term.get("podAffinityTerm") or {}, Mapping)
        } - {""}
        out.append(f"{kind} by {', '.join(sorted(keys))}" if keys else kind)
    return out


def _stateful(spec: Mapping[str, Any]) -> list[str]:
    """A StatefulSet's governing Service and the claims each replica gets (``claims: data 10Gi
    ReadWriteOnce fast-ssd``): "how big is each member's volume", "which Service governs the set"."""
    out = []
    if isinstance(spec.get("serviceName"), str) and spec["serviceName"]:
        out.append(f"governing service: {spec['serviceName']}")
    claims = []
    for template in spec.get("volumeClaimTemplates") or []:
        if not isinstance(template, Mapping):
            continue
        claim: Mapping[str, Any] = c if isinstance(c := template.get("spec"), Mapping) else {}
        size = ((claim.get("resources") or {}).get("requests") or {}).get("storage")
        modes: list[Any] = m if isinstance(m := claim.get("accessModes"), list) else []
        words = [str((template.get("metadata") or {}).get("name") or "?"), str(size or ""), *map(str, modes)]
        if claim.get("storageClassName"):
            words.append(f"storageClass {claim['storageClassName']}")
        claims.append(" ".join(w for w in words if w))
    if claims:
        out.append("claims per replica: " + ", ".join(claims[:MAX_LIST_ITEMS]))
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
        if isinstance(address, str) and is_ip(address):
            out["pod_ip"] = address
    return out


#: The kinds an LLM may describe (``describer.llm.workloads``): what owns a pod template, and a Pod or
#: ReplicaSet nothing owns. An owned ReplicaSet or Pod shares its owner's template (and folds under it).
_DESCRIBED: Final = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"})
#: Label keys (last segment) that say what a workload is, as its authors named it.
_TELLING_LABELS: Final = frozenset({"name", "component", "part-of", "app", "tier"})


def template_facts(obj: Mapping[str, Any]) -> str | None:
    """What an LLM is told about a workload to say what its software is: kind, name, images, containers
    with their ports, and the labels that name it; None for other kinds and for owned Pods and ReplicaSets.

    ``obj`` is the judged copy (the gate ran first), and no env, command, argument or annotation value is
    read: the facts of two replicas of one template are the same, so each template is asked about once.
    """
    kind = str(obj.get("kind", ""))
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    owned = bool(meta.get("ownerReferences")) if isinstance(meta, Mapping) else False
    if not (kind in _DESCRIBED or (kind in ("Pod", "ReplicaSet") and not owned)):
        return None
    pod = _pod_spec(obj)
    containers = [c for c in pod.get("containers") or [] if isinstance(c, Mapping)][:MAX_LIST_ITEMS]
    if not containers:
        return None
    template = (obj.get("spec") or {}).get("template") if isinstance(obj.get("spec"), Mapping) else None
    template_meta = template.get("metadata") if isinstance(template, Mapping) else None
    labels: dict[str, str] = {}
    for source in (meta, template_meta):
        found = source.get("labels") if isinstance(source, Mapping) else None
        if isinstance(found, Mapping):
            labels.update({str(k): str(v) for k, v in found.items() if str(k).rpartition("/")[2] in _TELLING_LABELS})
    lines = [f"kind: {kind}", f"name: {meta.get('name', '') if isinstance(meta, Mapping) else ''}"]
    if labels:
        lines.append("labels: " + ", ".join(f"{k}={v}" for k, v in sorted(labels.items())))
    for container in containers:
        ports = [
            f"{p.get('containerPort')}{'/' + str(p['name']) if p.get('name') else ''}"
            for p in container.get("ports") or []
            if isinstance(p, Mapping) and p.get("containerPort")
        ]
        said = f"container {container.get('name', '?')}: image {container.get('image', '?')}"
        lines.append(said + (f", ports {', '.join(ports[:MAX_LIST_ITEMS])}" if ports else ""))
    return "\n".join(lines)


SUMMARISERS: Final[dict[tuple[str, str], Summariser]] = {
    ("apps", "Deployment"): _workload,
    ("apps", "StatefulSet"): _workload,
    ("apps", "DaemonSet"): _workload,
    ("apps", "ReplicaSet"): _workload,
    ("batch", "Job"): _workload,
    ("batch", "CronJob"): _workload,
    ("", "Pod"): _workload,
}
