"""``kubevec run --reindex`` rebuilds the index from the cluster and keeps what the cluster cannot give back."""

from __future__ import annotations

import types

from kubevec.backends.memory import MemoryStore
from kubevec.controller.cli.run import drop_collections
from kubevec.controller.settings import Settings


async def test_a_reindex_drops_the_index_and_keeps_the_change_history() -> None:
    store = MemoryStore()
    for name in ("capabilities", "instances", "changes"):
        await store.ensure_collection(name, dimension=4, embedder="e")
    await drop_collections(types.SimpleNamespace(store=store), Settings())  # type: ignore[arg-type]
    assert [n for n in ("capabilities", "instances", "changes") if await store.collection_info(n)] == ["changes"]
