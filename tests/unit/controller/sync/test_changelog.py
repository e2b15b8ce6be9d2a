"""The change history as the engine writes it: quiet on a first sync, one record per change, none for
status churn, nothing lost or doubled across a failed flush, retention by age and count."""

from __future__ import annotations

import copy
from typing import Any

from kubevec.backends.memory import MemoryStore
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.sync.changelog import ChangeLog
from kubevec.controller.sync.engine import SyncEngine
from kubevec.inference.change_records import CHANGES
from kubevec.inference.documents import Document
from tests.doubles.embedders import CountingEmbedder
from tests.unit.inference.test_change_records import deployment, document

NAMES = {"capabilities": "capabilities", "instances": "instances"}


async def engine_with_history(store: MemoryStore, embedder: CountingEmbedder, **retention: Any) -> SyncEngine:
    metrics = Metrics()
    log = ChangeLog(store=store, collection=CHANGES, embedder=embedder, metrics=metrics, cluster="prod-eu", **retention)
    engine = SyncEngine(
        store=store,
        embedder=embedder,
        metrics=metrics,
        collection_names=NAMES,
        cluster="prod-eu",
        history=log,
        max_backoff=0.05,
    )  # type: ignore[arg-type]
    await engine.prepare()
    return engine


async def changes(store: MemoryStore) -> list[str]:
    return sorted([r.text async for r in store.iter_records(CHANGES)])


def other(name: str) -> Document:
    body = deployment()
    body["metadata"]["name"] = name
    return document(body)


async def test_a_first_sync_records_nothing_then_changes_are_recorded() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with_history(store, embedder)
    engine.submit(document(deployment()))
    engine.submit(other("billing"))
    assert await engine.flush()
    assert await changes(store) == []  # building the index is not a change
    engine.resynced()
    engine.submit(document(deployment(image="ghcr.io/acme/payments-api:2.3.1")))
    engine.submit(other("ledger"))
    engine.submit_delete("instances", other("billing").id)
    assert await engine.flush()
    assert await changes(store) == [
        "Deployment prod/billing deleted (was healthy)",
        "Deployment prod/ledger created: images ghcr.io/acme/payments-api:2.3.0; replicas 3; health healthy",
        "Deployment prod/payments-api: image ghcr.io/acme/payments-api 2.3.0 -> 2.3.1",
    ]
    assert engine.metrics.registry.get_sample_value("kubevec_embeddings_computed_total", {"collection": CHANGES}) == 3


async def test_a_restart_over_a_filled_store_records_at_once() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    first = await engine_with_history(store, embedder)
    first.submit(document(deployment()))
    assert await first.flush()
    engine = await engine_with_history(store, embedder)  # the store holds this cluster's documents
    engine.submit(document(deployment(ready=1)))
    assert await engine.flush()
    assert await changes(store) == ["Deployment prod/payments-api: health healthy -> progressing (ReplicasNotReady)"]


async def test_status_churn_writes_no_record() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with_history(store, embedder)
    engine.resynced()
    body = deployment(ready=1, reason="ProgressDeadlineExceeded")
    engine.submit(document(body))
    assert await engine.flush()
    before = await changes(store)
    for generation in range(5, 10):  # the reason and observed generation churn, the health stays degraded
        churned = copy.deepcopy(body)
        churned["status"]["observedGeneration"] = generation
        churned["status"]["conditions"][1]["reason"] = f"Reason{generation}"
        engine.submit(document(churned))
        assert await engine.flush()
    assert await changes(store) == before


async def test_a_failed_flush_loses_and_doubles_no_record() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with_history(store, embedder)
    engine.submit(document(deployment()))
    assert await engine.flush()
    engine.resynced()
    engine.submit(document(deployment(image="ghcr.io/acme/payments-api:2.4.0")))
    store.unavailable = True
    assert not await engine.flush()
    store.unavailable = False
    assert await engine.flush()
    assert await changes(store) == ["Deployment prod/payments-api: image ghcr.io/acme/payments-api 2.3.0 -> 2.4.0"]


async def test_retention_by_age_then_count() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with_history(store, embedder, max_age_seconds=3600, max_records=100)
    assert engine.history is not None
    engine.resynced()
    for i in range(120):
        engine.submit(other(f"app-{i}"))
    assert await engine.flush()
    assert await store.count(CHANGES) == 120
    assert await engine.history.prune() == 20  # the oldest beyond the count
    assert await store.count(CHANGES) == 100
    import time

    assert await engine.history.prune(now=time.time() + 7200) == 100  # all older than an hour by then
    assert await store.count(CHANGES) == 0
    assert engine.metrics.registry.get_sample_value("kubevec_changes_pruned_total") == 120


async def test_without_embedding_nothing_is_embedded() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with_history(store, embedder, embed=False)
    engine.resynced()
    engine.submit(document(deployment()))
    assert await engine.flush()
    assert len(await changes(store)) == 1
    assert embedder.texts == [document(deployment()).text]  # the instance only


async def test_records_an_older_gate_wrote_are_rewritten_once_and_only_they_are_embedded() -> None:
    """A store upgraded from an older gate keeps the secrets that gate let through until they are judged again."""
    from kubevec.backends import Record

    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with_history(store, embedder)
    old = "Deployment prod/payments: args --db=appuser:Qz7mapleRiver@tcp(db:3306)/o -> --db=(none)"
    fine = "Deployment prod/payments: replicas 3 -> 5"
    meta = {"cluster": "prod-eu", "kind": "Deployment", "namespace": "prod", "name": "payments", "change": "updated"}
    await store.upsert(
        CHANGES,
        [
            Record(
                id="a",
                vector=[0.0] * embedder.dimension,
                text=old,
                metadata={**meta, "object": "x", "time": 1.0, "content_hash": "1"},
            ),
            Record(
                id="b",
                vector=[0.0] * embedder.dimension,
                text=fine,
                metadata={**meta, "object": "y", "time": 2.0, "content_hash": "2"},
            ),
        ],
    )
    embedded = len(embedder.texts)
    assert engine.history is not None
    assert await engine.history.rejudge() == 1
    texts = await changes(store)
    assert not [t for t in texts if "Qz7mapleRiver" in t]
    assert fine in texts
    assert len(embedder.texts) == embedded + 1
    assert await engine.history.rejudge() == 0  # judged the same now: nothing written, nothing embedded
    assert len(embedder.texts) == embedded + 1
