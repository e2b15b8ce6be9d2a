"""The one conformance suite every backend passes (LangChain's vector-store suite, in spirit).

Subclasses provide a ``store`` fixture; each test works in its own uniquely named collections.
Expected results come from the reference semantics (:func:`kubevec.backends.filters.matches`) and from
exact cosine search, so every backend is held to the same answers.
"""

from __future__ import annotations

import math
import random
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubevec.backends import Record, StoredHashes, VectorStore
from kubevec.backends.filters import And, Contains, Eq, Filter, Gt, Gte, In, Lt, Lte, Ne, Nin, Or, matches
from kubevec.core.errors import BackendError, BackendUnavailable, CollectionMismatch, CollectionNotFound, InvalidRecord

DIM = 8
KINDS = ["Deployment", "Service", "Certificate", "ConfigMap"]
NAMESPACES = ["shop", "payments", "kube-system"]
TEXTS = [
    "Deployment web serves the shop frontend with nginx",
    "Service payments-api exposes port 8080/TCP",
    "Certificate api-tls requests a TLS certificate from letsencrypt",
    "ConfigMap settings holds keys only: LOG_LEVEL, FEATURE_FLAGS",
    "PostgreSQL cluster with streaming replication",
    "cert_manager Issuer for ACME DNS-01",
]


def unit_vector(rng: random.Random) -> list[float]:
    raw = [rng.gauss(0, 1) for _ in range(DIM)]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


def make_records(count: int, *, seed: int = 7) -> list[Record]:
    rng = random.Random(seed)
    records = []
    for i in range(count):
        metadata: dict[str, Any] = {
            "kind": KINDS[i % len(KINDS)],
            "namespace": NAMESPACES[i % len(NAMESPACES)],
            "replicas": i % 5,
            "ratio": round((i % 7) / 7, 3),
            "ready": i % 2 == 0,
            "labels": [f"app=a{i % 3}", f"tier={'db' if i % 4 == 0 else 'web'}"],
            "content_hash": f"h{i}",
        }
        if i % 6 == 0:
            del metadata["namespace"]  # cluster-scoped: the field is missing
        records.append(
            Record(
                id=f"c/ns/g/v1/K/obj-{i:05d}", vector=unit_vector(rng), text=TEXTS[i % len(TEXTS)], metadata=metadata
            )
        )
    return records


FILTERS: list[Filter] = [
    Eq("kind", "Service"),
    Ne("kind", "Service"),
    Eq("labels", "tier=db"),
    Ne("labels", "tier=db"),
    Eq("ready", True),
    Eq("replicas", 3),
    Eq("ratio", 0.286),
    In("namespace", ("shop", "payments")),
    Nin("namespace", ("shop",)),
    In("labels", ("app=a1", "app=a2")),
    Nin("labels", ("app=a0",)),
    Gt("replicas", 2),
    Gte("replicas", 2),
    Lt("ratio", 0.3),
    Lte("replicas", 1),
    Contains("certificate"),
    Contains("TLS letsencrypt"),
    Contains("manager"),
    And((Eq("kind", "Deployment"), Gt("replicas", 1))),
    Or((Eq("kind", "Service"), Contains("postgresql"))),
    And((Or((Eq("namespace", "shop"), Eq("namespace", "payments"))), Nin("kind", ("ConfigMap",)), Gte("ratio", 0.1))),
    And((Eq("labels", "app=a1"), Eq("labels", "tier=web"), Ne("ready", False))),
    Eq("missing_field", "x"),
    Ne("missing_field", "x"),
]


def expected_ids(records: list[Record], node: Filter) -> set[str]:
    return {r.id for r in records if matches(node, text=r.text, metadata=r.metadata)}


def exact_top_k(records: list[Record], vector: list[float], k: int, node: Filter | None = None) -> list[str]:
    pool = [r for r in records if node is None or matches(node, text=r.text, metadata=r.metadata)]
    scored = sorted(pool, key=lambda r: (-sum(a * b for a, b in zip(vector, r.vector, strict=True)), r.id))
    return [r.id for r in scored[:k]]


class StoreContract:
    """Subclass and provide ``store``; every test here must pass for every backend."""

    @pytest.fixture
    async def collection(self, store: VectorStore) -> AsyncIterator[str]:
        name = f"test-{uuid.uuid4().hex[:12]}"
        await store.ensure_collection(name, dimension=DIM, embedder="test-embedder")
        yield name
        await store.drop_collection(name)

    @pytest.fixture
    async def loaded(self, store: VectorStore, collection: str) -> tuple[str, list[Record]]:
        records = make_records(120)
        await store.upsert(collection, records)
        return collection, records

    async def test_upsert_is_idempotent_and_last_write_wins(self, store: VectorStore, collection: str) -> None:
        records = make_records(10)
        await store.upsert(collection, records)
        await store.upsert(collection, records)
        changed = Record(id=records[0].id, vector=records[1].vector, text="changed", metadata={"content_hash": "new"})
        await store.upsert(collection, [changed])
        assert await store.count(collection) == 10
        (got,) = await store.get(collection, [records[0].id], include_vectors=True)
        assert got.text == "changed"
        assert got.metadata["content_hash"] == "new"
        assert got.vector == pytest.approx(records[1].vector, abs=1e-5)

    async def test_an_upsert_replaces_the_metadata_a_key_it_lacks_is_gone(
        self, store: VectorStore, collection: str
    ) -> None:
        """A health reason or a warning that clears must not outlive it (Chroma's upsert merged metadata)."""
        (record,) = make_records(1)
        warned = Record(
            id=record.id,
            vector=record.vector,
            text=record.text,
            metadata={**record.metadata, "warning_reason": "FailedMount", "exit_codes": ["137"]},
        )
        await store.upsert(collection, [warned])
        await store.upsert(collection, [record])
        (got,) = await store.get(collection, [record.id])
        assert dict(got.metadata) == dict(record.metadata)
        assert not [i async for i, _ in store.iter_ids(collection, filter=Eq("warning_reason", "FailedMount"))]

    async def test_ensure_collection_takes_the_fields_to_index(self, store: VectorStore) -> None:
        name = f"idx-{uuid.uuid4().hex[:12]}"
        await store.ensure_collection(name, dimension=DIM, embedder="test-embedder", indexed=("kind", "labels"))
        try:
            await store.ensure_collection(name, dimension=DIM, embedder="test-embedder", indexed=("kind", "owner"))
            await store.upsert(name, make_records(3))
            assert await store.count(name, Eq("kind", KINDS[0])) == 1
            with pytest.raises(InvalidRecord, match="Cannot index metadata field 'text'"):
                await store.ensure_collection(name, dimension=DIM, embedder="test-embedder", indexed=("text",))
        finally:
            await store.drop_collection(name)

    async def test_iter_hashes_yields_both_hashes_and_the_writers_cluster(
        self, store: VectorStore, collection: str
    ) -> None:
        vector = [1.0] + [0.0] * (DIM - 1)
        new = {"content_hash": "c1", "text_hash": "t1", "built_from": "b1", "cluster": "east"}
        await store.upsert(
            collection,
            [
                Record(id="new", vector=vector, text="t", metadata=new),
                Record(id="old", vector=vector, text="t", metadata={"content_hash": "c2"}),
            ],
        )
        got = {i: h async for i, h in store.iter_hashes(collection, page_size=1)}
        assert got == {"new": StoredHashes("c1", "t1", "b1", "east"), "old": StoredHashes("c2", "")}

    async def test_iter_texts_yields_every_id_and_text_once(
        self, store: VectorStore, loaded: tuple[str, list[Record]]
    ) -> None:
        name, records = loaded
        got = [pair async for pair in store.iter_texts(name, page_size=7)]  # 120 records: a partial last page
        assert sorted(got) == sorted((r.id, r.text) for r in records)

    async def test_a_sample_holds_stored_vectors_in_id_order(
        self, store: VectorStore, loaded: tuple[str, list[Record]]
    ) -> None:
        name, records = loaded
        by_id = {r.id: r for r in records}
        got = await store.sample(name, limit=50)
        assert len(got) == 50
        assert [r.id for r in got] == sorted(r.id for r in got)
        for record in got:
            assert record.vector == pytest.approx(by_id[record.id].vector, abs=1e-5)
        assert len(await store.sample(name, limit=10_000)) == len(records)

    async def test_metadata_round_trips(self, store: VectorStore, collection: str) -> None:
        (record,) = make_records(1)
        await store.upsert(collection, [record])
        (got,) = await store.get(collection, [record.id])
        assert dict(got.metadata) == dict(record.metadata)
        assert got.text == record.text
        assert got.vector == []

    async def test_missing_ids_are_no_ops(self, store: VectorStore, loaded: tuple[str, list[Record]]) -> None:
        name, records = loaded
        assert await store.get(name, ["nope", "never"]) == []
        await store.delete(name, ["nope", records[0].id, records[0].id])
        assert await store.count(name) == len(records) - 1
        got = await store.get(name, [records[2].id, "nope", records[1].id])
        assert [r.id for r in got] == [records[2].id, records[1].id]

    async def test_empty_lists_are_dropped_everywhere(self, store: VectorStore, collection: str) -> None:
        record = Record(
            id="x", vector=[1.0] + [0.0] * (DIM - 1), text="t", metadata={"content_hash": "h", "labels": []}
        )
        await store.upsert(collection, [record])
        (got,) = await store.get(collection, ["x"])
        assert "labels" not in got.metadata, got.metadata

    async def test_the_journal_says_what_each_write_changed(self, store: VectorStore) -> None:
        """What a keyword index follows instead of reading 100,000 records again (backends/journal.py)."""
        name = f"test-{uuid.uuid4().hex[:12]}"
        since = time.time() - 5.0
        await store.ensure_collection(name, dimension=DIM, embedder="test-embedder")
        try:
            records = make_records(3)
            await store.upsert(name, records)
            await store.delete(name, [records[0].id, "never-stored"])
            await store.delete_where(name, Eq("kind", "Nothing"))
            entries = await store.journal(name, since=since)
            assert entries is not None
            assert [(e.upserted, e.deleted, e.members, e.reset) for e in entries] == [
                ((), (), False, True),  # created
                (tuple(r.id for r in records), (), False, False),
                ((), (records[0].id, "never-stored"), False, False),
                ((), (), True, False),  # ids unknown: a reader compares members
            ]
            assert {e.collection for e in entries} == {name}
            assert [e.at for e in entries] == sorted(e.at for e in entries)
            assert await store.journal(name, since=entries[-1].at + 1.0) == []
            assert await store.journal(f"{name}-other", since=since) == []
            # A large write is journaled in entries of a bounded size (a store indexes each entry's text).
            many = make_records(450)
            await store.upsert(name, many)
            later = await store.journal(name, since=entries[-1].at)
            assert later is not None
            written = [e for e in later if e.upserted]
            assert len(written) == 3
            assert sorted(i for e in written for i in e.upserted) == sorted(r.id for r in many)
        finally:
            await store.drop_collection(name)
        dropped = await store.journal(name, since=since)
        assert dropped is not None
        assert dropped[-1].reset

    async def test_a_dropped_collection_leaves_nothing_to_the_next_records(self, store: VectorStore) -> None:
        """chroma-core/chroma#7594: Chroma's delete_collection left list metadata behind that the next
        record written (in any collection) inherited: another object's labels on a new one."""
        names = [f"test-{uuid.uuid4().hex[:12]}" for _ in range(2)]
        await store.ensure_collection(names[0], dimension=DIM, embedder="test-embedder")
        await store.upsert(names[0], make_records(5))
        await store.drop_collection(names[0])
        await store.ensure_collection(names[1], dimension=DIM, embedder="test-embedder")
        try:
            fresh = [
                Record(id=f"n{i}", vector=[1.0] + [0.0] * (DIM - 1), text="t", metadata={"content_hash": f"h{i}"})
                for i in range(5)
            ]
            await store.upsert(names[1], fresh)
            assert [dict(r.metadata) for r in await store.get(names[1], [r.id for r in fresh])] == [
                dict(r.metadata) for r in fresh
            ]
        finally:
            await store.drop_collection(names[1])

    @pytest.mark.parametrize("node", FILTERS, ids=repr)
    async def test_filter_matches_reference(
        self, store: VectorStore, loaded: tuple[str, list[Record]], node: Filter
    ) -> None:
        name, records = loaded
        want = expected_ids(records, node)
        got = {record_id async for record_id, _ in store.iter_ids(name, filter=node, page_size=17)}
        assert got == want
        assert await store.count(name, node) == len(want)

    @pytest.mark.parametrize("node", [None, Eq("kind", "Service"), And((Gt("replicas", 0), Eq("labels", "app=a1")))])
    async def test_search_matches_exact_top_k(
        self, store: VectorStore, loaded: tuple[str, list[Record]], node: Filter | None
    ) -> None:
        name, records = loaded
        query = unit_vector(random.Random(99))
        hits = await store.search(name, vector=query, k=10, filter=node)
        assert [h.id for h in hits] == exact_top_k(records, query, 10, node)
        assert all(0.0 <= h.score <= 1.0 for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert all(h.text and "content_hash" in h.metadata for h in hits)

    async def test_search_text_contains(self, store: VectorStore, loaded: tuple[str, list[Record]]) -> None:
        name, records = loaded
        query = unit_vector(random.Random(5))
        hits = await store.search(name, vector=query, k=5, text_contains="TLS", filter=Eq("ready", True))
        want = exact_top_k(records, query, 5, And((Contains("TLS"), Eq("ready", True))))
        assert [h.id for h in hits] == want
        assert all("TLS" in h.text for h in hits)

    async def test_keyword_search_needs_no_vector(self, store: VectorStore, loaded: tuple[str, list[Record]]) -> None:
        name, _ = loaded
        hits = await store.keyword_search(name, text="tls certificate", k=5)
        assert hits
        assert all("certificate" in h.text.lower() for h in hits)
        assert hits[0].score == 1.0
        filtered = await store.keyword_search(name, text="port nginx", filter=Eq("kind", "Service"), k=50)
        assert {h.metadata["kind"] for h in filtered} == {"Service"}
        assert all(0.0 < h.score <= 1.0 for h in filtered)

    @pytest.mark.parametrize(
        ("text", "node"),
        [("tls certificate", None), ("nginx port payments", None), ("port nginx", Eq("kind", "Service"))],
    )
    async def test_keyword_search_ranks_like_the_oracle(
        self, store: VectorStore, loaded: tuple[str, list[Record]], text: str, node: Filter | None
    ) -> None:
        """Coverage first, then rarity of the matched words, then id: the same on every backend."""
        name, records = loaded
        query_words = list(dict.fromkeys(text.split()))
        per_word = {w: expected_ids(records, And((node, Contains(w))) if node else Contains(w)) for w in query_words}
        coverage = {i: sum(i in ids for ids in per_word.values()) for ids in per_word.values() for i in ids}
        rarity = {i: sum(1 / len(ids) for ids in per_word.values() if i in ids) for i in coverage}
        oracle = sorted(coverage, key=lambda i: (-coverage[i], -rarity[i], i))[:7]
        hits = await store.keyword_search(name, text=text, filter=node, k=7)
        assert [h.id for h in hits] == oracle
        assert [h.score for h in hits] == [coverage[i] / len(query_words) for i in oracle]

    async def test_keyword_search_prefers_rarer_words_on_ties(self, store: VectorStore, collection: str) -> None:
        rng = random.Random(1)
        texts = {"r-a1": "alpha common", "r-a2": "alpha common", "r-a3": "alpha", "r-b1": "beta common", "r-c": "x"}
        await store.upsert(
            collection,
            [Record(id=i, vector=unit_vector(rng), text=t, metadata={"content_hash": i}) for i, t in texts.items()],
        )
        hits = await store.keyword_search(collection, text="Alpha BETA", k=10)
        assert [h.id for h in hits] == ["r-b1", "r-a1", "r-a2", "r-a3"]
        assert {h.score for h in hits} == {0.5}
        assert hits[0].text == "beta common"

    async def test_keyword_search_rejects_empty_text(self, store: VectorStore, collection: str) -> None:
        with pytest.raises(BackendError, match="at least one word"):
            await store.keyword_search(collection, text="  --- ", k=5)

    async def test_delete_where(self, store: VectorStore, loaded: tuple[str, list[Record]]) -> None:
        name, records = loaded
        await store.delete_where(name, Eq("kind", "ConfigMap"))
        assert await store.count(name, Eq("kind", "ConfigMap")) == 0
        assert await store.count(name) == len(records) - len(expected_ids(records, Eq("kind", "ConfigMap")))

    async def test_delete_where_one_kind_except_one_value(
        self, store: VectorStore, loaded: tuple[str, list[Record]]
    ) -> None:
        """The shape of a purge after a CRD moved version: this kind, not at the version kept."""
        name, records = loaded
        purge = And((Eq("kind", "ConfigMap"), Ne("namespace", "shop")))
        await store.delete_where(name, purge)
        left = {i async for i, _ in store.iter_ids(name)}
        assert left == {r.id for r in records} - expected_ids(records, purge)
        assert await store.count(name, Eq("kind", "ConfigMap")) == len(
            expected_ids(records, And((Eq("kind", "ConfigMap"), Eq("namespace", "shop"))))
        )

    async def test_dimension_and_embedder_mismatch_are_clear(self, store: VectorStore, collection: str) -> None:
        await store.ensure_collection(collection, dimension=DIM, embedder="test-embedder")  # same: fine
        with pytest.raises(CollectionMismatch, match=r"dimension=8.*dimension=16"):
            await store.ensure_collection(collection, dimension=16, embedder="test-embedder")
        with pytest.raises(CollectionMismatch, match=r"embedder='test-embedder'.*embedder='other'"):
            await store.ensure_collection(collection, dimension=DIM, embedder="other")

    async def test_wrong_vector_size_is_rejected(self, store: VectorStore, collection: str) -> None:
        bad = Record(id="x", vector=[1.0, 0.0], text="t", metadata={"content_hash": "h"})
        with pytest.raises(InvalidRecord, match="2-d vector"):
            await store.upsert(collection, [bad])
        with pytest.raises(InvalidRecord, match="reserved"):
            await store.upsert(
                collection,
                [Record(id="y", vector=[0.5] * DIM, text="t", metadata={"content_hash": "h", "text": "x"})],
            )

    async def test_missing_collection_is_a_clear_error(self, store: VectorStore) -> None:
        with pytest.raises(CollectionNotFound, match="does not exist"):
            await store.count("never-created-here")

    async def test_a_dropped_collection_is_collection_not_found_for_every_read(
        self, store: VectorStore, loaded: tuple[str, list[Record]]
    ) -> None:
        """Readers tell a switched generation from any other failure by this type (they once read messages)."""
        name, records = loaded
        await store.drop_collection(name)
        with pytest.raises(CollectionNotFound):
            await store.search(name, vector=records[0].vector, k=3)
        with pytest.raises(CollectionNotFound):
            await store.get(name, [records[0].id])
        with pytest.raises(CollectionNotFound):
            await store.count(name)

    @pytest.fixture
    def unreachable(self) -> VectorStore:
        """The same backend pointed at nothing (a free port); embedded modes have nothing to be unreachable."""
        pytest.skip("an embedded store cannot be unreachable")

    async def test_an_unreachable_store_is_a_clear_error(self, unreachable: VectorStore) -> None:
        with pytest.raises(BackendUnavailable) as raised:
            await unreachable.ensure_collection("capabilities", dimension=DIM, embedder="test-embedder")
        message = str(raised.value)
        assert "not reachable" in message or "unavailable" in message, message
        assert "Traceback" not in message
        assert len(message.splitlines()) == 1
        health = await unreachable.health()
        assert not health.ok
        assert health.detail
        await unreachable.close()

    async def test_health(self, store: VectorStore) -> None:
        health = await store.health()
        assert health.ok, health.detail


class LargeStoreContract:
    """Pagination at a size where capped listings (10k) would silently diff wrong."""

    SIZE = 25_000

    async def test_iter_ids_returns_every_id_exactly_once(self, store: VectorStore) -> None:
        name = f"big-{uuid.uuid4().hex[:12]}"
        await store.ensure_collection(name, dimension=DIM, embedder="test-embedder")
        try:
            records = [
                Record(id=f"id-{i:06d}", vector=[1.0] + [0.0] * (DIM - 1), text="", metadata={"content_hash": f"h{i}"})
                for i in range(self.SIZE)
            ]
            await store.upsert(name, records)
            seen = [pair async for pair in store.iter_ids(name, page_size=1000)]
            assert len(seen) == self.SIZE
            assert dict(seen) == {r.id: r.metadata["content_hash"] for r in records}
            assert await store.count(name) == self.SIZE
            assert sorted(await store.list_ids(name)) == sorted(r.id for r in records)
        finally:
            await store.drop_collection(name)


async def check_odd_values_and_names(store: VectorStore, name: str) -> None:
    """Quotes, backslashes, SQL-ish and non-ASCII values, dots and dashes in field names, a 1 MB text: stored and
    matched as they are. For the stores that turn filters into text or typed columns (LanceDB, Weaviate)."""
    await store.ensure_collection(name, dimension=2, embedder="e", indexed=("app.kubernetes.io-name",))
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
    await store.upsert(name, records)
    for i, value in enumerate(odd):
        assert [r.id for r in await store.get(name, [f"r{i}"])] == [f"r{i}"]
        assert await store.count(name, Eq("app.kubernetes.io-name", value)) == 1
        assert await store.count(name, And((Eq("tags", value), Eq("tags", "common")))) == 1
    assert await store.count(name, Ne("app.kubernetes.io-name", "it's")) == len(odd) - 1
    assert await store.count(name, In("tags", ("x' OR '1'='1", "名前"))) == 2
    assert await store.count(name, Contains("huge word")) == 1
    assert len((await store.get(name, ["r0"]))[0].text) > 1_000_000
