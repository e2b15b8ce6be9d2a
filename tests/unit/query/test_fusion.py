"""Fusion reads a lexical hit's vector once: with the ranking's read-back when it brought it, else after."""

from __future__ import annotations

from typing import Any

import pytest

from kubevec.backends import Hit, Record
from kubevec.backends.memory import MemoryStore
from kubevec.query.ranking import fuse


@pytest.fixture
async def store() -> MemoryStore:
    store = MemoryStore()
    await store.ensure_collection("c", dimension=2, embedder="e")
    await store.upsert(
        "c",
        [
            Record(id="dense", vector=[1.0, 0.0], text="d", metadata={"content_hash": "d"}),
            Record(id="word", vector=[0.6, 0.8], text="w", metadata={"content_hash": "w"}),
        ],
    )
    return store


async def test_a_lexical_hit_whose_similarity_is_known_is_not_read_again(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[list[str]] = []
    original = store.get

    async def get(name: str, ids: Any, **kwargs: Any) -> Any:
        reads.append(list(ids))
        return await original(name, ids, **kwargs)

    monkeypatch.setattr(store, "get", get)
    dense = [Hit(id="dense", score=1.0, text="d", metadata={})]
    lexical = [Hit(id="word", score=3.2, text="w", metadata={})]
    read_after = await fuse(store, "c", vector=[1.0, 0.0], dense=dense, lexical=lexical)
    assert reads == [["word"]]
    reads.clear()
    known = await fuse(store, "c", vector=[1.0, 0.0], dense=dense, lexical=lexical, known={"word": 0.6})
    assert reads == []
    assert [(h.id, round(h.score, 6), round(s, 6)) for h, s in known] == [
        (h.id, round(h.score, 6), round(s, 6)) for h, s in read_after
    ]
