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

Environment: ``KUBEVEC_BENCH_CRDS`` (default 200), ``KUBEVEC_BENCH_OBJECTS`` (default 5000),
``KUBEVEC_BENCH_STATUS_PATCHES`` (2000), ``KUBEVEC_BENCH_CHURN_SECONDS`` (60),
``KUBEVEC_BENCH_NAIVE=0`` leaves the baseline out (it is two thirds of the run's time).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from kubevec.inference.manifests import is_crd, load_manifests
from tests.bench.naive import Work
from tests.bench.report import table
from tests.conftest import CRD_CORPUS, SAMPLE_CRDS
from tests.controlplane.cluster import ControlPlane, free_port, running
from tests.e2e.controller_harness import namespaced_crd
from tests.services import chroma_server

CRDS = int(os.environ.get("KUBEVEC_BENCH_CRDS", "200"))
OBJECTS = int(os.environ.get("KUBEVEC_BENCH_OBJECTS", "5000"))
NAMESPACES = 20
WIDGET_KINDS = 10
WIDGET_GROUP = "scale.kubevec.bench"
CLUSTER = "scale"


class Api:
    """Just enough of the Kubernetes API for bulk creation (admin token, the apiserver's own CA)."""

    def __init__(self, plane: ControlPlane) -> None:
        self.url = plane.url
        self.headers = {"Authorization": f"Bearer {plane.admin_token}", "Content-Type": "application/json"}
        self.context = ssl.create_default_context(cafile=str(plane.workdir / "certs" / "apiserver.crt"))

    def request(self, method: str, path: str, body: Any = None, *, content_type: str = "application/json") -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = {**self.headers, "Content-Type": content_type}
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        for attempt in range(10):
            try:
                with urllib.request.urlopen(request, context=self.context, timeout=60) as response:
                    return json.loads(response.read() or b"null")
            except urllib.error.HTTPError as exc:
                if exc.code in (409,):  # exists: fine for a re-run
                    return None
                if exc.code in (429, 500, 503) and attempt < 9:
                    time.sleep(0.5 * (attempt + 1))
                    continue
                raise RuntimeError(f"{method} {path}: HTTP {exc.code} {exc.read()[:300]!r}") from exc
        return None

    def create_all(self, items: list[tuple[str, dict[str, Any]]], *, what: str) -> None:
        done = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            for _ in pool.map(lambda item: self.request("POST", item[0], item[1]), items):
                done += 1
                if done % 1000 == 0 or done == len(items):
                    print(f"  created {done}/{len(items)} {what}", file=sys.stderr, flush=True)


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


class Controller:
    def __init__(self, plane: ControlPlane, *, store_url: str, workdir: Path) -> None:
        self.plane, self.store_url, self.workdir = plane, store_url, workdir
        self.health, self.metrics = free_port(), free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        env = {
            **os.environ,
            "KUBECONFIG": str(self.plane.kubeconfig),
            "KUBEVEC_CLUSTER_NAME": CLUSTER,
            "KUBEVEC_STORE__URL": self.store_url,
            "KUBEVEC_SERVER__HOST": "127.0.0.1",
            "KUBEVEC_SERVER__HEALTH_PORT": str(self.health),
            "KUBEVEC_SERVER__METRICS_PORT": str(self.metrics),
            "KUBEVEC_LOG_LEVEL": "WARNING",
        }
        started = time.monotonic()
        with open(self.workdir / "kubevec.log", "ab") as log:
            self.proc = subprocess.Popen(
                [str(Path(sys.executable).with_name("kubevec")), "run"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        while True:
            assert self.proc.poll() is None, (self.workdir / "kubevec.log").read_text()[-2000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.health}/readyz", timeout=5) as response:
                    if response.status == 200:
                        return time.monotonic() - started
            except OSError:
                pass
            time.sleep(0.5)

    def peak_rss_mib(self) -> float:
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def metric(self, name: str) -> float:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/metrics", timeout=5) as response:
            text = response.read().decode()
        return sum(
            float(line.split()[-1])
            for line in text.splitlines()
            if line.startswith(name + " ") or line.startswith(name + "{")
        )

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=60)


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CORES = os.cpu_count() or 1


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a live process, all its threads (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def chroma_pid(store_url: str) -> int:
    """The ``chroma run`` process serving ``store_url``."""
    wanted = f"--port\0{store_url.rsplit(':', 1)[1]}\0"
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "chroma" in text and "\0run\0" in text and wanted in text:
            return int(cmdline.parent.name)
    raise RuntimeError(f"no chroma run process serves {store_url}")


def chroma_client(store_url: str) -> Any:
    """A chromadb client of the server at ``store_url``, as the bench reads it behind the controller."""
    import chromadb
    from chromadb.config import Settings

    host, port = store_url.removeprefix("http://").split(":")
    return chromadb.HttpClient(host=host, port=int(port), settings=Settings(anonymized_telemetry=False))


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


def run() -> str:
    with tempfile.TemporaryDirectory(prefix="kubevec-scale-") as tmp, running(quiet=True, controllers=()) as plane:
        workdir = Path(tmp)
        api = Api(plane)
        for n in range(NAMESPACES):
            api.request(
                "POST",
                "/api/v1/namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns{n:02d}"}},
            )
        crds = scaled_crds(max(0, CRDS - WIDGET_KINDS)) + [widget_crd(i) for i in range(WIDGET_KINDS)]
        api.create_all([("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", c) for c in crds], what="CRDs")
        wait_established(plane, {c["metadata"]["name"] for c in crds})
        time.sleep(5)  # discovery catches up with the new groups
        api.create_all(objects(OBJECTS), what="objects")
        (workdir / "chroma").mkdir()
        with chroma_server(workdir / "chroma") as store_url:
            controller = Controller(plane, store_url=store_url, workdir=workdir)
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
                assert controller.proc is not None
                cpu = {"controller": cpu_seconds(controller.proc.pid)}
                cpu.update({name: cpu_seconds(pid) - others_before[name] for name, pid in others.items()})
                first_rss = controller.peak_rss_mib()
                embedded = controller.metric("kubevec_embeddings_computed_total")
                controller.stop()
                print("  restart ...", file=sys.stderr, flush=True)
                again = controller.start()
                again_embedded = controller.metric("kubevec_embeddings_computed_total")
                again_rss = controller.peak_rss_mib()
                print(f"  {STATUS_PATCHES} status patches ...", file=sys.stderr, flush=True)
                status = status_churn(api, controller)
                print(f"  label churn, {CHURN_RATE}/s for {CHURN_SECONDS} s ...", file=sys.stderr, flush=True)
                churn = label_churn(api, controller, store_url)
            finally:
                controller.stop()
            print("  embedding the same texts alone ...", file=sys.stderr, flush=True)
            texts, alone, alone_cpu = embed_alone(store_url)
            naive = naive_baseline(plane, api, store_url) if NAIVE else None
    skipped = Work(seconds=0.0, embeddings=0, upserts=0)  # ratios against it print as blanks
    n_first, n_again, n_status = (naive["first"], naive["again"], naive["status"]) if naive else (skipped,) * 3
    rows: list[list[object]] = [
        ["1. initial sync: ready after (s)", first, "", "", n_first.seconds, ratio(first, n_first.seconds)],
        [f"  the same {texts} texts embedded alone (s)", alone, "", "", "", ""],
        ["  ratio sync / embedding alone", first / alone, "<= 1.25", met(first / alone <= 1.25), "", ""],
        ["  CPU seconds, embedding alone", alone_cpu, "", "", "", ""],
        *[
            [
                f"  CPU seconds during the sync: {name}"
                + (f" (idle: {idle[name] * first:.1f})" if name in idle else ""),
                seconds,
                "",
                "",
                "",
                "",
            ]
            for name, seconds in cpu.items()
        ],
        [
            f"  ratio if the {CORES} cores never idled (all CPU above / cores / embedding alone)",
            sum(cpu.values()) / CORES / alone,
            "",
            "",
            "",
            "",
        ],
        ["  embeddings computed", embedded, "", "", n_first.embeddings, ratio(embedded, n_first.embeddings)],
        ["  controller peak RSS (MiB)", first_rss, "<= 400", met(first_rss <= 400), "", ""],
        [
            "2. restart, unchanged cluster: ready after (s)",
            again,
            "<= 10",
            met(again <= 10),
            n_again.seconds,
            ratio(again, n_again.seconds),
        ],
        zero_row("  embeddings computed", again_embedded, n_again.embeddings),
        ["  controller peak RSS (MiB)", again_rss, "<= 400", met(again_rss <= 400), "", ""],
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
        + "\n(kubevec run as its own process, offline embedder, 2-core machine; KUBEVEC_BENCH_CRDS/OBJECTS scale it."
        + "\n naive: the same listing and documents, each embedded and upserted alone, no hash-skip (tests/bench/naive.py);"
        + "\n its times leave out process start and model load. Latency of scenario 4: patch sent -> new text read"
        + "\n back from the store, polled every 0.1 s.)"
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

    print(f"== Scale: {CRDS} CRDs + {OBJECTS} objects")
    print(run())
    print(f"\n== The capability side: kubevec index crds over {crds_scale.COUNT} CRDs")
    print(crds_scale.run())


if __name__ == "__main__":
    main()
