"""The keyword index at 100,000 instance documents: built once, opened by the next process, kept up to date.

An embedded Chroma store is filled with ``KUBEVEC_BENCH_KEYWORD_DOCS`` (100,000) instance-shaped
records (``store_records``), then each step runs in a process of its own, as readers do:

1. **build**: a reader with an empty cache directory answers its first keyword query (it reads every
   text and indexes it); its time and peak RSS;
2. **open**: a second reader answers its first query from the index the first one left on disk;
3. **follow**: a warm reader answers while a writer changes 1,000 records and deletes 100: how long the
   next answer takes (it reads the journal and the 1,000 records), beside a rebuild from every record;
   and whether the answers are exact (the changed words found, the deleted records gone);
4. **queries**: 50 keyword rankings on the warm reader, p50 / p95.

``python -m tests.bench.keyword_index`` (part of ``make bench-scale``).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kubevec.backends import Record
from kubevec.backends.chroma import ChromaStore
from kubevec.query.lexical import LexicalIndex
from tests.bench.report import percentile, table
from tests.bench.store_records import batches

DOCS = int(os.environ.get("KUBEVEC_BENCH_KEYWORD_DOCS", "100000"))
COLLECTION = "instances"
CHANGED = 1000
DELETED = 100
QUESTIONS = ("payments api in prod", "pods that crash", "redis cache", "ingress tls", "node exporter metrics")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def fill(path: Path) -> float:
    store = ChromaStore(path=str(path))
    started = time.monotonic()
    await store.ensure_collection(COLLECTION, dimension=384, embedder="bench")
    stored = 0
    for batch in batches(DOCS, batch=1000):
        await store.upsert(COLLECTION, batch)
        stored += len(batch)
        if stored % 10_000 == 0:
            print(f"  stored {stored:,}/{DOCS:,}", file=sys.stderr, flush=True)
    await store.close()
    return time.monotonic() - started


async def first_answer(store_path: Path, cache: Path) -> dict[str, Any]:
    """A reader process's first keyword answer (build or open), then its warm query latencies."""
    started = time.monotonic()
    store = ChromaStore(path=str(store_path), follow=True)
    index = LexicalIndex(store=store, cache_dir=cache)
    await index.rank(COLLECTION, text=QUESTIONS[0], k=10, with_metadata=False)
    first = time.monotonic() - started
    times = []
    for n in range(50):
        began = time.monotonic()
        await index.rank(COLLECTION, text=QUESTIONS[n % len(QUESTIONS)], k=50, with_metadata=False, want=10)
        times.append(time.monotonic() - began)
    return {
        "first_s": first,
        "p50_ms": percentile(times, 50) * 1000,
        "p95_ms": percentile(times, 95) * 1000,
        "rss_mib": peak_rss_mib(),
    }


async def follow(store_path: Path, cache: Path) -> dict[str, Any]:
    """A warm reader's next answer after a writer's changes, and a rebuild's time for comparison."""
    reader_store = ChromaStore(path=str(store_path), follow=True)
    index = LexicalIndex(store=reader_store, cache_dir=cache)
    await index.rank(COLLECTION, text="anything", k=10, with_metadata=False)
    writer = ChromaStore(path=str(store_path))
    ids = await writer.list_ids(COLLECTION)
    changed = await writer.get(COLLECTION, ids[:CHANGED], include_vectors=True)
    await writer.upsert(
        COLLECTION,
        [Record(id=r.id, vector=r.vector, text=r.text + " zanzibarite", metadata=r.metadata) for r in changed],
    )
    await writer.delete(COLLECTION, ids[CHANGED : CHANGED + DELETED])
    began = time.monotonic()
    found = await index.rank(COLLECTION, text="zanzibarite", k=CHANGED + 10, with_metadata=False)
    caught_up = time.monotonic() - began
    deleted = set(ids[CHANGED : CHANGED + DELETED])
    text_of_deleted = next(iter(deleted))
    gone = not any(
        r.id in deleted for r, _ in await index.rank(COLLECTION, text=text_of_deleted, k=20, with_metadata=False)
    )
    exact = len(found) == CHANGED and gone
    rebuilt = LexicalIndex(store=reader_store, cache_dir=None)
    began = time.monotonic()
    await rebuilt.refresh(COLLECTION, with_metadata=False)
    rebuild = time.monotonic() - began
    return {"catch_up_s": caught_up, "exact": exact, "rebuild_s": rebuild, "documents": len(ids) - DELETED}


def in_process(step: str, store: Path, cache: Path) -> dict[str, Any]:
    """Run ``step`` in a fresh interpreter, as a reader process would."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.keyword_index", step, str(store), str(cache)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def run() -> str:
    with tempfile.TemporaryDirectory(prefix="kubevec-keyword-") as tmp:
        store, cache = Path(tmp) / "store", Path(tmp) / "cache"
        print(f"  storing {DOCS:,} instance-shaped records ...", file=sys.stderr, flush=True)
        filled = asyncio.run(fill(store))
        print("  a reader builds the index ...", file=sys.stderr, flush=True)
        built = in_process("first", store, cache)
        print("  a second reader opens it ...", file=sys.stderr, flush=True)
        opened = in_process("first", store, cache)
        print(f"  a writer changes {CHANGED:,} and deletes {DELETED} ...", file=sys.stderr, flush=True)
        followed = in_process("follow", store, cache)
    rows: list[list[object]] = [
        ["storing the records (s)", f"{filled:.1f}", "", ""],
        ["1. first answer, building the index (s)", f"{built['first_s']:.1f}", "13.1 (bm25s, in memory)", "<= 15"],
        ["   peak RSS of that reader (MiB)", f"{built['rss_mib']:.0f}", "859", "<= 600"],
        [
            "2. first answer of the next process (s)",
            f"{opened['first_s']:.2f}",
            "2.3 (saved at the same stamp only)",
            "",
        ],
        ["   peak RSS of that reader (MiB)", f"{opened['rss_mib']:.0f}", "649", "<= 600"],
        [
            f"3. next answer after {CHANGED:,} changed + {DELETED} deleted (s)",
            f"{followed['catch_up_s']:.2f}",
            f"a rebuild: {followed['rebuild_s']:.1f}",
            "",
        ],
        ["   answers exact (changed words found, deleted gone)", "yes" if followed["exact"] else "NO", "", "yes"],
        ["4. keyword ranking, warm: p50 / p95 (ms)", f"{opened['p50_ms']:.1f} / {opened['p95_ms']:.1f}", "", ""],
    ]
    return table([f"keyword index, {DOCS:,} documents, embedded Chroma", "now", "before", "goal"], rows)


def main() -> None:
    if len(sys.argv) == 4:
        step, store, cache = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
        result = asyncio.run(first_answer(store, cache) if step == "first" else follow(store, cache))
        print(json.dumps(result))
        return
    print(run())


if __name__ == "__main__":
    main()
