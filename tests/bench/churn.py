"""Status churn: what status updates cost (embeddings and store writes), with the real engine.

Every Deployment's status is rewritten many times, as a cluster does (observed generation,
replica counts on the way up, condition timestamps); a few times its coarse health flips. The
health summary is metadata, so no update may embed anything, and only the flips may write.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kubevec.backends.memory import MemoryStore
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.sync.engine import SyncEngine
from kubevec.inference.instances import build_instance
from tests.bench.report import table
from tests.doubles.embedders import CountingEmbedder

OBJECTS = 1000
UPDATES = 10  # status rewrites per object, two of which change the coarse health


def deployment(index: int, *, ready: int, generation: int, stamp: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"app-{index}", "namespace": f"ns-{index % 20}", "generation": generation},
        "spec": {
            "replicas": 3,
            "template": {"spec": {"containers": [{"name": "app", "image": f"registry/app-{index}:1"}]}},
        },
        "status": {
            "observedGeneration": generation,
            "replicas": 3,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "updatedReplicas": 3,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True" if ready == 3 else "False",
                    "lastUpdateTime": f"2026-11-23T00:{stamp % 60:02d}:00Z",
                },
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
            ],
        },
    }


async def measure() -> list[list[Any]]:
    store, embedder, metrics = MemoryStore(), CountingEmbedder(), Metrics()
    engine = SyncEngine(
        store=store,
        embedder=embedder,
        metrics=metrics,
        collection_names={"capabilities": "capabilities", "instances": "instances"},
    )
    await engine.prepare()
    for i in range(OBJECTS):
        engine.submit(build_instance(deployment(i, ready=3, generation=1, stamp=0), plural="deployments").to_document())
    await engine.flush()
    initial = len(embedder.texts)

    def written() -> float:
        return metrics.registry.get_sample_value("kubevec_upserts_total", {"collection": "instances"}) or 0

    before_writes, started = written(), time.perf_counter()
    flips = 0
    for update in range(1, UPDATES + 1):
        # update 4: one replica goes, update 5: it is back (health flips twice); the rest is churn
        ready = 2 if update == 4 else 3
        flips += update in (4, 5)
        for i in range(OBJECTS):
            body = deployment(i, ready=ready, generation=1, stamp=update)
            engine.submit(build_instance(body, plural="deployments").to_document())
        await engine.flush()
    elapsed = time.perf_counter() - started
    return [
        ["objects", OBJECTS],
        ["initial embeddings", initial],
        ["status updates", OBJECTS * UPDATES],
        ["of which changed the coarse health", OBJECTS * flips],
        ["embeddings for all status updates", len(embedder.texts) - initial],
        ["store writes (metadata only, vector re-used)", int(written() - before_writes)],
        ["engine time per update (ms)", round(1000 * elapsed / (OBJECTS * UPDATES), 3)],
    ]


def run() -> str:
    return table(["status churn", "value"], asyncio.run(measure()))
