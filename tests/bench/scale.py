"""``make bench-scale``: `kubevec run` at cluster scale on the real control plane, figures against goals.

Scenarios (issue 16), with the store as a separate Chroma server process:

1. the initial sync of CRDS custom resource definitions and OBJECTS objects: time to ready,
   compared with embedding the same texts alone, the controller's peak RSS (VmHWM), and the CPU
   seconds of every process on the machine meanwhile (controller, Chroma, API server, etcd), which
   shows how much of the 2 cores the embedder could have had;
2. a restart on the unchanged cluster: time to ready, embeddings computed, peak RSS;
3. 2,000 status-only patches (the status subresource, as controllers write it): no embedding, no write;
4. 20 label changes per second for 60 s: time from each patch to its new text in the store (p50,
   p99), and the queue's peak depth.

Scenarios 1-3 also run for a naive baseline (``tests/bench/naive.py``: each document embedded and
upserted alone, no hash-skip) so each figure is a ratio against it. CRDs are the real corpus
(``KUBEVEC_CRD_CORPUS``) copied under new group names until there are enough, else the samples;
they and the objects are created through the API, not kubectl (whose client-side validation times
out past ~140 CRDs).

Issue 50's figures at 100k (``tests/bench/scale_figures.py``): after the sync and after the restart,
how far the store is from what the cluster implies (``tests/e2e/convergence.py``); then the readers
over the same store (``tests/bench/scale_readers.py``: the resident CLI reader and ``kubevec mcp``),
first through the Chroma server, then its directory opened embedded; and ``kubevec --help``'s CPU.
They print beside issue 50's own figures and are written as JSON (``KUBEVEC_BENCH_JSON``, default
``bench-scale.json``), also when a scenario fails.

Environment: ``KUBEVEC_BENCH_CRDS`` (default 200), ``KUBEVEC_BENCH_OBJECTS`` (default 5000),
``KUBEVEC_BENCH_STATUS_PATCHES`` (2000), ``KUBEVEC_BENCH_CHURN_SECONDS`` (60),
``KUBEVEC_BENCH_NAIVE=0`` leaves the baseline out (it is two thirds of the run's time),
``KUBEVEC_BENCH_EMBEDDER=standin`` (default ``offline``), ``KUBEVEC_BENCH_READERS=0`` leaves the
readers out, ``KUBEVEC_BENCH_INDEX_CRDS=0`` the 2,000-CRD part (``tests/bench/crds_scale.py``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from kubevec.inference.documents import COLLECTIONS
from kubevec.inference.manifests import is_crd, load_manifests
from tests.bench import scale_figures
from tests.bench.naive import Work
from tests.bench.report import table
from tests.bench.scale_controller import (
    CORES,
    Api,
    Controller,
    chroma_client,
    chroma_pid,
    cpu_seconds,
    standin_embedder,
)
from tests.bench.scale_figures import Value
from tests.bench.scale_readers import help_cpu, readers
from tests.conftest import CRD_CORPUS, SAMPLE_CRDS
from tests.controlplane.cluster import ControlPlane, running
from tests.e2e.controller_harness import namespaced_crd
from tests.services import chroma_server

CRDS = int(os.environ.get("KUBEVEC_BENCH_CRDS", "200"))
OBJECTS = int(os.environ.get("KUBEVEC_BENCH_OBJECTS", "5000"))
NAMESPACES = 20
WIDGET_KINDS = 10
WIDGET_GROUP = "scale.kubevec.bench"
CLUSTER = "scale"
#: "offline" (the packaged model, the default) or "standin" (the fast OpenAI-compatible stand-in: at 100k
#: the controller's own cost shows, not a model's; ``make bench-scale`` at 100k uses it).
EMBEDDER = os.environ.get("KUBEVEC_BENCH_EMBEDDER", "offline")
#: ``KUBEVEC_BENCH_READERS=0`` leaves the resident reader and ``kubevec mcp`` out.
READERS = os.environ.get("KUBEVEC_BENCH_READERS", "1") != "0"
if EMBEDDER not in ("offline", "standin"):
    raise SystemExit(f"KUBEVEC_BENCH_EMBEDDER must be offline or standin, not {EMBEDDER!r}")


def corpus_crds() -> list[dict[str, Any]]:
    paths = sorted(CRD_CORPUS.rglob("*.yaml")) if CRD_CORPUS.is_dir() else [SAMPLE_CRDS]
    found = []
    for path in paths:
        for doc in load_manifests(path.read_text(), source=str(path)):
            if is_crd(doc):
                found.append(dict(doc))
    return found


def scaled_crds(count: int) -> list[dict[str, Any]]:
    """``count`` CRDs: the corpus as is, then copies under new groups (conversion webhooks dropped)."""
    base = corpus_crds()
    return [scaled_crd(base, i) for i in range(count)]


def scaled_crd(base: list[dict[str, Any]], index: int) -> dict[str, Any]:
    """The ``index``-th CRD of :func:`scaled_crds` (one at a time: 2,000 of them are gigabytes as Python objects)."""
    crd = copy.deepcopy(base[index % len(base)])
    copy_no = index // len(base)
    spec = crd["spec"]
    spec.pop("conversion", None)
    if copy_no:
        spec["group"] = f"c{copy_no}.{spec['group']}"
    annotations = (crd.get("metadata") or {}).get("annotations") or {}
    crd["metadata"] = {"name": f"{spec['names']['plural']}.{spec['group']}"}
    if "api-approved.kubernetes.io" in annotations:  # *.k8s.io groups need it
        crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": annotations["api-approved.kubernetes.io"]}
    crd.pop("status", None)
    return crd


def widget_crd(index: int) -> dict[str, Any]:
    kind = f"Widget{index}"
    schema = {
        "type": "object",
        "description": f"A {kind} runs one part of the shop's order pipeline.",
        "properties": {
            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    crd = namespaced_crd(group=WIDGET_GROUP, plural=f"widget{index}s", kind=kind, schema=schema)
    crd["spec"]["versions"][0]["subresources"] = {"status": {}}  # status patches as controllers write them
    return crd


def objects(count: int) -> list[tuple[str, dict[str, Any]]]:
    """Half ConfigMaps (values are never stored), half custom objects, over NAMESPACES namespaces."""
    out = []
    teams = ["payments", "orders", "search", "ledger", "identity"]
    for i in range(count):
        namespace = f"ns{i % NAMESPACES:02d}"
        labels = {"app": f"svc{i % 97}", "team": teams[i % len(teams)], "tier": ["api", "worker", "db"][i % 3]}
        if i % 2:
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm{i}", "namespace": namespace, "labels": labels},
                "data": {"config.yaml": f"replicas: {i % 5}\nfeature: on\n", "LOG_LEVEL": "info"},
            }
            out.append((f"/api/v1/namespaces/{namespace}/configmaps", body))
        else:
            kind = i % WIDGET_KINDS
            body = {
                "apiVersion": f"{WIDGET_GROUP}/v1",
                "kind": f"Widget{kind}",
                "metadata": {"name": f"w{i}", "namespace": namespace, "labels": labels},
                "spec": {"size": i % 7, "owner": teams[i % len(teams)], "endpoint": f"https://svc{i % 97}.example"},
            }
            out.append((f"/apis/{WIDGET_GROUP}/v1/namespaces/{namespace}/widget{kind}s", body))
    return out


def wait_established(plane: ControlPlane, names: set[str], *, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listing = plane.get_json("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        ready = {
            item["metadata"]["name"]
            for item in listing["items"]
            if any(
                c["type"] == "Established" and c["status"] == "True"
                for c in (item.get("status") or {}).get("conditions") or []
            )
        }
        if names <= ready:
            return
        time.sleep(2)
    raise RuntimeError(f"{len(names - ready)} CRDs never became Established")


def embed_alone(store_url: str) -> tuple[int, float, float]:
    """Every stored text embedded again by a bare LocalEmbedder: the pace the sync is measured against."""
    from kubevec.inference.providers.embedders.local import LocalEmbedder

    client = chroma_client(store_url)
    texts: list[str] = []
    for collection in client.list_collections():
        got = client.get_collection(collection.name).get(include=["documents"])
        texts.extend(t for t in got["documents"] or [] if t)
    embedder = LocalEmbedder()
    started, cpu = time.monotonic(), time.process_time()
    embedder.encode(texts)
    return len(texts), time.monotonic() - started, time.process_time() - cpu


STATUS_PATCHES = int(os.environ.get("KUBEVEC_BENCH_STATUS_PATCHES", "2000"))
CHURN_RATE = 20  # label changes per second
CHURN_SECONDS = int(os.environ.get("KUBEVEC_BENCH_CHURN_SECONDS", "60"))
QUIET_SECONDS = 20
NAIVE = os.environ.get("KUBEVEC_BENCH_NAIVE", "1") != "0"  # the naive baseline is two thirds of the run


def widget_paths(count: int) -> list[tuple[str, str]]:
    """(object path, document id) of the first ``count`` custom objects ``objects`` created."""
    out: list[tuple[str, str]] = []
    for i in range(0, OBJECTS, 2):
        if len(out) == count:
            break
        namespace, kind = f"ns{i % NAMESPACES:02d}", i % WIDGET_KINDS
        path = f"/apis/{WIDGET_GROUP}/v1/namespaces/{namespace}/widget{kind}s/w{i}"
        out.append((path, f"{CLUSTER}/{namespace}/{WIDGET_GROUP}/v1/Widget{kind}/w{i}"))
    return out


def configmap_paths() -> list[tuple[str, str]]:
    """(object path, document id) of every ConfigMap ``objects`` created."""
    return [
        (
            f"/api/v1/namespaces/ns{i % NAMESPACES:02d}/configmaps/cm{i}",
            f"{CLUSTER}/ns{i % NAMESPACES:02d}/core/v1/ConfigMap/cm{i}",
        )
        for i in range(1, OBJECTS, 2)
    ]


def patch_statuses(api: Api, count: int, *, round_no: int) -> int:
    """``count`` status-only patches (the status subresource, as a controller writes it), 8 at a time."""
    targets = widget_paths(count)

    def patch(index: int) -> None:
        path = targets[index % len(targets)][0] + "/status"
        body = {"status": {"observedGeneration": 1, "heartbeat": f"{round_no}-{index}", "replicas": index % 3}}
        api.request("PATCH", path, body, content_type="application/merge-patch+json")

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(patch, range(count)))
    return count


def status_churn(api: Api, controller: Controller) -> dict[str, float]:
    """Scenario 3: status-only patches cost no embedding and no write. Waits until the controller
    has received every event and its queue is empty."""
    before = {name: controller.metric(name) for name in COUNTERS}
    started = time.monotonic()
    sent = patch_statuses(api, STATUS_PATCHES, round_no=1)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        received = controller.metric("kubevec_events_received_total") - before["kubevec_events_received_total"]
        if received >= sent and controller.metric("kubevec_queue_depth") == 0:
            break
        time.sleep(0.5)
    else:
        raise TimeoutError("the controller did not receive every status event within 600 s")
    seconds = time.monotonic() - started
    after = {name: controller.metric(name) for name in COUNTERS}
    return {"seconds": seconds, **{name: after[name] - before[name] for name in COUNTERS}}


COUNTERS = ("kubevec_events_received_total", "kubevec_embeddings_computed_total", "kubevec_upserts_total")


def label_churn(api: Api, controller: Controller, store_url: str) -> dict[str, float]:
    """Scenario 4: CHURN_RATE label changes per second for CHURN_SECONDS on distinct ConfigMaps; the
    time from each patch to its new text in the store (polled every 0.1 s), and the queue's peak."""
    collection = chroma_client(store_url).get_collection("instances")
    targets = configmap_paths()
    pending: dict[str, tuple[str, float]] = {}  # document id -> (expected label, sent at)
    latencies: list[float] = []
    lock = threading.Lock()
    done = threading.Event()
    done_at = [float("inf")]

    def poll() -> None:
        while not done.is_set() or (pending and time.monotonic() < done_at[0] + 60):
            with lock:
                wanted = dict(list(pending.items())[:300])
            if wanted:
                got = collection.get(ids=list(wanted), include=["documents"])
                now = time.monotonic()
                for doc_id, text in zip(got["ids"], got["documents"] or [], strict=True):
                    label, sent = wanted[doc_id]
                    if label in (text or ""):
                        latencies.append(now - sent)
                        with lock:
                            pending.pop(doc_id, None)
            time.sleep(0.1)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    depth = 0.0
    total = CHURN_RATE * CHURN_SECONDS
    started = time.monotonic()
    for n in range(total):
        time.sleep(max(0.0, started + n / CHURN_RATE - time.monotonic()))
        path, doc_id = targets[n % len(targets)]
        label = f"c{n:05d}"
        with lock:
            pending[doc_id] = (f"churn={label}", time.monotonic())
        api.request(
            "PATCH", path, {"metadata": {"labels": {"churn": label}}}, content_type="application/merge-patch+json"
        )
        if n % CHURN_RATE == 0:
            depth = max(depth, controller.metric("kubevec_queue_depth"))
    done_at[0] = time.monotonic()
    done.set()
    poller.join(timeout=120)
    latencies.sort()
    return {
        "changes": total,
        "seen": len(latencies),
        "p50": latencies[len(latencies) // 2] if latencies else float("nan"),
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else float("nan"),
        "queue_peak": depth,
    }


def naive_baseline(plane: ControlPlane, api: Api, store_url: str) -> dict[str, Any]:
    """Scenarios 1-3 for the naive baseline (``tests/bench/naive.py``), after the controller stopped."""
    from tests.bench.naive import Naive  # its model is loaded only when the baseline runs

    async def scenarios() -> dict[str, Any]:
        naive = Naive(plane, store_url=store_url, cluster=CLUSTER)
        try:
            print("  naive baseline: initial sync ...", file=sys.stderr, flush=True)
            first = await naive.sync()
            print("  naive baseline: restart ...", file=sys.stderr, flush=True)
            again = await naive.sync()
            print("  naive baseline: status patches ...", file=sys.stderr, flush=True)
            kinds = sorted({path.split("/")[6] for path, _ in widget_paths(STATUS_PATCHES)})
            watcher = naive.watch([f"/apis/{WIDGET_GROUP}/v1/{plural}" for plural in kinds])
            plural_of = {f"Widget{k.removeprefix('widget').removesuffix('s')}": k for k in kinds}
            sent = await asyncio.to_thread(patch_statuses, api, STATUS_PATCHES, round_no=2)
            status = await watcher.drain(count=sent, plural_of=plural_of)
        finally:
            await naive.close()
        return {"first": first, "again": again, "status": status}

    return asyncio.run(scenarios())


def drift_count(store_url: str, *, kubeconfig: Path) -> tuple[int, str]:
    """How far the store is from what the cluster implies (missing + orphaned + stale), and how, in words."""
    from kubevec.backends.config import StoreSettings
    from kubevec.backends.factory import open_store
    from tests.e2e.convergence import wait_converged

    drift, _ = wait_converged(
        kubeconfig=kubeconfig,
        cluster=CLUSTER,
        timeout=60,  # one look or a few: the controller said ready, so the store must be right now
        open_store=lambda: open_store(StoreSettings(backend="chroma", url=store_url, path=None)),
    )
    return len(drift.missing) + len(drift.orphaned) + len(drift.stale), str(drift)


def stored(store_url: str) -> int:
    client = chroma_client(store_url)
    return sum(client.get_collection(c.name).count() for c in client.list_collections() if c.name in COLLECTIONS)


def build_cluster(api: Api, plane: ControlPlane) -> None:
    for n in range(NAMESPACES):
        api.request(
            "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns{n:02d}"}}
        )
    crds = scaled_crds(max(0, CRDS - WIDGET_KINDS)) + [widget_crd(i) for i in range(WIDGET_KINDS)]
    api.create_all([("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", c) for c in crds], what="CRDs")
    wait_established(plane, {c["metadata"]["name"] for c in crds})
    time.sleep(5)  # discovery catches up with the new groups
    api.create_all(objects(OBJECTS), what="objects")


def run(values: dict[str, Value], context: dict[str, Any]) -> str:
    """Every scenario; issue 50's figures go into ``values``, the scenarios' own table is returned."""
    values["help.cpu_s"] = help_cpu(env=os.environ)
    with (
        tempfile.TemporaryDirectory(prefix="kubevec-scale-") as tmp,
        running(quiet=True, controllers=()) as plane,
        contextlib.ExitStack() as stack,
    ):
        workdir = Path(tmp)
        embedder = stack.enter_context(standin_embedder(workdir)) if EMBEDDER == "standin" else {}
        api = Api(plane)
        build_cluster(api, plane)
        (workdir / "chroma").mkdir()
        with chroma_server(workdir / "chroma") as store_url:
            controller = Controller(plane, store_url=store_url, workdir=workdir, cluster=CLUSTER, env=embedder)
            try:
                print("  initial sync ...", file=sys.stderr, flush=True)
                others = {"Chroma server": chroma_pid(store_url), **plane.pids()}
                # What the other processes burn with no controller at all (the API server has its own
                # loops), so the sync's share of their CPU can be told from theirs.
                quiet = {name: cpu_seconds(pid) for name, pid in others.items()}
                time.sleep(QUIET_SECONDS)
                idle = {name: (cpu_seconds(pid) - quiet[name]) / QUIET_SECONDS for name, pid in others.items()}
                others_before = {name: cpu_seconds(pid) for name, pid in others.items()}
                first = controller.start()
                cpu = {"controller": cpu_seconds(controller.pid)}
                cpu.update({name: cpu_seconds(pid) - others_before[name] for name, pid in others.items()})
                first_rss = controller.peak_rss_mib()
                embedded = controller.metric("kubevec_embeddings_computed_total")
                documents = stored(store_url)
                print(f"  ready after {first:.1f} s, {documents} documents; checking the store ...", file=sys.stderr)
                values["sync.drift"], context["sync_drift"] = drift_count(store_url, kubeconfig=plane.kubeconfig)
                controller.stop()
                print("  restart ...", file=sys.stderr, flush=True)
                again = controller.start()
                again_embedded = controller.metric("kubevec_embeddings_computed_total")
                again_rss = controller.peak_rss_mib()
                print(f"  ready after {again:.1f} s; checking the store ...", file=sys.stderr, flush=True)
                values["restart.drift"], context["restart_drift"] = drift_count(store_url, kubeconfig=plane.kubeconfig)
                print(f"  {STATUS_PATCHES} status patches ...", file=sys.stderr, flush=True)
                status = status_churn(api, controller)
                print(f"  label churn, {CHURN_RATE}/s for {CHURN_SECONDS} s ...", file=sys.stderr, flush=True)
                churn = label_churn(api, controller, store_url)
            finally:
                controller.stop()
            values.update(
                {
                    "sync.ready_s": first,
                    "sync.documents": documents,
                    "sync.controller_cpu_s": cpu["controller"],
                    "sync.cpu_per_1000_docs": cpu["controller"] / max(documents, 1) * 1000,
                    "sync.peak_rss_mib": first_rss,
                    "sync.embeddings": embedded,
                    "restart.ready_s": again,
                    "restart.embeddings": again_embedded,
                    "restart.peak_rss_mib": again_rss,
                    "status.seconds": status["seconds"],
                    "status.embeddings": status["kubevec_embeddings_computed_total"],
                    "status.upserts": status["kubevec_upserts_total"],
                    **{f"churn.{name}": value for name, value in churn.items()},
                }
            )
            reading = {**os.environ, **embedder, "KUBEVEC_LOG_LEVEL": "WARNING", "KUBEVEC_STORE__URL": store_url}
            if READERS:
                values.update(readers(reading, workdir=workdir, objects=OBJECTS, store="server"))
            alone: tuple[int, float, float] | None = None
            if EMBEDDER == "offline":
                print("  embedding the same texts alone ...", file=sys.stderr, flush=True)
                alone = embed_alone(store_url)
            naive = naive_baseline(plane, api, store_url) if NAIVE else None
        if READERS:  # the server stopped: its directory is an embedded store, as issue 50 read it
            del reading["KUBEVEC_STORE__URL"]
            reading["KUBEVEC_STORE__PATH"] = str(workdir / "chroma" / "db")
            values.update(readers(reading, workdir=workdir, objects=OBJECTS, store="embedded"))
    return scenarios_table(
        first=first,
        cpu=cpu,
        idle=idle,
        alone=alone,
        embedded=embedded,
        first_rss=first_rss,
        again=again,
        again_embedded=again_embedded,
        again_rss=again_rss,
        status=status,
        churn=churn,
        naive=naive,
    )


def scenarios_table(
    *,
    first: float,
    cpu: dict[str, float],
    idle: dict[str, float],
    alone: tuple[int, float, float] | None,
    embedded: float,
    first_rss: float,
    again: float,
    again_embedded: float,
    again_rss: float,
    status: dict[str, float],
    churn: dict[str, float],
    naive: dict[str, Any] | None,
) -> str:
    """Scenarios 1-4 (issue 16), each beside the naive baseline when it ran."""
    skipped = Work(seconds=0.0, embeddings=0, upserts=0)  # ratios against it print as blanks
    n_first, n_again, n_status = (naive["first"], naive["again"], naive["status"]) if naive else (skipped,) * 3
    texts, alone_s, alone_cpu = alone or (0, float("nan"), float("nan"))
    rows: list[list[object]] = [
        ["1. initial sync: ready after (s)", first, "", "", n_first.seconds, ratio(first, n_first.seconds)],
    ]
    if alone is not None:
        rows += [
            [f"  the same {texts} texts embedded alone (s)", alone_s, "", "", "", ""],
            ["  ratio sync / embedding alone", first / alone_s, "<= 1.25", met(first / alone_s <= 1.25), "", ""],
            ["  CPU seconds, embedding alone", alone_cpu, "", "", "", ""],
        ]
    rows += [
        [
            f"  CPU seconds during the sync: {name}" + (f" (idle: {idle[name] * first:.1f})" if name in idle else ""),
            seconds,
            "",
            "",
            "",
            "",
        ]
        for name, seconds in cpu.items()
    ]
    if alone is not None:
        rows.append(
            [
                f"  ratio if the {CORES} cores never idled (all CPU above / cores / embedding alone)",
                sum(cpu.values()) / CORES / alone_s,
                "",
                "",
                "",
                "",
            ]
        )
    rows += [
        ["  embeddings computed", embedded, "", "", n_first.embeddings, ratio(embedded, n_first.embeddings)],
        ["  controller peak RSS (MiB)", first_rss, "<= 450", met(first_rss <= 450), "", ""],
        [
            "2. restart, unchanged cluster: ready after (s)",
            again,
            "",
            "",
            n_again.seconds,
            ratio(again, n_again.seconds),
        ],
        zero_row("  embeddings computed", again_embedded, n_again.embeddings),
        ["  controller peak RSS (MiB)", again_rss, "<= 450", met(again_rss <= 450), "", ""],
        [
            f"3. {STATUS_PATCHES} status-only patches: all handled after (s)",
            status["seconds"],
            "",
            "",
            n_status.seconds,
            ratio(status["seconds"], n_status.seconds),
        ],
        zero_row("  embeddings computed", status["kubevec_embeddings_computed_total"], n_status.embeddings),
        zero_row("  documents written", status["kubevec_upserts_total"], n_status.upserts),
        [
            f"4. {CHURN_RATE} label changes/s for {CHURN_SECONDS} s: in the store after, p50 (s)",
            churn["p50"],
            "<= 0.28",
            met(churn["p50"] <= 0.28),
            "",
            "",
        ],
        ["  p99 (s)", churn["p99"], "<= 1.5", met(churn["p99"] <= 1.5), "", ""],
        [
            "  changes seen in the store",
            f"{churn['seen']:.0f}/{churn['changes']:.0f}",
            "all",
            met(churn["seen"] == churn["changes"]),
            "",
            "",
        ],
        ["  queue depth, peak (documents)", churn["queue_peak"], "bounded", "", "", ""],
    ]
    if naive is None:
        for row in rows:
            row[4:] = ["", ""]
    return (
        table(
            [f"{CRDS} CRDs + {OBJECTS} objects, Chroma server", "kubevec", "goal", "", "naive", "kubevec / naive"], rows
        )
        + f"\n(kubevec run as its own process, {EMBEDDER} embedder, {CORES}-core machine; KUBEVEC_BENCH_CRDS/OBJECTS"
        + "\n scale it. naive: the same listing and documents, each embedded and upserted alone, no hash-skip"
        + "\n (tests/bench/naive.py); its times leave out process start and model load. Latency of scenario 4:"
        + "\n patch sent -> new text read back from the store, polled every 0.1 s.)"
    )


def zero_row(label: str, ours: float, naive: float) -> list[object]:
    """A count whose goal is 0, beside the naive baseline's."""
    return [label, ours, "0", met(ours == 0), naive, ratio(ours, naive)]


def met(ok: bool) -> str:
    return "met" if ok else "not met"


def ratio(ours: float, naive: float) -> str:
    return f"{ours / naive:.2f}" if naive else ""


def main() -> None:
    from tests.bench import crds_scale

    values: dict[str, Value] = {}
    context: dict[str, Any] = {"crds": CRDS, "objects": OBJECTS, "embedder": EMBEDDER, "cores": CORES}
    print(f"== Scale: {CRDS} CRDs + {OBJECTS} objects, {EMBEDDER} embedder")
    try:
        print(run(values, context))
    finally:  # what a failed run measured is still written
        path = scale_figures.write(scale_figures.json_path(os.environ), values, objects=OBJECTS, context=context)
        print(f"\n== Issue 50's figures (also in {path})")
        print(scale_figures.table(values, objects=OBJECTS))
    if crds_scale.COUNT:
        print(f"\n== The capability side: kubevec index crds over {crds_scale.COUNT} CRDs")
        print(crds_scale.run())


if __name__ == "__main__":
    main()
