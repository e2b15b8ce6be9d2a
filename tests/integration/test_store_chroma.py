"""Chroma, embedded and as a real server, passes the shared store contract."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubevec.backends.chroma import ChromaStore
from tests.controlplane.cluster import free_port
from tests.store_contract import LargeStoreContract, StoreContract

pytestmark = pytest.mark.integration


class TestChromaEmbedded(StoreContract, LargeStoreContract):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[ChromaStore]:
        store = ChromaStore(path=str(tmp_path / "chroma"))
        yield store
        await store.close()


class TestChromaServer(StoreContract, LargeStoreContract):
    @pytest.fixture
    async def store(self, chroma_server: str) -> AsyncIterator[ChromaStore]:
        store = ChromaStore(url=chroma_server)
        yield store
        await store.close()

    @pytest.fixture
    def unreachable(self) -> ChromaStore:
        return ChromaStore(url=f"http://127.0.0.1:{free_port()}")


async def test_embedded_store_persists_across_clients(tmp_path: Path) -> None:
    first = ChromaStore(path=str(tmp_path / "db"))
    await first.ensure_collection("capabilities", dimension=2, embedder="e")
    from kubevec.backends import Record

    await first.upsert("capabilities", [Record(id="a", vector=[1.0, 0.0], text="t", metadata={"content_hash": "h"})])
    await first.close()
    second = ChromaStore(path=str(tmp_path / "db"))
    assert [pair async for pair in second.iter_ids("capabilities")] == [("a", "h")]
    await second.close()
