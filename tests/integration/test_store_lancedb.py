"""LanceDB (embedded, Lance tables on disk) passes the shared store contract."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubevec.backends.lance import LanceStore, column, literal
from tests.store_contract import LargeStoreContract, StoreContract, check_odd_values_and_names

pytestmark = pytest.mark.integration


class TestLanceDB(StoreContract, LargeStoreContract):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[LanceStore]:
        store = LanceStore(path=str(tmp_path / "lance"))
        yield store
        await store.close()


def test_values_are_escaped_and_field_names_never_reach_sql() -> None:
    assert literal("it's") == "'it''s'"
    assert literal(3) == "3.0"
    assert literal(True) == "true"
    name = column("x'); DROP TABLE t; --", "s")
    assert name.startswith("ms_")
    assert all(c in "0123456789abcdef" for c in name[3:])


async def test_odd_values_and_names_round_trip_and_filter(tmp_path: Path) -> None:
    store = LanceStore(path=str(tmp_path / "lance"))
    try:
        await check_odd_values_and_names(store, "c")
    finally:
        await store.close()


def test_a_lancedb_store_is_an_embedded_directory() -> None:
    """The directory checks of embedded stores (readiness when it is deleted, readers refusing a missing one) apply."""
    from kubevec.backends.config import StoreSettings

    assert StoreSettings(backend="lancedb", path=Path("/data/store")).local_path == Path("/data/store")
    assert StoreSettings(backend="chroma", url="http://chroma:8000").local_path is None
    assert StoreSettings(backend="qdrant", path=Path("q")).local_path == Path("q")
