"""The keyword index: built on first use, then kept up to date from the store's journal (what each
write changed: only those records are read again), left on disk for the next process; a store without
stamps (written by an older kubevec) is indexed again in the background, never blocking a query."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.core.errors import BackendUnavailable
from kubevec.query.lexical import LexicalIndex


def record(record_id: str, text: str) -> Record:
    return Record(id=record_id, vector=[1.0, 0.0], text=text, metadata={"content_hash": text})


@pytest.fixture
async def store() -> MemoryStore:
    store = MemoryStore()
    await store.ensure_collection("c", dimension=2, embedder="e")
    await store.upsert("c", [record("a", "PgBouncer connection pooling"), record("b", "rolling updates")])
    return store


async def ranked_ids(index: LexicalIndex, text: str) -> list[str]:
    return [r.id for r, _ in await index.rank("c", text=text, k=10)]


async def test_first_query_builds_the_index(store: MemoryStore) -> None:
    index = LexicalIndex(store=store)
    assert await ranked_ids(index, "pgbouncer pooling") == ["a"]
    assert await ranked_ids(index, "nothing matches") == []


async def test_concurrent_first_queries_build_once(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    index = LexicalIndex(store=store)
    scans = 0
    original = store.iter_records

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal scans
        scans += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "iter_records", counting)
    results = await asyncio.gather(*(ranked_ids(index, "pgbouncer") for _ in range(5)))
    assert results == [["a"]] * 5
    assert scans == 1


class UnstampedStore(MemoryStore):
    """A store no writer of this version stamped (an older controller writes it)."""

    async def stamp(self, name: str) -> str | None:
        return None


@pytest.fixture
async def unstamped() -> MemoryStore:
    store = UnstampedStore()
    await store.ensure_collection("c", dimension=2, embedder="e")
    await store.upsert("c", [record("a", "PgBouncer connection pooling"), record("b", "rolling updates")])
    return store


async def test_what_a_writer_wrote_is_in_the_next_answer_read_from_the_journal(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = LexicalIndex(store=store, refresh_seconds=3600.0)
    assert await ranked_ids(index, "cosign") == []
    before = index._indexes["c"]
    read: list[list[str]] = []
    original_get = store.get

    async def get(name: str, ids: Any, **kwargs: Any) -> Any:
        read.append(list(ids))
        return await original_get(name, ids, **kwargs)

    def no_scan(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("read the whole collection although the journal says what changed")

    monkeypatch.setattr(store, "get", get)
    monkeypatch.setattr(store, "iter_records", no_scan)
    await store.upsert("c", [record("c", "cosign image signatures")])
    assert await ranked_ids(index, "cosign") == ["c"]
    assert read[0] == ["c"]  # the catch-up read the one record the write touched
    await store.upsert("c", [record("b", "rolling updates with cosign")])  # a text changed under its id
    assert set(await ranked_ids(index, "cosign")) == {"b", "c"}
    await store.delete("c", ["a"])
    assert await ranked_ids(index, "pgbouncer") == []  # never a record the store no longer holds
    assert index._indexes["c"].size == 2
    # Nothing written since: nothing is read but the stamp.
    read.clear()
    for _ in range(5):
        assert set(await ranked_ids(index, "cosign")) == {"b", "c"}
    assert len(read) == 5  # only the ranked records, read back
    assert all(ids != ["a"] for ids in read)
    assert index._indexes["c"] is before


async def test_an_unstamped_store_changes_show_after_a_background_refresh_not_before(unstamped: MemoryStore) -> None:
    store = unstamped
    index = LexicalIndex(store=store, refresh_seconds=0.0)
    assert await ranked_ids(index, "cosign") == []
    await store.upsert("c", [record("c", "cosign image signatures")])
    # The stale index answers at once; the check runs behind it.
    assert await ranked_ids(index, "cosign") == []
    await index.refresh("c")
    assert await ranked_ids(index, "cosign") == ["c"]
    await store.delete("c", ["a"])
    await index.refresh("c")
    assert await ranked_ids(index, "pgbouncer") == []


@pytest.mark.parametrize("stamped", [True, False])
async def test_unchanged_collection_keeps_its_index(
    store: MemoryStore, unstamped: MemoryStore, *, stamped: bool
) -> None:
    index = LexicalIndex(store=store if stamped else unstamped, refresh_seconds=0.0)
    await ranked_ids(index, "pgbouncer")
    before = index._indexes["c"]
    await index.refresh("c")
    assert index._indexes["c"] is before


async def test_a_failing_refresh_keeps_serving_the_old_index(
    unstamped: MemoryStore, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = unstamped
    index = LexicalIndex(store=store, refresh_seconds=0.0)
    assert await ranked_ids(index, "pgbouncer") == ["a"]

    def down(*args: object, **kwargs: object) -> object:
        raise BackendUnavailable("store is down")

    monkeypatch.setattr(store, "iter_records", down)
    with caplog.at_level(logging.WARNING, logger="kubevec.query.lexical"):
        assert await ranked_ids(index, "pgbouncer") == ["a"]
        for _ in range(100):
            if not index._refreshing:
                break
            await asyncio.sleep(0.01)
    assert "Keyword index refresh failed collection=c" in caplog.text
    assert await ranked_ids(index, "pgbouncer") == ["a"]


class ScanCountingStore(MemoryStore):
    """Counts full scans (what an index on disk spares the next process)."""

    scans = 0

    def iter_records(self, name: str, **kwargs: Any) -> Any:
        ScanCountingStore.scans += 1
        return super().iter_records(name, **kwargs)

    def iter_texts(self, name: str, **kwargs: Any) -> Any:
        ScanCountingStore.scans += 1
        return super().iter_texts(name, **kwargs)


async def test_the_index_on_disk_serves_every_later_process_which_follows_writes_without_a_scan(tmp_path: Any) -> None:
    store = ScanCountingStore()
    await store.ensure_collection("c", dimension=2, embedder="e")
    await store.upsert("c", [record("a", "PgBouncer connection pooling"), record("b", "rolling updates")])
    (tmp_path / "c-0123456789abcdef").mkdir()  # an earlier version's saved index
    ScanCountingStore.scans = 0
    assert await ranked_ids(LexicalIndex(store=store, cache_dir=tmp_path), "pgbouncer") == ["a"]
    assert ScanCountingStore.scans == 1
    assert [p.name for p in tmp_path.iterdir()] == ["c"]
    # Another process (another index object): the index it finds on disk, no scan.
    second = LexicalIndex(store=store, cache_dir=tmp_path)
    [(hit, score)] = await second.rank("c", text="pgbouncer", k=5)
    assert (hit.id, hit.text, score > 0) == ("a", "PgBouncer connection pooling", True)
    # A text changed under the same id: ranked by the words stored now, still no scan.
    await store.upsert("c", [Record(id="a", vector=[1.0, 0.0], text="pooler v2", metadata={"content_hash": "2"})])
    assert await ranked_ids(second, "pgbouncer") == []
    assert await ranked_ids(second, "pooler") == ["a"]
    # A third process finds what the second one brought up to date.
    third = LexicalIndex(store=store, cache_dir=tmp_path)
    assert await ranked_ids(third, "pooler") == ["a"]
    assert third._indexes["c"].state.stamp == await store.stamp("c")
    assert ScanCountingStore.scans == 1


async def test_what_the_journal_cannot_tell_is_built_again(tmp_path: Any) -> None:
    """A collection dropped and created again, a store put back behind the index's back, a catch-up
    after longer than the journal keeps, a delete by filter (ids unknown): never a stale answer."""
    store = ScanCountingStore()
    await store.ensure_collection("c", dimension=2, embedder="e")
    await store.upsert("c", [record("a", "PgBouncer connection pooling"), record("b", "rolling updates")])
    index = LexicalIndex(store=store, cache_dir=tmp_path)
    await ranked_ids(index, "pgbouncer")
    ScanCountingStore.scans = 0
    await store.drop_collection("c")
    await store.ensure_collection("c", dimension=2, embedder="e")
    await store.upsert("c", [record("z", "cosign signatures")])
    assert await ranked_ids(index, "cosign") == ["z"]
    assert (ScanCountingStore.scans, index._indexes["c"].size) == (1, 1)
    # Last caught up too long ago: the journal may have lost entries since.
    state = index._indexes["c"].state
    state.caught_up = 0.0
    state.write(tmp_path / "c")
    await store.upsert("c", [record("y", "cosign keys")])
    assert set(await ranked_ids(index, "cosign")) == {"y", "z"}
    assert ScanCountingStore.scans == 2
    # The collection changed although the journal holds nothing new (put back from a copy).
    async for entry_id in store.iter_ids("kubevec_journal"):
        await store.delete("kubevec_journal", [entry_id[0]])
    await store._call(store._upsert, "c", [record("x", "cosign restored")])  # no journal, no stamp
    await store._call(store._stamp, "c")
    assert set(await ranked_ids(index, "cosign")) == {"x", "y", "z"}
    assert ScanCountingStore.scans == 3
    # A delete by filter: the ids it removed are found by comparing members, without a scan.
    await store.upsert(
        "c", [Record(id="w", vector=[1.0, 0.0], text="cosign old", metadata={"content_hash": "w", "kind": "Old"})]
    )
    assert "w" in await ranked_ids(index, "cosign")
    from kubevec.backends.filters import Eq

    await store.delete_where("c", Eq("kind", "Old"))
    assert "w" not in await ranked_ids(index, "cosign")
    assert index._indexes["c"].size == 3
    assert ScanCountingStore.scans == 3


async def test_another_process_holding_the_writer_never_blocks_an_answer(store: MemoryStore, tmp_path: Any) -> None:
    from kubevec.query.keyword_index import KeywordIndex

    index = LexicalIndex(store=store, cache_dir=tmp_path)
    assert await ranked_ids(index, "pgbouncer") == ["a"]
    other = KeywordIndex.open(path=tmp_path / "c")
    with other._writer():  # another process is writing the index
        await store.upsert("c", [record("c", "cosign")])
        assert await ranked_ids(index, "pgbouncer") == ["a"]  # answered with what is there
    assert await ranked_ids(index, "cosign") == ["c"]  # and brought up to date once it can


async def test_a_damaged_or_unwritable_cache_costs_a_rebuild_never_an_error(
    store: MemoryStore, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    await ranked_ids(LexicalIndex(store=store, cache_dir=tmp_path), "pgbouncer")
    for part in (tmp_path / "c").iterdir():
        if part.is_file() and part.name != "state.json":
            part.write_text("not an index")
    with caplog.at_level(logging.WARNING, logger="kubevec.query"):
        assert await ranked_ids(LexicalIndex(store=store, cache_dir=tmp_path), "pgbouncer") == ["a"]
    (tmp_path / "c" / "state.json").write_text("{")
    assert await ranked_ids(LexicalIndex(store=store, cache_dir=tmp_path), "pgbouncer") == ["a"]
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert await ranked_ids(LexicalIndex(store=store, cache_dir=blocked / "sub"), "pgbouncer") == ["a"]


async def test_a_collection_without_words_in_its_metadata_is_indexed_from_texts_alone(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Instances: no metadata is read to build (the costly part of a scan); ranked records come back whole."""

    def no_records(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("read every record's metadata")

    monkeypatch.setattr(store, "iter_records", no_records)
    index = LexicalIndex(store=store, refresh_seconds=0.0)
    [(hit, _)] = await index.rank("c", text="pgbouncer", k=5, with_metadata=False)
    assert (hit.id, hit.metadata["content_hash"]) == ("a", "PgBouncer connection pooling")
    # A text changed under the same id: the journal says so, the next query reads it again.
    await store.upsert("c", [record("b", "rolling updates with cosign")])
    assert [r.id for r, _ in await index.rank("c", text="cosign", k=5, with_metadata=False)] == ["b"]
    await store.delete("c", ["a"])  # deleted after the build: never answered
    assert await index.rank("c", text="pgbouncer", k=5, with_metadata=False) == []
    # No word matches (and no ``want``): nothing to read back, and no error.
    assert await index.rank("c", text="nothing matches", k=5, with_metadata=False) == []


async def test_records_are_read_back_only_as_far_as_the_query_needs(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.upsert("c", [record(f"x{i}", f"pooling pooling note {i}") for i in range(6)])
    asked: list[list[str]] = []
    original = store.get

    async def get(name: str, ids: Any, **kwargs: Any) -> Any:
        asked.append(list(ids))
        return await original(name, ids, **kwargs)

    monkeypatch.setattr(store, "get", get)
    index = LexicalIndex(store=store)
    got = await index.rank("c", text="pooling", k=10, with_metadata=False, want=2)
    assert len(got) == 2
    assert [len(ids) for ids in asked] == [2]  # unfiltered: one read of what it returns
    asked.clear()
    only_a = await index.rank("c", text="pooling", k=10, with_metadata=False, want=2, keep=lambda r: r.id == "a")
    assert [r.id for r, _ in only_a] == ["a"]
    assert sum(len(ids) for ids in asked) == 7  # filtered: batch after batch until the ranking ends


async def test_a_large_collection_is_rebuilt_behind_the_queries_and_never_answers_a_deleted_record(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = LexicalIndex(store=store, exact_max=1)  # "large": more than one document
    assert await ranked_ids(index, "pgbouncer") == []  # its first build runs behind the queries too
    await index.refresh("c")  # (a warm-up waits for it)
    assert await ranked_ids(index, "pgbouncer") == ["a"]
    await store.delete("c", ["a"])
    await store.upsert("c", [record("d", "cosign image signatures")])
    gate = asyncio.Event()
    original = store.iter_records

    async def held(*args: Any, **kwargs: Any) -> Any:
        await gate.wait()  # the rebuild behind the queries takes its time
        async for item in original(*args, **kwargs):
            yield item

    monkeypatch.setattr(store, "iter_records", held)
    # The next queries rank with the index they had, whose records come back from the store: "a" is gone.
    assert await ranked_ids(index, "pgbouncer") == []
    assert await ranked_ids(index, "cosign") == []  # not indexed yet: the rebuild runs behind
    gate.set()
    for _ in range(100):
        if not index._refreshing:
            break
        await asyncio.sleep(0.01)
    assert await ranked_ids(index, "cosign") == ["d"]


async def test_a_build_that_fails_midway_leaves_the_index_as_it_was_and_unlocked(
    store: MemoryStore, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = LexicalIndex(store=store, cache_dir=tmp_path)
    assert await ranked_ids(index, "pgbouncer") == ["a"]
    state = index._indexes["c"].state
    state.caught_up = 0.0  # the next catch-up must build
    state.write(tmp_path / "c")
    original = store.iter_records

    async def failing(*args: Any, **kwargs: Any) -> Any:
        async for item in original(*args, **kwargs):
            yield item
        raise BackendUnavailable("store went down mid-read")

    monkeypatch.setattr(store, "iter_records", failing)
    await store.upsert("c", [record("c", "cosign")])
    with pytest.raises(BackendUnavailable):
        await index.refresh("c")
    assert index._indexes["c"].search("pgbouncer", k=5)[0][0] == "a"  # the old index, whole
    monkeypatch.setattr(store, "iter_records", original)
    await index.refresh("c")  # the writer lock was let go: a second build can run
    assert await ranked_ids(index, "cosign") == ["c"]


async def test_names_are_looked_up_once_the_index_is_built_and_asked_of_the_store_before(store: MemoryStore) -> None:
    await store.upsert("c", [record("shop/prod/apps/v1/Deployment/web", "the web frontend")])
    index = LexicalIndex(store=store, exact_max=1)  # a large collection: its first build runs behind
    assert await index.named("c", ["web"], with_metadata=False, limit=10) is None  # not built yet: ask the store
    await index.refresh("c", with_metadata=False)
    assert await index.named("c", ["web", "api"], with_metadata=False, limit=10) == ["shop/prod/apps/v1/Deployment/web"]
    assert await index.named("c", ["frontend"], with_metadata=False, limit=10) == []  # a word, not a name
