"""The App's event intake: bad objects are counted and logged once, never block the rest; policy applies."""

from __future__ import annotations

import asyncio
import logging

import pytest

from kubevec.backends.memory import MemoryStore
from kubevec.controller.app import App
from kubevec.controller.settings import ServerSettings, Settings
from tests.doubles.clock import FakeClock
from tests.doubles.embedders import CountingEmbedder


@pytest.fixture
def app() -> App:
    settings = Settings(cluster_name="unit", server=ServerSettings(health_port=0, metrics_port=0))
    return App(settings=settings, store=MemoryStore(), embedder=CountingEmbedder(), clock=FakeClock())


def configmap(name: str, **extra: object) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "a", **extra},
        "data": {"k": "v"},
    }


def test_bad_object_is_counted_logged_once_and_skipped(app: App, caplog: pytest.LogCaptureFixture) -> None:
    bad = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "a"}}
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            app.events.observe_object(
                group="", version="v1", plural="configmaps", kind="ConfigMap", event_type="MODIFIED", body=bad
            )
        app.events.observe_object(
            group="", version="v1", plural="configmaps", kind="ConfigMap", event_type="ADDED", body=configmap("good")
        )
    assert app.metrics.registry.get_sample_value("kubevec_errors_total", {"stage": "inference"}) == 3
    assert sum("cannot be indexed" in r.message for r in caplog.records) == 1
    assert [key[1] for key in app.engine.queue] == ["unit/a/core/v1/ConfigMap/good"]


def test_deleted_and_excluded_objects_become_deletes(app: App) -> None:
    app.events.observe_object(
        group="", version="v1", plural="configmaps", kind="ConfigMap", event_type="DELETED", body=configmap("x")
    )
    (pending,) = app.engine.queue.values()
    assert pending.document is None
    app.events.observe_object(
        group="",
        version="v1",
        plural="events",
        kind="Event",
        event_type="ADDED",
        body={"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "a"}},
    )
    assert len(app.engine.queue) == 1  # events are never indexed


def test_policy_change_requests_a_resync_and_filters(app: App) -> None:
    app.events.observe_policy(
        event_type="ADDED", body={"metadata": {"name": "p"}, "spec": {"namespaces": {"exclude": ["a"]}}}
    )
    assert app.resync_requested
    app.events.observe_object(
        group="", version="v1", plural="configmaps", kind="ConfigMap", event_type="ADDED", body=configmap("y")
    )
    (pending,) = app.engine.queue.values()
    assert pending.document is None  # excluded by policy: removed if it was stored
    app.events.observe_policy(event_type="ADDED", body={"metadata": {"name": "bad"}, "spec": {"resources": "nope"}})
    assert app.metrics.registry.get_sample_value("kubevec_errors_total", {"stage": "policy"}) == 1


def test_every_kopf_handler_runs_on_the_event_loop() -> None:
    """kopf runs plain ``def`` handlers in worker threads, where the App's loop state is unsafe."""
    import inspect

    from kubevec.controller.operator import build_registry

    settings = Settings(cluster_name="unit", server=ServerSettings(health_port=0, metrics_port=0))
    registry = build_registry(settings=settings)
    handlers = [
        *registry._watching.get_all_handlers(),
        *registry._activities.get_all_handlers(),
    ]
    assert handlers
    for handler in handlers:
        assert inspect.iscoroutinefunction(handler.fn), handler.id


async def test_a_deleted_crd_purges_its_instances(app: App) -> None:
    await app.engine.prepare()
    stopper = asyncio.create_task(app.engine.run())
    try:
        for i in range(5):
            body = {
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": f"w{i}", "namespace": "a"},
                "spec": {"size": i},
            }
            app.events.observe_object(
                group="example.com", version="v1", plural="widgets", kind="Widget", event_type="ADDED", body=body
            )
        app.events.observe_object(
            group="", version="v1", plural="configmaps", kind="ConfigMap", event_type="ADDED", body=configmap("keep")
        )
        await app.engine.wait_idle()
        assert len(app.engine.known["instances"]) == 6
        crd = {
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}},
        }
        app.events.observe_crd(event_type="DELETED", body=crd)
        for _ in range(100):
            if len(app.engine.known["instances"]) == 1 and not app.events.purges:
                break
            await asyncio.sleep(0.02)
        assert list(app.engine.known["instances"]) == ["unit/a/core/v1/ConfigMap/keep"]
        assert [i async for i, _ in app.store.iter_ids("instances")] == ["unit/a/core/v1/ConfigMap/keep"]
    finally:
        stopper.cancel()


def widget_crd(*versions: str) -> dict[str, object]:
    """The Widget CRD serving ``versions`` (the last one stored)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "uid": "u", "resourceVersion": str(len(versions))},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": v == versions[-1],
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
                for v in versions
            ],
        },
    }


def observe_widget(app: App, version: str, name: str) -> None:
    body = {"apiVersion": f"example.com/{version}", "kind": "Widget", "metadata": {"name": name, "namespace": "a"}}
    app.events.observe_object(
        group="example.com", version=version, plural="widgets", kind="Widget", event_type=None, body=body
    )


async def test_a_crd_moving_to_a_new_version_purges_the_old_versions_instances(app: App) -> None:
    await app.engine.prepare()
    stopper = asyncio.create_task(app.engine.run())
    try:
        app.events.observe_crd(event_type=None, body=widget_crd("v1alpha1"))
        for name in ("w1", "w2"):
            observe_widget(app, "v1alpha1", name)
        await app.engine.wait_idle()
        app.events.observe_crd(event_type="MODIFIED", body=widget_crd("v1alpha1", "v1"))
        observe_widget(app, "v1alpha1", "w3")  # the old watch, before kopf stops it: ignored
        for name in ("w1", "w2"):
            observe_widget(app, "v1", name)  # the new watch lists every object again
        for _ in range(100):
            await app.engine.wait_idle()
            if not app.events.purges:
                break
            await asyncio.sleep(0.02)
        await app.engine.wait_idle()
        stored = sorted([i async for i, _ in app.store.iter_ids("instances")])
        assert stored == ["unit/a/example.com/v1/Widget/w1", "unit/a/example.com/v1/Widget/w2"]
        assert sorted(app.engine.known["instances"]) == stored
        assert not app.resync_requested
        app.events.observe_crd(event_type="MODIFIED", body=widget_crd("v1alpha1"))  # v1 withdrawn again
        assert app.resync_requested  # the v1alpha1 listing may have been dropped as late: list again
    finally:
        stopper.cancel()
