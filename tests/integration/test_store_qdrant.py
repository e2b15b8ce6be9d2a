"""Qdrant local mode (in memory and on disk) passes the shared store contract.

No Qdrant server binary can be installed here; local mode shares the client API with the server,
and the server path (url=, api_key=) is the same QdrantStore code. Unreachable-server handling is
tested against a closed loopback port.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubevec.backends.filters import And, Contains, Eq, Or
from kubevec.backends.qdrant import QdrantStore, point_id, translate
from tests.controlplane.cluster import free_port
from tests.store_contract import LargeStoreContract, StoreContract

pytestmark = pytest.mark.integration


class TestQdrantInMemory(StoreContract, LargeStoreContract):
    @pytest.fixture
    async def store(self) -> AsyncIterator[QdrantStore]:
        store = QdrantStore()
        yield store
        await store.close()


class TestQdrantOnDisk(StoreContract):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[QdrantStore]:
        store = QdrantStore(path=str(tmp_path / "qdrant"))
        yield store
        await store.close()

    @pytest.fixture
    def unreachable(self) -> QdrantStore:
        """The server code path (url=), pointed at a free port: no Qdrant server can run here."""
        return QdrantStore(url=f"http://127.0.0.1:{free_port()}")


def test_combined_filters_are_nested_not_dropped() -> None:
    """A peer flattens combined filters on Qdrant and silently loses the OR; we nest them."""
    query = translate(And((Eq("kind", "Service"), Or((Eq("namespace", "a"), Contains("tls"))))))
    assert query.must is not None
    assert len(query.must) == 2
    inner = query.must[1]
    assert inner.should is not None
    assert len(inner.should) == 2


PINNED_POINT_ID = "8b462e44-d193-5d14-b64f-3d650f3f9da0"


def test_point_ids_are_stable_uuid5() -> None:
    # Pinned: a changed derivation would orphan every point of every existing Qdrant collection.
    assert point_id("c/ns/apps/v1/Deployment/web") == PINNED_POINT_ID
    assert point_id("a") != point_id("b")
