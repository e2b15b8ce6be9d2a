"""LanceDB (embedded, Lance tables on disk) passes the shared store contract."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubevec.backends.lance import LanceStore, column, literal
from tests.store_contract import LargeStoreContract, StoreContract

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
    """Quotes, backslashes, SQL and non-ASCII in values, dots and dashes in field names: stored and matched as they are."""
    from kubevec.backends import Record
    from kubevec.backends.filters import And, Contains, Eq, In, Ne

    store = LanceStore(path=str(tmp_path / "lance"))
    try:
        await store.ensure_collection("c", dimension=2, embedder="e", indexed=("app.kubernetes.io-name",))
        odd = ["it's", "a\\b", "x' OR '1'='1", "名前", "--", '"quoted"']
        records = [
            Record(
                id=f"r{i}",
                vector=[1.0, float(i)],
                text=f"value {value} huge" + (" word" * 200_000 if i == 0 else ""),
                metadata={"content_hash": str(i), "app.kubernetes.io-name": value, "tags": [value, "common"]},
            )
            for i, value in enumerate(odd)
        ]
        await store.upsert("c", records)
        for i, value in enumerate(odd):
            assert [r.id for r in await store.get("c", [f"r{i}"])] == [f"r{i}"]
            assert await store.count("c", Eq("app.kubernetes.io-name", value)) == 1
            assert await store.count("c", And((Eq("tags", value), Eq("tags", "common")))) == 1
        assert await store.count("c", Ne("app.kubernetes.io-name", "it's")) == len(odd) - 1
        assert await store.count("c", In("tags", ("x' OR '1'='1", "名前"))) == 2
        assert await store.count("c", Contains("huge word")) == 1
        assert len((await store.get("c", ["r0"]))[0].text) > 1_000_000
    finally:
        await store.close()


def test_a_lancedb_store_is_an_embedded_directory() -> None:
    """The directory checks of embedded stores (readiness when it is deleted, readers refusing a missing one) apply."""
    from kubevec.backends.config import StoreSettings

    assert StoreSettings(backend="lancedb", path=Path("/data/store")).local_path == Path("/data/store")
    assert StoreSettings(backend="chroma", url="http://chroma:8000").local_path is None
    assert StoreSettings(backend="qdrant", path=Path("q")).local_path == Path("q")
