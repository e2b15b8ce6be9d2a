"""Fleet: two controllers with different versions of 20 CRDs on one store, 3 resyncs each.

What each round writes and embeds, with the real engine and the shared capability records, and what
the same rounds cost when each cluster writes the ``plural.group`` record in turn (as before sharing:
the last writer wins, so every resync of the other cluster rewrites every type, and re-embeds the
ones whose texts differ).
"""

from __future__ import annotations

import asyncio
from typing import Any

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.controller.runtime.metrics import Metrics
from kubevec.inference.documents import CAPABILITIES
from tests.bench.report import table
from tests.doubles.embedders import CountingEmbedder
from tests.fleet import fleet_engine, operator_crds, resync

ROUNDS = 3
CLUSTERS = ("east", "west")


async def shared() -> list[list[Any]]:
    store, embedder = MemoryStore(), CountingEmbedder()
    metrics = {c: Metrics() for c in CLUSTERS}
    rows = []
    for round_ in range(1, ROUNDS + 1):
        for cluster in CLUSTERS:
            engine = await fleet_engine(store=store, embedder=embedder, cluster=cluster, metrics=metrics[cluster])
            embedded, written = len(embedder.texts), _writes(metrics[cluster])
            await resync(engine, operator_crds(cluster=cluster))
            rows.append(
                [
                    "shared records",
                    round_,
                    cluster,
                    len(embedder.texts) - embedded,
                    int(_writes(metrics[cluster]) - written),
                    await store.count(CAPABILITIES),
                ]
            )
    return rows


async def last_writer_wins() -> list[list[Any]]:
    """Before sharing: one record per type, written by whichever cluster's resync found it differing."""
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection(CAPABILITIES, dimension=embedder.dimension, embedder=embedder.name)
    rows = []
    for round_ in range(1, ROUNDS + 1):
        for cluster in CLUSTERS:
            stored = {r.id: r for r in await store.get(CAPABILITIES, await store.list_ids(CAPABILITIES))}
            embedded = len(embedder.texts)
            changed = [
                d
                for d in operator_crds(cluster=cluster).values()
                if d.id not in stored or stored[d.id].metadata["content_hash"] != d.content_hash
            ]
            texts = [d.text for d in changed if d.id not in stored or stored[d.id].text != d.text]
            vectors = dict(zip(texts, await embedder.embed_documents(texts), strict=True))
            await store.upsert(
                CAPABILITIES,
                [
                    Record(
                        id=d.id, vector=vectors.get(d.text) or embedder.vector(d.text), text=d.text, metadata=d.metadata
                    )
                    for d in changed
                ],
            )
            rows.append(
                [
                    "last writer wins",
                    round_,
                    cluster,
                    len(embedder.texts) - embedded,
                    len(changed),
                    await store.count(CAPABILITIES),
                ]
            )
    return rows


def _writes(metrics: Metrics) -> float:
    return metrics.registry.get_sample_value("kubevec_upserts_total", {"collection": CAPABILITIES}) or 0.0


def run() -> str:
    rows = asyncio.run(shared()) + asyncio.run(last_writer_wins())
    return table(["store", "round", "resync of", "embedded", "records written", "records"], rows)


if __name__ == "__main__":
    print(run())
