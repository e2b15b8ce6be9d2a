"""The resync's garbage collection, with the memory store and a fake cluster reader."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest

from kubevec.backends.memory import MemoryStore
from kubevec.controller.app import App
from kubevec.controller.settings import ServerSettings, Settings, SyncSettings
from kubevec.core.errors import KubeError
from kubevec.inference.instances import InstancePolicy
from tests.doubles.cluster import (
    CONFIGMAPS,
    ROLES,
    WIDGETS,
    FakeReader,
    api_resource,
    cm_id,
    configmap,
    event,
    obj,
    prepared_app,
    synced,
)
from tests.doubles.embedders import CountingEmbedder


async def test_groups_missing_from_discovery_keep_their_documents_unless_gone() -> None:
    reader = FakeReader()
    app = await prepared_app(reader)
    reader.resources = [CONFIGMAPS, ROLES, WIDGETS]
    reader.apiservice_groups = ["", "rbac.authorization.k8s.io", "example.com"]
    reader.objects = {
        "configmaps": [obj("ConfigMap", "v1", "c1"), obj("ConfigMap", "v1", "c2")],
        "roles": [obj("Role", "rbac.authorization.k8s.io/v1", "r1")],
        "widgets": [obj("Widget", "example.com/v1", "w1")],
    }
    await app.resync()
    await app.engine.flush()
    assert len(app.engine.known["instances"]) == 4

    # The API server restarts: discovery briefly lists only the core group; rbac is still served.
    # example.com's APIService is gone too (its CRDs were deleted): its documents go.
    reader.resources = [CONFIGMAPS]
    reader.apiservice_groups = ["", "rbac.authorization.k8s.io"]
    reader.objects["configmaps"] = [obj("ConfigMap", "v1", "c1")]
    await app.resync()
    await app.engine.flush()
    assert sorted(app.engine.known["instances"]) == [
        "u/a/core/v1/ConfigMap/c1",
        "u/a/rbac.authorization.k8s.io/v1/Role/r1",
    ]


async def test_a_forbidden_list_skips_one_resource_and_keeps_its_documents() -> None:
    reader = FakeReader()
    app = await prepared_app(reader)
    reader.resources = [CONFIGMAPS, ROLES]
    reader.apiservice_groups = ["", "rbac.authorization.k8s.io"]
    reader.objects = {
        "configmaps": [obj("ConfigMap", "v1", "c1")],
        "roles": [obj("Role", "rbac.authorization.k8s.io/v1", "r1")],
    }
    await app.resync()
    await app.engine.flush()
    reader.forbidden = {"roles"}  # RBAC narrowed: the rest of the resync must go on
    reader.objects["configmaps"].append(obj("ConfigMap", "v1", "c2"))
    await app.resync()
    await app.engine.flush()
    assert sorted(app.engine.known["instances"]) == [
        "u/a/core/v1/ConfigMap/c1",
        "u/a/core/v1/ConfigMap/c2",
        "u/a/rbac.authorization.k8s.io/v1/Role/r1",
    ]
    assert app.metrics.registry.get_sample_value("kubevec_errors_total", {"stage": "forbidden"}) == 1


async def test_an_object_created_during_the_listing_is_never_deleted() -> None:
    reader = FakeReader()
    app = await synced(reader, configmap("c1"))
    reader.during_list = lambda: event(app, configmap("new"))  # the listing (taken before) misses it
    await app.resync()
    await app.engine.flush()
    assert sorted(app.engine.known["instances"]) == [cm_id("c1"), cm_id("new")]


async def test_a_stale_listing_never_overwrites_a_newer_event() -> None:
    reader = FakeReader()
    app = await synced(reader, configmap("c1", tier="old"))
    newer = app.engine.known["instances"][cm_id("c1")]
    reader.during_list = lambda: event(app, configmap("c1", tier="new"))
    reader.objects["configmaps"] = [configmap("c1", tier="stale")]  # listed before the event landed
    await app.resync()
    await app.engine.flush()
    stored = (await app.store.get("instances", [cm_id("c1")]))[0]
    assert stored.metadata["labels"] == ["tier=new"]
    assert app.engine.known["instances"][cm_id("c1")] != newer


async def test_an_object_deleted_during_the_listing_is_not_brought_back() -> None:
    reader = FakeReader()
    app = await synced(reader, configmap("c1"), configmap("c2"))
    reader.during_list = lambda: event(app, configmap("c2"), deleted=True)  # the listing still has it
    await app.resync()
    await app.engine.flush()
    assert sorted(app.engine.known["instances"]) == [cm_id("c1")]


async def test_a_failed_list_aborts_garbage_collection() -> None:
    reader = FakeReader()
    app = await synced(reader, configmap("c1"), configmap("c2"))
    reader.objects["configmaps"] = []
    reader.failing = {"configmaps"}
    with pytest.raises(KubeError):
        await app.resync()
    await app.engine.flush()
    assert sorted(app.engine.known["instances"]) == [cm_id("c1"), cm_id("c2")]
    reader.failing = set()
    await app.resync()  # the next resync sees the truth: both are gone
    await app.engine.flush()
    assert dict(app.engine.known["instances"]) == {}


async def test_a_list_failing_after_its_first_page_aborts_garbage_collection() -> None:
    """Pages are built as they come; a later page failing must still leave the store untouched."""
    reader = FakeReader()
    app = await synced(reader, configmap("c1"), configmap("c2"), configmap("c3"))
    reader.objects["configmaps"] = [configmap("c1"), configmap("c2")]  # c3 is gone, but...
    reader.objects["configmaps"].append(configmap("c4"))
    reader.failing_later = {"configmaps"}  # ...the second page fails
    with pytest.raises(KubeError):
        await app.resync()
    await app.engine.flush()
    assert sorted(app.engine.known["instances"]) == [cm_id("c1"), cm_id("c2"), cm_id("c3")]
    reader.failing_later = set()
    await app.resync()
    await app.engine.flush()
    assert sorted(app.engine.known["instances"]) == [cm_id("c1"), cm_id("c2"), cm_id("c4")]


async def test_an_object_recreated_during_the_listing_is_not_deleted() -> None:
    reader = FakeReader()
    app = await synced(reader, configmap("c1"), configmap("c2"))
    reader.objects["configmaps"] = [configmap("c1")]  # listed while c2 was briefly gone...
    reader.during_list = lambda: event(app, configmap("c2", again="yes"))  # ...then an event brings it back
    await app.resync()
    await app.engine.flush()
    assert sorted(app.engine.known["instances"]) == [cm_id("c1"), cm_id("c2")]


async def test_the_resync_applies_the_policies_it_lists_before_any_policy_event() -> None:
    reader = FakeReader()
    policies = api_resource("kubevec.io/v1alpha1", "syncpolicies", "SyncPolicy")
    reader.resources = [CONFIGMAPS, ROLES, policies]
    reader.apiservice_groups = ["", "rbac.authorization.k8s.io", "kubevec.io"]
    exclude = {"resources": {"exclude": [{"group": "core", "kind": "ConfigMap"}]}}
    reader.objects = {
        "configmaps": [configmap("c1")],
        "roles": [obj("Role", "rbac.authorization.k8s.io/v1", "r1")],
        "syncpolicies": [{"metadata": {"name": "p", "generation": 1}, "spec": exclude}],
    }
    app = await prepared_app(reader)
    assert not app.events.policies  # kopf has not delivered the policy yet
    await app.resync()
    await app.engine.flush()
    assert sorted(app.engine.known["instances"]) == ["u/a/rbac.authorization.k8s.io/v1/Role/r1"]


async def test_the_active_controller_reports_its_status_into_the_store() -> None:
    """`kubevec status` reads this record where the cluster cannot be reached."""
    app = await synced(FakeReader(), configmap("a"))
    await app._report_status()
    (record,) = await app.store.get("status", ["status/u"])
    assert record.metadata["ready"] is False  # the resync ran, but the App's loop never marked it ready
    assert record.metadata["documents_instances"] == 1
    assert record.metadata["last_full_resync_time"] != ""
    assert record.metadata["degraded"] is False
    app.engine.set_active(False)
    app.active = False
    await app.store.delete("status", ["status/u"])
    await app._report_status()
    assert await app.store.get("status", ["status/u"]) == []  # a standby reports nothing


async def test_documents_are_queued_as_they_are_listed_and_only_ids_are_kept() -> None:
    """Embedding overlaps the listing: an earlier resource's documents wait in the queue before the next is read."""
    reader = FakeReader()
    app = await prepared_app(reader)
    reader.resources = [ROLES, CONFIGMAPS]  # roles listed first
    reader.apiservice_groups = ["", "rbac.authorization.k8s.io"]
    reader.objects = {
        "roles": [obj("Role", "rbac.authorization.k8s.io/v1", "r1")],
        "configmaps": [obj("ConfigMap", "v1", "c1")],
    }
    queued_while_listing: list[bool] = []

    async def look() -> None:
        queued_while_listing.append(app.engine.pending("instances", "u/a/rbac.authorization.k8s.io/v1/Role/r1"))

    reader.during_list = look
    await app.resync()
    assert queued_while_listing == [True]
    await app.engine.flush()
    assert len(app.engine.known["instances"]) == 2


async def test_a_document_being_written_counts_as_queued_for_the_resync() -> None:
    """A batch popped for writing is not in the queue, but its state is newer than any earlier snapshot."""
    reader = FakeReader()
    app = await synced(reader, configmap("c1", tier="old"))
    snapshot = await app.engine.snapshot()
    stale = app.documents.instance(configmap("c1", tier="stale"), plural="configmaps", policy=InstancePolicy())
    assert stale is not None
    release = asyncio.Event()
    write = app.engine._write

    async def slow_write(batch: Any) -> None:
        await release.wait()
        await write(batch)

    app.engine._write = slow_write  # type: ignore[method-assign]
    await event(app, configmap("c1", tier="new"), flush=False)
    flushing = asyncio.create_task(app.engine.flush())
    await asyncio.sleep(0.01)  # the batch is popped and waits in the write
    assert not app.engine.queue
    assert app.engine.offer(snapshot, stale) is False
    release.set()
    await flushing
    assert (await app.store.get("instances", [cm_id("c1")]))[0].metadata["labels"] == ["tier=new"]


async def test_a_restart_against_an_unchanged_cluster_builds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubevec.controller.sync import documents as sync_documents

    reader = FakeReader()
    objects = [
        {**configmap(f"c{i}"), "metadata": {**configmap(f"c{i}")["metadata"], "uid": f"u{i}", "resourceVersion": "7"}}
        for i in range(3)
    ]
    app = await synced(reader, *objects)
    built: list[str] = []
    real = sync_documents.build_instance

    def counting(body: Any, **kwargs: Any) -> Any:
        built.append(body["metadata"]["name"])
        return real(body, **kwargs)

    monkeypatch.setattr(sync_documents, "build_instance", counting)
    restarted = App(settings=app.settings, store=app.store, embedder=app.embedder, kube=reader)
    await restarted.engine.prepare()
    for body in objects:  # kopf's initial listing
        restarted.events.observe_object(
            group="", version="v1", plural="configmaps", kind="ConfigMap", event_type=None, body=body
        )
    await restarted.resync()
    assert built == []
    assert not restarted.engine.queue
    changed = {**objects[1], "metadata": {**objects[1]["metadata"], "resourceVersion": "8", "labels": {"a": "b"}}}
    reader.objects["configmaps"] = [objects[0], changed, objects[2]]
    await restarted.resync()
    assert built == ["c1"]
    await restarted.engine.flush()
    assert (await restarted.store.get("instances", [cm_id("c1")]))[0].metadata["labels"] == ["a=b"]


async def test_built_in_kinds_are_described_again_only_when_their_schema_changes() -> None:
    reader = FakeReader()
    reader.resources = [CONFIGMAPS]
    reader.apiservice_groups = [""]
    settings = Settings(cluster_name="u", server=ServerSettings(health_port=0, metrics_port=0))
    store = MemoryStore()
    app = App(settings=settings, store=store, embedder=CountingEmbedder(), kube=reader)
    await app.engine.prepare()
    await app.resync()
    await app.engine.flush()
    assert reader.fetched == ["/v1"]
    assert app.engine.known["capabilities"]["configmaps"].built_from.startswith("h1/")
    restarted = App(settings=settings, store=store, embedder=CountingEmbedder(), kube=reader)
    await restarted.engine.prepare()
    await restarted.resync()
    assert reader.fetched == ["/v1"]  # same schema hash: neither fetched nor described
    assert "configmaps" in restarted.engine.known["capabilities"]  # and not collected either
    await restarted.engine.flush()
    assert "configmaps" in restarted.engine.known["capabilities"]
    reader.schema_hash = "h2"  # the cluster was upgraded
    await restarted.resync()
    assert reader.fetched == ["/v1", "/v1"]


def crd(plural: str, *, generation: int = 1, uid: str | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.com", "uid": uid or f"uid-{plural}", "generation": generation},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": plural.title().rstrip("s"), "plural": plural},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "description": f"A {plural} resource."}},
                }
            ],
        },
    }


async def test_crds_are_listed_as_metadata_and_only_changed_ones_fetched() -> None:
    """A resync reads a CRD's body only when the store does not hold its document as it is now."""
    reader = FakeReader()
    app = await prepared_app(reader)
    reader.objects["customresourcedefinitions"] = [crd("gadgets"), crd("gizmos"), crd("doodads")]
    await app.resync()
    await app.engine.flush()
    assert sorted(reader.bodies) == ["doodads.example.com", "gadgets.example.com", "gizmos.example.com"]
    assert sorted(app.engine.known["capabilities"]) == sorted(reader.bodies)

    reader.bodies.clear()
    await app.resync()  # nothing changed: no body is read, nothing is dropped
    await app.engine.flush()
    assert reader.bodies == []
    assert len(app.engine.known["capabilities"]) == 3

    # One CRD edited (a new generation), one deleted, one new.
    reader.objects["customresourcedefinitions"] = [crd("gadgets", generation=2), crd("gizmos"), crd("widgets")]
    await app.resync()
    await app.engine.flush()
    assert sorted(reader.bodies) == ["gadgets.example.com", "widgets.example.com"]
    assert sorted(app.engine.known["capabilities"]) == [
        "gadgets.example.com",
        "gizmos.example.com",
        "widgets.example.com",
    ]


async def test_a_crd_deleted_between_listing_and_fetch_is_dropped() -> None:
    reader = FakeReader()
    app = await prepared_app(reader)
    reader.objects["customresourcedefinitions"] = [crd("gadgets"), crd("gizmos")]
    await app.resync()
    await app.engine.flush()

    async def delete_gizmos(name: str) -> None:
        reader.objects["customresourcedefinitions"] = [crd("gadgets", generation=2)]

    reader.objects["customresourcedefinitions"] = [crd("gadgets", generation=2), crd("gizmos", generation=2)]
    reader.during_get = delete_gizmos
    await app.resync()
    await app.engine.flush()
    assert sorted(app.engine.known["capabilities"]) == ["gadgets.example.com"]


async def test_at_start_up_a_resource_is_listed_only_once_kopfs_watch_of_it_has_begun() -> None:
    """Changes after kopf's resource version reach it as watch events: the listing must not be older."""
    reader = FakeReader()
    app = await prepared_app(reader)
    reader.resources = [CONFIGMAPS]
    reader.objects["configmaps"] = [configmap("a")]
    app.handover.begin()
    for key in [("apiextensions.k8s.io", "customresourcedefinitions"), ("", "configmaps")]:
        assert app.handover.take(key)  # kopf asks for the resource versions, no bodies
    app.handover.started(("apiextensions.k8s.io", "customresourcedefinitions"))
    resync = asyncio.create_task(app.resync())
    await asyncio.sleep(0.1)
    assert not resync.done()
    assert reader.bodies == []  # kopf's watch of ConfigMaps has no resource version yet
    app.handover.started(("", "configmaps"))
    await asyncio.wait_for(resync, timeout=5)
    await app.engine.flush()
    assert reader.bodies == ["a"]
    assert list(app.engine.known["instances"]) == [cm_id("a")]


async def test_the_first_resync_uses_start_ups_snapshot_of_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading every stored hash took 4.5 s at 20,000 documents, right after start-up had read them."""
    reader = FakeReader()
    reader.resources = [CONFIGMAPS]
    reader.objects["configmaps"] = [configmap("a")]
    app = await prepared_app(reader)
    scans = 0

    def counting(original: Any) -> Any:
        def scan(*args: Any, **kwargs: Any) -> Any:
            nonlocal scans
            scans += 1
            return original(*args, **kwargs)

        return scan

    # instances as hashes, capabilities as records (this cluster's parts of shared ones)
    monkeypatch.setattr(app.store, "iter_hashes", counting(app.store.iter_hashes))
    monkeypatch.setattr(app.store, "iter_records", counting(app.store.iter_records))
    await app.resync()
    await app.engine.flush()
    assert scans == 0
    assert list(app.engine.known["instances"]) == [cm_id("a")]
    await app.resync()  # later resyncs read the store again
    assert scans == 2  # one per collection


async def test_a_standby_never_uses_start_ups_snapshot() -> None:
    reader = FakeReader()
    app = await prepared_app(reader)
    app.engine.set_active(False)  # another replica writes the store meanwhile
    app.engine.set_active(True)
    assert app.engine.prepared_snapshot() is None


async def test_controllers_of_two_clusters_sharing_a_store_never_collect_each_others_documents() -> None:
    """Several controllers with different cluster names may write one store (README: Searching)."""
    store = MemoryStore()
    apps = []
    for cluster in ("east", "west"):
        reader = FakeReader()
        reader.resources = [CONFIGMAPS]
        reader.apiservice_groups = [""]
        reader.objects = {"configmaps": [obj("ConfigMap", "v1", f"c-{cluster}")]}
        settings = Settings(
            cluster_name=cluster,
            server=ServerSettings(health_port=0, metrics_port=0),
            sync=SyncSettings(builtin_capabilities=False),
        )
        app = App(settings=settings, store=store, embedder=CountingEmbedder(), kube=reader)
        await app.engine.prepare()
        apps.append(app)
    for app in [*apps, *apps]:
        await app.resync()
        await app.engine.flush()
    stored = sorted([i async for i, _ in store.iter_ids("instances")])
    assert stored == ["east/a/core/v1/ConfigMap/c-east", "west/a/core/v1/ConfigMap/c-west"]


async def test_the_resync_builds_at_most_a_window_ahead_of_the_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 100,000-object first sync held 80,000 built documents in the queue: the listing ran ahead of the
    writer. Now it waits for room after each page (pages of two here), so the queue stays within the window."""
    reader = FakeReader()
    reader.resources = [CONFIGMAPS]
    reader.apiservice_groups = [""]
    reader.objects = {"configmaps": [configmap(f"c{i}") for i in range(200)]}
    app = await prepared_app(reader)
    app.engine.batch_size = 5
    deepest = 0
    put = app.engine._put

    def counted(item: Any) -> None:
        nonlocal deepest
        put(item)
        deepest = max(deepest, len(app.engine.queue))

    monkeypatch.setattr(app.engine, "_put", counted)
    monkeypatch.setattr(app.engine, "room", functools.partial(app.engine.room, window=10))
    flushing = asyncio.create_task(app.engine.run())
    await asyncio.sleep(0)  # the writer runs, as it does before the controller's first resync
    try:
        await app.resync()
        await asyncio.wait_for(app.engine.wait_idle(), timeout=30)
    finally:
        flushing.cancel()
    assert len(app.engine.known["instances"]) == 200  # nothing lost
    assert deepest <= 12  # the window and one page


async def test_a_resync_without_a_writer_running_never_waits_for_room() -> None:
    """A standby peer or a resync run on its own (tests, ``kubevec index``) must not wait for a writer."""
    reader = FakeReader()
    app = await synced(reader, *(configmap(f"c{i}") for i in range(30)))
    reader.objects["configmaps"] = [configmap(f"c{i}", tier="new") for i in range(30)]
    await asyncio.wait_for(app.reconciler.resync(), timeout=10)
    assert len(app.engine.queue) == 30
