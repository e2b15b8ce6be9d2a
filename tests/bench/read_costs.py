"""What the instance ranking's own reads cost at 100,000 documents (embedded Chroma): the dense search
it starts from, the second search of a question placed in one namespace, the collection mean that
centres it (estimated once, then again behind the answers), and centring 100 candidates.

An embedded Chroma store is filled with ``KUBEVEC_BENCH_READ_DOCS`` (100,000) instance-shaped records
(``store_records``: random unit vectors, the payload filters read), then each read runs 30 times.
``python -m tests.bench.read_costs`` (part of ``make bench-scale``).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from kubevec.backends.chroma import ChromaStore
from kubevec.backends.filters import Eq
from kubevec.query.hubs import Centres, centred
from tests.bench.store_records import DIM, NAMESPACES, batches, queries

DOCS = int(os.environ.get("KUBEVEC_BENCH_READ_DOCS", "100000"))
RUNS = 30
COLLECTION = "instances"


async def fill(store: ChromaStore) -> None:
    await store.ensure_collection(COLLECTION, dimension=DIM, embedder="bench")
    started, written = time.monotonic(), 0
    for batch in batches(DOCS, batch=1000):
        await store.upsert(COLLECTION, batch)
        written += len(batch)
        if written % 20_000 == 0 or written == DOCS:
            print(f"  written {written:,} of {DOCS:,} ({time.monotonic() - started:.0f} s)", flush=True)


async def timed(runs: int, step: Callable[[int], Awaitable[object]]) -> list[float]:
    out = []
    for run in range(runs):
        started = time.perf_counter()
        await step(run)
        out.append(time.perf_counter() - started)
    return sorted(out)


def line(label: str, seconds: list[float]) -> str:
    p95 = seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))]
    return (
        f"{label:<44} p50 {1000 * statistics.median(seconds):7.1f} ms   p95 {1000 * p95:7.1f} ms   (n={len(seconds)})"
    )


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = ChromaStore(path=str(Path(tmp) / "store"))
        print(f"Filling an embedded Chroma store with {DOCS:,} instance documents", flush=True)
        await fill(store)
        vectors = [q.tolist() for q in queries(RUNS)]
        place = Eq("namespace", NAMESPACES[3])
        plain = await timed(RUNS, lambda i: store.search(COLLECTION, vector=vectors[i], k=100))
        placed = await timed(RUNS, lambda i: store.search(COLLECTION, vector=vectors[i], k=100, filter=place))
        centres = Centres()
        first = await timed(1, lambda _: centres.of(store, COLLECTION))
        mean = await centres.of(store, COLLECTION)
        assert mean is not None
        hits = [await store.search(COLLECTION, vector=v, k=100) for v in vectors]
        centring = await timed(RUNS, lambda i: centred(store, COLLECTION, hits=hits[i], mean=mean))
        kept = await timed(RUNS, lambda _: centres.of(store, COLLECTION))
    print(f"\nInstance ranking reads at {DOCS:,} documents (embedded Chroma, k=100 candidates)")
    print(line("dense search", plain))
    print(line("placed question: search in one namespace", placed))
    print(line("collection mean, first estimate (2,000)", first))
    print(line("collection mean, kept or stale (behind)", kept))
    print(line("centring 100 candidates", centring))


if __name__ == "__main__":
    asyncio.run(main())
