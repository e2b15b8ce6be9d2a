"""The settings pick the backend; nothing connects until first use."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kubevec.backends.config import StoreSettings
from kubevec.backends.factory import open_store
from kubevec.backends.pgvector import PgvectorStore


def test_pgvector_settings_open_a_pgvector_store_without_connecting() -> None:
    settings = StoreSettings(backend="pgvector", url="postgresql://kubevec@db.example:5432/kubevec", password="pw")
    store = open_store(settings)
    assert isinstance(store, PgvectorStore)
    assert store.backend == "pgvector"
    assert store.location == "postgresql://kubevec@db.example:5432/kubevec"
    assert "pw" not in repr(settings)


@pytest.mark.parametrize("url", [None, "", "http://db:5432/kubevec"])
def test_pgvector_without_a_postgres_url_is_a_configuration_error(url: str | None) -> None:
    with pytest.raises(ValidationError, match=r"store.backend=pgvector needs store.url=postgresql://"):
        StoreSettings(backend="pgvector", url=url)


def test_redis_settings_open_a_redis_store_without_connecting() -> None:
    from kubevec.backends.redis import RedisStore

    settings = StoreSettings(backend="redis", url="rediss://redis.data:6380/0", password="pw", key_prefix="a:")
    store = open_store(settings)
    assert isinstance(store, RedisStore)
    assert (store.backend, store.location) == ("redis", "rediss://redis.data:6380/0")
    assert "pw" not in repr(settings)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (None, "needs store.url=redis://"),
        ("http://redis:6379", "needs store.url=redis://"),
        ("redis://default:hunter2@redis:6379/0", "must not hold the Redis password"),
    ],
)
def test_redis_without_a_redis_url_or_with_a_password_in_it_is_a_configuration_error(
    url: str | None, message: str
) -> None:
    with pytest.raises(ValidationError, match=message) as raised:
        StoreSettings(backend="redis", url=url)
    assert "hunter2" not in str(raised.value.errors(include_input=False))
