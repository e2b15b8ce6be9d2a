"""PostgreSQL + pgvector, a real server on a loopback port, passes the shared store contract."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from kubevec.backends import Record
from kubevec.backends.filters import Contains, Eq, In, Or
from kubevec.backends.pgvector import PgvectorStore, compile_filter, redacted_location, table_name
from kubevec.core.errors import BackendError, BackendUnavailable
from tests.controlplane.cluster import free_port
from tests.services import Postgres, postgres_server
from tests.store_contract import DIM, LargeStoreContract, StoreContract, make_records

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    with postgres_server() as server:
        yield server


class TestPgvector(StoreContract, LargeStoreContract):
    @pytest.fixture
    async def store(self, postgres: Postgres) -> AsyncIterator[PgvectorStore]:
        store = PgvectorStore(url=postgres.url, password=postgres.password)
        yield store
        await store.close()

    @pytest.fixture
    def unreachable(self) -> PgvectorStore:
        return PgvectorStore(url=f"postgresql://postgres@127.0.0.1:{free_port()}/postgres", password="x", timeout=3)


def unit(i: int) -> list[float]:
    return [1.0 if j == i % DIM else 0.0 for j in range(DIM)]


async def test_contains_means_whole_words_as_on_every_backend(postgres: Postgres) -> None:
    """PostgreSQL's own parser keeps ``payments-api`` whole and reads letters by locale; ours does not."""
    store = PgvectorStore(url=postgres.url, password=postgres.password)
    await store.ensure_collection("words", dimension=DIM, embedder="e")
    texts = {"a": "Service payments-api exposes 8080/TCP", "b": "Café au lait", "c": "cafe latte", "d": "apis"}
    await store.upsert(
        "words",
        [Record(id=i, vector=unit(n), text=t, metadata={"content_hash": i}) for n, (i, t) in enumerate(texts.items())],
    )
    try:
        for text, want in [("api", {"a"}), ("PAYMENTS", {"a"}), ("tcp 8080", {"a"}), ("café", {"b"}), ("cafe", {"c"})]:
            assert {i async for i, _ in store.iter_ids("words", filter=Contains(text))} == want, text
    finally:
        await store.drop_collection("words")
        await store.close()


async def test_values_and_field_names_are_bound_never_spliced(postgres: Postgres) -> None:
    hostile = "x'); DROP TABLE kubevec_collections; --"
    where, params = compile_filter(
        Or((Eq("kind", hostile), In("labels.app-name", ("a", hostile)), Contains("drop table")))
    )
    rendered = where.as_string(None)
    assert hostile not in rendered
    assert "labels.app-name" not in rendered
    assert "drop" not in rendered.lower()
    assert {"kind": hostile} in [getattr(p, "obj", p) for p in params]
    store = PgvectorStore(url=postgres.url, password=postgres.password)
    await store.ensure_collection("bound", dimension=DIM, embedder="e")
    try:
        await store.upsert("bound", make_records(5))
        assert await store.count("bound", Eq("kind", hostile)) == 0
        assert await store.count("bound") == 5  # the catalog and the table are still there
    finally:
        await store.drop_collection("bound")
        await store.close()


async def test_a_selective_filter_still_gets_all_k_nearest(postgres: Postgres) -> None:
    """pgvector filters HNSW candidates after the scan; the exact fallback must fill the k."""
    import random

    from tests.store_contract import unit_vector

    rng = random.Random(3)
    records = [
        Record(
            id=f"r{i:05d}",
            vector=unit_vector(rng),
            text="t",
            metadata={"content_hash": str(i), "team": "rare" if i % 250 == 0 else "common"},
        )
        for i in range(3000)
    ]
    store = PgvectorStore(url=postgres.url, password=postgres.password)
    await store.ensure_collection("selective", dimension=DIM, embedder="e")
    try:
        await store.upsert("selective", records)
        rare = [r for r in records if r.metadata["team"] == "rare"]
        # Eight queries on one connection: psycopg prepares a statement from its 6th run, and a
        # prepared plan kept the HNSW scan for the exact fallback (0-3 of 10 hits from then on).
        for seed in range(11, 19):
            query = unit_vector(random.Random(seed))
            hits = await store.search("selective", vector=query, k=10, filter=Eq("team", "rare"))
            # Scores are similarities clipped to [0, 1]; ties (all the clipped ones) go to the smaller id.
            nearest = sorted(rare, key=lambda r: -sum(a * b for a, b in zip(query, r.vector, strict=True)))[:10]
            best = sorted(
                nearest, key=lambda r: (-max(0.0, sum(a * b for a, b in zip(query, r.vector, strict=True))), r.id)
            )
            assert [h.id for h in hits] == [r.id for r in best[:10]], f"query {seed}"
    finally:
        await store.drop_collection("selective")
        await store.close()


async def test_the_password_never_reaches_errors_or_logs(postgres: Postgres, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    inline = postgres.url.replace("postgres@", f"postgres:{postgres.password}@")
    store = PgvectorStore(url=inline)
    assert postgres.password not in store.location
    assert store.location == postgres.url
    assert (await store.health()).ok
    await store.close()
    wrong = PgvectorStore(url=postgres.url.replace("postgres@", "postgres:not-the-password@"), timeout=3)
    with pytest.raises(BackendUnavailable) as raised:
        await wrong.ensure_collection("x", dimension=DIM, embedder="e")
    assert "password authentication failed" in str(raised.value)
    assert "not-the-password" not in str(raised.value)
    await wrong.close()
    assert postgres.password not in caplog.text
    assert "not-the-password" not in caplog.text
    assert (
        redacted_location("postgresql://u:pw@db.example:5433/kv?sslmode=require") == "postgresql://u@db.example:5433/kv"
    )


async def test_a_role_that_may_not_create_the_extension_gets_a_clear_error(postgres: Postgres) -> None:
    import psycopg

    with psycopg.connect(postgres.url, password=postgres.password, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS plain")
        conn.execute("DROP ROLE IF EXISTS app")
        conn.execute("CREATE ROLE app LOGIN PASSWORD 'app-pw'")
        conn.execute("CREATE DATABASE plain OWNER app")
    store = PgvectorStore(
        url=postgres.url.replace("postgres@", "app@").replace("/postgres", "/plain"), password="app-pw"
    )
    with pytest.raises(
        BackendError, match=r"no vector extension and this role may not create it.*CREATE EXTENSION vector"
    ):
        await store.ensure_collection("capabilities", dimension=DIM, embedder="e")
    await store.close()


async def test_a_restarted_server_is_picked_up_without_reopening(tmp_path: Path) -> None:
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="kubevec-pg-restart-"))
    port = free_port()
    with postgres_server(base, port=port) as server:
        store = PgvectorStore(url=server.url, password=server.password, timeout=3)
        await store.ensure_collection("capabilities", dimension=DIM, embedder="e")
        await store.upsert("capabilities", make_records(3))
    with pytest.raises(BackendUnavailable, match="not reachable"):
        await store.count("capabilities")
    assert not (await store.health()).ok
    with postgres_server(base, port=port):
        assert await store.count("capabilities") == 3
        await store.upsert("capabilities", make_records(4))
        assert await store.count("capabilities") == 4
    await store.close()
    import shutil

    shutil.rmtree(base, ignore_errors=True)


def test_table_names_fit_postgres_and_never_collide() -> None:
    names = {
        table_name(n)
        for n in ("capabilities", "Capabilities", "team-a.capabilities", "team_a_capabilities", "x" * 300, "ü")
    }
    assert len(names) == 6
    assert all(len(n) <= 63 and n.isascii() for n in names)
