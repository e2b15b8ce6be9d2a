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
