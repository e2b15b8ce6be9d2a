"""Status and Event churn: what they cost (embeddings and store writes), with the real engine.

Every Deployment's status is rewritten many times, as a cluster does (observed generation,
replica counts on the way up, condition timestamps); a few times its coarse health flips. The
health summary is metadata, so no update may embed anything, and only the flips may write.

Then Warning Events about the same objects, as a sick cluster emits them: each object gets one,
which repeats (a new time and count, the same reason and message) nine times, and a tenth with
another reason. The latest warning is metadata, so nothing may embed, and only the new reasons
(and the first warnings) may write.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kubevec.backends.memory import MemoryStore
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.sync.engine import SyncEngine
from kubevec.inference.instances import build_instance
from kubevec.inference.warnings import Warnings
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
    embedded_by_status = len(embedder.texts) - initial
    status_writes = int(written() - before_writes)
    # Warning Events: one per object, repeated, then another reason.
    warnings, before_events, events = Warnings(), written(), 0
    final = [deployment(i, ready=3, generation=1, stamp=UPDATES) for i in range(OBJECTS)]
    for round_ in range(UPDATES):
        reason = "FailedMount" if round_ < UPDATES - 1 else "BackOff"
        for i, body in enumerate(final):
            uid = f"uid-{i}"
            event = {
                "type": "Warning", "reason": reason, "message": f"volume cfg-{i} not found", "count": round_ + 1,
                "lastTimestamp": f"2026-11-23T01:{round_:02d}:00Z",
                "metadata": {"name": f"app-{i}.{reason}", "namespace": f"ns-{i % 20}"},
                "involvedObject": {"kind": "Deployment", "name": f"app-{i}", "uid": uid},
            }  # fmt: skip
            events += 1
            if warnings.observe(event_type="MODIFIED" if round_ else "ADDED", body=event) is not None:
                with_uid = {**body, "metadata": {**body["metadata"], "uid": uid}}
                document = build_instance(with_uid, plural="deployments", warning=warnings.latest(uid))
                engine.submit(document.to_document())
        await engine.flush()
    return [
        ["objects", OBJECTS],
        ["initial embeddings", initial],
        ["status updates", OBJECTS * UPDATES],
        ["of which changed the coarse health", OBJECTS * flips],
        ["embeddings for all status updates", embedded_by_status],
        ["store writes (metadata only, vector re-used)", status_writes],
        ["engine time per update (ms)", round(1000 * elapsed / (OBJECTS * UPDATES), 3)],
        ["Warning Events (9 repeats and 1 new reason per object)", events],
        ["embeddings for all Warning Events", len(embedder.texts) - initial - embedded_by_status],
        ["store writes for Warning Events (first warning, new reason)", int(written() - before_events)],
    ]


def run() -> str:
    return table(["status and event churn", "value"], asyncio.run(measure()))
