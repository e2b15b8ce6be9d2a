"""The BM25 index: built on first use, refreshed in the background, never blocking a query on a check."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from backends import BackendUnavailable, Record
from backends.memory import MemoryStore
from query.lexical import LexicalIndex


def record(record_id: str, text: str) -> Record:
    return Record(id=record_id, vector=[1.0, 0.0], text=text, metadata={"content_hash": text})


@pytest.fixture
async def store() -> MemoryStore:
    store = MemoryStore()
    await store.ensure_collection("c", dimension=2, embedder="e")
    await store.upsert("c", [record("a", "PgBouncer connection pooling"), record("b", "rolling updates")])
    return store


async def ranked_ids(index: LexicalIndex, text: str) -> list[str]:
    return [r.id for r, _ in await index.rank("c", text=text, k=10)]


async def test_first_query_builds_the_index(store: MemoryStore) -> None:
    index = LexicalIndex(store=store)
    assert await ranked_ids(index, "pgbouncer pooling") == ["a"]
    assert await ranked_ids(index, "nothing matches") == []


async def test_concurrent_first_queries_build_once(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    index = LexicalIndex(store=store)
    scans = 0
    original = store.iter_records

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal scans
        scans += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "iter_records", counting)
    results = await asyncio.gather(*(ranked_ids(index, "pgbouncer") for _ in range(5)))
    assert results == [["a"]] * 5
    assert scans == 1


async def test_changes_show_after_a_background_refresh_not_before(store: MemoryStore) -> None:
    index = LexicalIndex(store=store, refresh_seconds=0.0)
    assert await ranked_ids(index, "cosign") == []
    await store.upsert("c", [record("c", "cosign image signatures")])
    # The stale index answers at once; the check runs behind it.
    assert await ranked_ids(index, "cosign") == []
    await index.refresh("c")
    assert await ranked_ids(index, "cosign") == ["c"]
    await store.delete("c", ["a"])
    await index.refresh("c")
    assert await ranked_ids(index, "pgbouncer") == []


async def test_unchanged_collection_keeps_its_index(store: MemoryStore) -> None:
    index = LexicalIndex(store=store, refresh_seconds=0.0)
    await ranked_ids(index, "pgbouncer")
    before = index._indexes["c"]
    await index.refresh("c")
    assert index._indexes["c"] is before


async def test_a_failing_refresh_keeps_serving_the_old_index(
    store: MemoryStore, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = LexicalIndex(store=store, refresh_seconds=0.0)
    assert await ranked_ids(index, "pgbouncer") == ["a"]

    def down(*args: object, **kwargs: object) -> object:
        raise BackendUnavailable("store is down")

    monkeypatch.setattr(store, "iter_records", down)
    with caplog.at_level(logging.WARNING, logger="query.lexical"):
        assert await ranked_ids(index, "pgbouncer") == ["a"]
        for _ in range(100):
            if not index._refreshing:
                break
            await asyncio.sleep(0.01)
    assert "Lexical index refresh failed collection=c" in caplog.text
    assert await ranked_ids(index, "pgbouncer") == ["a"]
