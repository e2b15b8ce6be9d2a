"""The sync engine: events in, batched hash-aware writes out (the façade of ``controller/sync``'s writer side).

Events only feed a queue keyed by document id, where the last state wins (a delete is an entry
too: ``queue.py``). The queue is flushed every debounce window, or sooner when a batch is full. For
each document the writer compares its ``content_hash`` and ``text_hash`` with the hashes known to be
stored (a map seeded from the store at start-up, so a restart with an unchanged cluster embeds
nothing) and plans the write from them alone (``planner.py``), embedding only changed texts in one
batched call per flush (``writer.py``); instance changes are recorded in the history first
(``history.py``).

Store or embedder failures never drop anything: the batch goes back into the queue (unless a
newer state for the same id arrived meanwhile), the engine marks itself degraded and retries with
capped exponential backoff (tenacity, sleeping on the engine's clock).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path
from types import MappingProxyType
from typing import Final

from opentelemetry import trace
from opentelemetry.trace import Link, SpanContext
from tenacity import AsyncRetrying, RetryCallState, retry_if_result, wait_exponential_jitter

from kubevec.backends import StoredHashes, VectorStore
from kubevec.backends.filters import And, Eq, Filter, Ne
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.runtime.tracing import tracer
from kubevec.controller.sync import snapshots
from kubevec.controller.sync.changelog import ChangeLog
from kubevec.controller.sync.history import HistoryFeed
from kubevec.controller.sync.planner import WritePlan
from kubevec.controller.sync.queue import Pending, WriteQueue
from kubevec.controller.sync.shared_records import CapabilityWriter
from kubevec.controller.sync.writer import BatchWriter, Known
from kubevec.core.clock import SYSTEM_CLOCK, Clock, wait_for_event
from kubevec.core.errors import BackendError, EmbedderError
from kubevec.inference.documents import CAPABILITIES, COLLECTIONS, INDEXED_FIELDS, INSTANCES, Collection, Document
from kubevec.inference.identity import CORE, parse_instance_id
from kubevec.inference.providers.embedders.base import Embedder

__all__ = [
    "MIN_BACKOFF",
    "PREPARED_SNAPSHOT_SECONDS",
    "RESYNC_WINDOW",
    "Pending",
    "Reconciled",
    "SyncEngine",
    "WritePlan",
]

logger = logging.getLogger(__name__)

MIN_BACKOFF: Final = 0.5
#: How old start-up's snapshot may be for the first resync to use it instead of reading the store again.
PREPARED_SNAPSHOT_SECONDS: Final = 60.0
#: How many built documents may wait for the writer before the resync stops building more (:meth:`SyncEngine.room`).
RESYNC_WINDOW: Final = 2000


Snapshot = dict[Collection, dict[str, StoredHashes]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Reconciled:
    """What one :meth:`SyncEngine.reconcile` queued, and what it kept because it was not seen."""

    upserts: int
    deletes: int
    kept: int


class SyncEngine:
    def __init__(
        self,
        *,
        store: VectorStore,
        embedder: Embedder,
        metrics: Metrics,
        collection_names: dict[Collection, str],
        debounce: float = 1.0,
        batch_size: int = 64,
        max_backoff: float = 60.0,
        cluster: str | None = None,
        history: ChangeLog | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.store = store
        self.clock = clock
        #: This controller's cluster name: the resync and purges touch only documents it wrote (None: all).
        self.cluster = cluster
        #: Capabilities are stored as this cluster's parts of records several clusters share (``query/fleet.py``):
        #: the engine plans them by resource (``plural.group``) and its part's hash, the writer does the rest.
        self.fleet = CapabilityWriter(
            store=store, collection=collection_names[CAPABILITIES], embedder=embedder, cluster=cluster or "default"
        )
        self.embedder = embedder
        self.metrics = metrics
        self.debounce = debounce
        self.batch_size = batch_size
        self.max_backoff = max_backoff
        self._history = HistoryFeed(log=history, store=store, metrics=metrics, clock=clock)
        self._writer = BatchWriter(
            store=store,
            embedder=embedder,
            metrics=metrics,
            names=dict(collection_names),
            fleet=self.fleet,
            history=self._history,
            clock=clock,
        )
        self._queue = WriteQueue(metrics=metrics)
        self._lock = asyncio.Lock()  # serialises store writes: flushes, purges, resync decisions
        self._degraded = False
        self._last_error: str | None = None
        self._public_error: str | None = None
        self.active = True  # False on a standby peer: events queue up, nothing is written
        self.last_flush: float | None = None
        self._running = False  # the flush loop runs (without it nothing would drain a queue to wait on)
        self._prepared: tuple[float, Snapshot] | None = None

    # -- read-only views ----------------------------------------------------------------------------

    @property
    def names(self) -> dict[Collection, str]:
        """The physical collection of each logical one (the active generation's, see ``sync/migrate.py``)."""
        return self._writer.names

    @names.setter
    def names(self, names: Mapping[Collection, str]) -> None:
        """Switch collections (a migration): the capability writer writes where the engine does."""
        self._writer.names = dict(names)
        self.fleet.collection = self._writer.names[CAPABILITIES]

    @property
    def _known(self) -> Known:
        return self._writer.known

    @property
    def known(self) -> Mapping[Collection, Mapping[str, StoredHashes]]:
        """The (id -> hashes) believed stored, per collection (a read-only view)."""
        return {c: MappingProxyType(ids) for c, ids in self._known.items()}

    @property
    def queue(self) -> Mapping[tuple[Collection, str], Pending]:
        """What waits to be written, oldest first (a read-only view)."""
        return self._queue.view

    @property
    def degraded(self) -> bool:
        return self._degraded

    @property
    def last_error(self) -> str | None:
        return self._last_error

    @property
    def public_error(self) -> str | None:
        """The last error as an unauthenticated reader may see it (``/readyz``): an embedder's names the
        provider, reason and status, never a server's body."""
        return self._public_error

    # -- the change history (``history.py``) ---------------------------------------------------------

    @property
    def history(self) -> ChangeLog | None:
        """Where each instance change is recorded (None: no history)."""
        return self._history.log

    @property
    def history_judged_by(self) -> str | None:
        """The gate (builder fingerprint) that judged the stored change records (None: unknown)."""
        return self._history.judged_by

    @history_judged_by.setter
    def history_judged_by(self, gate: str | None) -> None:
        self._history.judged_by = gate

    @property
    def history_gate(self) -> str:
        """The current gate: when the stored records were judged by another, they are judged again."""
        return self._history.gate

    @history_gate.setter
    def history_gate(self, gate: str) -> None:
        self._history.gate = gate

    def resynced(self) -> None:
        """A full resync has queued everything: once that is written, changes are recorded."""
        self._history.resynced(busy=self._queue.busy)

    async def prune_history(self) -> None:
        """Retention of the change history; a failure is logged (the next resync tries again)."""
        if self.active:
            await self._history.prune()

    # -- start-up ----------------------------------------------------------------------------------

    async def prepare(self, *, saved: Path | None = None) -> None:
        """Ensure both collections exist (for this embedder) and seed the known hashes from the store.

        ``saved``: where the last stop saved them (``snapshots.py``), used if nobody wrote since.
        A failure marks the engine degraded (readiness shows why) and is raised for the caller to retry.
        """
        try:
            for collection in COLLECTIONS:
                await self.store.ensure_collection(
                    self.names[collection],
                    dimension=self.embedder.dimension,
                    embedder=self.embedder.name,
                    indexed=INDEXED_FIELDS,
                )
            if self.history is not None:
                await self.history.prepare()
            snapshot = await self.snapshot(saved=saved)
        except Exception as exc:
            self._set_degraded(exc, stage="startup")
            raise
        self._history.started(ours=(h for h in snapshot[INSTANCES].values() if self._ours(h)))
        self._prepared = (self.clock.monotonic(), snapshot) if self.active else None
        self._clear_degraded()

    def prepared_snapshot(self) -> Snapshot | None:
        """Start-up's snapshot, once, if it is recent and this replica is the active one: the first
        resync's snapshot without reading every stored hash again (4.5 s at 20,000 documents while
        kopf starts its watches). Older is as safe as fresh for the resync's decisions (it was taken
        before any listing, and what was written since shows in the known hashes); a standby's is
        never used (another replica wrote the store meanwhile)."""
        prepared, self._prepared = self._prepared, None
        if prepared is None or not self.active or self.clock.monotonic() - prepared[0] > PREPARED_SNAPSHOT_SECONDS:
            return None
        return prepared[1]

    async def snapshot(self, *, saved: Path | None = None) -> Snapshot:
        """Re-read every stored (id, hash), all pages, and install it as what is known; returns a copy.

        Read under the write lock, so no flush lands between the read and the install. The resync
        takes it *before* listing the cluster (see :meth:`reconcile`). ``saved``: the hashes the last
        stop saved, taken instead when every collection's write stamp is as it was then.
        """
        async with self._lock:
            stamps = {c: await self.store.stamp(self.names[c]) for c in COLLECTIONS} if saved is not None else {}
            loaded = await asyncio.to_thread(snapshots.load, saved, names=self.names, stamps=stamps) if saved else None
            if loaded is not None:
                logger.info(
                    "Read the stored hashes saved at the last stop documents=%d", sum(map(len, loaded.values()))
                )
                self._writer.known = {c: dict(loaded[c]) for c in COLLECTIONS}
                self._writer.count_documents()
                return {c: dict(loaded[c]) for c in COLLECTIONS}
            snapshot: Snapshot = {}
            for collection in COLLECTIONS:
                name = self.names[collection]
                if collection == CAPABILITIES:
                    snapshot[collection] = await self.fleet.snapshot()
                else:
                    snapshot[collection] = {i: h async for i, h in self.store.iter_hashes(name, page_size=1000)}
            self._writer.known = {c: dict(ids) for c, ids in snapshot.items()}
        self._writer.count_documents()
        return snapshot

    async def save_snapshot(self, path: Path) -> bool:
        """At a stop, after the final flush: what the store holds now, for the next start (``snapshots.py``).

        Only when this engine wrote everything it had and knows the store exactly (active, nothing
        queued or failing).
        """
        if not self.active or self._queue.busy or self._degraded:
            return False
        async with self._lock:
            stamps = {c: await self.store.stamp(self.names[c]) for c in COLLECTIONS}
            return await asyncio.to_thread(snapshots.save, path, names=self.names, stamps=stamps, known=self._known)

    def offer(self, snapshot: Snapshot, document: Document) -> bool:
        """Queue one desired document if it differs from ``snapshot`` and nothing newer is known; True if queued.

        The resync calls it as each page of a listing is built, so embedding starts while the rest
        is listed, and only ids are kept of what is in sync. It needs no lock: it does not await,
        and a batch being written counts as queued (a newer state is on its way).
        """
        collection, document_id = document.collection, document.id
        before = snapshot[collection].get(document_id)
        if before is not None and before.content_hash == document.content_hash:
            return False
        if self._known[collection].get(document_id) != before or self.pending(collection, document_id):
            return False
        self.submit(document)
        return True

    async def collect(
        self,
        *,
        snapshot: Snapshot,
        desired: Mapping[Collection, AbstractSet[str]],
        keep: Callable[[Collection, str], bool],
    ) -> Reconciled:
        """Queue the deletes that make the store exactly ``desired`` (ids); see :meth:`reconcile`."""
        deletes = kept = 0
        async with self._lock:
            for collection in COLLECTIONS:
                known = self._known[collection]
                wanted = desired[collection]
                for document_id, stored_hash in snapshot[collection].items():
                    if document_id in wanted or self.pending(collection, document_id) or not self._ours(stored_hash):
                        continue
                    if known.get(document_id) != stored_hash:
                        continue
                    if keep(collection, document_id):
                        kept += 1
                        continue
                    self.submit_delete(collection, document_id)
                    deletes += 1
        return Reconciled(upserts=0, deletes=deletes, kept=kept)

    async def reconcile(
        self,
        *,
        snapshot: Snapshot,
        desired: Mapping[Collection, Mapping[str, Document]],
        keep: Callable[[Collection, str], bool],
    ) -> Reconciled:
        """Queue what makes the store exactly ``desired``; ``snapshot`` was taken before ``desired`` was listed.

        - a stored id not desired is deleted, unless an event queued it meanwhile, the store changed
          since the snapshot (something newer was written), or ``keep`` says it was not seen this time;
        - a desired document whose hash differs from the snapshot is written, unless an event queued a
          newer state meanwhile or a newer state was written since the snapshot.

        So an object created after the snapshot is never deleted, and an older listed state never
        overwrites what an event wrote.
        """
        async with self._lock:
            upserts = sum(self.offer(snapshot, d) for wanted in desired.values() for d in wanted.values())
        collected = await self.collect(snapshot=snapshot, desired={c: set(desired[c]) for c in COLLECTIONS}, keep=keep)
        return dataclasses.replace(collected, upserts=upserts)

    # -- intake ------------------------------------------------------------------------------------

    def submit(self, document: Document, *, received: float | None = None) -> None:
        self._put(
            Pending(
                collection=document.collection,
                id=document.id,
                document=document,
                received=received or self.clock.monotonic(),
                trace=_current_span_context(),
            )
        )

    def submit_delete(self, collection: Collection, document_id: str, *, received: float | None = None) -> None:
        self._put(
            Pending(
                collection=collection,
                id=document_id,
                document=None,
                received=received or self.clock.monotonic(),
                trace=_current_span_context(),
            )
        )

    def set_active(self, active: bool) -> None:
        """Leader election outcome: a standby only queues; becoming active flushes what queued up."""
        self.active = active
        if active:
            self._queue.wakeup.set()
        else:
            self._prepared = None
            self._queue.written.set()  # a resync waiting for room goes on: a standby writes nothing

    def pending(self, collection: Collection, document_id: str) -> bool:
        return self._queue.pending(collection, document_id)

    def _put(self, item: Pending) -> None:
        self._queue.put(item)

    async def purge_resource(self, *, group: str, kind: str, keep_version: str | None = None) -> None:
        """Delete every instance of one kind (its CRD is gone), or every one not at ``keep_version`` (its
        CRD moved to that version), in the store and in the queue."""

        def purged(document_id: str) -> bool:
            parsed = parse_instance_id(document_id)
            return (
                parsed is not None and (parsed.group, parsed.kind) == (group, kind) and parsed.version != keep_version
            )

        async with self._lock:
            self._queue.drop(lambda p: p.collection == INSTANCES and purged(p.id))
            where: list[Filter] = [Eq("group", group or CORE), Eq("kind", kind)]
            if keep_version is not None:
                where.append(Ne("version", keep_version))
            if self.cluster is not None:
                where.append(Eq("cluster", self.cluster))
            await self.store.delete_where(self.names["instances"], And(tuple(where)))
            known = self._known["instances"]
            for document_id in [i for i, h in known.items() if purged(i) and self._ours(h)]:
                del known[document_id]
        self._writer.count_documents()

    def _ours(self, stored: StoredHashes) -> bool:
        """Whether this controller wrote a stored document (one stored without a cluster counts as ours)."""
        return self.cluster is None or stored.cluster in ("", self.cluster)

    # -- the flush loop ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Flush forever: every debounce window, or as soon as a batch is full."""
        self._running = True
        try:
            await self._flush_forever()
        finally:
            self._running = False
            self._queue.written.set()

    async def _flush_forever(self) -> None:
        queue = self._queue
        while True:
            await queue.wakeup.wait()
            queue.wakeup.clear()
            if not queue:
                queue.idle.set()
                continue
            if not self.active:
                continue  # a standby keeps the latest state of each document, writes nothing
            await self._debounce()
            await self._flush_until_written()
            if queue:
                queue.wakeup.set()
            else:
                queue.idle.set()
                self._history.drained()

    async def _debounce(self) -> None:
        """Until the oldest entry has waited a debounce window, or a batch is full."""
        deadline = self._queue.oldest().received + self.debounce
        while len(self._queue) < self.batch_size and (left := deadline - self.clock.monotonic()) > 0:
            if not await wait_for_event(self._queue.wakeup, seconds=left, clock=self.clock):
                break
            self._queue.wakeup.clear()

    async def _flush_until_written(self) -> None:
        """Flush, and after a failure again with capped exponential backoff, until written or a standby."""
        retrying = AsyncRetrying(
            wait=wait_exponential_jitter(multiplier=MIN_BACKOFF, max=self.max_backoff, jitter=MIN_BACKOFF),
            retry=retry_if_result(lambda written: written is False),
            sleep=self.clock.sleep,
            before_sleep=_log_backoff,
        )
        await retrying(self._flush_if_active)

    async def _flush_if_active(self) -> bool:
        """False when a flush failed (the batch is back in the queue); True when written or a standby now."""
        return not self.active or await self.flush()

    async def room(self, *, window: int = RESYNC_WINDOW) -> None:
        """Wait while more than ``window`` documents wait to be written by this (active) engine.

        The resync calls it after each page it builds, so it stays at most about a window ahead of
        the writer: a 100,000-object first sync held 80,000 built documents in a queue before. A store
        that is down holds the resync here instead of the memory; a standby peer, which writes
        nothing, never waits.
        """
        await self._queue.wait_room(window=window, waiting=lambda: self.active and self._running)

    async def wait_written(self) -> None:
        """Until everything queued before this call is written (what came after may still wait).

        What readiness waits for after a resync: on a cluster that never stops changing the queue is
        never empty, so waiting for :meth:`wait_idle` there could last as long as the changes do.
        """
        await self._queue.wait_written()

    async def wait_idle(self) -> None:
        """Until the queue is empty and the last flush finished (readiness, tests, shutdown)."""
        await self._queue.idle.wait()

    async def flush(self) -> bool:
        """Flush everything queued, batch by batch; False (and the batch re-queued) on a failure."""
        queue = self._queue
        while queue:
            async with self._lock:
                batch = queue.take(self.batch_size)
                links = [Link(item.trace) for item in batch if item.trace is not None]
                try:
                    with tracer().start_as_current_span(
                        "kubevec.flush", links=links, attributes={"kubevec.documents": len(batch)}
                    ):
                        await self._write(batch)
                    queue.wrote(batch)
                except (BackendError, EmbedderError) as exc:
                    queue.requeue(batch)
                    self._set_degraded(exc)
                    return False
                except asyncio.CancelledError:
                    queue.requeue(batch)  # shutting down mid-write: the final flush writes it again
                    raise
                finally:
                    queue.settled()
            self._clear_degraded()
            self.last_flush = self.clock.time()
        return True

    async def _write(self, batch: list[Pending]) -> None:
        await self._writer.write(batch)

    # -- degraded ----------------------------------------------------------------------------------

    def _set_degraded(self, exc: Exception, *, stage: str | None = None) -> None:
        stage = stage or ("store" if isinstance(exc, BackendError) else "embedder")
        self.metrics.errors.labels(stage=stage).inc()
        if stage == "embedder":
            reason = getattr(exc, "reason", "error")
            self.metrics.embed_errors.labels(provider=self.metrics.provider, reason=reason).inc()
        self.metrics.degraded.set(1)
        message = f"{type(exc).__name__}: {exc}"
        if not self._degraded or message != self._last_error:
            logger.error("Failed to sync, will retry stage=%s error=%s", stage, message)
        self._degraded = True
        self._last_error = message
        self._public_error = exc.public(provider=self.metrics.provider) if isinstance(exc, EmbedderError) else message

    def _clear_degraded(self) -> None:
        if self._degraded:
            logger.info("Recovered from a store or embedder failure")
        self._degraded = False
        self.metrics.degraded.set(0)


def _log_backoff(state: RetryCallState) -> None:
    seconds = state.next_action.sleep if state.next_action is not None else 0.0
    logger.debug("Waiting before the next flush attempt=%d backoff=%.1fs", state.attempt_number, seconds)


def _current_span_context() -> SpanContext | None:
    context = trace.get_current_span().get_span_context()
    return context if context.is_valid else None
