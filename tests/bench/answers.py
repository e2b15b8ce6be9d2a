"""Answers on real applications: public manifests on the real control plane, questions written from them.

What runs (``tests/bench/apps/SOURCES.md`` pins each source's commit):

1. a control plane with the controllers that make a cluster look lived-in (ReplicaSets and their
   Pods, EndpointSlices, quota usage, an HPA's conditions, ServiceAccount tokens); the Pods stay
   Pending (no kubelet), so the status a kubelet would write where a question needs a crash (an
   OOMKilled container, an image that cannot be pulled) and the one Tekton would write on a failed
   PipelineRun is written through the status subresource, as they would;
2. Online Boutique (namespace ``boutique``: Deployments, Services, NetworkPolicies, Istio routes) and
   kube-prometheus (namespace ``monitoring``: operators' custom resources, RBAC, PodDisruptionBudgets,
   ServiceMonitors), plus ``incidents.yaml`` (ours: a quota that refuses Pods, an autoscaler, a
   binding to ``system:anonymous``...), applied with ``kubectl apply`` as a user would;
3. ``kubevec run`` until the store holds what the cluster implies, then every question of
   ``questions.jsonl`` as an agent asks it: ``--collection instances "<question>" -k 10``.

Figures: hit@1, hit@5, MRR@10 (an expected object is any of a question's ``expect`` keys, globs
for generated names), fact recall (each ``facts`` string, case-insensitive, in the text or metadata
of what came back), graph recall and precision per relation kind against edges this module computes
from the live objects on its own (label selectors, roleRefs, hosts, parentRefs), the resident
service's latency and the one-shot ``kubevec search`` latency. ``KUBEVEC_BENCH_ANSWERS_SHOW=1``
prints each question's top 5; ``KUBEVEC_BENCH_ANSWERS_KEEP=<dir>`` keeps a copy of the store.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from kubevec.backends.config import StoreSettings
from kubevec.controller.cli.common import open_store
from kubevec.controller.serving import search_service
from kubevec.controller.settings import Settings
from kubevec.query.request import SearchRequest
from tests.bench.oneshot import timed_calls
from tests.bench.report import table
from tests.controlplane.cluster import ControlPlane, running
from tests.e2e.controller_harness import Controller
from tests.e2e.convergence import wait_converged

APPS = Path(__file__).resolve().parent / "apps"
CLUSTER = "bench"
#: The control plane's own controllers and those that make a cluster look lived-in.
CONTROLLERS = (*ControlPlane.controllers, "daemonset", "resourcequota", "horizontalpodautoscaling", "endpointslice")
ONE_SHOT_RUNS = 10
#: The controller as it is deployed: the e2e harness leaves built-in kinds undescribed to start faster, but
#: a real controller describes them (``sync.builtin_capabilities``), and the kinds a question names are
#: read from those records: without them "list the StatefulSets" names no kind.
AS_DEPLOYED = {"KUBEVEC_CLUSTER_NAME": CLUSTER, "KUBEVEC_SYNC__BUILTIN_CAPABILITIES": "true"}


# -- the cluster -----------------------------------------------------------------------------------


def _kubectl_json(plane: ControlPlane, *args: str) -> list[dict[str, Any]]:
    items = json.loads(plane.kubectl("get", *args, "-o", "json"))["items"]
    return [i for i in items if isinstance(i, dict)]


def _eventually(check: Callable[[], Any], *, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise RuntimeError(f"{what} did not happen within {timeout:.0f}s")


def populate(plane: ControlPlane) -> None:
    """Apply both applications and the incidents, then write the status a kubelet and Tekton would."""
    plane.kubectl("apply", "-f", str(APPS / "crds.yaml"))
    plane.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
    plane.kubectl("create", "namespace", "boutique")
    plane.kubectl("apply", "-n", "boutique", "-f", str(APPS / "microservices-demo"))
    plane.kubectl("apply", "-f", str(APPS / "kube-prometheus"))
    plane.kubectl("apply", "-f", str(APPS / "sock-shop"))
    plane.kubectl("create", "namespace", "argocd")
    plane.kubectl("apply", "-n", "argocd", "-f", str(APPS / "argo-cd"))
    plane.kubectl("apply", "-f", str(APPS / "incidents.yaml"))

    def pod_of(app: str) -> str | None:
        pods = _kubectl_json(plane, "pods", "-n", "boutique", "-l", f"app={app}")
        return str(pods[0]["metadata"]["name"]) if pods else None

    cart = _eventually(lambda: pod_of("cartservice"), timeout=60, what="a cartservice Pod")
    payment = _eventually(lambda: pod_of("paymentservice"), timeout=60, what="a paymentservice Pod")
    image = "us-central1-docker.pkg.dev/online-boutique-ci/microservices-demo/paymentservice:v0.10.6"
    statuses = {
        cart: {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}],
            "containerStatuses": [
                {
                    "name": "server",
                    "ready": False,
                    "restartCount": 7,
                    "image": "cartservice",
                    "imageID": "",
                    "state": {
                        "waiting": {
                            "reason": "CrashLoopBackOff",
                            "message": "back-off 5m0s restarting failed container",
                        }
                    },
                    "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
                }
            ],
        },
        payment: {
            "phase": "Pending",
            "containerStatuses": [
                {
                    "name": "server",
                    "ready": False,
                    "restartCount": 0,
                    "image": image,
                    "imageID": "",
                    "state": {
                        "waiting": {
                            "reason": "ImagePullBackOff",
                            "message": f'Back-off pulling image "{image}": not found',
                        }
                    },
                }
            ],
        },
    }

    def pods_of(namespace: str, selector: str) -> list[str] | None:
        return [
            str(p["metadata"]["name"]) for p in _kubectl_json(plane, "pods", "-n", namespace, "-l", selector)
        ] or None

    unplaced = {  # as the scheduler writes it when no node fits
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
            }
        ],
    }
    both = _eventually(
        lambda: (found := pods_of("node-selector-test", "app=web-app")) and len(found) == 2 and found,
        timeout=60,
        what="both web-app Pods",
    )
    for pod in both:
        plane.kubectl(
            "patch", "pod", pod, "-n", "node-selector-test", "--subresource=status", "--type=merge", "-p",
            json.dumps({"status": unplaced}),
        )  # fmt: skip
    for pod, status in statuses.items():
        plane.kubectl(
            "patch", "pod", pod, "-n", "boutique", "--subresource=status", "--type=merge", "-p",
            json.dumps({"status": status}),
        )  # fmt: skip
    failed = {
        "conditions": [
            {
                "type": "Succeeded",
                "status": "False",
                "reason": "Failed",
                "message": "Tasks Completed: 2 (Failed: 1, Cancelled 0), Skipped: 1",
            }
        ]
    }
    plane.kubectl(
        "patch", "pipelinerun", "build-frontend-7xk2p", "-n", "boutique", "--subresource=status", "--type=merge",
        "-p", json.dumps({"status": failed}),
    )  # fmt: skip
    applications = {  # as Argo CD's application controller writes them
        "guestbook": {
            "sync": {"status": "OutOfSync", "revision": "53e28ff20cc530b9ada2173fbbd64d48338583ba"},
            "health": {
                "status": "Degraded",
                "message": 'Deployment "guestbook-ui" exceeded its progress deadline',
            },
            "conditions": [
                {
                    "type": "SyncError",
                    "message": "Failed sync attempt to 53e28ff: one or more objects failed to apply",
                    "lastTransitionTime": "2026-11-25T10:00:00Z",
                }
            ],
        },
        "sock-shop": {
            "sync": {"status": "Synced", "revision": "9dff06fae4981921caec6a62393a6ebfce4b3e3f"},
            "health": {"status": "Healthy"},
        },
    }
    for name, status in applications.items():
        plane.kubectl(
            "patch", "applications.argoproj.io", name, "-n", "argocd", "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": status}),
        )  # fmt: skip
    _eventually(
        lambda: (
            _kubectl_json(plane, "replicasets", "-n", "boutique-staging")
            and any(
                c.get("reason") == "FailedCreate"
                for rs in _kubectl_json(plane, "replicasets", "-n", "boutique-staging")
                for c in (rs.get("status") or {}).get("conditions") or []
            )
        ),
        timeout=60,
        what="the quota refusing checkout-canary's Pods",
    )


# -- questions -------------------------------------------------------------------------------------


def questions() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (APPS / "questions.jsonl").read_text().splitlines() if line.strip()]


def key_of(metadata: Mapping[str, Any]) -> str:
    return f"{metadata.get('kind')}/{metadata.get('namespace') or '_cluster'}/{metadata.get('name')}"


def first_hit(keys: list[str], expect: Iterable[str]) -> int | None:
    patterns = list(expect)
    for rank, key in enumerate(keys, start=1):
        if any(fnmatch.fnmatchcase(key, p) for p in patterns):
            return rank
    return None


def facts_found(facts: list[str], results: list[tuple[str, Mapping[str, Any]]]) -> int:
    """How many ``facts`` the results say: in their text, or in their payloads' values as they are (JSON
    escapes quotes: ``configmap "x" not found`` is in a payload, never in its JSON)."""
    blob = "\n".join(
        text + "\n" + json.dumps(dict(metadata), default=str) + "\n" + "\n".join(map(_plain, metadata.values()))
        for text, metadata in results
    ).lower()
    return sum(1 for fact in facts if fact.lower() in blob)


def _plain(value: Any) -> str:
    return "\n".join(map(str, value)) if isinstance(value, list) else str(value)


def settings_for(store: Path) -> Settings:
    return Settings(cluster_name=CLUSTER, store=StoreSettings(backend="chroma", path=store))


async def ask_all(store: Path, *, show: bool, asked: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    settings = settings_for(store)
    backend = open_store(settings, existing=True)
    service = search_service(settings, backend, queries=True, one_shot=False, lexical_cache=False)
    rows: list[dict[str, Any]] = []
    latencies: list[float] = []
    try:
        await service.search(SearchRequest(collection="instances", query="warm up", k=10))
        for question in asked if asked is not None else questions():
            started = time.perf_counter()
            answer = await service.search(SearchRequest(collection="instances", query=question["question"], k=10))
            latencies.append(time.perf_counter() - started)
            keys = [key_of(r.metadata) for r in answer]
            rank = first_hit(keys, question["expect"])
            found = facts_found(question["facts"], [(r.text, r.metadata) for r in answer])
            rows.append(
                {
                    "id": question["id"],
                    "rank": rank,
                    "facts": found,
                    "of": len(question["facts"]),
                    "class": question.get("class", ""),
                    "namespace": next((e.split("/")[1] for e in question["expect"] if "/_cluster/" not in e), ""),
                    # Agent tasks want every expected object among the ten, not one of them first.
                    "seen": sum(1 for p in question["expect"] if any(fnmatch.fnmatchcase(k, p) for k in keys)),
                    "wanted": len(question["expect"]),
                }
            )
            if show:
                print(f"{question['id']} rank={rank} facts={found}/{len(question['facts'])} {question['question']!r}")
                for key in keys[:5]:
                    print(f"    {key}")
        edges = await graph_found(service)
    finally:
        await backend.close()
    return {"rows": rows, "latencies": latencies, "edges": edges}


# -- the graph -------------------------------------------------------------------------------------

WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet")
#: Relation kind -> (source kinds, target kind); targets are computed below from the live objects.
RELATION_KINDS: dict[str, tuple[tuple[str, ...], str]] = {
    "NetworkPolicy -> Pod": (("NetworkPolicy",), "Pod"),
    "PodDisruptionBudget -> Pod": (("PodDisruptionBudget",), "Pod"),
    "ServiceMonitor -> Service": (("ServiceMonitor",), "Service"),
    "binding -> role": (("RoleBinding", "ClusterRoleBinding"), "*Role"),
    "Istio route -> Service": (("VirtualService", "DestinationRule"), "Service"),
    "IPAddress -> Service": (("IPAddress",), "Service"),
    "FlowSchema -> PriorityLevelConfiguration": (("FlowSchema",), "PriorityLevelConfiguration"),
    "Service -> Pod (selector)": (("Service",), "Pod"),
    "Pod -> ReplicaSet (owner)": (("Pod",), "ReplicaSet"),
    "workload -> Service (calls)": (WORKLOADS, "Service"),
}
#: Relation kind -> every object that could be a source (precision counts edges from those with no true edge too).
SOURCES: dict[str, set[str]] = {}


def _key(obj: Mapping[str, Any]) -> str:
    return key_of({**obj["metadata"], "kind": obj["kind"]})


def _matches(selector: Any, labels: Mapping[str, Any]) -> bool:
    """matchLabels (and the plain map form) only; an empty selector selects everything."""
    if not isinstance(selector, Mapping):
        return False
    wanted = selector.get("matchLabels", selector if "matchExpressions" not in selector else {})
    if selector.get("matchExpressions"):
        return False  # not used by the applications here; never guessed
    return all(labels.get(k) == v for k, v in (wanted or {}).items())


def expected_edges(plane: ControlPlane) -> dict[str, set[tuple[str, str]]]:
    """Edges from the live objects, computed here and nowhere in the product (the independent truth)."""
    every = {
        kind: _kubectl_json(plane, plural, "-A")
        for kind, plural in (
            ("Pod", "pods"),
            ("Service", "services"),
            ("NetworkPolicy", "networkpolicies"),
            ("PodDisruptionBudget", "poddisruptionbudgets"),
            ("ServiceMonitor", "servicemonitors"),
            ("RoleBinding", "rolebindings"),
            ("ClusterRoleBinding", "clusterrolebindings"),
            ("VirtualService", "virtualservices"),
            ("DestinationRule", "destinationrules"),
            ("IPAddress", "ipaddresses"),
            ("FlowSchema", "flowschemas"),
            ("Deployment", "deployments"),
            ("StatefulSet", "statefulsets"),
            ("DaemonSet", "daemonsets"),
        )
    }
    for kind, objects in every.items():
        for obj in objects:
            obj["kind"] = kind
    out: dict[str, set[tuple[str, str]]] = {name: set() for name in RELATION_KINDS}

    def pods_in(namespace: str) -> list[dict[str, Any]]:
        return [p for p in every["Pod"] if p["metadata"].get("namespace") == namespace]

    for policy in every["NetworkPolicy"]:
        for pod in pods_in(policy["metadata"]["namespace"]):
            if _matches(policy["spec"].get("podSelector") or {}, pod["metadata"].get("labels") or {}):
                out["NetworkPolicy -> Pod"].add((_key(policy), _key(pod)))
    for budget in every["PodDisruptionBudget"]:
        for pod in pods_in(budget["metadata"]["namespace"]):
            if _matches(budget["spec"].get("selector"), pod["metadata"].get("labels") or {}):
                out["PodDisruptionBudget -> Pod"].add((_key(budget), _key(pod)))
    for monitor in every["ServiceMonitor"]:
        spec = monitor.get("spec") or {}
        where = spec.get("namespaceSelector") or {}
        namespaces = set(where.get("matchNames") or [monitor["metadata"]["namespace"]])
        for service in every["Service"]:
            inside = where.get("any") or service["metadata"]["namespace"] in namespaces
            if inside and _matches(spec.get("selector") or {}, service["metadata"].get("labels") or {}):
                out["ServiceMonitor -> Service"].add((_key(monitor), _key(service)))
    for binding in every["RoleBinding"] + every["ClusterRoleBinding"]:
        role = binding.get("roleRef") or {}
        namespace = binding["metadata"].get("namespace") if role.get("kind") == "Role" else None
        target = key_of({"kind": role.get("kind"), "namespace": namespace, "name": role.get("name")})
        out["binding -> role"].add((_key(binding), target))
    for route in every["VirtualService"] + every["DestinationRule"]:
        spec = route.get("spec") or {}
        hosts = (
            [spec.get("host")]
            if route["kind"] == "DestinationRule"
            else [
                d.get("destination", {}).get("host")
                for section in ("http", "tcp", "tls")
                for rule in spec.get(section) or []
                for d in rule.get("route") or []
            ]
        )
        for host in filter(None, hosts):
            parts = str(host).split(".")
            namespace = parts[1] if len(parts) > 1 else route["metadata"]["namespace"]
            out["Istio route -> Service"].add((_key(route), f"Service/{namespace}/{parts[0]}"))
    for address in every["IPAddress"]:
        parent = (address.get("spec") or {}).get("parentRef") or {}
        if parent.get("resource") == "services":
            out["IPAddress -> Service"].add((_key(address), f"Service/{parent.get('namespace')}/{parent.get('name')}"))
    for schema in every["FlowSchema"]:
        level = ((schema.get("spec") or {}).get("priorityLevelConfiguration") or {}).get("name")
        out["FlowSchema -> PriorityLevelConfiguration"].add(
            (_key(schema), f"PriorityLevelConfiguration/_cluster/{level}")
        )
    for service in every["Service"]:
        selector = (service.get("spec") or {}).get("selector")
        if not selector:
            continue
        for pod in pods_in(service["metadata"]["namespace"]):
            if _matches(selector, pod["metadata"].get("labels") or {}):
                out["Service -> Pod (selector)"].add((_key(service), _key(pod)))
    services = {(s["metadata"]["namespace"], s["metadata"]["name"]) for s in every["Service"]}
    SOURCES["workload -> Service (calls)"] = set()
    for kind in WORKLOADS:
        for workload in every[kind]:
            SOURCES["workload -> Service (calls)"].add(_key(workload))
            namespace = workload["metadata"]["namespace"]
            for target in _called(workload, namespace, services):
                out["workload -> Service (calls)"].add((_key(workload), target))
    for pod in every["Pod"]:
        for owner in pod["metadata"].get("ownerReferences") or []:
            if owner.get("kind") == "ReplicaSet":
                out["Pod -> ReplicaSet (owner)"].add(
                    (_key(pod), f"ReplicaSet/{pod['metadata']['namespace']}/{owner['name']}")
                )
    return out


def _called(workload: Mapping[str, Any], namespace: str, services: set[tuple[str, str]]) -> set[str]:
    """The Services a workload's env values and arguments name: each word's host (a URL's, a host:port's,
    or the word itself) that is an existing Service, bare in the workload's namespace or ``name.ns[.svc...]``."""
    pod = ((workload.get("spec") or {}).get("template") or {}).get("spec") or {}
    values: list[str] = []
    for container in (pod.get("containers") or []) + (pod.get("initContainers") or []):
        values += [e["value"] for e in container.get("env") or [] if isinstance(e.get("value"), str)]
        values += [a for a in (container.get("command") or []) + (container.get("args") or []) if isinstance(a, str)]
    found = set()
    for value in values:
        for word in value.replace(",", " ").replace(";", " ").split():
            word = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
            host = word.split("://", 1)[-1].rsplit("@", 1)[-1]
            host = host.split("/", 1)[0].split("?", 1)[0]
            if host.count(":") == 1 and host.rsplit(":", 1)[1].isdigit():
                host = host.rsplit(":", 1)[0]
            parts = host.lower().split(".")
            if len(parts) == 1:
                where = namespace
            elif len(parts) == 2 or parts[2:] in (["svc"], ["svc", "cluster", "local"]):
                where = parts[1]
            else:
                continue
            if (where, parts[0]) in services:
                found.add(f"Service/{where}/{parts[0]}")
    return found


EXPECTED: dict[str, set[tuple[str, str]]] = {}


async def graph_found(service: Any) -> dict[str, set[tuple[str, str]]]:
    """Each source object's outgoing edges as kubevec answers them (one ``related`` call per object)."""
    found: dict[str, set[tuple[str, str]]] = {name: set() for name in RELATION_KINDS}
    for name, (_, target_kind) in RELATION_KINDS.items():
        for source in sorted({s for s, _ in EXPECTED.get(name, set())} | SOURCES.get(name, set())):
            try:
                related = await service.related(source, direction="out", hops=1, cluster=CLUSTER)
            except Exception as exc:  # a subject the store lacks: no edges found
                print(f"    related {source}: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            for edge in related.edges:
                if fnmatch.fnmatchcase(edge.target.kind, target_kind):
                    found[name].add((source, edge.target.key))
    return found


# -- one-shot latency ------------------------------------------------------------------------------


def one_shot(store: Path, cache: Path) -> tuple[float, float, float]:
    """``kubevec search`` as a new process per question, on the same store: (first call, p50 of the next
    ones) with every call in its own process, and the p50 of the next ones with the resident reader."""
    env = {
        **os.environ,
        "KUBEVEC_STORE__PATH": str(store),
        "KUBEVEC_CLUSTER_NAME": CLUSTER,
        "KUBEVEC_CACHE_DIR": str(cache),
    }
    calls = [
        ["search", "--collection", "instances", question["question"], "-k", "10"]
        for question in questions()[: ONE_SHOT_RUNS + 1]
    ]
    own = timed_calls(env, calls, resident_reader=False)
    warm = timed_calls(env, calls, resident_reader=True)
    return own[0], statistics.median(own[1:]), statistics.median(warm[1:])


# -- the section -----------------------------------------------------------------------------------


def scores(rows: list[dict[str, Any]]) -> tuple[float, float, float, float | None]:
    """hit@1, hit@5, MRR@10 and fact recall of answered questions (``ask_all``'s rows).

    Fact recall is None when none of the rows asks for a fact: a group of name questions has nothing
    to recall, and 0/0 printed as 0.00 read as a failure that was never there."""
    count = len(rows)
    hit1 = sum(1 for r in rows if r["rank"] == 1) / count
    hit5 = sum(1 for r in rows if r["rank"] is not None and r["rank"] <= 5) / count
    mrr = sum(1 / r["rank"] for r in rows if r["rank"] is not None) / count
    wanted = sum(r["of"] for r in rows)
    return hit1, hit5, mrr, sum(r["facts"] for r in rows) / wanted if wanted else None


def share(value: float | None) -> str:
    """A score as printed in the tables: two decimals, or "-" when there was nothing to score."""
    return "-" if value is None else f"{value:.2f}"


def missed(rows: list[dict[str, Any]]) -> list[str]:
    """The questions whose answer is not in the top 5."""
    return [r["id"] for r in rows if r["rank"] is None or r["rank"] > 5]


def run() -> str:
    show = os.environ.get("KUBEVEC_BENCH_ANSWERS_SHOW") == "1"
    with (
        tempfile.TemporaryDirectory(prefix="kubevec-answers-") as tmp,
        running(quiet=True, controllers=CONTROLLERS) as plane,
    ):
        populate(plane)
        store = Path(tmp) / "store"
        controller = Controller(plane, store, Path(tmp) / "controller.log", **AS_DEPLOYED)
        started = time.monotonic()
        controller.start()
        try:
            controller.wait_ready(timeout=600)
            drift, _ = wait_converged(
                kubeconfig=plane.kubeconfig, cluster=CLUSTER, store_path=store, timeout=300, builtins=True
            )
            synced = time.monotonic() - started
            embedded = controller.metric("kubevec_embeddings_computed_total") or 0.0
        finally:
            controller.stop()
        EXPECTED.clear()
        EXPECTED.update(expected_edges(plane))
        if os.environ.get("KUBEVEC_BENCH_ANSWERS_KEEP"):  # the store, to profile or ask by hand
            shutil.copytree(store, os.environ["KUBEVEC_BENCH_ANSWERS_KEEP"], dirs_exist_ok=True)
        result = asyncio.run(ask_all(store, show=show))
        first, warm, resident_p50 = one_shot(store, Path(tmp) / "cache")
    rows = result["rows"]
    count = len(rows)
    hit1, hit5, mrr, facts = scores(rows)
    latencies = sorted(result["latencies"])
    quality = table(
        ["questions", "hit@1", "hit@5", "MRR@10", "fact recall", "resident p50 ms", "resident p95 ms",
         "one-shot first s", "one-shot p50 s", "CLI p50 s (resident reader)", "sync s", "embedded"],
        [[
            str(count), f"{hit1:.2f}", f"{hit5:.2f}", f"{mrr:.2f}", share(facts),
            f"{statistics.median(latencies) * 1000:.0f}", f"{latencies[int(0.95 * (len(latencies) - 1))] * 1000:.0f}",
            f"{first:.2f}", f"{warm:.2f}", f"{resident_p50:.2f}", f"{synced:.0f}", f"{embedded:.0f}",
        ]],
    )  # fmt: skip
    graph_rows = []
    for name in RELATION_KINDS:
        truth, got = EXPECTED.get(name, set()), result["edges"].get(name, set())
        right = len(truth & got)
        recall = f"{right / len(truth):.2f}" if truth else "-"
        precision = f"{right / len(got):.2f}" if got else "-"
        graph_rows.append([name, str(len(truth)), str(len(got)), str(right), recall, precision])
    graph = table(["relation", "true edges", "found", "right", "recall", "precision"], graph_rows)
    converged = "converged" if drift.converged else f"NOT converged: {drift}"
    return f"{quality}\nnot in the top 5: {', '.join(missed(rows)) or '-'}\nstore {converged}\n\n{graph}"


def main() -> None:
    print(run())


if __name__ == "__main__":
    main()
