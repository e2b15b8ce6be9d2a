"""The search service: cheapest paths, hybrid fusion, MMR, filters, labels, clear errors."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest

from kubevec.backends import Record
from kubevec.backends.filters import to_json
from kubevec.backends.memory import MemoryStore
from kubevec.core.errors import SearchError
from kubevec.query.answers import Result, label_for
from kubevec.query.render import compact
from kubevec.query.request import MAX_K, SearchRequest
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder
from tests.doubles.searching import Document, names, searching

DOCS = [
    (
        "deployments.apps",
        "Deployment (apps). Runs stateless pods with rolling updates.",
        {"kind": "Deployment", "group": "apps"},
    ),
    (
        "poolers.postgresql.cnpg.io",
        "Pooler (postgresql.cnpg.io). PgBouncer connection pooling for a PostgreSQL cluster.",
        {"kind": "Pooler", "group": "postgresql.cnpg.io"},
    ),
    (
        "clusters.postgresql.cnpg.io",
        "Cluster (postgresql.cnpg.io). Highly available PostgreSQL with failover.",
        {"kind": "Cluster", "group": "postgresql.cnpg.io"},
    ),
    (
        "clusters-copy",
        "Cluster (postgresql.cnpg.io). Highly available PostgreSQL with failover.",
        {"kind": "Cluster", "group": "copy"},
    ),
    (
        "services",
        "Service (core). Stable network endpoint for pods.",
        {"kind": "Service", "group": "core", "labels": ["app=web"]},
    ),
]


@pytest.fixture
async def service() -> SearchService:
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection("capabilities", dimension=embedder.dimension, embedder=embedder.name)
    await store.upsert(
        "capabilities",
        [Record(id=i, vector=embedder.vector(t), text=t, metadata={**m, "content_hash": i}) for i, t, m in DOCS],
    )
    return SearchService(store=store, embedder=embedder, collections={"capabilities": "capabilities"})


async def search(service: SearchService, **fields: object) -> list[Result]:
    return await service.search(SearchRequest.build(**fields))


def embedder_of(service: SearchService) -> CountingEmbedder:
    assert isinstance(service.embedder, CountingEmbedder)
    return service.embedder


async def test_nothing_to_search_for_is_a_clear_error(service: SearchService) -> None:
    with pytest.raises(SearchError, match="Give a query, a keyword or a filter"):
        await search(service, collection="capabilities")
    with pytest.raises(SearchError, match="collection: Input should be 'capabilities' or 'instances'"):
        await search(service, collection="nope", query="x")
    with pytest.raises(SearchError, match="Unknown collection 'instances'; use one of capabilities"):
        await search(service, collection="instances", query="x")  # a collection this service does not serve
    with pytest.raises(SearchError, match="Invalid filter"):
        await search(service, collection="capabilities", filter={"kind": {"$like": "x"}})
    with pytest.raises(SearchError, match="key=value"):
        await search(service, collection="capabilities", labels=["app"])


async def test_keyword_and_filters_make_no_embedding_call(service: SearchService) -> None:
    hits = await search(service, collection="capabilities", keyword="pgbouncer")
    assert [h.id for h in hits] == ["poolers.postgresql.cnpg.io"]
    filtered = await search(service, collection="capabilities", group="postgresql.cnpg.io", k=10)
    assert {h.id for h in filtered} == {"poolers.postgresql.cnpg.io", "clusters.postgresql.cnpg.io"}
    assert all(h.score == 1.0 for h in filtered)
    assert embedder_of(service).queries == []


async def test_query_embeds_once_and_hybrid_finds_exact_words(service: SearchService) -> None:
    hits = await search(service, collection="capabilities", query="PgBouncer", k=2)
    assert embedder_of(service).queries == ["PgBouncer"]
    # The hashing test embedder has no semantics: only the BM25 half can rank the pooler first.
    assert hits[0].id == "poolers.postgresql.cnpg.io"
    dense_only = await search(service, collection="capabilities", query="PgBouncer", k=5, hybrid=False)
    assert all(0.0 <= h.score <= 1.0 for h in dense_only)


async def test_keyword_with_query_narrows_results(service: SearchService) -> None:
    unnarrowed = await search(service, collection="capabilities", query="database", k=5)
    assert any("failover" not in h.text for h in unnarrowed)  # so ignoring the keyword would fail below
    hits = await search(service, collection="capabilities", query="database", keyword="failover", k=5)
    assert {h.id for h in hits} == {"clusters.postgresql.cnpg.io", "clusters-copy"}


async def test_mmr_drops_near_duplicates(service: SearchService) -> None:
    plain = await search(service, collection="capabilities", query=DOCS[2][1], k=2, hybrid=False)
    diverse = await search(
        service, collection="capabilities", query=DOCS[2][1], k=2, hybrid=False, mmr=True, mmr_lambda=0.3
    )
    assert {h.id for h in plain} == {"clusters.postgresql.cnpg.io", "clusters-copy"}
    assert len({h.text for h in diverse}) == 2


async def test_labels_and_min_score(service: SearchService) -> None:
    hits = await search(service, collection="capabilities", labels=["app=web"])
    assert [h.id for h in hits] == ["services"]
    none = await search(service, collection="capabilities", query="anything", min_score=0.99)
    assert none == []


def test_labels_and_compact_rendering_budget() -> None:
    assert label_for(0.8) == "very similar"
    assert label_for(0.55) == "similar"
    assert label_for(0.2) == "somewhat related"
    results = [
        Result(id=f"r{i}", score=0.6, similarity=0.6, label="similar", metadata={"kind": "K"}, text="word " * 200)
        for i in range(10)
    ]
    text = compact(results, token_budget=300)
    assert len(text) <= 300 * 4 + 10 * len(results)
    assert text.startswith("1. r0 [similar, cosine 0.60] kind=K")
    assert "10. r9" in text  # the budget is shared: every result shows
    assert compact([]) == "No results."


async def test_collection_built_with_another_embedder_is_refused() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection("capabilities", dimension=embedder.dimension, embedder="some-other-model")
    service = SearchService(store=store, embedder=embedder, collections={"capabilities": "capabilities"})
    with pytest.raises(SearchError, match="built with embedder 'some-other-model'"):
        await search(service, collection="capabilities", query="x")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"query": "x", "k": 0}, "k: Input should be greater than or equal to 1"),
        ({"query": "x", "k": MAX_K + 1}, f"k: Input should be less than or equal to {MAX_K}"),
        ({"query": "x", "mmr_lambda": 2}, "mmr_lambda: Input should be less than or equal to 1"),
        ({"query": "x", "labels": ["app=web", "tier"]}, "labels: Labels are key=value, got 'tier'"),
        ({"query": "x", "shape": "round"}, "shape: Extra inputs are not permitted"),
        ({"query": "  ", "keyword": ""}, "Give a query, a keyword or a filter"),
        ({"keyword": "x", "filter": {"$and": [{"a": 1}] * (65)}}, "Invalid filter"),
    ],
)
def test_a_bad_request_is_one_clear_line(fields: dict[str, object], message: str) -> None:
    with pytest.raises(SearchError) as raised:
        SearchRequest.build(**fields)
    assert str(raised.value).startswith(message) or message in str(raised.value), str(raised.value)
    assert "\n" not in str(raised.value)
    assert "pydantic" not in str(raised.value)


def test_a_request_is_frozen_and_combines_its_conditions() -> None:
    request = SearchRequest.build(keyword="x", kind="Deployment", labels=["app=web"], filter={"namespace": "prod"})
    with pytest.raises(ValueError, match="frozen"):
        request.k = 7  # type: ignore[misc]
    assert request.conditions is not None
    assert to_json(request.conditions) == {
        "op": "and",
        "filters": [
            {"op": "eq", "field": "namespace", "value": "prod"},
            {"op": "eq", "field": "kind", "value": "Deployment"},
            {"op": "eq", "field": "labels", "value": "app=web"},
        ],
    }
    assert SearchRequest.build(query="q", k=10).pool == 40
    assert SearchRequest.build(query="q", k=10, hybrid=False).pool == 10


async def test_the_mcp_tool_schema_is_the_search_request() -> None:
    from kubevec.query.mcp import build_server

    server = build_server(SearchService(store=MemoryStore(), embedder=None, collections={}).scoped)
    (tool,) = [t for t in await server.list_tools() if t.name == "vector_search"]
    properties = tool.input_schema["properties"]
    expected = SearchRequest.model_json_schema()["properties"]
    assert {name: properties[name] for name in expected} == expected
    assert set(properties) - set(expected) == {"format"}


def monotone(values: list[float]) -> bool:
    return all(a >= b for a, b in itertools.pairwise(values))


QUERIES = ["PgBouncer connection pooling", "highly available PostgreSQL", "network endpoint", "failover pods"]


async def test_every_list_is_ordered_by_the_score_it_shows(service: SearchService) -> None:
    """Hybrid lists are ordered by fusion, so their cosine similarities may go down and up: the shown
    score is the fused one (named), the similarity sits beside it and sets the label."""
    similarities_wander = False
    for query in QUERIES:
        hybrid = await search(service, collection="capabilities", query=query, k=5)
        assert {r.score_kind for r in hybrid} == {"fused"}
        assert monotone([r.score for r in hybrid]), query
        assert all(0.0 <= r.score <= 1.0 and r.similarity is not None for r in hybrid)
        assert all(r.label == label_for(r.similarity or 0.0) for r in hybrid)
        similarities_wander |= not monotone([r.similarity or 0.0 for r in hybrid])
        dense = await search(service, collection="capabilities", query=query, k=5, hybrid=False)
        assert {r.score_kind for r in dense} == {"cosine"}
        assert [r.score for r in dense] == [r.similarity for r in dense]
        assert monotone([r.score for r in dense])
        diverse = await search(service, collection="capabilities", query=query, k=4, mmr=True, mmr_lambda=0.5)
        assert {r.score_kind for r in diverse} == {"mmr"}
        assert monotone([r.score for r in diverse]), query
    assert similarities_wander  # the case this guards against does occur with these documents
    keyword = await search(service, collection="capabilities", keyword="PostgreSQL pooling")
    assert {(r.score_kind, r.similarity) for r in keyword} == {("keyword", None)}
    assert compact(keyword).startswith("1. poolers.postgresql.cnpg.io [keyword 1.00]")
    top = (await search(service, collection="capabilities", query=QUERIES[0], k=1))[0]
    assert compact([top]).startswith(f"1. {top.id} [{top.label} {top.similarity:.2f}, fused {top.score:.2f}]")
    assert set(top.to_json()) == {"id", "score", "score_kind", "similarity", "label", "metadata", "text"}


async def test_bad_tool_arguments_are_one_line_per_field_without_dumps(service: SearchService) -> None:
    from mcp.client import Client

    from kubevec.query.mcp import build_server

    async with Client(build_server(service.scoped)) as client:
        for name, arguments, expected in [
            (
                "vector_search",
                {"query": "x", "k": "many"},
                "Invalid arguments for vector_search: k: Input should be a valid integer",
            ),
            (
                "list_facets",
                {"collection": "secret-value-xyz"},
                "collection: Input should be 'capabilities' or 'instances'",
            ),
            ("get_document", {}, "Invalid arguments for get_document: id: Field required"),
        ]:
            result = await client.call_tool(name, arguments)
            text = "".join(getattr(block, "text", "") for block in result.content)
            assert result.is_error
            assert expected in text
            assert "errors.pydantic.dev" not in text
            assert "input_value" not in text
            assert "secret-value-xyz" not in text
            assert "\n" not in text


async def test_resolve_kind_exact_names_first_then_meaning() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection("capabilities", dimension=embedder.dimension, embedder=embedder.name)

    def capability(kind: str, group: str, plural: str, short: list[str]) -> Record:
        text = f"{kind} ({group})"
        metadata: dict[str, Any] = {
            "kind": kind,
            "group": group,
            "resource": f"{plural}.{group}",
            "api_version": f"{group}/v1",
            "scope": "Namespaced",
            "served_versions": ["v1", "v1beta1"],
            "version": "v1",
            "short_names": short,
            "fields": [f"field{i}: something" for i in range(12)],
            "content_hash": plural + group,
        }
        return Record(id=f"{plural}.{group}", vector=embedder.vector(text), text=text, metadata=metadata)

    await store.upsert(
        "capabilities",
        [
            capability("Certificate", "cert-manager.io", "certificates", ["cert", "certs"]),
            capability("Certificate", "pki.example.com", "certificates", []),
            capability("Issuer", "cert-manager.io", "issuers", []),
        ],
    )
    service = SearchService(store=store, embedder=embedder, collections={"capabilities": "capabilities"})
    by_kind = await service.resolve_kind("certificate")
    assert [(a["group"], a["match"]) for a in by_kind] == [("cert-manager.io", "exact"), ("pki.example.com", "exact")]
    assert by_kind[0]["apiVersion"] == "cert-manager.io/v1"
    assert by_kind[0]["servedVersions"] == ["v1", "v1beta1"]
    assert len(by_kind[0]["topFields"]) == 8
    for name in ("CERTS", "certificates.cert-manager.io", "Certificate.cert-manager.io"):
        assert [a["id"] for a in await service.resolve_kind(name)] == ["certificates.cert-manager.io"], name
    assert embedder_of(service).queries == []  # exact answers need no embedding
    loose = await service.resolve_kind("who signs my TLS certificates")
    assert {a["match"] for a in loose} == {"semantic"}
    assert all(0.0 <= a["similarity"] <= 1.0 for a in loose)
    with pytest.raises(SearchError, match="needs a kind"):
        await service.resolve_kind("  ")


async def test_every_lookup_can_be_scoped_to_one_cluster() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection("instances", dimension=embedder.dimension, embedder=embedder.name)
    await store.ensure_collection("capabilities", dimension=embedder.dimension, embedder=embedder.name)
    records = [
        Record(
            id=f"{cluster}/prod/apps/v1/Deployment/web",
            vector=embedder.vector(f"web in {cluster}"),
            text=f"Deployment web in {cluster}",
            metadata={"kind": "Deployment", "cluster": cluster, "content_hash": cluster},
        )
        for cluster in ("east", "west")
    ]
    await store.upsert("instances", records)
    service = SearchService(
        store=store, embedder=embedder, collections={"instances": "instances", "capabilities": "capabilities"}
    )
    assert len(await search(service, collection="instances", kind="Deployment")) == 2
    (east,) = await search(service, collection="instances", query="web", cluster="east")
    assert east.id == "east/prod/apps/v1/Deployment/web"
    assert await service.facets("instances", "cluster") == {"east": 1, "west": 1}
    assert await service.facets("instances", "kind", cluster="west") == {"Deployment": 1}
    assert await service.find_document("west/prod/apps/v1/Deployment/web", cluster="east") is None
    found = await service.find_document("west/prod/apps/v1/Deployment/web", cluster="west")
    assert found is not None
    assert found[1] == "instances"


async def test_every_tool_declares_an_output_schema_and_returns_typed_results(service: SearchService) -> None:
    from mcp.client import Client

    from kubevec.query.mcp import build_server

    async with Client(build_server(service.scoped)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        schemas = {name: tool.output_schema for name, tool in tools.items()}
        assert all(schemas.values()), schemas
        assert set(schemas["vector_search"]["properties"]) == {
            "results",
            "degraded",
            "total",
            "truncated",
            "cursor",
            "counts",
        }
        found = await client.call_tool("vector_search", {"collection": "capabilities", "query": "PgBouncer", "k": 2})
        assert found.structured_content is not None
        hits = found.structured_content["results"]
        assert set(hits[0]) == {"id", "score", "score_kind", "similarity", "label", "metadata", "text"}
        assert found.content[0].text.startswith(f"1. {hits[0]['id']} [")  # compact text for the model
        document = await client.call_tool("get_document", {"id": "services"})
        assert document.structured_content == {
            "id": "services",
            "collection": "capabilities",
            "metadata": dict(DOCS[4][2], content_hash="services"),
            "text": DOCS[4][1],
        }
        facets = await client.call_tool("list_facets", {"collection": "capabilities", "field": "group"})
        assert facets.structured_content == {
            "field": "group",
            "counts": {"postgresql.cnpg.io": 2, "apps": 1, "copy": 1, "core": 1},
        }


async def test_warm_builds_the_lexical_indexes_before_the_first_query(
    service: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    await service.warm()

    def no_scan(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the first query read the whole collection")

    monkeypatch.setattr(service.store, "iter_records", no_scan)
    monkeypatch.setattr(service.store, "iter_texts", no_scan)
    assert [r.id for r in await search(service, query="Postgres database", collection="capabilities", k=1)]


async def test_warm_leaves_a_collection_it_cannot_read_to_the_first_query() -> None:
    store, embedder = MemoryStore(), CountingEmbedder()
    service = SearchService(store=store, embedder=embedder, collections={"instances": "instances"})
    await service.warm()  # no collection yet (a fresh store): no error
    await store.ensure_collection("instances", dimension=embedder.dimension, embedder=embedder.name)
    text = "Deployment payments-api"
    await store.upsert(
        "instances", [Record(id="d", vector=embedder.vector(text), text=text, metadata={"content_hash": "d"})]
    )
    assert [r.id for r in await search(service, query="payments", collection="instances", k=1)] == ["d"]


async def test_with_the_embedder_down_a_question_is_answered_from_its_words_and_says_so(
    service: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = embedder_of(service)
    embedder.failing = True
    found = await service.search(
        SearchRequest.build(collection="capabilities", query="PgBouncer connection pooling", k=3, min_score=0.99)
    )
    assert found.degraded is not None
    assert "embedder is unavailable (unavailable): answered from keywords alone" in found.degraded
    assert found[0].id == "poolers.postgresql.cnpg.io"  # its words, ranked by BM25
    assert all(r.score_kind == "keyword" for r in found)
    assert len(embedder.queries) == 1
    again = await service.search(SearchRequest.build(collection="capabilities", query="PostgreSQL failover", k=2))
    assert again.degraded is not None
    assert len(embedder.queries) == 1  # not asked again for a while: each ask would wait out its retries
    # the caller's view and filters hold on this path as on every other
    scoped = await service.search(
        SearchRequest.build(collection="capabilities", query="PostgreSQL failover", k=5, group="copy")
    )
    assert [r.id for r in scoped] == ["clusters-copy"]
    # once the pause is over and the embedder answers, answers are whole again
    embedder.failing = False
    monkeypatch.setattr(service.sources.vectors, "down_until", 0.0)
    whole = await service.search(SearchRequest.build(collection="capabilities", query="PostgreSQL failover", k=2))
    assert whole.degraded is None
    assert whole[0].score_kind != "keyword"


async def test_a_query_that_waits_too_long_for_its_vector_is_answered_from_words(service: SearchService) -> None:
    import asyncio

    class Slow(CountingEmbedder):
        async def embed_query(self, text: str) -> list[float]:
            await asyncio.sleep(5)
            return self.vector(text)

    service.embedder = Slow()
    service.query_embed_timeout = 0.2
    found = await service.search(SearchRequest.build(collection="capabilities", query="PgBouncer", k=1))
    assert found.degraded is not None
    assert "(timeout)" in found.degraded
    assert [r.id for r in found] == ["poolers.postgresql.cnpg.io"]


async def test_the_mcp_tool_says_degraded_in_its_result(service: SearchService) -> None:
    from mcp.client import Client

    from kubevec.query.mcp import build_server

    embedder_of(service).failing = True
    async with Client(build_server(service.scoped)) as client:
        found = await client.call_tool("vector_search", {"collection": "capabilities", "query": "PgBouncer", "k": 2})
    assert found.structured_content is not None
    assert found.structured_content["degraded"].endswith("answered from keywords alone")
    assert found.content[0].text.startswith("Note: the embedder is unavailable")
    assert found.structured_content["results"][0]["id"] == "poolers.postgresql.cnpg.io"


async def listing(n: int) -> tuple[SearchService, MemoryStore, CountingEmbedder]:
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection("instances", dimension=embedder.dimension, embedder=embedder.name)
    await store.upsert("instances", [deployment(embedder, i) for i in range(n)])
    service = SearchService(store=store, embedder=embedder, collections={"instances": "instances"})
    return service, store, embedder


def deployment(embedder: CountingEmbedder, i: int, *, namespace: str | None = None) -> Record:
    text = f"Deployment web-{i:03d} serving the shop"
    namespace = namespace or ("prod" if i % 3 else "staging")
    health = "degraded" if i % 4 == 0 else "healthy"
    metadata = {"kind": "Deployment", "namespace": namespace, "health": health, "content_hash": str(i)}
    return Record(
        id=f"c/{namespace}/apps/v1/Deployment/web-{i:03d}", vector=embedder.vector(text), text=text, metadata=metadata
    )


async def test_a_filter_listing_says_its_total_and_pages_with_a_cursor() -> None:
    service, _, embedder = await listing(25)
    first = await service.search(SearchRequest.build(collection="instances", kind="Deployment", k=10))
    assert (len(first), first.total, first.truncated) == (10, 25, True)
    assert first.cursor is not None
    seen = [r.id for r in first]
    cursor = first.cursor
    while cursor is not None:
        page = await service.search(SearchRequest.build(collection="instances", kind="Deployment", k=10, cursor=cursor))
        assert page.total == 25
        seen += [r.id for r in page]
        cursor = page.cursor
    assert len(seen) == len(set(seen)) == 25  # every document once
    assert seen == sorted(seen)
    assert embedder.queries == []  # a listing embeds nothing
    text = compact(first)
    assert text.endswith(f"Showing 10 of 25; next page: cursor={first.cursor}")


async def test_pages_hold_every_unchanged_document_once_while_documents_come_and_go() -> None:
    service, store, embedder = await listing(30)
    request = {"collection": "instances", "kind": "Deployment", "k": 7}
    page = await service.search(SearchRequest.build(**request))
    seen = [r.id for r in page]
    removed = {seen[0], "c/prod/apps/v1/Deployment/web-029"}  # one already shown, one not yet
    added = deployment(embedder, 999, namespace="zz")  # sorts after every cursor
    while page.cursor is not None:
        if len(seen) == 7:  # between the first and second page: writes happen
            await store.delete("instances", sorted(removed))
            await store.upsert("instances", [added])
        page = await service.search(SearchRequest.build(**request, cursor=page.cursor))
        seen += [r.id for r in page]
    unchanged = {f"c/{'prod' if i % 3 else 'staging'}/apps/v1/Deployment/web-{i:03d}" for i in range(30)} - removed
    assert unchanged <= set(seen)  # nothing that stayed was skipped
    assert len(seen) == len(set(seen))  # nothing repeated
    assert "c/prod/apps/v1/Deployment/web-029" not in seen
    assert added.id in seen


async def test_a_cursor_from_another_search_or_made_up_is_one_clear_error() -> None:
    service, _, _ = await listing(12)
    page = await service.search(SearchRequest.build(collection="instances", kind="Deployment", k=5))
    assert page.cursor is not None
    with pytest.raises(SearchError, match="it pages another search"):
        await service.search(SearchRequest.build(collection="instances", namespace="prod", k=5, cursor=page.cursor))
    with pytest.raises(SearchError, match="not one kubevec gave"):
        await service.search(SearchRequest.build(collection="instances", kind="Deployment", k=5, cursor="!!nope"))
    with pytest.raises(SearchError, match="A cursor pages a filter-only or keyword listing"):
        SearchRequest.build(collection="instances", query="web", cursor=page.cursor)
    with pytest.raises(SearchError, match="it pages another search"):  # a listing's cursor is not a keyword's
        await service.search(SearchRequest.build(collection="instances", keyword="shop", k=5, cursor=page.cursor))


async def test_keyword_and_question_answers_say_how_many_matched() -> None:
    service, _, _ = await listing(20)
    words = await service.search(SearchRequest.build(collection="instances", keyword="shop", k=3))
    assert (len(words), words.total, words.truncated) == (3, 20, True)
    assert words.cursor is not None
    asked = await service.search(SearchRequest.build(collection="instances", query="web shop", k=4))
    assert asked.total is not None
    assert asked.total >= 4
    assert asked.truncated
    assert compact(words).endswith(f"Showing 3 of 20; next page: cursor={words.cursor}")
    assert compact(asked).endswith("raise k or narrow the filters to see more")
    whole = await service.search(SearchRequest.build(collection="instances", namespace="staging", k=100))
    assert (whole.total, whole.truncated, whole.cursor) == (7, False, None)


async def test_keyword_pages_hold_every_unchanged_match_once_while_documents_come_and_go() -> None:
    """Issue 33: a keyword answer gave a total but no cursor. Pages go by the share of the words a document
    holds, then by id: both its own, so other documents' writes cannot move it across a page."""
    service, store, embedder = await listing(30)
    extra = deployment(embedder, 500)
    await store.upsert("instances", [dataclasses.replace(extra, text=f"{extra.text} canary tls")])
    request = {"collection": "instances", "keyword": "canary shop", "k": 7}
    page = await service.search(SearchRequest.build(**request))
    assert page.total == 31
    assert page[0].id == extra.id  # both words first
    assert page[0].score == 1.0
    seen = [r.id for r in page]
    removed = {seen[1], "c/prod/apps/v1/Deployment/web-029"}
    added = deployment(embedder, 999, namespace="zz")
    while page.cursor is not None:
        if len(seen) == 7:
            await store.delete("instances", sorted(removed))
            await store.upsert("instances", [added])
        page = await service.search(SearchRequest.build(**request, cursor=page.cursor))
        assert all(r.score_kind == "keyword" for r in page)
        seen += [r.id for r in page]
    unchanged = {f"c/{'prod' if i % 3 else 'staging'}/apps/v1/Deployment/web-{i:03d}" for i in range(30)} - removed
    assert unchanged <= set(seen)
    assert len(seen) == len(set(seen))
    assert added.id in seen
    assert embedder.queries == []


async def test_what_points_at_the_answer_is_fetched_when_a_task_asks_for_it_too() -> None:
    """ "Find the object that holds the Kafka settings and the workloads that load it": the first ConfigMap
    answered is what "it" stands for, and the workloads whose refs hold it are fetched though neither ranking
    found them (their text shares no word with the task)."""
    docs: list[Document] = [
        ("ConfigMap/iot/tb-kafka-config", "ConfigMap tb-kafka-config | namespace: iot | keys: TB_KAFKA_SERVERS | kafka settings",
         {"kind": "ConfigMap", "name": "tb-kafka-config", "namespace": "iot"}),
        ("StatefulSet/iot/tb-node", "StatefulSet tb-node | namespace: iot | env from: ConfigMap tb-kafka-config",
         {"kind": "StatefulSet", "name": "tb-node", "namespace": "iot", "refs": ["ConfigMap/iot/tb-kafka-config"]}),
        *((f"Service/iot/filler-{i}", f"Service filler-{i} | namespace: iot | object holds workloads find",
           {"kind": "Service", "name": f"filler-{i}", "namespace": "iot"}) for i in range(2000)),
    ]  # fmt: skip
    service, _ = await searching(docs)

    assert "tb-node" not in await names(service, "Find the object that holds the Kafka settings and the workloads")
    found = await names(service, "Find the object that holds the Kafka settings and the workloads that load it")
    assert set(found[:2]) == {"tb-kafka-config", "tb-node"}


async def test_count_by_answers_with_totals_and_no_documents() -> None:
    service, _, embedder = await listing(24)
    counted = await service.search(
        SearchRequest.build(collection="instances", kind="Deployment", health="degraded", count_by="namespace")
    )
    assert list(counted) == []
    assert counted.counts == {"prod": 4, "staging": 2}  # degraded: 0, 4, 8, 12, 16, 20; staging: 0, 12
    assert counted.total == 6
    assert embedder.queries == []
    assert compact(counted) == "6 matched: prod 4, staging 2"
    with pytest.raises(SearchError, match="count_by counts filter and keyword matches"):
        SearchRequest.build(collection="instances", query="web", count_by="namespace")


async def test_what_a_named_object_uses_is_fetched_when_a_task_asks_for_it_too() -> None:
    """ "Find the ratelimit deployment and the store it depends on": the Service its env calls is fetched
    though neither ranking found it (its text shares no word with the task and its vector is far)."""
    docs: list[Document] = [
        ("Deployment/mesh/ratelimit", "Deployment ratelimit | namespace: mesh | calls: Service redis:6379 (REDIS_URL)",
         {"kind": "Deployment", "name": "ratelimit", "namespace": "mesh", "refs": ["Service/mesh/redis"]}),
        ("Service/mesh/redis", "Service redis | namespace: mesh | ports: 6379/TCP", {"kind": "Service", "name": "redis", "namespace": "mesh"}),
        *((f"ConfigMap/mesh/filler-{i}", f"ConfigMap filler-{i} | namespace: mesh | store depends find",
           {"kind": "ConfigMap", "name": f"filler-{i}", "namespace": "mesh"}) for i in range(2000)),
    ]  # fmt: skip
    service, _ = await searching(docs)

    assert "redis" not in await names(
        service, "Find the ratelimit deployment and the store"
    )  # not found by meaning or words
    found = await names(service, "Find the ratelimit deployment and the store it depends on")
    assert set(found[:2]) == {"ratelimit", "redis"}
