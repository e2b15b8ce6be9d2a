"""Store benchmark: upsert throughput and filtered top-10 query latency at 20k records, 384-d."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Final

import numpy as np

from kubevec.backends import Record, VectorStore
from kubevec.backends.chroma import ChromaStore
from kubevec.backends.filters import And, Eq, In
from kubevec.backends.lance import LanceStore
from kubevec.backends.memory import MemoryStore
from kubevec.backends.pgvector import PgvectorStore
from kubevec.backends.qdrant import QdrantStore
from kubevec.backends.redis import RedisStore
from kubevec.backends.weaviate import WeaviateStore
from tests.bench.report import percentile, table
from tests.services import chroma_server, postgres_server, redis_server, weaviate_server

SIZE = 20_000
DIM = 384
QUERIES = 200
BATCH = 500
KINDS = ["Deployment", "Service", "Certificate", "ConfigMap", "Pod"]
NAMESPACES = [f"team-{i}" for i in range(10)]


def dataset() -> tuple[list[Record], np.ndarray]:
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(SIZE, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = [
        Record(
            id=f"bench/{NAMESPACES[i % 10]}/apps/v1/{KINDS[i % 5]}/obj-{i}",
            vector=vectors[i].tolist(),
            text=f"{KINDS[i % 5]} obj-{i} | namespace: {NAMESPACES[i % 10]} | labels: app=a{i % 50}",
            metadata={
                "kind": KINDS[i % 5],
                "namespace": NAMESPACES[i % 10],
                "labels": [f"app=a{i % 50}", "tier=web"],
                "content_hash": f"h{i}",
            },
        )
        for i in range(SIZE)
    ]
    queries = rng.normal(size=(QUERIES, DIM)).astype(np.float32)
    return records, queries / np.linalg.norm(queries, axis=1, keepdims=True)


async def measure(store: VectorStore, records: list[Record], queries: np.ndarray) -> list[object]:
    name = "bench"
    await store.drop_collection(name)
    await store.ensure_collection(name, dimension=DIM, embedder="bench")
    start = time.perf_counter()
    for i in range(0, len(records), BATCH):
        await store.upsert(name, records[i : i + BATCH])
    upsert_rate = len(records) / (time.perf_counter() - start)
    query_filter = And((Eq("kind", "Deployment"), In("namespace", ("team-0", "team-5", "team-7"))))
    latencies = []
    for vector in queries:
        t0 = time.perf_counter()
        hits = await store.search(name, vector=vector.tolist(), k=10, filter=query_filter)
        latencies.append((time.perf_counter() - t0) * 1000)
        assert len(hits) == 10
    await store.drop_collection(name)
    return [
        f"{store.backend} {'server' if '://' in store.location else store.location.split('/')[-1]}",
        len(records),
        round(upsert_rate),
        percentile(latencies, 50),
        percentile(latencies, 95),
        percentile(latencies, 99),
    ]


@contextlib.asynccontextmanager
async def opened(factory: Callable[[], VectorStore]) -> AsyncIterator[VectorStore]:
    store = factory()
    try:
        yield store
    finally:
        await store.close()


#: Each store is measured in a process of its own, so its memory is its own: the embedded stores by the
#: process's peak RSS (the baseline row is the same process with the data set alone), the servers by the
#: resident memory of their processes once loaded.
STORES: Final = (
    "baseline",
    "memory",
    "chroma-embedded",
    "lancedb",
    "qdrant-local",
    "chroma-server",
    "pgvector",
    "weaviate",
    "redis",
)


def _factory(backend: str, *, tmp: str, url: str = "", password: str = "") -> Callable[[], VectorStore]:
    if backend == "weaviate":  # url: "<rest url> <grpc port>"
        rest, grpc = url.split()
        return lambda: WeaviateStore(url=rest, grpc_port=int(grpc))
    return {
        "memory": MemoryStore,
        "chroma-embedded": lambda: ChromaStore(path=f"{tmp}/chroma-embedded"),
        "lancedb": lambda: LanceStore(path=f"{tmp}/lancedb"),
        "qdrant-local": lambda: QdrantStore(path=f"{tmp}/qdrant-local"),
        "chroma-server": lambda: ChromaStore(url=url),
        "pgvector": lambda: PgvectorStore(url=url, password=password),
        "redis": lambda: RedisStore(url=url, password=password),
    }[backend]


async def one(backend: str, *, tmp: str, url: str, password: str) -> list[object]:
    records, queries = dataset()
    if backend == "baseline":
        row: list[object] = ["(data set alone)", len(records), "", "", "", ""]
    else:
        async with opened(_factory(backend, tmp=tmp, url=url, password=password)) as store:
            row = await measure(store, records, queries)
    return [*row, round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)]


def _server_rss_mb(marker: str) -> int:
    """Resident memory of this process's descendants whose command line holds ``marker`` (a server and its workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, stack = 0, list(children.get(os.getpid(), []))
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        with contextlib.suppress(OSError):
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                rss = next(
                    line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("VmRSS")
                )
                total += int(rss.split()[1])
    return round(total / 1024)


def run() -> str:
    rows = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        chroma_server(Path(tmp)) as chroma_url,
        postgres_server() as postgres,
        weaviate_server() as weaviate,
        redis_server() as redis,
    ):
        for backend in STORES:
            urls = {
                "chroma-server": chroma_url,
                "pgvector": postgres.url,
                "weaviate": f"{weaviate.url} {weaviate.grpc_port}",
                "redis": redis.url,
            }
            url = urls.get(backend, "")
            print(f"  benchmarking {backend} ...", file=sys.stderr, flush=True)
            done = subprocess.run(
                [sys.executable, "-m", "tests.bench.stores", "--one", backend, "--tmp", tmp, "--url", url,
                 "--password", {"pgvector": postgres.password, "redis": redis.password}.get(backend, "")],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                rows.append(
                    [
                        backend,
                        "failed",
                        done.stderr.strip().splitlines()[-1][:60] if done.stderr else "",
                        "",
                        "",
                        "",
                        "",
                    ]
                )
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            marker = {
                "chroma-server": "chroma",
                "pgvector": "postgres",
                "weaviate": "weaviate-server",
                "redis": "redis-server",
            }.get(backend)
            row.append(_server_rss_mb(marker) if marker else "")
            rows.append(row)
    return table(
        [
            "backend",
            "records",
            "upsert rec/s",
            "filtered top-10 p50 ms",
            "p95 ms",
            "p99 ms",
            "client peak RSS MB",
            "server RSS MB",
        ],
        rows,
    )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        args = dict(zip(sys.argv[3::2], sys.argv[4::2], strict=True))
        print(
            json.dumps(asyncio.run(one(sys.argv[2], tmp=args["--tmp"], url=args["--url"], password=args["--password"])))
        )
        return
    print("== Stores: 20k records x 384-d, filter kind=Deployment AND namespace in 3 of 10")
    print(run())


if __name__ == "__main__":
    main()
