"""Two clusters on one store: shared capability records without churn, moving parts, forgetting, migrating."""

from __future__ import annotations

from kubevec.backends import Record
from kubevec.backends.memory import MemoryStore
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.sync.forget import forget_cluster
from kubevec.inference.capabilities import describe_crd
from kubevec.inference.documents import CAPABILITIES, INDEXED_FIELDS, INSTANCES
from kubevec.inference.fleet import parts_of, resource_of
from kubevec.query.clusters import list_clusters
from kubevec.query.search import SearchService
from tests.doubles.embedders import CountingEmbedder
from tests.fleet import fleet_engine, operator_crd, operator_crds, resync


async def records(store: MemoryStore) -> dict[str, Record]:
    return {r.id: r async for r in store.iter_records(CAPABILITIES)}


def writes(metrics: Metrics) -> float:
    return metrics.registry.get_sample_value("kubevec_upserts_total", {"collection": CAPABILITIES}) or 0.0


async def two_clusters() -> tuple[MemoryStore, CountingEmbedder, dict[str, Metrics]]:
    store, embedder = MemoryStore(), CountingEmbedder()
    metrics = {"east": Metrics(), "west": Metrics()}
    for cluster in ("east", "west"):
        engine = await fleet_engine(store=store, embedder=embedder, cluster=cluster, metrics=metrics[cluster])
        await resync(engine, operator_crds(cluster=cluster))
    return store, embedder, metrics


async def test_two_clusters_share_records_and_their_resyncs_write_nothing() -> None:
    store, embedder, metrics = await two_clusters()
    stored = await records(store)
    assert len(stored) == 30  # 10 types with two texts, 10 with one
    shared = [r for r in stored.values() if len(parts_of(r.metadata)) == 2]
    assert len(shared) == 10
    assert len(embedder.texts) == 30  # one embedding per distinct text: west's 10 shared texts were east's
    embedded, written = len(embedder.texts), {c: writes(m) for c, m in metrics.items()}
    for _ in range(3):
        for cluster in ("east", "west"):
            engine = await fleet_engine(store=store, embedder=embedder, cluster=cluster, metrics=metrics[cluster])
            await resync(engine, operator_crds(cluster=cluster))
    assert len(embedder.texts) == embedded
    assert {c: writes(m) for c, m in metrics.items()} == written
    assert await records(store) == stored


async def test_a_restarted_controller_plans_from_its_parts_alone() -> None:
    store, embedder, _ = await two_clusters()
    engine = await fleet_engine(store=store, embedder=embedder, cluster="west")
    own = operator_crds(cluster="west")
    known = engine.known[CAPABILITIES]
    assert set(known) == set(own)
    assert all(known[i].content_hash == d.content_hash for i, d in own.items())
    assert all(known[i].cluster == "west" for i in own)


async def test_a_changed_type_moves_its_clusters_part_and_keeps_the_others() -> None:
    store, embedder, _ = await two_clusters()
    east = await fleet_engine(store=store, embedder=embedder, cluster="east")
    upgraded = operator_crds(cluster="east")
    # east upgrades widget15 to a schema nobody else has: a record of its own, west's stays with its vector
    changed = describe_crd(operator_crd(15, cluster="east", extra=True), cluster="east").to_document()
    upgraded[changed.id] = changed
    before = len(embedder.texts)
    await resync(east, upgraded)
    assert len(embedder.texts) == before + 1
    mine = {r.id: [p.cluster for p in parts_of(r.metadata)] for r in (await records(store)).values()}
    widget15 = {i: c for i, c in mine.items() if resource_of(i) == changed.id}
    assert sorted(widget15.values()) == [["east"], ["west"]]
    # and when east upgrades widget3 to what west runs, it joins west's record: nothing is embedded
    joined = describe_crd(operator_crd(3, cluster="east", extra=True), cluster="east").to_document()
    upgraded[joined.id] = joined
    before = len(embedder.texts)
    await resync(east, upgraded)
    assert len(embedder.texts) == before
    widget3 = {
        i: [p.cluster for p in parts_of(r.metadata)]
        for i, r in (await records(store)).items()
        if resource_of(i) == joined.id
    }
    assert list(widget3.values()) == [["east", "west"]]


async def test_a_type_gone_from_one_cluster_leaves_the_others_part() -> None:
    store, embedder, _ = await two_clusters()
    east = await fleet_engine(store=store, embedder=embedder, cluster="east")
    fewer = operator_crds(cluster="east")
    del fewer["widget15s.fleet.example.com"], fewer["widget2s.fleet.example.com"]
    await resync(east, fewer)
    by_resource: dict[str, list[list[str]]] = {}
    for record_id, record in (await records(store)).items():
        by_resource.setdefault(resource_of(record_id), []).append([p.cluster for p in parts_of(record.metadata)])
    assert by_resource["widget15s.fleet.example.com"] == [["west"]]
    assert by_resource["widget2s.fleet.example.com"] == [["west"]]  # east's own record went with its last part


async def test_answers_name_each_clusters_api_version() -> None:
    store, embedder, _ = await two_clusters()
    search = SearchService(
        store=store, embedder=embedder, collections={CAPABILITIES: CAPABILITIES, INSTANCES: INSTANCES}
    )
    every = await search.resolve_kind("Widget15")
    assert [(a["cluster"], a["apiVersion"]) for a in every] == [
        ("east", "fleet.example.com/v1"),
        ("west", "fleet.example.com/v2"),
    ]
    west = await search.resolve_kind("widget15s.fleet.example.com", cluster="west")
    assert [(a["cluster"], a["apiVersion"], a["servedVersions"]) for a in west] == [
        ("west", "fleet.example.com/v2", ["v1", "v2"])
    ]
    found = await search.find_document("widget15s.fleet.example.com", cluster="east")
    assert found is not None
    assert found[0].metadata["api_version"] == "fleet.example.com/v1"


async def test_forgetting_a_cluster_removes_its_parts_and_embeds_nothing() -> None:
    store, embedder, _ = await two_clusters()
    where = {"capabilities": CAPABILITIES, "instances": INSTANCES, "status": "status"}
    listed = {c.name: (c.capabilities, c.shared) for c in await list_clusters(store=store, **where)}
    assert listed == {"east": (20, 10), "west": (20, 10)}
    dry = await forget_cluster(store=store, cluster="west", dry_run=True, **where)
    assert (dry.capabilities_deleted, dry.capabilities_kept) == (10, 10)
    assert len(await records(store)) == 30  # a dry run removes nothing
    before = len(embedder.texts)
    await forget_cluster(store=store, cluster="west", dry_run=False, **where)
    stored = await records(store)
    assert len(stored) == 20
    assert all([p.cluster for p in parts_of(r.metadata)] == ["east"] for r in stored.values())
    assert len(embedder.texts) == before
    assert [c.name for c in await list_clusters(store=store, **where)] == ["east"]
    # east's next resync finds every part current
    metrics = Metrics()
    east = await fleet_engine(store=store, embedder=embedder, cluster="east", metrics=metrics)
    await resync(east, operator_crds(cluster="east"))
    assert writes(metrics) == 0


async def test_a_store_from_before_sharing_moves_over_without_embedding() -> None:
    """Records with id ``plural.group`` (each cluster's resync rewrote them in turn) become shared ones."""
    store, embedder = MemoryStore(), CountingEmbedder()
    await store.ensure_collection(
        CAPABILITIES, dimension=embedder.dimension, embedder=embedder.name, indexed=INDEXED_FIELDS
    )
    old = operator_crds(cluster="east")
    await store.upsert(
        CAPABILITIES,
        [Record(id=d.id, vector=embedder.vector(d.text), text=d.text, metadata=d.metadata) for d in old.values()],
    )
    engine = await fleet_engine(store=store, embedder=embedder, cluster="east")
    await resync(engine, operator_crds(cluster="east"))
    stored = await records(store)
    assert embedder.texts == []
    assert sorted(resource_of(i) for i in stored) == sorted(old)
    assert all(len(parts_of(r.metadata)) == 1 for r in stored.values())
    assert all(
        r.vector == embedder.vector(r.text) for r in (await store.get(CAPABILITIES, list(stored), include_vectors=True))
    )


async def test_a_token_limited_to_one_cluster_sees_only_its_clusters_parts() -> None:
    """A static token with ``clusters: [east]`` read west's parts through count_by, facets, resolve_kind,
    a capabilities search with ``cluster: west`` and get_document; a record both share read whole."""
    from kubevec.query.access import StaticToken
    from kubevec.query.request import SearchRequest

    store, embedder, _ = await two_clusters()
    service = SearchService(
        store=store, embedder=embedder, collections={CAPABILITIES: CAPABILITIES, INSTANCES: INSTANCES}
    )
    east = service.scoped(
        StaticToken(name="east-only", token="east-only-token-0123", namespaces=("*",), clusters=("east",)).view()
    )
    counted = await east.search(
        SearchRequest.build(collection=CAPABILITIES, group="fleet.example.com", count_by="cluster")
    )
    assert counted.counts == {"east": 20}
    for field in ("served_by", "parts", "cluster", "api_version"):
        values = await east.facets(CAPABILITIES, field)
        assert values, field
        assert not [v for v in values if "west" in v or ("/v2" in v and field != "api_version")], (field, values)
    assert await east.facets(CAPABILITIES, "cluster", cluster="west") == {}
    west_search = SearchRequest.build(collection=CAPABILITIES, query="a widget", k=20, cluster="west")
    assert list(await east.search(west_search)) == []
    everything = await east.search(SearchRequest.build(collection=CAPABILITIES, query="a widget", k=30))
    assert len(everything) == 20
    assert all(r.metadata["cluster"] == "east" for r in everything)
    assert all("west" not in str(r.metadata.get("served_by", "")) for r in everything)
    assert await east.resolve_kind("Widget15", cluster="west") == []
    assert [(a["cluster"], a["apiVersion"]) for a in await east.resolve_kind("Widget15")] == [
        ("east", "fleet.example.com/v1")
    ]
    # by meaning, over records two clusters share (a list apiVersion failed the tool's schema)
    semantic = await service.scoped(None).resolve_kind("something that keeps widgets", limit=10)
    assert semantic
    assert all(isinstance(a["apiVersion"], str) for a in semantic)
    found = await east.find_document("widget15s.fleet.example.com")
    assert found is not None
    assert found[0].metadata["cluster"] == "east"
    assert await east.find_document("widget15s.fleet.example.com", cluster="west") is None


async def test_a_scoped_caller_gets_its_clusters_record_of_a_type_by_resource_name() -> None:
    """Two records of one type (each cluster's text): a token limited to west asking by resource name
    gets west's, not 'not found' because east's record sorted first."""
    from kubevec.query.access import StaticToken

    store, embedder, _ = await two_clusters()
    service = SearchService(
        store=store, embedder=embedder, collections={CAPABILITIES: CAPABILITIES, INSTANCES: INSTANCES}
    )
    stored = await records(store)
    single = sorted({resource_of(i) for i, r in stored.items() if len(parts_of(r.metadata)) == 1})
    both_alone = [r for r in single if sum(resource_of(i) == r for i in stored) == 2]
    assert both_alone  # a type whose two clusters have different texts
    for cluster in ("east", "west"):
        token = StaticToken(name=cluster, token=f"{cluster}-only-token-0123", namespaces=("*",), clusters=(cluster,))
        found = await service.scoped(token.view()).find_document(both_alone[0])
        assert found is not None, cluster
        assert found[0].metadata["cluster"] == cluster
