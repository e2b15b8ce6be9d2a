"""MCP callers at scale on the real control plane: what a new identity costs the API server and the others.

50 namespaces x 20 resource types (1,000 placements in the index), callers are distinct
ServiceAccounts with a RoleBinding in their namespace, `kubevec mcp --transport http` serves them
with Kubernetes tokens. For 1 new identity and then 200 at once, each mode (``rbac``: rules
matched locally; ``reviews``: one SubjectAccessReview per placement, the only mode before issue
34) reports, beside static tokens (no review at all: the floor the searches themselves set): reviews asked per caller, each new caller's time to its first answer (initialize,
then a search; a refused client waits its Retry-After and tries again, as a good client does),
the p99 of an already-judged caller searching meanwhile, and the server's RSS.

``reviews`` with 200 callers would need ~205,000 reviews; the budget (100/s) makes that ~35
minutes of paced work, so the run stops after ``KUBEVEC_BENCH_ACCESS_SECONDS`` (60) and reports
how many were answered by then. ``python -m tests.bench.access`` runs this section alone.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import httpx2

from kubevec.backends import Record
from kubevec.backends.chroma import ChromaStore
from kubevec.inference.instances import build_instance
from kubevec.inference.providers.embedders.local import LocalEmbedder
from tests.bench.report import percentile, table
from tests.bench.scale_controller import Api
from tests.controlplane.cluster import ControlPlane, free_port, running

NAMESPACES, RESOURCES, CALLERS = 50, 20, 200
GROUP = "bench.kubevec.io"
CLUSTER = "bench"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
DEADLINE = float(os.environ.get("KUBEVEC_BENCH_ACCESS_SECONDS", "60"))


def namespace(n: int) -> str:
    return f"team-{n:02d}"


async def build_store(path: Path) -> None:
    """1,000 instance documents: one object of each of 20 kinds in each of 50 namespaces."""
    embedder = LocalEmbedder()
    store = ChromaStore(path=str(path))
    await store.ensure_collection("instances", dimension=embedder.dimension, embedder=embedder.name)
    docs = []
    for n in range(NAMESPACES):
        for r in range(RESOURCES):
            body = {
                "apiVersion": f"{GROUP}/v1",
                "kind": f"Widget{r}",
                "metadata": {"name": f"widget-{r}", "namespace": namespace(n), "labels": {"app": f"app-{r}"}},
                "spec": {"size": r, "tier": "gold" if r % 2 else "silver"},
            }
            docs.append(build_instance(body, plural=f"widget{r}s", cluster=CLUSTER).to_document())
    vectors = await embedder.embed_documents([d.text for d in docs])
    await store.upsert(
        "instances",
        [Record(id=d.id, vector=v, text=d.text, metadata=d.metadata) for d, v in zip(docs, vectors, strict=True)],
    )
    await store.close()


def identities(plane: ControlPlane, count: int, *, prefix: str) -> list[str]:
    """``count`` ServiceAccounts spread over the namespaces, each allowed to list 10 of the 20 kinds there."""
    api = Api(plane)
    sas, bindings = [], []
    for i in range(count):
        ns, name = namespace(i % NAMESPACES), f"{prefix}-{i}"
        sas.append((f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": name}}))
        bindings.append(
            (
                f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
                {
                    "metadata": {"name": name},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bench-reader"},
                    "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
                },
            )
        )
    api.create_all(sas, what="ServiceAccounts")
    api.create_all(bindings, what="RoleBindings")
    tokens = []
    for i in range(count):
        ns, name = namespace(i % NAMESPACES), f"{prefix}-{i}"
        answer = api.request(
            "POST",
            f"/api/v1/namespaces/{ns}/serviceaccounts/{name}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}},
        )
        tokens.append(answer["status"]["token"])
    return tokens


def setup_cluster(plane: ControlPlane) -> None:
    api = Api(plane)
    api.create_all(
        [("/api/v1/namespaces", {"metadata": {"name": namespace(n)}}) for n in range(NAMESPACES)], what="namespaces"
    )
    api.request(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        {
            "metadata": {"name": "bench-reader"},
            "rules": [
                {"apiGroups": [GROUP], "resources": [f"widget{r}s" for r in range(0, RESOURCES, 2)], "verbs": ["list"]}
            ],
        },
    )


class Server:
    """`kubevec mcp --transport http` over the store, as the standalone Deployment runs it."""

    def __init__(self, plane: ControlPlane, store: Path, *, mode: str, workdir: Path, static: list[str]) -> None:
        self.port = free_port()
        tokens = workdir / "tokens.yaml"
        tokens.write_text(
            "tokens:\n"
            + "".join(
                f"  - {{name: s{i}, token: {t}, namespaces: [{namespace(i % NAMESPACES)}]}}\n"
                for i, t in enumerate(static)
            )
        )
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        env = {
            **os.environ,
            "KUBECONFIG": str(plane.kubeconfig),
            "KUBEVEC_STORE__PATH": str(store),
            "KUBEVEC_CLUSTER_NAME": CLUSTER,
            "KUBEVEC_MCP_KUBERNETES_AUTH": "true",
            "KUBEVEC_MCP_AUTHORIZATION": "rbac" if mode == "static" else mode,
            "KUBEVEC_MCP_TOKENS_FILE": str(tokens),
            "KUBEVEC_MCP_ACCESS_TTL_SECONDS": "600",
            "KUBEVEC_LOG_LEVEL": "WARNING",
        }
        self.log = workdir / f"mcp-{mode}.log"
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [
                    str(Path(sys.executable).with_name("kubevec")),
                    "mcp",
                    "--transport",
                    "http",
                    "--port",
                    str(self.port),
                ],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(self.url.replace("/mcp", "/healthz"), timeout=2)
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(self.log.read_text()[-2000:]) from None
                time.sleep(0.2)

    def counts(self) -> dict[str, float]:
        with urllib.request.urlopen(self.url.replace("/mcp", "/metrics"), timeout=10) as response:
            text = response.read().decode()
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line.startswith("kubevec_mcp_access_reviews_total{") or line.startswith("kubevec_mcp_refused_total{"):
                key, value = line.rsplit(" ", 1)
                out[key] = float(value)
        return out

    def rss_mib(self) -> tuple[float, float]:
        fields = dict(
            line.split(":", 1) for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines() if ":" in line
        )
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


class Caller:
    def __init__(self, http: httpx2.AsyncClient, url: str, token: str) -> None:
        self.http, self.url, self.token, self.session = http, url, token, ""
        self.refused = 0
        self.next = 0

    async def post(self, body: dict[str, Any]) -> httpx2.Response:
        headers = {**ACCEPT, "Authorization": f"Bearer {self.token}"}
        if self.session:
            headers["mcp-session-id"] = self.session
        while True:
            answer = await self.http.post(self.url, json=body, headers=headers)
            if answer.status_code in (429, 503) and "retry-after" in answer.headers:
                self.refused += 1
                await asyncio.sleep(float(answer.headers["retry-after"]))
                continue
            answer.raise_for_status()
            return answer

    async def first_answer(self) -> float:
        started = time.monotonic()
        opened = await self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})  # fmt: skip
        self.session = opened.headers["mcp-session-id"]
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self.search()
        return time.monotonic() - started

    async def search(self) -> None:
        self.next += 1
        call = {"name": "vector_search", "arguments": {"collection": "instances", "query": "gold widget", "k": 5}}
        answer = await self.post({"jsonrpc": "2.0", "id": self.next, "method": "tools/call", "params": call})
        assert '"results"' in answer.text, answer.text[:300]


async def storm(server: Server, tokens: list[str], existing: str) -> dict[str, Any]:
    limits = httpx2.Limits(max_connections=CALLERS + 10, max_keepalive_connections=CALLERS + 10)
    async with httpx2.AsyncClient(timeout=DEADLINE + 60, limits=limits) as http:
        old = Caller(http, server.url, existing)
        await old.first_answer()
        before = server.counts()
        latencies: list[float] = []
        done = asyncio.Event()

        async def meanwhile() -> None:
            while not done.is_set():
                started = time.monotonic()
                await old.search()
                latencies.append(time.monotonic() - started)
                await asyncio.sleep(0.05)

        background = asyncio.create_task(meanwhile())
        callers = [Caller(http, server.url, token) for token in tokens]
        tasks = [asyncio.create_task(c.first_answer()) for c in callers]
        finished, pending = await asyncio.wait(tasks, timeout=DEADLINE)
        for task in pending:
            task.cancel()
        done.set()
        await background
        after = server.counts()
    firsts = [t.result() for t in finished if not t.exception()]
    asked = {
        kind: after.get(f'kubevec_mcp_access_reviews_total{{kind="{kind}"}}', 0)
        - before.get(f'kubevec_mcp_access_reviews_total{{kind="{kind}"}}', 0)
        for kind in ("tokenreview", "subjectaccessreview", "rbac_read")
    }
    rss, peak = server.rss_mib()
    return {
        "answered": len(firsts),
        "first_p50": percentile(firsts, 50),
        "first_max": max(firsts) if firsts else float("nan"),
        "existing_p99": percentile(latencies, 99),
        "reviews_per_caller": (asked["tokenreview"] + asked["subjectaccessreview"]) / len(tokens),
        "sar_per_caller": asked["subjectaccessreview"] / len(tokens),
        "rbac_reads": asked["rbac_read"],
        "refusals": sum(c.refused for c in callers),
        "rss": rss,
        "peak": peak,
    }


def run() -> str:
    rows = []
    with (
        tempfile.TemporaryDirectory(prefix="kubevec-bench-access-") as tmp,
        running(quiet=True, controllers=()) as plane,
    ):
        work = Path(tmp)
        setup_cluster(plane)
        store = work / "store"
        print("  embedding 1,000 instance documents", file=sys.stderr, flush=True)
        asyncio.run(build_store(store))
        static = [f"static-token-{i:04d}-{os.urandom(8).hex()}" for i in range(CALLERS + 2)]
        for mode in ("static", "rbac", "reviews"):
            print(f"  mode={mode}", file=sys.stderr, flush=True)
            if mode == "static":  # the floor: callers that cost no review at all, the same searches
                existing, one, many = static[0], static[1:2], static[2:]
            else:
                existing = identities(plane, 1, prefix=f"{mode}-old")[0]
                one = identities(plane, 1, prefix=f"{mode}-one")
                many = identities(plane, CALLERS, prefix=f"{mode}-many")
            server = Server(plane, store, mode=mode, workdir=work, static=static)
            try:
                for label, tokens in (("1 new identity", one), (f"{CALLERS} new identities at once", many)):
                    found = asyncio.run(storm(server, tokens, existing))
                    rows.append(
                        [
                            mode,
                            label,
                            f"{found['answered']}/{len(tokens)}",
                            round(found["reviews_per_caller"], 1),
                            round(found["sar_per_caller"], 1),
                            found["first_p50"],
                            found["first_max"],
                            found["existing_p99"],
                            found["refusals"],
                            round(found["peak"]),
                        ]
                    )
            finally:
                server.stop()
    headers = [
        "mode",
        "callers",
        f"answered in {DEADLINE:.0f}s",
        "reviews/caller",
        "SARs/caller",
        "first answer p50 s",
        "first answer max s",
        "existing caller p99 s",
        "429/503 retried",
        "peak RSS MiB",
    ]
    note = (
        f"\n{NAMESPACES} namespaces x {RESOURCES} resource types = {NAMESPACES * RESOURCES} placements; each caller "
        "a distinct ServiceAccount.\nBefore issue 34 (reviews only, no budget, cached per token): 1 caller 1,058 "
        "reviews; 200 callers 212,658 reviews, 206 s to each first answer, existing caller p99 80 s, 824 MB."
    )
    return table(headers, rows) + note


def main() -> None:
    print(run())


if __name__ == "__main__":
    main()
