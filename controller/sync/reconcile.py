"""The resync: list what the cluster implies, and make the store exactly that (events only make it fast).

At start-up and every resync interval the whole cluster is listed, the documents it implies are
built, and each is compared with the store's own ids and hashes as it is built
(:meth:`SyncEngine.offer`: queued at once if it differs, so embedding overlaps the listing, and
dropped if not, so only ids are kept); then :meth:`SyncEngine.collect` deletes what is stored but
no longer implied. The engine owns both decisions. The snapshot of the store is taken *before*
listing, so an object created meanwhile is never deleted, and a document an event changed meanwhile
is never overwritten with the older listed state. Any failed list aborts the resync: garbage is
never collected from a partial view. What could not be seen (an API group missing from discovery, a
resource whose list is forbidden) keeps its stored documents.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from opentelemetry.trace import Span

from kubevec.controller.kube.client import ClusterReader
from kubevec.controller.kube.resources import ApiResource
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.runtime.tracing import tracer
from kubevec.controller.settings import Settings
from kubevec.controller.sync.documents import DocumentBuilder, Unchanged
from kubevec.controller.sync.engine import SyncEngine
from kubevec.controller.sync.handover import Handover
from kubevec.controller.sync.policy import GROUP, PLURAL, EffectivePolicy, SyncPolicy, listable
from kubevec.core.errors import InferenceError, KubeError, KubeForbidden, PolicyError
from kubevec.inference.capabilities import describe_crd
from kubevec.inference.documents import CAPABILITIES, COLLECTIONS, INSTANCES, Collection, Document, with_built_from
from kubevec.inference.identity import CORE, ResourceRef, group_of_resource_id, parse_instance_id
from kubevec.inference.providers.llm import LLMDescriber

logger = logging.getLogger(__name__)

CRD_RESOURCE: Final = ApiResource(
    ref=ResourceRef(
        group="apiextensions.k8s.io", version="v1", plural="customresourcedefinitions", kind="CustomResourceDefinition"
    ),
    namespaced=False,
    verbs=("get", "list", "watch"),
)
APISERVICES: Final = ApiResource(
    ref=ResourceRef(group="apiregistration.k8s.io", version="v1", plural="apiservices", kind="APIService"),
    namespaced=False,
    verbs=("get", "list", "watch"),
)


@dataclasses.dataclass(frozen=True)
class Unseen:
    """What a resync could not see: API groups missing from discovery, resources it may not list."""

    groups: frozenset[str] = frozenset()
    kinds: frozenset[tuple[str, str]] = frozenset()

    def with_kind(self, group: str, kind: str) -> Unseen:
        return dataclasses.replace(self, kinds=self.kinds | {(group, kind)})

    def covers(self, collection: Collection, document_id: str) -> bool:
        """Whether a stored document belongs to something unseen (judged from its id alone)."""
        if collection == CAPABILITIES:
            return group_of_resource_id(document_id) in self.groups
        parsed = parse_instance_id(document_id)
        return parsed is not None and (parsed.group in self.groups or (parsed.group, parsed.kind) in self.kinds)

    def __str__(self) -> str:
        groups = ",".join(sorted(g or CORE for g in self.groups))
        kinds = ",".join(sorted(f"{k}.{g}" if g else k for g, k in self.kinds))
        return f"groups={groups or '-'} kinds={kinds or '-'}"


@dataclasses.dataclass(frozen=True)
class Desired:
    """The ids the cluster implies (documents were offered to the engine as they were built)."""

    ids: dict[Collection, set[str]]
    unseen: Unseen


class ClusterState:
    """Lists the cluster and builds every document it implies (see the module docstring)."""

    def __init__(
        self,
        *,
        kube: ClusterReader,
        settings: Settings,
        builder: DocumentBuilder,
        metrics: Metrics,
        llm: LLMDescriber | None = None,
        handover: Handover | None = None,
    ) -> None:
        self._kube = kube
        self._handover = handover
        self._settings = settings
        self._builder = builder
        self._metrics = metrics
        self._llm = llm
        self._openapi: dict[tuple[str, str], Mapping[str, Any]] = {}  # one resync's built-in schemas
        #: The last discovery's resources by (group, kind): what a warning's object is read through.
        self.resources: dict[tuple[str, str], ApiResource] = {}

    async def desired(
        self, offer: Callable[[Document], object], pace: Callable[[], Awaitable[object]] | None = None
    ) -> Desired:
        """Every document the cluster implies, handed to ``offer`` page by page; the ids, and what was unseen.

        Only ids are kept: a document in sync with the store is dropped as soon as it is compared,
        and one that is not is queued for writing at once, so embedding overlaps the listing.
        ``pace`` is awaited after each page and each CRD built: the writer's backpressure (the engine's
        :meth:`~kubevec.controller.sync.engine.SyncEngine.room`), so listing never runs far ahead of it.

        Discovery can be incomplete while the API server starts (the aggregated ``/apis`` list fills
        in over seconds) or while an aggregated API's backend is down: a group that still has an
        APIService but was not discovered is unseen. So is a resource whose list is forbidden (RBAC
        narrower than the policy): it is skipped with an error, the rest of the resync goes on.
        """
        ids: dict[Collection, set[str]] = {c: set() for c in COLLECTIONS}

        def take(document: Document | Unchanged) -> None:
            ids[document.collection].add(document.id)
            if isinstance(document, Document):
                offer(document)

        resources = await self._kube.discover()
        self.resources = {(r.ref.group, r.ref.kind): r for r in resources}
        policy = await self._policy(resources)
        services = await self._kube.list_objects(APISERVICES)
        served = {str((s.get("spec") or {}).get("group") or "") for s in services}
        unseen = Unseen(groups=frozenset(served - {r.ref.group for r in resources}))
        crd_names = set()
        changed: list[str] = []
        await self._before_listing(CRD_RESOURCE)
        # CRD bodies are large (a real corpus of 118 is 14 MB of JSON, ten times that as Python
        # objects) and rarely change: list their metadata, fetch only those not stored as they are.
        async for page in self._kube.iter_pages(CRD_RESOURCE, metadata_only=True):
            for item in page:
                name = str(item["metadata"]["name"])
                crd_names.add(name)
                unchanged = self._builder.capability_unchanged(item["metadata"])
                if unchanged is not None:
                    take(unchanged)
                else:
                    changed.append(name)
            del page
        for name in changed:  # one body at a time
            crd = await self._kube.get_object(CRD_RESOURCE, name)
            if crd is None:  # deleted since the listing: its document goes
                continue
            document = self._builder.capability(crd)
            if isinstance(document, Document):
                take(await self._refined(crd, document))
            elif document is not None:
                take(document)
            del crd
            if pace is not None:
                await pace()
        if self._settings.sync.builtin_capabilities:
            self._openapi.clear()  # schemas are held for one resync only: the next one rarely needs any
            hashes = await self._schema_hashes()
            for resource in resources:
                if resource.ref.resource_id not in crd_names and "list" in resource.verbs:
                    key = self._builder.builtin_key(
                        resource, schema_hash=hashes.get((resource.ref.group, resource.ref.version))
                    )
                    unchanged = self._builder.builtin_unchanged(resource, key=key)
                    if unchanged is not None:  # described from this very schema before: no fetch, no describe
                        take(unchanged)
                        continue
                    document = self._builder.builtin(resource, components=await self._components(resource), key=key)
                    if document is not None:
                        take(document)
            self._openapi.clear()
        await self._warnings(resources)
        groups = self._settings.sync.api_groups
        for resource in resources:
            if not listable(group=resource.ref.group, plural=resource.ref.plural, verbs=resource.verbs, groups=groups):
                continue
            if not policy.watches(group=resource.ref.group, kind=resource.ref.kind, plural=resource.ref.plural):
                continue
            await self._before_listing(resource)
            try:
                async for page in self._kube.iter_pages(resource, namespace=self._settings.namespace):
                    for obj in page:  # built a page at a time: the bodies go, the documents stay
                        if policy.admits(obj):
                            document = self._builder.instance(
                                obj, plural=resource.ref.plural, policy=policy.instance_policy
                            )
                            if document is not None:
                                take(document)
                    del page
                    if pace is not None:
                        await pace()
            except KubeForbidden as exc:  # anything else aborts the resync: never collect from a partial view
                unseen = unseen.with_kind(resource.ref.group, resource.ref.kind)
                self._metrics.errors.labels(stage="forbidden").inc()
                logger.error(
                    "Skipped a resource kubevec may not list resource=%s error=%s", resource.ref.resource_id, exc.reason
                )
                continue
        return Desired(ids=ids, unseen=unseen)

    async def _warnings(self, resources: list[ApiResource]) -> None:
        """Every Warning Event, listed before the objects they are about (their documents carry the latest)."""
        events = next((r for r in resources if r.ref.group == "" and r.ref.plural == "events"), None)
        if events is None or "list" not in events.verbs:
            return
        warnings: list[Mapping[str, Any]] = []
        try:
            async for page in self._kube.iter_pages(events, namespace=self._settings.namespace):
                warnings += [event for event in page if event.get("type") == "Warning"]
        except KubeForbidden as exc:  # documents keep the warnings the watch gave
            self._metrics.errors.labels(stage="forbidden").inc()
            logger.error("Could not list Events; warnings come from the watch alone error=%s", exc.reason)
            return
        self._builder.warnings.replace(warnings)

    async def _before_listing(self, resource: ApiResource) -> None:
        """At start-up, list a resource kopf watches only once kopf's watch of it has begun (``controller/sync/handover.py``)."""
        handover = self._handover
        if handover is None or not handover.open:
            return
        if handover.shares(group=resource.ref.group, plural=resource.ref.plural, verbs=resource.verbs, preferred=True):
            await handover.before_listing((resource.ref.group, resource.ref.plural))

    async def _policy(self, resources: list[ApiResource]) -> EffectivePolicy:
        """The SyncPolicies as listed now, not as events have delivered them so far.

        At start-up the first resync may run before kopf has delivered the policies: with the
        event-fed policy it would index what a policy excludes, embed it, and delete it again.
        An invalid policy is skipped here (the event path reports it).
        """
        resource = next((r for r in resources if (r.ref.group, r.ref.plural) == (GROUP, PLURAL)), None)
        if resource is None:
            return EffectivePolicy()  # the SyncPolicy CRD is not installed: the defaults apply
        policies = []
        for body in await self._kube.list_objects(resource):
            with contextlib.suppress(PolicyError):
                policies.append(SyncPolicy.from_body(body))
        return EffectivePolicy.merge(p.spec for p in sorted(policies, key=lambda p: p.name))

    async def _refined(self, crd: Mapping[str, Any], document: Document) -> Document:
        if self._llm is None:
            return document
        try:
            refined = (await self._llm.refine(describe_crd(crd, cluster=self._builder.cluster))).to_document()
        except InferenceError:
            return document
        # The same source: kopf's events on a restart then find it unchanged instead of writing the unrefined text.
        return with_built_from(refined, document.built_from) if document.built_from else refined

    async def _schema_hashes(self) -> dict[tuple[str, str], str]:
        try:
            return await self._kube.openapi_hashes()
        except KubeError as exc:
            logger.warning("Read no OpenAPI index error=%s", exc.reason)
            return {}

    async def _components(self, resource: ApiResource) -> Mapping[str, Any]:
        key = (resource.ref.group, resource.ref.version)
        if key not in self._openapi:
            try:
                self._openapi[key] = await self._kube.openapi_components(resource.ref.group, resource.ref.version)
            except KubeError as exc:
                logger.warning("Read no OpenAPI schema group=%s version=%s error=%s", *key, exc.reason)
                self._openapi[key] = {}
        return self._openapi[key]


class Reconciler:
    """One resync at a time: snapshot the store, list the cluster, let the engine apply the diff."""

    def __init__(self, *, engine: SyncEngine, cluster: ClusterState, metrics: Metrics) -> None:
        self._engine = engine
        self._cluster = cluster
        self._metrics = metrics
        self.last_full_resync: float | None = None

    async def resync(self) -> None:
        with tracer().start_as_current_span("kubevec.resync") as span:
            await self._resync(span)

    async def _resync(self, span: Span) -> None:
        started = time.monotonic()
        # Before listing (see the module docstring); at start-up, the one just read to seed the engine.
        snapshot = self._engine.prepared_snapshot() or await self._engine.snapshot()
        upserts = 0

        def offer(document: Document) -> None:
            nonlocal upserts
            upserts += self._engine.offer(snapshot, document)

        with tracer().start_as_current_span("kubevec.resync.list") as listing:
            desired = await self._cluster.desired(offer, self._engine.room)
            listing.set_attribute("kubevec.capabilities", len(desired.ids[CAPABILITIES]))
            listing.set_attribute("kubevec.instances", len(desired.ids[INSTANCES]))
        with tracer().start_as_current_span("kubevec.resync.diff") as diff:
            collected = await self._engine.collect(snapshot=snapshot, desired=desired.ids, keep=desired.unseen.covers)
            result = dataclasses.replace(collected, upserts=upserts)
            diff.set_attributes(
                {"kubevec.upserts": result.upserts, "kubevec.deletes": result.deletes, "kubevec.kept": result.kept}
            )
        span.set_attribute("kubevec.documents", sum(len(d) for d in desired.ids.values()))
        self._engine.resynced()
        await self._engine.prune_history()
        self.last_full_resync = time.time()
        self._metrics.last_resync.set(self.last_full_resync)
        self._metrics.resync_seconds.observe(time.monotonic() - started)
        if result.kept:
            logger.warning(
                "Kept documents of resources that could not be listed %s kept=%d", desired.unseen, result.kept
            )
        logger.info(
            "Resynced the store capabilities=%d instances=%d upserts=%d deletes=%d seconds=%.2f",
            len(desired.ids[CAPABILITIES]),
            len(desired.ids[INSTANCES]),
            result.upserts,
            result.deletes,
            time.monotonic() - started,
        )
