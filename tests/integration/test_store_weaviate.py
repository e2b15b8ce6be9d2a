"""Weaviate (the real server, built from the Go module proxy by tests/weaviate/build.sh) passes the store contract."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from kubevec.backends.weaviate import WeaviateStore, collection_name, prop
from tests.controlplane.cluster import free_port
from tests.services import Weaviate, weaviate_server
from tests.store_contract import LargeStoreContract, StoreContract

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server() -> Iterator[Weaviate]:
    with weaviate_server() as running:
        yield running


class TestWeaviate(StoreContract, LargeStoreContract):
    @pytest.fixture
    async def store(self, server: Weaviate) -> AsyncIterator[WeaviateStore]:
        store = WeaviateStore(url=server.url, grpc_port=server.grpc_port)
        yield store
        await store.close()

    @pytest.fixture
    def unreachable(self) -> WeaviateStore:
        return WeaviateStore(url=f"http://127.0.0.1:{free_port()}", grpc_port=free_port(), timeout=3)


def test_names_never_reach_weaviate_as_given() -> None:
    assert collection_name("kv_instances__g1").startswith("Kubevec_")
    assert prop("app.kubernetes.io/name", "s").startswith("s_")
    assert all(c in "0123456789abcdef" for c in prop("x'); --", "s")[2:])
