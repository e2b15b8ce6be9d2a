"""A fake cluster for the resync's unit tests: discovery, lists and APIServices as a test sets them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from kubevec.backends.memory import MemoryStore
from kubevec.controller.app import App
from kubevec.controller.kube.errors import kube_error
from kubevec.controller.kube.resources import ApiResource
from kubevec.controller.settings import ServerSettings, Settings, SyncSettings
from kubevec.inference.identity import ResourceRef
from tests.doubles.embedders import CountingEmbedder

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
        self.failing: set[str] = set()
        self.failing_later: set[str] = set()
        self.during_list: Callable[[], Awaitable[None]] | None = None  # events landing mid-listing
        self.schema_hash = "h1"  # of core/v1 in the /openapi/v3 index
        self.fetched: list[str] = []  # group-versions whose schemas were read
        self.bodies: list[str] = []  # names of objects whose whole bodies were read
        self.during_get: Callable[[str], Awaitable[None]] | None = None

    async def discover(self) -> list[ApiResource]:
        return list(self.resources)

    async def list_objects(self, resource: ApiResource, *, namespace: str | None = None) -> list[dict[str, Any]]:
        if resource.ref.plural in self.failing:
            raise kube_error(
                f"GET {resource.list_path()} failed: HTTP 500", status=500, reason="HTTP 500 Internal Server Error"
            )
        if resource.ref.plural == "configmaps" and self.during_list is not None:
            await self.during_list()
        if resource.ref.plural in self.forbidden:
            raise kube_error(
                f"GET {resource.list_path()} failed: HTTP 403 Forbidden", status=403, reason="HTTP 403 Forbidden"
            )
        if resource.ref.plural == "apiservices":
            return [
                {"metadata": {"name": f"v1.{g}"}, "spec": {"group": g} if g else {}} for g in self.apiservice_groups
            ]
        return [dict(o) for o in self.objects.get(resource.ref.plural, [])]

    async def iter_pages(
        self,
        resource: ApiResource,
        *,
        namespace: str | None = None,
        page_size: int | None = None,
        metadata_only: bool = False,
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """Pages of two; a plural in ``failing_later`` fails after its first page."""
        listed = await self.list_objects(resource, namespace=namespace)
        if metadata_only:
            listed = [{"metadata": o["metadata"]} for o in listed]
        else:
            self.bodies.extend(str(o["metadata"]["name"]) for o in listed)
        for start in range(0, max(len(listed), 1), 2):
            if start and resource.ref.plural in self.failing_later:
                raise kube_error(
                    f"GET {resource.list_path()} failed: HTTP 500", status=500, reason="HTTP 500 Internal Server Error"
                )
            yield listed[start : start + 2]

    async def get_object(self, resource: ApiResource, name: str, *, namespace: str | None = None) -> Any:
        self.bodies.append(name)
        if self.during_get is not None:
            await self.during_get(name)
        found = [o for o in self.objects.get(resource.ref.plural, []) if o["metadata"]["name"] == name]
        return dict(found[0]) if found else None

    async def openapi_hashes(self) -> dict[tuple[str, str], str]:
        return {("", "v1"): self.schema_hash}

    async def openapi_components(self, group: str, version: str) -> dict[str, Any]:
        self.fetched.append(f"{group}/{version}")
        return {}

    def close(self) -> None:
        pass


async def prepared_app(reader: FakeReader) -> App:
    settings = Settings(
        cluster_name="u",
        server=ServerSettings(health_port=0, metrics_port=0),
        sync=SyncSettings(builtin_capabilities=False),
    )
    app = App(settings=settings, store=MemoryStore(), embedder=CountingEmbedder(), kube=reader)
    await app.engine.prepare()
    return app


def obj(kind: str, api_version: str, name: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "a"}}


def configmap(name: str, **labels: str) -> dict[str, Any]:
    return {**obj("ConfigMap", "v1", name), "metadata": {"name": name, "namespace": "a", "labels": labels}}


def cm_id(name: str) -> str:
    return f"u/a/core/v1/ConfigMap/{name}"


async def event(app: App, body: dict[str, Any], *, deleted: bool = False, flush: bool = True) -> None:
    """A watch event that is written before the listing returns."""
    app.events.observe_object(
        group="",
        version="v1",
        plural="configmaps",
        kind="ConfigMap",
        event_type="DELETED" if deleted else "MODIFIED",
        body=body,
    )
    if flush:
        await app.engine.flush()


async def synced(reader: FakeReader, *objects: dict[str, Any]) -> App:
    reader.resources = [CONFIGMAPS]
    reader.apiservice_groups = [""]
    reader.objects = {"configmaps": list(objects)}
    app = await prepared_app(reader)
    await app.resync()
    await app.engine.flush()
    return app
