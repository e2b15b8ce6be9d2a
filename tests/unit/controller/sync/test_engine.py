"""The sync engine: hash-skip, vector re-use, batching, and no loss through store/embedder outages."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.sync.engine import SyncEngine
from kubevec.inference.documents import Document, make_document
from tests.doubles.clock import FakeClock
from tests.doubles.embedders import CountingEmbedder

NAMES = {"capabilities": "capabilities", "instances": "instances"}


def doc(name: str, *, text: str | None = None, **metadata: object) -> Document:
    return make_document(
        id=f"c/ns/core/v1/ConfigMap/{name}",
        collection="instances",
        text=text or f"ConfigMap {name}",
        metadata={"name": name, **metadata},  # type: ignore[arg-type]
    )


async def engine_with(store: MemoryStore, embedder: CountingEmbedder, **kwargs: Any) -> SyncEngine:
    engine = SyncEngine(
        store=store, embedder=embedder, metrics=Metrics(), collection_names=NAMES, max_backoff=0.05, **kwargs
    )
    await engine.prepare()
    return engine


async def stored(store: MemoryStore) -> dict[str, str]:
    return {i: h async for i, h in store.iter_ids("instances")}


async def test_unchanged_documents_are_not_re_embedded() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with(store, embedder)
    engine.submit(doc("a"))
    assert await engine.flush()
    engine.submit(doc("a"))
    assert await engine.flush()
    assert embedder.texts == ["ConfigMap a"]
    assert (
        engine.metrics.registry.get_sample_value(
            "kubevec_embeddings_skipped_total", {"collection": "instances", "reason": "unchanged"}
        )
        == 1
    )


async def test_metadata_only_change_re_uses_the_stored_vector() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with(store, embedder)
    engine.submit(doc("a", uid="1"))
    await engine.flush()
    engine.submit(doc("a", uid="2"))  # same text, new uid (object recreated)
    await engine.flush()
    assert embedder.texts == ["ConfigMap a"]
    (record,) = await store.get("instances", ["c/ns/core/v1/ConfigMap/a"], include_vectors=True)
    assert record.metadata["uid"] == "2"
    assert record.vector == pytest.approx(embedder.vector("ConfigMap a"))


class ReadCountingStore(MemoryStore):
    """Counts the records the engine reads back: a plan from hashes reads only what it re-uses."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []

    async def get(self, name: str, ids: Sequence[str], *, include_vectors: bool = False) -> list[Record]:
        self.read.extend(ids)
        return await super().get(name, ids, include_vectors=include_vectors)


async def test_writes_are_planned_from_hashes_and_read_only_vectors_to_re_use() -> None:
    store, embedder = ReadCountingStore(), CountingEmbedder()
    engine = await engine_with(store, embedder)
    engine.submit(doc("a", uid="1"))
    engine.submit(doc("b", uid="1"))
    await engine.flush()
    assert store.read == []  # new documents: embedded, nothing read
    engine.submit(doc("a", uid="1", text="ConfigMap a, new text"))  # text changed: embedded, nothing read
    engine.submit(doc("b", uid="2"))  # metadata only: its vector is read and re-used
    await engine.flush()
    assert store.read == ["c/ns/core/v1/ConfigMap/b"]
    assert embedder.texts == ["ConfigMap a", "ConfigMap b", "ConfigMap a, new text"]
    assert engine.known["instances"]["c/ns/core/v1/ConfigMap/b"] == (
        doc("b", uid="2").content_hash,
        doc("b").text_hash,
        "",
        "",
    )


async def test_a_record_stored_without_a_text_hash_keeps_its_vector_when_the_text_is_the_same() -> None:
    """Records written before text hashes were stored: the text is compared once, then the hash is kept."""
    store, embedder = ReadCountingStore(), CountingEmbedder()
    await store.ensure_collection("instances", dimension=embedder.dimension, embedder=embedder.name)
    old = doc("a", uid="1")
    legacy = {k: v for k, v in old.metadata.items() if k != "text_hash"}
    vector = embedder.vector(old.text)
    await store.upsert("instances", [Record(id=old.id, vector=vector, text=old.text, metadata=legacy)])
    await store.upsert(
        "instances",
        [Record(id=doc("b").id, vector=vector, text="stored long ago", metadata={**legacy, "content_hash": "old"})],
    )
    engine = await engine_with(store, embedder)
    engine.submit(doc("a", uid="2"))
    engine.submit(doc("b"))
    await engine.flush()
    assert sorted(store.read) == [doc("a").id, doc("b").id]
    assert embedder.texts == ["ConfigMap b"]  # a's text is unchanged: its vector is re-used
    (record,) = await store.get("instances", [old.id])
    assert record.metadata["text_hash"] == old.text_hash


async def test_restart_seeds_hashes_from_the_store() -> None:
    store = MemoryStore()
    first = await engine_with(store, CountingEmbedder())
    for name in "abc":
        first.submit(doc(name))
    await first.flush()
    embedder = CountingEmbedder()
    second = await engine_with(store, embedder)  # a restarted controller, same store
    for name in "abc":
        second.submit(doc(name))
    await second.flush()
    assert embedder.texts == []


async def test_store_outage_loses_nothing_and_latest_state_wins() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with(store, embedder)
    engine.submit(doc("a", text="v1"))
    engine.submit(doc("b"))
    store.unavailable = True
    assert not await engine.flush()
    assert engine.degraded
    assert "simulated outage" in (engine.last_error or "")
    assert len(engine.queue) == 2
    engine.submit(doc("a", text="v2"))  # a newer state arrives during the outage
    engine.submit_delete("instances", "c/ns/core/v1/ConfigMap/gone")
    assert not await engine.flush()
    store.unavailable = False
    assert await engine.flush()
    assert not engine.degraded
    records = {
        r.id: r.text for r in await store.get("instances", ["c/ns/core/v1/ConfigMap/a", "c/ns/core/v1/ConfigMap/b"])
    }
    assert records == {"c/ns/core/v1/ConfigMap/a": "v2", "c/ns/core/v1/ConfigMap/b": "ConfigMap b"}
    assert engine.metrics.registry.get_sample_value("kubevec_errors_total", {"stage": "store"}) == 2


async def test_embedder_outage_is_retried() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with(store, embedder)
    embedder.failing = True
    engine.submit(doc("a"))
    assert not await engine.flush()
    assert engine.pending("instances", "c/ns/core/v1/ConfigMap/a")
    failures = {"provider": engine.metrics.provider, "reason": "unavailable"}
    assert engine.metrics.registry.get_sample_value("kubevec_embedder_errors_total", failures) == 1
    assert "simulated embedder outage" in str(engine.last_error)  # what readiness reports
    embedder.failing = False
    assert await engine.flush()
    assert await stored(store) == {"c/ns/core/v1/ConfigMap/a": doc("a").content_hash}


async def test_run_loop_flushes_full_batches_before_the_debounce() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with(store, embedder, debounce=30.0, batch_size=3)
    task = asyncio.create_task(engine.run())
    try:
        for name in "abc":
            engine.submit(doc(name))
        await asyncio.wait_for(engine.wait_idle(), timeout=5)  # well before the 30 s debounce
        assert len(await stored(store)) == 3
    finally:
        task.cancel()


async def test_run_loop_recovers_after_an_outage() -> None:
    store, embedder, clock = MemoryStore(), CountingEmbedder(), FakeClock()
    engine = await engine_with(store, embedder, debounce=0.01, clock=clock)
    task = asyncio.create_task(engine.run())
    try:
        store.unavailable = True
        engine.submit(doc("a"))
        await clock.until_slept(5)  # the debounce, then retries
        assert engine.degraded
        store.unavailable = False
        await asyncio.wait_for(engine.wait_idle(), timeout=5)
        assert not engine.degraded
        assert "c/ns/core/v1/ConfigMap/a" in await stored(store)
    finally:
        task.cancel()


async def test_run_loop_backs_off_exponentially_to_its_cap_and_starts_again_after_a_success() -> None:
    """The waits between failed flushes double from half a second (plus up to half a second of jitter),
    never past ``max_backoff``; a written batch resets them. On a fake clock: no real time passes."""
    store, embedder, clock = MemoryStore(), CountingEmbedder(), FakeClock()
    engine = SyncEngine(
        store=store, embedder=embedder, metrics=Metrics(), collection_names=NAMES, max_backoff=8.0, clock=clock
    )
    await engine.prepare()
    task = asyncio.create_task(engine.run())

    async def outage(retries: int) -> list[float]:
        store.unavailable = True
        before = len(clock.slept)
        engine.submit(doc(f"x{before}"))
        await clock.until_slept(before + 1 + retries)  # the debounce window, then the retries
        store.unavailable = False
        await asyncio.wait_for(engine.wait_idle(), timeout=5)
        debounce, *backoffs = clock.slept[before:]
        assert debounce == pytest.approx(1.0)
        return backoffs[:retries]

    try:
        backoffs = await outage(7)
        for attempt, seconds in enumerate(backoffs):
            floor = min(0.5 * 2**attempt, 8.0)
            assert floor <= seconds <= min(floor + 0.5, 8.0), (attempt, backoffs)
        assert backoffs[-1] == 8.0  # capped
        assert not engine.degraded
        again = await outage(1)
        assert 0.5 <= again[0] <= 1.0  # a success started the backoff over
    finally:
        task.cancel()


async def test_purge_removes_one_kind_everywhere() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with(store, embedder)
    topic = make_document(
        id="c/ns/kafka.strimzi.io/v1/KafkaTopic/t",
        collection="instances",
        text="t",
        metadata={"group": "kafka.strimzi.io", "kind": "KafkaTopic"},
    )
    engine.submit(topic)
    engine.submit(
        make_document(
            id="c/ns/core/v1/ConfigMap/x",
            collection="instances",
            text="x",
            metadata={"group": "core", "kind": "ConfigMap"},
        )
    )
    await engine.flush()
    await engine.purge_resource(group="kafka.strimzi.io", kind="KafkaTopic")
    assert set(await stored(store)) == {"c/ns/core/v1/ConfigMap/x"}
    assert "c/ns/kafka.strimzi.io/v1/KafkaTopic/t" not in engine.known["instances"]


async def test_purge_leaves_the_documents_of_other_clusters_sharing_the_store() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engines = {cluster: await engine_with(store, embedder) for cluster in ("east", "west")}
    for cluster, engine in engines.items():
        engine.cluster = cluster
        engine.submit(
            make_document(
                id=f"{cluster}/ns/kafka.strimzi.io/v1/KafkaTopic/t",
                collection="instances",
                text="t",
                metadata={"group": "kafka.strimzi.io", "kind": "KafkaTopic", "cluster": cluster},
            )
        )
        await engine.flush()
    await engines["east"].snapshot()
    await engines["east"].purge_resource(group="kafka.strimzi.io", kind="KafkaTopic")
    assert set(await stored(store)) == {"west/ns/kafka.strimzi.io/v1/KafkaTopic/t"}
    assert set(engines["east"].known["instances"]) == {"west/ns/kafka.strimzi.io/v1/KafkaTopic/t"}


async def test_standby_queues_but_writes_nothing_until_active() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with(store, embedder, debounce=0.01)
    engine.set_active(False)
    task = asyncio.create_task(engine.run())
    try:
        engine.submit(doc("a", text="v1"))
        engine.submit(doc("a", text="v2"))
        await asyncio.sleep(0.2)
        assert await stored(store) == {}
        assert embedder.texts == []
        engine.set_active(True)
        await asyncio.wait_for(engine.wait_idle(), timeout=5)
        assert embedder.texts == ["v2"]  # only the latest state, once
    finally:
        task.cancel()


async def test_a_batch_cancelled_mid_write_is_requeued() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with(store, embedder)
    started = asyncio.Event()
    original = embedder.embed_documents

    async def slow(texts):  # type: ignore[no-untyped-def]
        started.set()
        await asyncio.sleep(10)
        return await original(texts)

    embedder.embed_documents = slow  # type: ignore[method-assign]
    engine.submit(doc("a"))
    flushing = asyncio.create_task(engine.flush())
    await started.wait()
    flushing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await flushing
    assert engine.pending("instances", "c/ns/core/v1/ConfigMap/a")
    embedder.embed_documents = original  # type: ignore[method-assign]
    assert await engine.flush()
    assert "c/ns/core/v1/ConfigMap/a" in await stored(store)


async def test_a_restart_reads_the_hashes_its_stop_saved_unless_somebody_wrote_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading every stored hash took 16.5 s at 100,000 documents; the writer knows them when it stops."""
    store, embedder = MemoryStore(), CountingEmbedder()
    first = await engine_with(store, embedder)
    for name in ("a", "b"):
        first.submit(doc(name))
    assert await first.flush()
    saved = tmp_path / "hashes.json"
    assert await first.save_snapshot(saved)
    scans = 0
    original = store.iter_hashes

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal scans
        scans += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "iter_hashes", counted)
    again = SyncEngine(store=store, embedder=embedder, metrics=Metrics(), collection_names=NAMES)  # type: ignore[arg-type]
    await again.prepare(saved=saved)
    assert scans == 0
    assert again.known == first.known
    # Another writer (kubevec index, another cluster's controller): the stamps moved, the store is read.
    await store.delete("instances", [doc("a").id])
    third = SyncEngine(store=store, embedder=embedder, metrics=Metrics(), collection_names=NAMES)  # type: ignore[arg-type]
    await third.prepare(saved=saved)
    assert scans == 1
    assert sorted(third.known["instances"]) == [doc("b").id]
    # Nothing is saved while something is still queued: the store would not be what the file says.
    third.submit(doc("c"))
    assert not await third.save_snapshot(tmp_path / "other.json")
    assert not (tmp_path / "other.json").exists()


async def test_a_damaged_saved_snapshot_reads_the_store(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    first = await engine_with(store, embedder)
    first.submit(doc("a"))
    assert await first.flush()
    saved = tmp_path / "hashes.json"
    assert await first.save_snapshot(saved)
    saved.write_text(saved.read_text()[:-20])
    again = SyncEngine(store=store, embedder=embedder, metrics=Metrics(), collection_names=NAMES)  # type: ignore[arg-type]
    await again.prepare(saved=saved)
    assert sorted(again.known["instances"]) == [doc("a").id]
    assert "Ignoring saved stored hashes" in caplog.text


async def test_readiness_waits_for_what_was_queued_not_for_a_quiet_cluster() -> None:
    """A cluster that never stops changing never empties the queue: ``wait_written`` returns once what was
    queued before it is written, while changes keep coming (``wait_idle`` would wait for them to stop)."""
    store, embedder = MemoryStore(), CountingEmbedder()
    engine = await engine_with(store, embedder, debounce=0.01)
    for name in ("a", "b", "c"):
        engine.submit(doc(name))
    churning = True

    async def churn() -> None:
        step = 0
        while churning:
            step += 1
            engine.submit(doc(f"churn-{step}"))
            await asyncio.sleep(0)

    flushing = asyncio.create_task(engine.run())
    changes = asyncio.create_task(churn())
    try:
        await asyncio.wait_for(engine.wait_written(), timeout=10)
        assert {doc(n).id for n in ("a", "b", "c")} <= set(await stored(store))
    finally:
        churning = False
        await changes
        flushing.cancel()
