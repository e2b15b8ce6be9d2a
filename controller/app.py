"""The composition root: builds the parts, feeds them kopf's events, runs the loops.

kopf handlers only call ``observe_*``. Correctness comes from the resync (``controller/reconcile.py``),
not from events; events only make it fast. The parts:

- :class:`~controller.documents.DocumentBuilder`: bodies into documents, bad input counted once;
- :class:`~controller.engine.SyncEngine`: the queue, batched hash-aware writes, and the diff;
- :class:`~controller.reconcile.Reconciler`: the periodic resync (snapshot, list, diff);
- :mod:`controller.status`, :mod:`controller.health`, :func:`controller.peering.follow`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from backends import BackendError, VectorStore
from backends.factory import open_store
from controller.documents import DocumentBuilder
from controller.engine import SyncEngine
from controller.health import HealthServer
from controller.kube import KubeError, KubeReader
from controller.metrics import Metrics
from controller.peering import PeeringIdentity
from controller.peering import follow as follow_peering
from controller.policy import EffectivePolicy, PolicyError, SyncPolicy
from controller.reconcile import CRD_RESOURCE, ClusterState, Reconciler
from controller.settings import Settings
from controller.status import SyncStatus, write_status
from inference.bodies import Body, metadata_of
from inference.config import make_embedder
from inference.documents import CAPABILITIES, COLLECTIONS, INSTANCES
from inference.embedders.base import Embedder
from inference.identity import ResourceRef
from inference.llm import LLMDescriber

logger = logging.getLogger(__name__)


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
        self.engine.set_active(self.active)
        self.llm = _llm(settings)
        self.policies: dict[str, SyncPolicy] = {}
        self.policy = EffectivePolicy()
        self.documents = DocumentBuilder(cluster=settings.cluster_name, metrics=self.metrics)
        cluster = ClusterState(
            kube=self.kube,
            settings=settings,
            builder=self.documents,
            metrics=self.metrics,
            llm=self.llm,
        )
        self.reconciler = Reconciler(engine=self.engine, cluster=cluster, metrics=self.metrics)
        self.health = HealthServer(
            host=settings.server.host,
            health_port=settings.server.health_port,
            metrics_port=settings.server.metrics_port,
            metrics=self.metrics,
            not_ready=self.not_ready,
        )
        self.ready = False
        self.cluster_error: str | None = None  # set while the API server cannot be reached
        self.last_resync_error: str | None = None
        self._resync_now = asyncio.Event()
        self._resync_lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        self._purges: set[asyncio.Task[None]] = set()  # each removes itself when done

    @property
    def last_full_resync(self) -> float | None:
        return self.reconciler.last_full_resync

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        await self.health.start()
        self._tasks.append(asyncio.create_task(self._prepare_and_run(), name="kubevec-main"))
        self._tasks.append(asyncio.create_task(self._probe_cluster(), name="kubevec-probe"))

    async def stop(self) -> None:
        for task in [*self._tasks, *self._purges]:
            task.cancel()
        for task in [*self._tasks, *self._purges]:
            try:
                await task
            except asyncio.CancelledError:
                pass
            except Exception as exc:  # it ended before the cancel: say so, the next start resyncs
                logger.warning("Failed a background task name=%s error=%s", task.get_name(), exc)
        self._tasks.clear()
        if self.engine.queue and self.engine.active and not self.engine.degraded:
            try:
                await asyncio.wait_for(self.engine.flush(), timeout=10)
            except Exception as exc:  # shutting down: say what was not written, the next start resyncs it
                logger.warning("Failed the final flush queued=%d error=%s", len(self.engine.queue), exc)
        await self.health.stop()
        if self.llm:
            await self.llm.close()
        await self.store.close()
        self.kube.close()

    async def _prepare_and_run(self) -> None:
        backoff = 0.5
        while True:  # the store may be down at start-up: wait for it, visibly (the engine is degraded)
            try:
                await self.engine.prepare()
                break
            except Exception as exc:
                logger.error("Failed to prepare the store, will retry backoff=%.1fs error=%s", backoff, exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, self.settings.sync.max_backoff_seconds)
        self._tasks.append(asyncio.create_task(self.engine.run(), name="kubevec-flush"))
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
            except Exception as exc:  # any failure of a resync: counted, reported, retried soon
                self.last_resync_error = f"{type(exc).__name__}: {exc}"
                self.metrics.errors.labels(stage="resync").inc()
                logger.error("Failed a full resync, will retry in=%.0fs error=%s", retry, self.last_resync_error)
                wait, retry = retry, min(retry * 2, interval)  # a failed resync is retried well within the interval
            await self._report_status()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._resync_now.wait(), timeout=wait if self.ready else min(wait, 5))
            self._resync_now.clear()

    async def resync(self) -> None:
        """Make the store exactly what the cluster implies (``controller/reconcile.py``)."""
        async with self._resync_lock:
            await self.reconciler.resync()
            self.last_resync_error = None

    def request_resync(self) -> None:
        self._resync_now.set()

    # -- events (called by kopf handlers) ----------------------------------------------------------

    def observe_object(
        self, *, group: str, version: str, plural: str, kind: str, event_type: str | None, body: Body
    ) -> None:
        received = time.monotonic()
        ref = ResourceRef(group=group, version=version, plural=plural, kind=kind)
        self.metrics.events.labels(resource=ref.resource_id, type=event_type or "LIST").inc()
        if not self.policy.watches(group=group, kind=kind, plural=plural):
            return
        meta = metadata_of(body)
        document_id = ref.instance_id(
            cluster=self.settings.cluster_name, namespace=meta.get("namespace"), name=str(meta.get("name", ""))
        )
        if event_type == "DELETED" or not self.policy.admits(body):
            self.engine.submit_delete(INSTANCES, document_id, received=received)
            return
        document = self.documents.instance(body, plural=plural, policy=self.policy.instance_policy)
        if document is not None:
            self.engine.submit(document, received=received)

    def observe_crd(self, *, event_type: str | None, body: Body) -> None:
        received = time.monotonic()
        self.metrics.events.labels(resource=CRD_RESOURCE.name, type=event_type or "LIST").inc()
        name = str(metadata_of(body).get("name", ""))
        if event_type == "DELETED":
            self.engine.submit_delete(CAPABILITIES, name, received=received)
            spec = body.get("spec") or {}
            kind = (spec.get("names") or {}).get("kind")
            if kind:
                task = asyncio.create_task(self._purge(group=str(spec.get("group", "")), kind=str(kind)))
                self._purges.add(task)
                task.add_done_callback(self._purges.discard)
            return
        document = self.documents.capability(body)
        if document is not None:
            self.engine.submit(document, received=received)

    def observe_policy(self, *, event_type: str | None, body: Body) -> None:
        name = str(metadata_of(body).get("name", ""))
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
        except BackendError as exc:  # the store is down: the next resync collects them
            logger.warning("Failed to purge instances group=%s kind=%s error=%s", group, kind, exc)

    # -- status and readiness ----------------------------------------------------------------------

    async def _report_status(self) -> None:
        """SyncPolicy status, from the active replica only."""
        if not self.policies or not self.active:
            return
        sync = SyncStatus(
            documents={c: len(self.engine.known[c]) for c in COLLECTIONS},
            ready=self.ready,
            error=self.engine.last_error if self.engine.degraded else self.last_resync_error,
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


def _llm(settings: Settings) -> LLMDescriber | None:
    llm = settings.describer.llm
    if not llm.enabled:
        return None
    return LLMDescriber(
        provider=llm.provider,
        url=llm.url,
        model=llm.model,
        api_key=llm.api_key.get_secret_value() if llm.api_key else None,
        cache_dir=llm.cache_dir,
        requests_per_minute=llm.requests_per_minute,
        timeout=llm.timeout_seconds,
    )
