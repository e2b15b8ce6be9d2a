"""The composition root: builds the parts, feeds them kopf's events, runs the loops.

kopf handlers only call ``app.events.observe_*``. Correctness comes from the resync
(``controller/sync/reconcile.py``), not from events; events only make it fast. The parts:

- :class:`~kubevec.controller.sync.events.EventRouter`: watch events into the engine's queue, SyncPolicies;
- :class:`~kubevec.controller.sync.documents.DocumentBuilder`: bodies into documents, bad input counted once;
- :class:`~kubevec.controller.sync.engine.SyncEngine`: the queue, batched hash-aware writes, and the diff;
- :class:`~kubevec.controller.sync.reconcile.Reconciler`: the periodic resync (snapshot, list, diff);
- :mod:`kubevec.controller.sync.status`, :mod:`kubevec.controller.runtime.health`, :func:`kubevec.controller.runtime.peering.follow`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential_jitter

from kubevec.backends import VectorStore
from kubevec.backends.factory import open_store
from kubevec.backends.generations import current_generation
from kubevec.controller import serving
from kubevec.controller.kube.client import ClusterReader, KubeReader
from kubevec.controller.runtime.health import ClusterProbe, HealthServer, StoreDirectory
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.runtime.peering import PeeringIdentity
from kubevec.controller.runtime.peering import follow as follow_peering
from kubevec.controller.serving import active_collections
from kubevec.controller.settings import Settings
from kubevec.controller.sync.changelog import ChangeLog
from kubevec.controller.sync.documents import DocumentBuilder, builder_fingerprint
from kubevec.controller.sync.engine import SyncEngine
from kubevec.controller.sync.events import EventRouter
from kubevec.controller.sync.handover import Handover
from kubevec.controller.sync.migrate import migrate
from kubevec.controller.sync.notes import Described, WorkloadNotes
from kubevec.controller.sync.policy import watchable
from kubevec.controller.sync.reconcile import CRD_RESOURCE, ClusterState, Reconciler
from kubevec.controller.sync.status import (
    STATUS_COLLECTION,
    SyncStatus,
    status_record,
    status_record_id,
    write_status,
    write_store_status,
)
from kubevec.core import fields
from kubevec.core.clock import SYSTEM_CLOCK, Clock, wait_for_event
from kubevec.core.errors import BackendError, BackendUnavailable
from kubevec.core.version import kubevec_version
from kubevec.inference.change_records import CHANGES
from kubevec.inference.documents import COLLECTIONS, Collection
from kubevec.inference.providers.config import make_embedder
from kubevec.inference.providers.embedders.base import Embedder
from kubevec.inference.providers.llm import LLMDescriber
from kubevec.query.search import SearchService

if TYPE_CHECKING:
    from kubevec.query.mcp import EmbeddedHttpServer

logger = logging.getLogger(__name__)
#: How long start-up waits for the store's hashes before kopf's watches begin.
PREPARE_WAIT_SECONDS = 10.0


class App:
    def __init__(
        self,
        *,
        settings: Settings,
        store: VectorStore | None = None,
        embedder: Embedder | None = None,
        kube: ClusterReader | None = None,
        peering: PeeringIdentity | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.settings = settings
        #: What the engine's debounce and backoff, the resync's schedule and the status record read.
        self.clock = clock
        self.peering = peering
        self.active = peering is None
        self.metrics = Metrics()
        self.metrics.active.set(1 if peering is None else 0)
        self.store: VectorStore = store or open_store(settings.store)
        self.store.observer = self.metrics  # every store operation timed and its failures counted
        self.embedder = embedder or make_embedder(settings.embedder)
        self.metrics.describe_build(
            embedder=settings.embedder.provider,
            model=self.embedder.name,
            dimension=self.embedder.dimension,
            backend=self.store.backend,
        )
        self.kube = kube or KubeReader(kubeconfig=settings.kubeconfig, context=settings.kube_context)
        self.engine = SyncEngine(
            store=self.store,
            embedder=self.embedder,
            metrics=self.metrics,
            collection_names={c: settings.collection(c) for c in COLLECTIONS},
            debounce=settings.sync.debounce_seconds,
            batch_size=settings.sync.batch_size,
            max_backoff=settings.sync.max_backoff_seconds,
            cluster=settings.cluster_name,
            history=_change_log(settings, store=self.store, embedder=self.embedder, metrics=self.metrics),
            clock=clock,
        )
        self.engine.set_active(self.active)
        self.llm = _llm(settings)
        self.metrics.watch_counts(embedder=self.embedder, llm=self.llm)
        self.documents = DocumentBuilder(
            cluster=settings.cluster_name, metrics=self.metrics, built_from=self._stored_built_from
        )
        self.events = EventRouter(
            cluster=settings.cluster_name,
            engine=self.engine,
            documents=self.documents,
            metrics=self.metrics,
            request_resync=self.request_resync,
            kube=self.kube,
            resources=lambda: cluster.resources,
        )
        if self.llm is not None and settings.describer.llm.workloads:
            self.documents.notes = WorkloadNotes(describer=self.llm, on_noted=self._noted, clock=clock)
        groups = settings.sync.api_groups
        #: kopf's first listings, handed over to the first resync (installed by the operator's start-up):
        #: CRDs (for our ``on.event`` handler) and every kind kopf watches for instances.
        self.handover = Handover(
            shares=lambda group, plural, verbs, preferred: (
                (group, plural) == (CRD_RESOURCE.ref.group, CRD_RESOURCE.ref.plural)
                or watchable(group=group, plural=plural, verbs=list(verbs), preferred=preferred, groups=groups)
            )
        )
        cluster = ClusterState(
            kube=self.kube,
            settings=settings,
            builder=self.documents,
            metrics=self.metrics,
            llm=self.llm,
            handover=self.handover,
        )
        self.reconciler = Reconciler(engine=self.engine, cluster=cluster, metrics=self.metrics)
        self.health = HealthServer(
            host=settings.server.host,
            health_port=settings.server.health_port,
            metrics_port=settings.server.metrics_port,
            metrics=self.metrics,
            not_ready=self.not_ready,
            not_live=self.not_live,
        )
        self.ready = False
        path = settings.store.local_path  # an embedded store's directory, when this App opened the store itself
        opened_here = store is None or self.store.location == str(path)  # tests inject stores of their own
        self.store_directory = (
            StoreDirectory(Path(path), bound=settings.sync.unwritable_restart_seconds)
            if opened_here and path is not None and str(path) != ":memory:"
            else None
        )
        self._prepared = asyncio.Event()
        #: Where a stop leaves the stored hashes for the next start (``controller/sync/snapshots.py``).
        self.saved_hashes = settings.cache_dir / "stored-hashes" / _store_key(settings, self.store)
        self.probe = ClusterProbe(
            kube=self.kube,
            metrics=self.metrics,
            interval=settings.sync.cluster_probe_seconds,
            on_recovered=self.request_resync,
        )
        served = _mcp_server(settings, store=self.store, embedder=self.embedder, metrics=self.metrics, kube=self.kube)
        self.mcp: EmbeddedHttpServer | None = served[0] if served is not None else None
        self.search: SearchService | None = served[1] if served is not None else None
        self.last_resync_error: str | None = None
        self._resync_now = asyncio.Event()
        self._resync_lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def last_full_resync(self) -> float | None:
        return self.reconciler.last_full_resync

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        await self.health.start()
        if self.mcp is not None:
            await self.mcp.start()
            logger.info("Serving MCP over HTTP host=%s port=%d path=/mcp", self.settings.server.host, self.mcp.port)
        self._tasks.append(asyncio.create_task(self._prepare_and_run(), name="kubevec-main"))
        self._tasks.append(asyncio.create_task(self.probe.run(), name="kubevec-probe"))
        if self.documents.notes is not None:
            self._tasks.append(asyncio.create_task(self.documents.notes.run(), name="kubevec-notes"))
        # kopf starts its watches when this returns: with the stored hashes known first, its initial
        # listing finds unchanged objects unchanged instead of building every one (a store that is
        # down does not hold the start-up up for long: the main task keeps retrying).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._prepared.wait(), timeout=PREPARE_WAIT_SECONDS)

    async def stop(self) -> None:
        for task in [*self._tasks, *self.events.purges]:
            task.cancel()
        for task in [*self._tasks, *self.events.purges]:
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
        if self._prepared.is_set():
            try:
                await asyncio.wait_for(self.engine.save_snapshot(self.saved_hashes), timeout=30)
            except Exception as exc:  # the next start reads the store instead
                logger.warning("Failed to save the stored hashes error=%s", exc)
        await self.health.stop()
        if self.mcp is not None:
            await self.mcp.stop()
        if self.llm:
            await self.llm.close()
        await self.store.close()
        self.kube.close()

    async def _prepare_and_run(self) -> None:
        # the store may be down at start-up: wait for it, visibly (the engine is degraded)
        retrying = AsyncRetrying(
            wait=wait_exponential_jitter(multiplier=0.5, max=self.settings.sync.max_backoff_seconds, jitter=0.5),
            retry=retry_if_exception_type(Exception),
            sleep=self.clock.sleep,
            before_sleep=_log_prepare_failure,
        )
        await retrying(self._prepare)
        self._tasks.append(asyncio.create_task(self.engine.run(), name="kubevec-flush"))
        if self.peering is not None:
            following = follow_peering(kube=self.kube, me=self.peering, on_change=self._set_active)
            self._tasks.append(asyncio.create_task(following, name="kubevec-peering"))
        await self._resync_loop()

    async def _prepare(self) -> None:
        await self._use_generation()
        await self.engine.prepare(saved=self.saved_hashes)
        self.engine.history_gate = builder_fingerprint()
        self.engine.history_judged_by = await self._history_judged_by()
        if self.store_directory is not None:
            self.store_directory.remember()
            self._tasks.append(asyncio.create_task(self._watch_store_directory(), name="kubevec-store-dir"))
        self._prepared.set()

    async def _history_judged_by(self) -> str | None:
        """Which gate last judged this cluster's change records, from its status record in the store.

        None (judge again) for a record from before the field; a store without a status record of this
        cluster holds none of its change records either, so the current gate counts as having judged them.
        """
        try:
            found = await self.store.get(
                self.settings.collection(STATUS_COLLECTION), [status_record_id(self.settings.cluster_name)]
            )
        except BackendError:
            found = []
        if not found:
            return builder_fingerprint()
        judged = fields.HISTORY_JUDGED_BY.raw(found[0].metadata)
        return str(judged) if judged else None

    def _stored_built_from(self, collection: Collection, document_id: str) -> str | None:
        stored = self.engine.known[collection].get(document_id)
        return stored.built_from if stored is not None else None

    async def _use_generation(self) -> None:
        """Write to the active generation's collections; with ``sync.migrate``, move the store to this
        embedder first (a store built with another one is otherwise refused by ``engine.prepare``)."""
        bases, pointer = self.settings.bases(), self.settings.pointer
        current = await current_generation(self.store, pointer=pointer, bases=list(bases.values()))
        if current is not None and current.embedder != self.embedder.name and self.settings.sync.migrate:
            await migrate(
                store=self.store,
                embedder=self.embedder,
                settings=self.settings.embedder,
                bases=bases,
                pointer=pointer,
                batch_size=self.settings.sync.batch_size,
            )
        names, _ = await active_collections(self.store, settings=self.settings)
        self.engine.names = {c: names[c] for c in COLLECTIONS}
        if self.engine.history is not None:
            self.engine.history.collection = names[CHANGES]

    def _set_active(self, active: bool) -> None:
        """Leader election outcome: only the active replica writes; becoming active resyncs at once."""
        self.active = active
        self.engine.set_active(active)
        self.metrics.active.set(1 if active else 0)
        if active:
            self.request_resync()

    async def _resync_loop(self) -> None:
        interval = self.settings.sync.resync_interval_seconds
        retry = 5.0
        while True:
            wait = interval
            try:
                if self.active:
                    unwritable = self.store_directory.check() if self.store_directory is not None else None
                    if unwritable is not None:
                        raise BackendUnavailable(f"Cannot write the store: {unwritable}")
                    try:
                        await self.resync()
                    finally:
                        self.handover.close()
                    await self.engine.wait_written()  # the resync's writes, not a quiet cluster
                if not self.engine.degraded:
                    if not self.ready and self.search is not None:  # agents' first queries: index built
                        self._tasks.append(asyncio.create_task(self.search.warm(), name="kubevec-warm"))
                    self.ready = True
                    self.metrics.ready.set(1)
                retry = 5.0
            except Exception as exc:  # any failure of a resync: counted, reported, retried soon
                self.last_resync_error = f"{type(exc).__name__}: {exc}"
                self.metrics.errors.labels(stage="resync").inc()
                logger.error("Failed a full resync, will retry in=%.0fs error=%s", retry, self.last_resync_error)
                wait, retry = retry, min(retry * 2, interval)  # a failed resync is retried well within the interval
            await self._report_status()
            await wait_for_event(self._resync_now, seconds=wait if self.ready else min(wait, 5), clock=self.clock)
            self._resync_now.clear()

    async def resync(self) -> None:
        """Make the store exactly what the cluster implies (``controller/sync/reconcile.py``)."""
        async with self._resync_lock:
            await self.reconciler.resync()
            self.last_resync_error = None
            self.events.policy_error = None

    def _noted(self, objects: list[Described]) -> None:
        """A template's note came: the objects that wait for it are read again and rebuilt with it."""
        for obj in objects:
            involved = {"apiVersion": obj.api_version, "kind": obj.kind, "name": obj.name, "namespace": obj.namespace}
            self.events.refetch(uid=obj.uid, involved=involved)

    def request_resync(self) -> None:
        self._resync_now.set()

    @property
    def resync_requested(self) -> bool:
        """Whether a resync was asked for and has not started yet (policy changes, CRD version moves)."""
        return self._resync_now.is_set()

    # -- status and readiness ----------------------------------------------------------------------

    async def _report_status(self) -> None:
        """SyncPolicy status and the store's status record, from the active replica only."""
        if not self.active:
            return
        policies = list(self.events.policies.values())
        sync = SyncStatus(
            documents={c: len(self.engine.known[c]) for c in COLLECTIONS},
            ready=self.ready,
            error=self.engine.public_error
            if self.engine.degraded
            else self.last_resync_error or self.events.policy_error,
            last_flush=self.engine.last_flush,
            last_full_resync=self.last_full_resync,
            skipped=tuple(f"{name} ({reason})" for name, reason in self.documents.skipped.items()),
            history_judged_by=self.engine.history_judged_by or "",
        )
        if policies:
            await write_status(kube=self.kube, policies=policies, sync=sync)
        record = status_record(
            sync, cluster=self.settings.cluster_name, version=kubevec_version(), now=self.clock.time()
        )
        await write_store_status(
            store=self.store, collection=self.settings.collection(STATUS_COLLECTION), record=record
        )

    def not_live(self) -> str | None:
        """None while a restart would not help; else why one would (an embedded store's directory went away)."""
        return self.store_directory.not_live() if self.store_directory is not None else None

    async def _watch_store_directory(self) -> None:
        assert self.store_directory is not None
        while True:
            self.store_directory.check()
            await self.clock.sleep(min(5.0, self.settings.sync.unwritable_restart_seconds / 2))

    def not_ready(self) -> str | None:
        """None when ready (initial sync done, store and embedder working, API server answering), else why not."""
        if self.store_directory is not None and self.store_directory.error is not None:
            return f"cannot write the store: {self.store_directory.error}"
        if self.probe.error is not None:
            return f"cannot reach the Kubernetes API: {self.probe.error}"
        if self.engine.degraded:
            return str(self.engine.public_error)
        if not self.ready:
            return "initial sync in progress"
        return None

    @property
    def healthy(self) -> bool:
        return self.not_ready() is None


def _log_prepare_failure(state: RetryCallState) -> None:
    backoff = state.next_action.sleep if state.next_action is not None else 0.0
    error = state.outcome.exception() if state.outcome is not None else None
    logger.error("Failed to prepare the store, will retry backoff=%.1fs error=%s", backoff, error)


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


def _mcp_server(
    settings: Settings, *, store: VectorStore, embedder: Embedder, metrics: Metrics, kube: ClusterReader
) -> tuple[EmbeddedHttpServer, SearchService] | None:
    """The agents' MCP endpoint inside the controller (``KUBEVEC_MCP_PORT``), over the same store.

    Raises :class:`UnsafeBind` for a public bind without a token, before anything starts.
    """
    if not settings.mcp_port:
        return None
    from kubevec.query.mcp import EmbeddedHttpServer, http_app  # the mcp SDK and its web stack: only when served

    service = serving.search_service(
        settings, store, embedder=embedder, lexical_cache=False, metrics=metrics, audit=True
    )
    app = http_app(
        service,
        host=settings.server.host,
        authorizer=serving.authorizer(settings, service, kube=kube),
        allowed_hosts=settings.mcp_allowed_hosts,
        allowed_origins=settings.mcp_allowed_origins,
        limits=settings.mcp_limits(),
        discovery=settings.mcp_discovery(),
    )
    metrics.watch_access(app.counts)
    return EmbeddedHttpServer(app, host=settings.server.host, port=settings.mcp_port), service


def _change_log(settings: Settings, *, store: VectorStore, embedder: Embedder, metrics: Metrics) -> ChangeLog | None:
    history = settings.history
    if not history.enabled:
        return None
    return ChangeLog(
        store=store,
        collection=settings.collection(CHANGES),
        embedder=embedder,
        metrics=metrics,
        cluster=settings.cluster_name,
        embed=history.embed,
        max_age_seconds=history.max_age_hours * 3600,
        max_records=history.max_records,
    )


def _store_key(settings: Settings, store: VectorStore) -> str:
    """One file per store, cluster and collection prefix (several controllers may share a cache directory)."""
    import hashlib

    place = f"{store.backend}\0{store.location}\0{settings.cluster_name}\0{settings.store.collection_prefix}"
    return hashlib.sha256(place.encode()).hexdigest()[:24] + ".json"
