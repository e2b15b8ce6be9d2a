"""Store benchmark: upsert throughput and filtered top-10 query latency at 20k records, 384-d."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import numpy as np

from kubevec.backends import Record, VectorStore
from kubevec.backends.chroma import ChromaStore
from kubevec.backends.filters import And, Eq, In
from kubevec.backends.memory import MemoryStore
from kubevec.backends.pgvector import PgvectorStore
from kubevec.backends.qdrant import QdrantStore
from tests.bench.report import percentile, table
from tests.services import chroma_server, postgres_server

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
    ]


@contextlib.asynccontextmanager
async def opened(factory: Callable[[], VectorStore]) -> AsyncIterator[VectorStore]:
    store = factory()
    try:
        yield store
    finally:
        await store.close()


async def run() -> str:
    records, queries = dataset()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, chroma_server(Path(tmp)) as url, postgres_server() as postgres:
        factories: list[Callable[[], VectorStore]] = [
            MemoryStore,
            lambda: ChromaStore(path=f"{tmp}/chroma-embedded"),
            lambda: ChromaStore(url=url),
            lambda: QdrantStore(path=f"{tmp}/qdrant-local"),
            lambda: PgvectorStore(url=postgres.url, password=postgres.password),
        ]
        for factory in factories:
            async with opened(factory) as store:
                print(f"  benchmarking {store.backend} at {store.location} ...", file=sys.stderr, flush=True)
                rows.append(await measure(store, records, queries))
    return table(["backend", "records", "upsert rec/s", "filtered top-10 p50 ms", "p95 ms"], rows)


def main() -> None:
    print("== Stores: 20k records x 384-d, filter kind=Deployment AND namespace in 3 of 10")
    print(asyncio.run(run()))


if __name__ == "__main__":
    main()
