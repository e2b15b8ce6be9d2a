"""The resync's garbage collection, with the memory store and a fake cluster reader."""

from __future__ import annotations

from typing import Any

from backends.memory import MemoryStore
from controller.app import App
from controller.kube import ApiResource, KubeError
from controller.settings import ServerSettings, Settings, SyncSettings
from inference.identity import ResourceRef
from tests.fakes import CountingEmbedder

VERBS = ("get", "list", "watch")


def api_resource(api_version: str, plural: str, kind: str) -> ApiResource:
    return ApiResource(
        ref=ResourceRef.from_api_version(api_version, kind=kind, plural=plural), namespaced=True, verbs=VERBS
    )


CONFIGMAPS = api_resource("v1", "configmaps", "ConfigMap")
ROLES = api_resource("rbac.authorization.k8s.io/v1", "roles", "Role")
WIDGETS = api_resource("example.com/v1", "widgets", "Widget")


class FakeReader:
    """Discovery, lists and APIServices as a test sets them; raises where told to."""

    def __init__(self) -> None:
        self.resources: list[ApiResource] = []
        self.objects: dict[str, list[dict[str, Any]]] = {}
        self.apiservice_groups: list[str] = []
        self.forbidden: set[str] = set()

    async def discover(self) -> list[ApiResource]:
        return list(self.resources)

    async def list_objects(self, resource: ApiResource, *, namespace: str | None = None) -> list[dict[str, Any]]:
        if resource.plural in self.forbidden:
            raise KubeError(f"GET {resource.list_path()} failed: HTTP 403 Forbidden", reason="HTTP 403 Forbidden")
        if resource.plural == "apiservices":
            return [
                {"metadata": {"name": f"v1.{g}"}, "spec": {"group": g} if g else {}} for g in self.apiservice_groups
            ]
        return [dict(o) for o in self.objects.get(resource.plural, [])]

    def close(self) -> None:
        pass


async def prepared_app(reader: FakeReader) -> App:
    settings = Settings(
        cluster_name="u",
        server=ServerSettings(health_port=0, metrics_port=0),
        sync=SyncSettings(builtin_capabilities=False),
    )
    app = App(settings=settings, store=MemoryStore(), embedder=CountingEmbedder(), kube=reader)  # type: ignore[arg-type]
    await app.engine.prepare()
    return app


def obj(kind: str, api_version: str, name: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "a"}}


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
