"""Weaviate (the real server, built from the Go module proxy by tests/weaviate/build.sh) passes the store contract."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from kubevec.backends.weaviate import WeaviateStore, collection_name, prop
from tests.controlplane.cluster import free_port
from tests.services import Weaviate, weaviate_server
from tests.store_contract import LargeStoreContract, StoreContract, check_odd_values_and_names

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


async def test_odd_values_and_names_round_trip_and_filter(server: Weaviate) -> None:
    store = WeaviateStore(url=server.url, grpc_port=server.grpc_port)
    try:
        await store.drop_collection("odd")
        await check_odd_values_and_names(store, "odd")
    finally:
        await store.drop_collection("odd")
        await store.close()


async def test_fields_another_process_added_are_seen(server: Weaviate) -> None:
    """A reader (the standalone MCP server) caches the properties; the controller adds one for a new field.
    The reader's filter on it found nothing until a restart, and a second writer failed adding it again."""
    from kubevec.backends import Record
    from kubevec.backends.filters import Eq

    reader, writer, other = (WeaviateStore(url=server.url, grpc_port=server.grpc_port) for _ in range(3))
    try:
        await writer.drop_collection("shared")
        for store in (reader, writer, other):
            await store.ensure_collection("shared", dimension=2, embedder="e")
        await writer.upsert("shared", [Record(id="a", vector=[1.0, 0.0], text="t", metadata={"content_hash": "1"})])
        assert await reader.count("shared", Eq("team", "payments")) == 0  # the reader has cached the properties
        assert await other.count("shared") == 1  # and so has a second writer
        record = Record(id="b", vector=[0.0, 1.0], text="t", metadata={"content_hash": "2", "team": "payments"})
        await writer.upsert("shared", [record])
        assert await reader.count("shared", Eq("team", "payments")) == 1
        await other.upsert(
            "shared", [Record(id="c", vector=[1.0, 1.0], text="t", metadata={"content_hash": "3", "team": "x"})]
        )
        assert await reader.count("shared", Eq("team", "x")) == 1
    finally:
        await writer.drop_collection("shared")
        for store in (reader, writer, other):
            await store.close()
