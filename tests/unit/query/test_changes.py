"""Reading the change history: time ranges, filters, the caller's view, paging, meaning and words."""

from __future__ import annotations

import time

import pytest

from kubevec.backends import Record
from kubevec.backends.filters import Eq
from kubevec.backends.memory import MemoryStore
from kubevec.core.errors import SearchError
from kubevec.inference.change_records import CHANGE_FIELDS, CHANGES, change_record
from kubevec.query.changes import ChangesRequest, parse_time
from kubevec.query.limits import Caller
from kubevec.query.search import SearchService
from kubevec.query.views import View
from tests.doubles.embedders import CountingEmbedder
from tests.unit.inference.test_change_records import deployment, document, stored

NOW = 1_790_000_000.0


async def history(*, embedded: bool = True) -> tuple[SearchService, CountingEmbedder]:
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection(CHANGES, dimension=embedder.dimension, embedder=embedder.name, indexed=CHANGE_FIELDS)
    records = []
    for minute, (namespace, image) in enumerate([("prod", "2.3.1"), ("prod", "2.3.2"), ("staging", "2.4.0")] * 10):
        body, after = deployment(), deployment(image=f"ghcr.io/acme/payments-api:{image}")
        body["metadata"]["namespace"] = after["metadata"]["namespace"] = namespace
        body["metadata"]["name"] = after["metadata"]["name"] = f"api-{minute}"
        record = change_record(
            object_id=document(after).id, before=stored(body), after=stored(after), at=NOW - 60 * minute
        )
        assert record is not None
        records.append(record)
    await store.upsert(
        CHANGES, [Record(id=r.id, vector=embedder.vector(r.text), text=r.text, metadata=r.metadata) for r in records]
    )
    service = SearchService(
        store=store,
        embedder=embedder,
        collections={"instances": "instances", CHANGES: CHANGES},
        history_embedded=embedded,
    )
    return service, embedder


def test_times_read_as_durations_ago_or_instants() -> None:
    assert parse_time("2h", now=NOW) == NOW - 7200
    assert parse_time("30m", now=NOW) == NOW - 1800
    assert parse_time("2026-09-21T14:13:20Z") == NOW
    with pytest.raises(SearchError, match="duration ago"):
        parse_time("yesterday-ish")


async def test_a_range_lists_newest_first_with_a_total_and_pages() -> None:
    service, _ = await history()
    first = await service.changes(ChangesRequest(since=NOW - 60 * 20 + 1, namespace="prod", k=5))
    assert first.total == 14  # minutes 0..19 in prod: two of every three
    assert [e.time for e in first.entries] == sorted((e.time for e in first.entries), reverse=True)
    assert first.truncated
    assert first.cursor is not None
    seen = [e.id for e in first.entries]
    cursor = first.cursor
    while cursor:
        page = await service.changes(ChangesRequest(since=NOW - 60 * 20 + 1, namespace="prod", k=5, cursor=cursor))
        seen += [e.id for e in page.entries]
        cursor = page.cursor
    assert len(seen) == len(set(seen)) == 14
    with pytest.raises(SearchError, match="another listing"):
        await service.changes(ChangesRequest(namespace="staging", k=5, cursor=first.cursor))


async def test_a_question_picks_by_meaning_then_shows_newest_first() -> None:
    service, embedder = await history()
    answer = await service.changes(ChangesRequest(query="payments-api image 2.4.0", k=3))
    assert embedder.queries == ["payments-api image 2.4.0"]
    assert len(answer.entries) == 3
    assert answer.total == 30
    assert [e.time for e in answer.entries] == sorted((e.time for e in answer.entries), reverse=True)


async def test_unembedded_summaries_are_found_by_their_words() -> None:
    service, embedder = await history(embedded=False)
    answer = await service.changes(ChangesRequest(query="staging 2.4.0", k=50))
    assert embedder.queries == []
    assert {e.namespace for e in answer.entries} == {"staging"}
    assert len(answer.entries) == 10


async def test_the_callers_view_of_instances_applies() -> None:
    service, _ = await history()
    view = View(caller=Caller("static", "team-staging"), filters={"instances": Eq("namespace", "staging")})
    answer = await service.changes(ChangesRequest(k=100), view=view)
    assert answer.total == 10
    assert {e.namespace for e in answer.entries} == {"staging"}
    blind = View(caller=Caller("static", "types-only"), filters={"capabilities": None})
    assert (await service.changes(ChangesRequest(k=100), view=blind)).total == 0


async def test_a_store_without_history_says_so() -> None:
    store = MemoryStore()
    service = SearchService(store=store, embedder=None, collections={"instances": "instances", CHANGES: CHANGES})
    answer = await service.changes(ChangesRequest())
    assert answer.entries == []
    assert answer.degraded is not None
    assert "no change history yet" in answer.degraded


def test_bad_requests_say_what_to_change() -> None:
    with pytest.raises(SearchError, match="k must be"):
        ChangesRequest(k=0)
    with pytest.raises(SearchError, match="since must be before until"):
        ChangesRequest(since=time.time(), until=time.time() - 10)
    with pytest.raises(SearchError, match="change must be"):
        ChangesRequest(change="renamed")
