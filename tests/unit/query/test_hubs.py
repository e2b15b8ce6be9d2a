"""Centring on the collection's mean: a document near every question gains nothing from being near this one."""

from __future__ import annotations

import asyncio
import math

from kubevec.backends import Hit, Record
from kubevec.backends.memory import MemoryStore
from kubevec.query.hubs import Centres, centred


def unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


async def store_of(vectors: dict[str, list[float]]) -> MemoryStore:
    store = MemoryStore()
    await store.ensure_collection("instances", dimension=3, embedder="test")
    await store.upsert(
        "instances", [Record(id=i, vector=v, text=i, metadata={"content_hash": i}) for i, v in vectors.items()]
    )
    return store


async def test_a_hub_near_the_middle_ranks_below_a_document_as_near_the_question() -> None:
    # ten documents spread around the middle (1, 1, 1); the hub sits on it, the answer off to one side
    vectors = {f"d{i}": unit(1 + (i % 3 == 0), 1 + (i % 3 == 1), 1 + (i % 3 == 2)) for i in range(9)}
    vectors["hub"] = unit(1, 1, 1)
    vectors["answer"] = unit(0.2, 1, 0.1)
    store = await store_of(vectors)
    mean = await Centres().of(store, "instances")
    assert mean is not None
    question = unit(0.55, 1, 0.5)
    cosine = {i: sum(a * b for a, b in zip(question, v, strict=True)) for i, v in vectors.items()}
    assert cosine["hub"] >= cosine["answer"]  # the raw similarity prefers the hub
    hits = [Hit(id=i, score=cosine[i], text=i, metadata={}) for i in ("hub", "answer")]
    ordered = await centred(store, "instances", hits=hits, mean=mean)
    assert [h.id for h in ordered] == ["answer", "hub"]
    assert ordered[0].score == cosine["answer"]  # each keeps its own similarity


async def test_the_mean_is_read_again_only_when_the_collection_changed() -> None:
    store = await store_of({"a": unit(1, 0, 0), "b": unit(0, 1, 0)})
    centres = Centres()
    first = await centres.of(store, "instances")
    await store.upsert("instances", [Record(id="c", vector=unit(0, 0, 1), text="c", metadata={"content_hash": "c"})])
    assert (await centres.of(store, "instances")) is first  # fresh for a minute
    centre = centres._by_name["instances"]
    centre.read_at -= 120
    assert (await centres.of(store, "instances")) is first  # stale: used while it is read again behind
    assert centre.refresh is not None
    await centre.refresh
    again = await centres.of(store, "instances")
    assert again is not None
    assert again[2] > 0


async def test_a_mean_that_cannot_be_read_again_is_kept() -> None:
    store = await store_of({"a": unit(1, 0, 0), "b": unit(0, 1, 0)})
    centres = Centres()
    first = await centres.of(store, "instances")
    centre = centres._by_name["instances"]
    centre.read_at -= 120

    async def down(name: str) -> str:
        raise ConnectionError("store down")

    store.stamp = down  # type: ignore[method-assign]
    await centres.of(store, "instances")
    running = centre.refresh
    assert running is not None
    assert (await running) is first
    assert not centres._by_name["instances"].refresh
    assert (await centres.of(store, "instances")) is first


async def test_agents_asking_at_once_share_one_estimate_of_the_mean() -> None:
    store = await store_of({"a": unit(1, 0, 0), "b": unit(0, 1, 0)})
    reads = 0
    real_sample = store.sample

    async def counted_sample(*args: object, **kwargs: object) -> object:
        nonlocal reads
        reads += 1
        await asyncio.sleep(0.01)  # a read takes time: the others arrive while it runs
        return await real_sample(*args, **kwargs)  # type: ignore[arg-type]

    store.sample = counted_sample  # type: ignore[method-assign,assignment]
    centres = Centres()
    means = await asyncio.gather(*(centres.of(store, "instances") for _ in range(8)))
    assert reads == 1
    assert all(m is means[0] for m in means)
