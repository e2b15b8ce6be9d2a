"""The memory backend passes the shared contract and reports outages as BackendUnavailable."""

from __future__ import annotations

import pytest

from kubevec.backends.memory import MemoryStore
from kubevec.core.errors import BackendUnavailable
from tests.store_contract import LargeStoreContract, StoreContract


class TestMemoryStore(StoreContract, LargeStoreContract):
    @pytest.fixture
    def store(self) -> MemoryStore:
        return MemoryStore()

    @pytest.fixture
    def unreachable(self) -> MemoryStore:
        store = MemoryStore()
        store.unavailable = True
        return store


async def test_outage_is_unavailable() -> None:
    store = MemoryStore()
    await store.ensure_collection("c", dimension=2, embedder="e")
    store.unavailable = True
    with pytest.raises(BackendUnavailable, match="unavailable"):
        await store.count("c")
    assert not (await store.health()).ok
