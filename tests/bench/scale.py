"""``make bench-scale``: `kubevec run` at cluster scale on the real control plane, figures against goals.

Scenarios (issue 16): the initial sync of CRDS custom resource definitions and OBJECTS objects
(time to ready, compared with embedding the same texts alone), a restart on the unchanged cluster
(time to ready, embeddings computed), and the controller's peak RSS (VmHWM) with the store as a
separate Chroma server process. CRDs are the real corpus (``KUBEVEC_CRD_CORPUS``) copied under
new group names until there are enough, else the samples; they and the objects are created
through the API, not kubectl (whose client-side validation times out past ~140 CRDs).

Environment: ``KUBEVEC_BENCH_CRDS`` (default 200), ``KUBEVEC_BENCH_OBJECTS`` (default 5000).
"""

from __future__ import annotations

import concurrent.futures
import copy
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from inference.manifests import is_crd, load_manifests
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


class Api:
    """Just enough of the Kubernetes API for bulk creation (admin token, the apiserver's own CA)."""

    def __init__(self, plane: ControlPlane) -> None:
        self.url = plane.url
        self.headers = {"Authorization": f"Bearer {plane.admin_token}", "Content-Type": "application/json"}
        self.context = ssl.create_default_context(cafile=str(plane.workdir / "certs" / "apiserver.crt"))

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, headers=self.headers, method=method)
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
    out = []
    for i in range(count):
        crd = copy.deepcopy(base[i % len(base)])
        copy_no = i // len(base)
        spec = crd["spec"]
        spec.pop("conversion", None)
        if copy_no:
            spec["group"] = f"c{copy_no}.{spec['group']}"
        annotations = (crd.get("metadata") or {}).get("annotations") or {}
        crd["metadata"] = {"name": f"{spec['names']['plural']}.{spec['group']}"}
        if "api-approved.kubernetes.io" in annotations:  # *.k8s.io groups need it
            crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": annotations["api-approved.kubernetes.io"]}
        crd.pop("status", None)
        out.append(crd)
    return out


def widget_crd(index: int) -> dict[str, Any]:
    kind = f"Widget{index}"
    schema = {
        "type": "object",
        "description": f"A {kind} runs one part of the shop's order pipeline.",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    return namespaced_crd(group=WIDGET_GROUP, plural=f"widget{index}s", kind=kind, schema=schema)


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
            "KUBEVEC_CLUSTER_NAME": "scale",
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


def embed_alone(store_url: str) -> tuple[int, float]:
    """Every stored text embedded again by a bare LocalEmbedder: the pace the sync is measured against."""
    import chromadb
    from chromadb.config import Settings

    from inference.embedders.local import LocalEmbedder

    host, port = store_url.removeprefix("http://").split(":")
    client = chromadb.HttpClient(host=host, port=int(port), settings=Settings(anonymized_telemetry=False))
    texts: list[str] = []
    for collection in client.list_collections():
        got = client.get_collection(collection.name).get(include=["documents"])
        texts.extend(t for t in got["documents"] or [] if t)
    embedder = LocalEmbedder()
    started = time.monotonic()
    embedder.encode(texts)
    return len(texts), time.monotonic() - started


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
                first = controller.start()
                first_rss = controller.peak_rss_mib()
                embedded = controller.metric("kubevec_embeddings_computed_total")
                controller.stop()
                print("  restart ...", file=sys.stderr, flush=True)
                again = controller.start()
                again_embedded = controller.metric("kubevec_embeddings_computed_total")
                again_rss = controller.peak_rss_mib()
            finally:
                controller.stop()
            texts, alone = embed_alone(store_url)
    rows = [
        ["initial sync: ready after (s)", first, "", ""],
        [f"  the same {texts} texts embedded alone (s)", alone, "", ""],
        ["  ratio sync / embedding alone", first / alone, "<= 1.25", "met" if first / alone <= 1.25 else "not met"],
        ["  embeddings computed", embedded, "", ""],
        ["  controller peak RSS (MiB)", first_rss, "<= 400", "met" if first_rss <= 400 else "not met"],
        ["restart, unchanged cluster: ready after (s)", again, "<= 10", "met" if again <= 10 else "not met"],
        ["  embeddings computed", again_embedded, "0", "met" if again_embedded == 0 else "not met"],
        ["  controller peak RSS (MiB)", again_rss, "<= 400", "met" if again_rss <= 400 else "not met"],
    ]
    return (
        table([f"{CRDS} CRDs + {OBJECTS} objects, Chroma server", "figure", "goal", ""], rows)
        + "\n(kubevec run as its own process, offline embedder, 2-core machine; KUBEVEC_BENCH_CRDS/OBJECTS scale it)"
    )


def main() -> None:
    print(f"== Scale: {CRDS} CRDs + {OBJECTS} objects")
    print(run())


if __name__ == "__main__":
    main()
