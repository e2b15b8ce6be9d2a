"""The controller's state and work, independent of kopf: kopf handlers only call ``observe_*``.

Correctness comes from the resync, not from events (events only make it fast): at start-up and
every resync interval the whole cluster is listed, the documents it implies are built, and the
result is diffed against the store's own ids and hashes. The diff is taken against a store
snapshot read *before* listing, so an object created meanwhile is never deleted, and a document
that an event changed meanwhile is never overwritten with the older listed state. Any failed list
aborts the diff: garbage is never collected from a partial view.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from backends import VectorStore
from backends.factory import open_store
from controller.engine import SyncEngine
from controller.health import HealthServer
from controller.kube import ApiResource, KubeError, KubeReader
from controller.metrics import Metrics
from controller.peering import PeeringIdentity
from controller.peering import follow as follow_peering
from controller.policy import DEFAULT_EXCLUDED, SECRETS, EffectivePolicy, PolicyError, SyncPolicy
from controller.settings import Settings
from controller.status import SyncStatus, write_status
from inference.capabilities import describe_builtin, describe_crd
from inference.config import make_embedder
from inference.documents import CAPABILITIES, COLLECTIONS, INSTANCES, Collection, Document, InferenceError
from inference.embedders.base import Embedder
from inference.identity import CORE, ResourceRef, group_of_resource_id, parse_instance_id
from inference.instances import build_instance
from inference.llm import LLMDescriber

logger = logging.getLogger(__name__)

CRD_RESOURCE: Final = ApiResource(
    ref=ResourceRef(
        group="apiextensions.k8s.io", version="v1", plural="customresourcedefinitions", kind="CustomResourceDefinition"
    ),
    namespaced=False,
    verbs=("get", "list", "watch"),
)


def listable(
    *,
    group: str,
    plural: str,
    verbs: tuple[str, ...] | list[str],
    preferred: bool = True,
    groups: Sequence[str] | None = None,
) -> bool:
    """The static part of "are this kind's instances indexed": listable, preferred, not excluded by default,
    and in ``groups`` (the named API groups RBAC grants; None: all; the core group always)."""
    if groups is not None and group and group not in groups:
        return False
    return preferred and "list" in verbs and "watch" in verbs and (group, plural) not in DEFAULT_EXCLUDED


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


def watchable(
    *,
    group: str,
    plural: str,
    verbs: tuple[str, ...] | list[str],
    preferred: bool = True,
    groups: Sequence[str] | None = None,
) -> bool:
    """Whether kopf watches a kind: every listable one but Secrets (read by the resync only, when opted in)."""
    listed = listable(group=group, plural=plural, verbs=verbs, preferred=preferred, groups=groups)
    return (group, plural) != SECRETS and listed


class App:
    def __init__(
        self,
        *,
        settings: Settings,
        store: VectorStore | None = None,
        embedder: Embedder | None = None,
        kube: KubeReader | None = None,
        peering: PeeringIdentity | None = None,
    ) -> None:
        self.settings = settings
        self.peering = peering
        self.active = peering is None
        self.metrics = Metrics()
        self.metrics.active.set(1 if peering is None else 0)
        self.store = store or open_store(settings.store)
        self.embedder = embedder or make_embedder(settings.embedder)
        self.kube = kube or KubeReader(kubeconfig=settings.kubeconfig)
        self.engine = SyncEngine(
            store=self.store,
            embedder=self.embedder,
            metrics=self.metrics,
            collection_names={c: settings.collection(c) for c in COLLECTIONS},
            debounce=settings.sync.debounce_seconds,
            batch_size=settings.sync.batch_size,
            max_backoff=settings.sync.max_backoff_seconds,
        )
        llm = settings.describer.llm
        self.llm = (
            LLMDescriber(
                provider=llm.provider,
                url=llm.url,
                model=llm.model,
                api_key=llm.api_key.get_secret_value() if llm.api_key else None,
                cache_dir=llm.cache_dir,
                requests_per_minute=llm.requests_per_minute,
                timeout=llm.timeout_seconds,
            )
            if llm.enabled
            else None
        )
        self.engine.set_active(self.active)
        self.policies: dict[str, SyncPolicy] = {}
        self.policy = EffectivePolicy()
        self.ready = False
        self.cluster_error: str | None = None  # set while the API server cannot be reached
        self.last_full_resync: float | None = None
        self.last_resync_error: str | None = None
        self._resync_now = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._purges: set[asyncio.Task[None]] = set()  # each removes itself when done
        self.health = HealthServer(
            host=settings.server.host,
            health_port=settings.server.health_port,
            metrics_port=settings.server.metrics_port,
            metrics=self.metrics,
            not_ready=self.not_ready,
        )
        self._reported_bad: set[str] = set()
        self._openapi_cache: dict[tuple[str, str], Mapping[str, Any]] = {}
        self._resync_lock = asyncio.Lock()

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        await self.health.start()
        self._tasks.append(asyncio.create_task(self._prepare_and_run(), name="kubevec-main"))
        self._tasks.append(asyncio.create_task(self._probe_cluster(), name="kubevec-probe"))

    async def stop(self) -> None:
        for task in [*self._tasks, *self._purges]:
            task.cancel()
        for task in [*self._tasks, *self._purges]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self.engine.queue and self.engine.active and not self.engine.degraded:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.engine.flush(), timeout=10)
        await self.health.stop()
        if self.llm:
            await self.llm.close()
        await self.store.close()
        self.kube.close()

    async def _prepare_and_run(self) -> None:
        backoff = 0.5
        while True:  # the store may be down at start-up: wait for it, visibly
            try:
                await self.engine.prepare()
                break
            except Exception as exc:
                self.engine.degraded = True
                self.engine.last_error = f"{type(exc).__name__}: {exc}"
                self.metrics.errors.labels(stage="startup").inc()
                logger.error("Failed to prepare the store, will retry backoff=%.1fs error=%s", backoff, exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, self.settings.sync.max_backoff_seconds)
        self.engine.degraded = False
        flusher = asyncio.create_task(self.engine.run(), name="kubevec-flush")
        self._tasks.append(flusher)
        if self.peering is not None:
            following = follow_peering(kube=self.kube, me=self.peering, on_change=self._set_active)
            self._tasks.append(asyncio.create_task(following, name="kubevec-peering"))
        await self._resync_loop()

    def _set_active(self, active: bool) -> None:
        """Leader election outcome: only the active replica writes; becoming active resyncs at once."""
        self.active = active
        self.engine.set_active(active)
        self.metrics.active.set(1 if active else 0)
        if active:
            self.request_resync()

    async def _probe_cluster(self) -> None:
        """Whether the API server answers, every few seconds: readiness and a metric follow it.

        kopf retries its watches on its own and says so only in logs; without this probe the
        controller would stay ready while it can neither list nor watch anything.
        """
        interval = self.settings.sync.cluster_probe_seconds
        lost_at = 0.0
        while True:
            try:
                await self.kube.get("/version", request_timeout=min(5.0, interval))
                if self.cluster_error is not None:
                    logger.info("Reached the Kubernetes API again after=%.0fs", time.monotonic() - lost_at)
                    self.cluster_error = None
                    self.request_resync()  # events may have been missed meanwhile
            except KubeError as exc:
                if self.cluster_error is None:
                    lost_at = time.monotonic()
                    logger.error("Lost the Kubernetes API, not ready until it answers error=%s", exc.reason)
                self.cluster_error = exc.reason
                self.metrics.errors.labels(stage="cluster").inc()
            self.metrics.cluster_reachable.set(0 if self.cluster_error else 1)
            await asyncio.sleep(interval)

    async def _resync_loop(self) -> None:
        interval = self.settings.sync.resync_interval_seconds
        retry = 5.0
        while True:
            wait = interval
            try:
                if self.active:
                    await self.resync()
                    await self.engine.wait_idle()
                if not self.engine.degraded:
                    self.ready = True
                    self.metrics.ready.set(1)
                retry = 5.0
            except Exception as exc:
                self.last_resync_error = f"{type(exc).__name__}: {exc}"
                self.metrics.errors.labels(stage="resync").inc()
                logger.error("Failed a full resync, will retry in=%.0fs error=%s", retry, self.last_resync_error)
                wait, retry = retry, min(retry * 2, interval)  # a failed resync is retried well within the interval
            await self._report_status()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._resync_now.wait(), timeout=wait if self.ready else min(wait, 5))
            self._resync_now.clear()

    def request_resync(self) -> None:
        self._resync_now.set()

    # -- events (called by kopf handlers) ----------------------------------------------------------

    def observe_object(
        self, *, group: str, version: str, plural: str, kind: str, event_type: str | None, body: Mapping[str, Any]
    ) -> None:
        received = time.monotonic()
        ref = ResourceRef(group=group, version=version, plural=plural, kind=kind)
        self.metrics.events.labels(resource=ref.resource_id, type=event_type or "LIST").inc()
        if not self.policy.watches(group=group, kind=kind, plural=plural):
            return
        meta = body.get("metadata") or {}
        document_id = ref.instance_id(
            cluster=self.settings.cluster_name, namespace=meta.get("namespace"), name=str(meta.get("name", ""))
        )
        if event_type == "DELETED" or not self.policy.admits(body):
            self.engine.submit_delete(INSTANCES, document_id, received=received)
            return
        document = self._instance_document(body, plural=plural)
        if document is not None:
            self.engine.submit(document, received=received)

    def observe_crd(self, *, event_type: str | None, body: Mapping[str, Any]) -> None:
        received = time.monotonic()
        self.metrics.events.labels(resource=CRD_RESOURCE.name, type=event_type or "LIST").inc()
        name = str((body.get("metadata") or {}).get("name", ""))
        if event_type == "DELETED":
            self.engine.submit_delete(CAPABILITIES, name, received=received)
            spec = body.get("spec") or {}
            kind = (spec.get("names") or {}).get("kind")
            if kind:
                task = asyncio.create_task(self._purge(group=str(spec.get("group", "")), kind=str(kind)))
                self._purges.add(task)
                task.add_done_callback(self._purges.discard)
            return
        document = self._capability_document(body)
        if document is not None:
            self.engine.submit(document, received=received)

    def observe_policy(self, *, event_type: str | None, body: Mapping[str, Any]) -> None:
        name = str((body.get("metadata") or {}).get("name", ""))
        if event_type == "DELETED":
            self.policies.pop(name, None)
        else:
            try:
                self.policies[name] = SyncPolicy.from_body(body)
            except PolicyError as exc:
                self.metrics.errors.labels(stage="policy").inc()
                logger.error("Ignored an invalid SyncPolicy name=%s error=%s", name, exc)
                self.policies.pop(name, None)
                self.last_resync_error = str(exc)
        new = EffectivePolicy.merge(policy.spec for _, policy in sorted(self.policies.items()))
        if new != self.policy:
            self.policy = new
            logger.info("Applied SyncPolicies count=%d", len(self.policies))
            self.request_resync()

    async def _purge(self, *, group: str, kind: str) -> None:
        try:
            await self.engine.purge_resource(group=group, kind=kind)
            logger.info("Purged instances of a deleted CRD group=%s kind=%s", group, kind)
        except Exception as exc:
            logger.warning("Failed to purge instances group=%s kind=%s error=%s", group, kind, exc)

    # -- documents ---------------------------------------------------------------------------------

    def _instance_document(self, body: Mapping[str, Any], *, plural: str) -> Document | None:
        try:
            return build_instance(
                body, plural=plural, cluster=self.settings.cluster_name, policy=self.policy.instance_policy
            ).to_document()
        except InferenceError as exc:
            self._report_bad(f"{plural}/{(body.get('metadata') or {}).get('name')}", exc)
            return None

    def _capability_document(self, body: Mapping[str, Any]) -> Document | None:
        try:
            return describe_crd(body, cluster=self.settings.cluster_name).to_document()
        except InferenceError as exc:
            self._report_bad(f"crd/{(body.get('metadata') or {}).get('name')}", exc)
            return None

    def _report_bad(self, identity: str, exc: Exception) -> None:
        self.metrics.errors.labels(stage="inference").inc()
        key = f"{identity}:{exc}"
        if key not in self._reported_bad:  # once per object and problem, not on every event
            self._reported_bad.add(key)
            logger.warning("Skipped an object that cannot be indexed object=%s error=%s", identity, exc)

    # -- resync ------------------------------------------------------------------------------------

    async def resync(self) -> None:
        """Make the store exactly what the cluster implies (see the module docstring)."""
        async with self._resync_lock:
            started = time.monotonic()
            snapshot = await self.engine.reload_known()
            desired, unseen = await self._desired()
            submitted = deleted = kept = 0
            async with self.engine.lock:
                for collection in COLLECTIONS:
                    known = self.engine.known[collection]
                    for document_id, stored_hash in snapshot[collection].items():
                        if (
                            document_id not in desired[collection]
                            and not self.engine.pending(collection, document_id)
                            and known.get(document_id) == stored_hash
                        ):
                            if unseen.covers(collection, document_id):
                                kept += 1  # not listed this time (group undiscovered, list forbidden): no proof
                                continue
                            self.engine.submit_delete(collection, document_id)
                            deleted += 1
                    for document_id, document in desired[collection].items():
                        before = snapshot[collection].get(document_id)
                        if (
                            before != document.content_hash
                            and known.get(document_id) == before
                            and not self.engine.pending(collection, document_id)
                        ):
                            self.engine.submit(document)
                            submitted += 1
            self.last_full_resync = time.time()
            self.last_resync_error = None
            self.metrics.last_resync.set(self.last_full_resync)
            self.metrics.resync_seconds.observe(time.monotonic() - started)
            if kept:
                logger.warning("Kept documents of resources that could not be listed %s kept=%d", unseen, kept)
            logger.info(
                "Resynced the store capabilities=%d instances=%d upserts=%d deletes=%d seconds=%.2f",
                len(desired[CAPABILITIES]),
                len(desired[INSTANCES]),
                submitted,
                deleted,
                time.monotonic() - started,
            )

    async def _desired(self) -> tuple[dict[Collection, dict[str, Document]], Unseen]:
        """Every document the cluster implies, and what could not be seen this time.

        Discovery can be incomplete while the API server starts (the aggregated ``/apis`` list fills
        in over seconds) or while an aggregated API's backend is down: a group that still has an
        APIService but was not discovered is unseen. So is a resource whose list is forbidden (RBAC
        narrower than the policy): it is skipped with an error, the rest of the resync goes on. The
        stored documents of what is unseen are kept, not collected.
        """
        desired: dict[Collection, dict[str, Document]] = {c: {} for c in COLLECTIONS}
        resources = await self.kube.discover()
        served = {str((s.get("spec") or {}).get("group") or "") for s in await self.kube.list_objects(APISERVICES)}
        unseen = Unseen(groups=frozenset(served - {r.group for r in resources}))
        crds = await self.kube.list_objects(CRD_RESOURCE)
        crd_names = set()
        for crd in crds:
            crd_names.add(str(crd["metadata"]["name"]))
            document = self._capability_document(crd)
            if document is not None:
                if self.llm is not None:
                    document = await self._refined(crd, document)
                desired[CAPABILITIES][document.id] = document
        if self.settings.sync.builtin_capabilities:
            for resource in resources:
                if resource.name not in crd_names and "list" in resource.verbs:
                    document = await self._builtin_document(resource)
                    if document is not None:
                        desired[CAPABILITIES][document.id] = document
        for resource in resources:
            groups = self.settings.sync.api_groups
            if not listable(group=resource.group, plural=resource.plural, verbs=resource.verbs, groups=groups):
                continue
            if not self.policy.watches(group=resource.group, kind=resource.kind, plural=resource.plural):
                continue
            try:
                listed = await self.kube.list_objects(resource, namespace=self.settings.namespace)
            except KubeError as exc:
                if not exc.reason.startswith("HTTP 403"):
                    raise  # anything else aborts the resync: never collect from a partial view
                unseen = unseen.with_kind(resource.group, resource.kind)
                self.metrics.errors.labels(stage="forbidden").inc()
                logger.error("Skipped a resource kubevec may not list resource=%s error=%s", resource.name, exc.reason)
                continue
            for obj in listed:
                if not self.policy.admits(obj):
                    continue
                document = self._instance_document(obj, plural=resource.plural)
                if document is not None:
                    desired[INSTANCES][document.id] = document
        return desired, unseen

    async def _refined(self, crd: Mapping[str, Any], document: Document) -> Document:
        assert self.llm is not None
        try:
            return (await self.llm.refine(describe_crd(crd, cluster=self.settings.cluster_name))).to_document()
        except InferenceError:
            return document

    async def _builtin_document(self, resource: ApiResource) -> Document | None:
        key = (resource.group, resource.version)
        if key not in self._openapi_cache:
            try:
                self._openapi_cache[key] = await self.kube.openapi_components(resource.group, resource.version)
            except Exception as exc:
                logger.warning("Read no OpenAPI schema group=%s version=%s error=%s", *key, exc)
                self._openapi_cache[key] = {}
        components = self._openapi_cache[key]
        schema = _find_schema(components, group=resource.group, version=resource.version, kind=resource.kind)
        try:
            return describe_builtin(
                kind=resource.kind,
                group=resource.group,
                version=resource.version,
                plural=resource.plural,
                namespaced=resource.namespaced,
                short_names=resource.short_names,
                categories=resource.categories,
                schema=schema,
                components=components,
                cluster=self.settings.cluster_name,
            ).to_document()
        except InferenceError as exc:
            self._report_bad(f"builtin/{resource.name}", exc)
            return None

    # -- status, health, metrics -------------------------------------------------------------------

    async def _report_status(self) -> None:
        """SyncPolicy status, from the active replica only."""
        if not self.policies or not self.active:
            return
        error = self.engine.last_error if self.engine.degraded else self.last_resync_error
        sync = SyncStatus(
            documents={c: len(self.engine.known[c]) for c in COLLECTIONS},
            ready=self.ready,
            error=error,
            last_flush=self.engine.last_flush,
            last_full_resync=self.last_full_resync,
        )
        await write_status(kube=self.kube, policies=list(self.policies.values()), sync=sync)

    def not_ready(self) -> str | None:
        """None when ready (initial sync done, store and embedder working, API server answering), else why not."""
        if self.cluster_error is not None:
            return f"cannot reach the Kubernetes API: {self.cluster_error}"
        if self.engine.degraded:
            return str(self.engine.last_error)
        if not self.ready:
            return "initial sync in progress"
        return None

    @property
    def healthy(self) -> bool:
        return self.not_ready() is None


def _find_schema(components: Mapping[str, Any], *, group: str, version: str, kind: str) -> Mapping[str, Any] | None:
    for schema in components.values():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            if gvk.get("group", "") == group and gvk.get("version") == version and gvk.get("kind") == kind:
                return schema  # type: ignore[no-any-return]
    return None
