"""Change history: what recording every change costs, with the real engine and embedded Chroma on disk.

2,000 Deployments are indexed (quietly: a first sync records nothing), then changed the way a busy
cluster changes them: image rollouts (each one record), status churn under the same health (no
record, no write of the history) and health flips (one record each). Measured with history on and
off: embeddings, records and engine time per change; then the bytes a record takes on disk (10,000
records in their own Chroma directory, 384-d vectors like the offline model's), and what the
default retention keeps for a 20,000-object cluster at the churn rate stated below.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from kubevec.backends import Record
from kubevec.backends.chroma import ChromaStore
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.settings import HistorySettings
from kubevec.controller.sync.changelog import ChangeLog
from kubevec.controller.sync.engine import SyncEngine
from kubevec.inference.change_records import CHANGE_FIELDS, CHANGES, Stored, change_record
from kubevec.inference.instances import build_instance
from tests.bench.report import table
from tests.doubles.embedders import CountingEmbedder

OBJECTS = 2000
ROLLOUTS = 2  # image rollouts per object
CHURN = 3  # status rewrites under the same health per object
DIMENSION = 384
#: The churn rate the size estimate assumes for a 20,000-object cluster: 2% of objects change per hour.
CLUSTER_OBJECTS = 20_000
CHANGES_PER_HOUR = CLUSTER_OBJECTS * 0.02


def deployment(
    i: int, *, tag: int, ready: int, generation: int, reason: str = "NewReplicaSetAvailable"
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"app-{i}", "namespace": f"team-{i % 40}", "uid": f"u-{i}", "labels": {"app": f"app-{i}"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": f"app-{i}"}},
            "template": {"spec": {"containers": [{"name": "app", "image": f"registry.example.com/app-{i}:1.{tag}.0"}]}},
        },
        "status": {
            "observedGeneration": generation,
            "replicas": 3,
            "updatedReplicas": 3,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "conditions": [
                {"type": "Available", "status": "True" if ready == 3 else "False"},
                {"type": "Progressing", "status": "True", "reason": reason},
            ],
        },
    }


async def engine_run(*, history: bool) -> dict[str, float]:
    directory = Path(tempfile.mkdtemp(prefix="kubevec-bench-history-"))
    store, embedder, metrics = ChromaStore(path=str(directory)), CountingEmbedder(DIMENSION), Metrics()
    names = {"capabilities": "capabilities", "instances": "instances"}
    log = (
        ChangeLog(store=store, collection=CHANGES, embedder=embedder, metrics=metrics, cluster="bench")
        if history
        else None
    )
    engine = SyncEngine(
        store=store, embedder=embedder, metrics=metrics, collection_names=names, cluster="bench", history=log
    )  # type: ignore[arg-type]
    try:
        await engine.prepare()
        for i in range(OBJECTS):
            engine.submit(
                build_instance(
                    deployment(i, tag=0, ready=3, generation=1), plural="deployments", cluster="bench"
                ).to_document()
            )
        await engine.flush()
        engine.resynced()
        indexed = len(embedder.texts)
        updates = changes = 0
        started = time.perf_counter()
        for rollout in range(1, ROLLOUTS + 1):
            for i in range(OBJECTS):
                engine.submit(
                    build_instance(
                        deployment(i, tag=rollout, ready=3, generation=rollout + 1),
                        plural="deployments",
                        cluster="bench",
                    ).to_document()
                )
            await engine.flush()
            updates += OBJECTS
            changes += OBJECTS
            for churn in range(CHURN):
                for i in range(OBJECTS):
                    body = deployment(
                        i, tag=rollout, ready=3, generation=rollout + 1, reason=f"ReplicaSetUpdated{churn}"
                    )
                    engine.submit(build_instance(body, plural="deployments", cluster="bench").to_document())
                await engine.flush()
                updates += OBJECTS
        for i in range(0, OBJECTS, 10):  # a tenth degrade
            body = deployment(i, tag=ROLLOUTS, ready=1, generation=ROLLOUTS + 1)
            engine.submit(build_instance(body, plural="deployments", cluster="bench").to_document())
        await engine.flush()
        updates += OBJECTS // 10
        changes += OBJECTS // 10
        elapsed = time.perf_counter() - started
        recorded = await store.count(CHANGES) if history else 0
        return {
            "updates": updates,
            "changes": changes,
            "records": recorded,
            "embedded": len(embedder.texts) - indexed,
            "ms_per_update": 1000 * elapsed / updates,
        }
    finally:
        await store.close()
        shutil.rmtree(directory, ignore_errors=True)


async def bytes_per_record(count: int = 10_000) -> float:
    directory = Path(tempfile.mkdtemp(prefix="kubevec-bench-history-size-"))
    store, embedder = ChromaStore(path=str(directory)), CountingEmbedder(DIMENSION)
    try:
        await store.ensure_collection(CHANGES, dimension=DIMENSION, embedder=embedder.name, indexed=CHANGE_FIELDS)
        empty = _size(directory)
        batch = []
        for n in range(count):
            i = n % OBJECTS
            before = build_instance(
                deployment(i, tag=n, ready=3, generation=1), plural="deployments", cluster="bench"
            ).to_document()
            after = build_instance(
                deployment(i, tag=n + 1, ready=3, generation=2), plural="deployments", cluster="bench"
            ).to_document()
            record = change_record(
                object_id=after.id,
                before=Stored(text=before.text, metadata=before.metadata),
                after=Stored(text=after.text, metadata=after.metadata),
            )
            assert record is not None
            batch.append(
                Record(id=record.id, vector=embedder.vector(record.text), text=record.text, metadata=record.metadata)
            )
            if len(batch) == 500:
                await store.upsert(CHANGES, batch)
                batch = []
        await store.upsert(CHANGES, batch)
        await store.close()
        return (_size(directory) - empty) / count
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


async def measure() -> list[list[Any]]:
    on, off = await engine_run(history=True), await engine_run(history=False)
    size = await bytes_per_record()
    defaults = HistorySettings()
    week = CHANGES_PER_HOUR * defaults.max_age_hours
    kept = min(week, defaults.max_records)
    return [
        ["instance updates (rollouts, status churn, health flips)", int(on["updates"])],
        ["of which changes an agent would call a change", int(on["changes"])],
        ["change records written", int(on["records"])],
        ["records for status churn under the same health", int(on["records"] - on["changes"])],
        [
            "embeddings per change record (history on, batched per flush)",
            round((on["embedded"] - off["embedded"]) / max(on["records"], 1), 3),
        ],
        ["engine ms per update, history off", round(off["ms_per_update"], 3)],
        ["engine ms per update, history on", round(on["ms_per_update"], 3)],
        ["bytes on disk per record (embedded Chroma, 384-d)", int(size)],
        [f"assumed churn: changes/hour at {CLUSTER_OBJECTS} objects (2%)", int(CHANGES_PER_HOUR)],
        ["store growth per day (MB)", round(CHANGES_PER_HOUR * 24 * size / 1e6, 1)],
        [f"kept by default retention ({defaults.max_age_hours:.0f} h, {defaults.max_records} records)", int(kept)],
        ["size of what is kept (MB)", round(kept * size / 1e6, 1)],
    ]


def run() -> str:
    return table(["change history", "value"], asyncio.run(measure()))


if __name__ == "__main__":
    print(run())
