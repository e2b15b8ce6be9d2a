"""The sync engine: events in, batched hash-aware writes out.

Events only feed a queue keyed by document id, where the last state wins (a delete is an entry
too). The queue is flushed every debounce window, or sooner when a batch is full. For each
document the engine compares its ``content_hash`` and ``text_hash`` with the hashes known to be
stored (a map seeded from the store at start-up, so a restart with an unchanged cluster embeds
nothing) and plans the write from them alone (:meth:`SyncEngine._plan`):

- same content hash: nothing to do;
- same text hash (only metadata changed): the stored vector is fetched and re-used, nothing is
  embedded;
- otherwise the text is embedded, in one batched call per flush (:meth:`SyncEngine._apply`).

Store or embedder failures never drop anything: the batch goes back into the queue (unless a
newer state for the same id arrived meanwhile), the engine marks itself degraded and retries with
capped exponential backoff.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path
from types import MappingProxyType
from typing import Final

from opentelemetry import trace
from opentelemetry.trace import Link, SpanContext

from kubevec.backends import Record, StoredHashes, VectorStore
from kubevec.backends.filters import And, Eq, Filter, Ne
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.runtime.tracing import tracer
from kubevec.controller.sync import snapshots
from kubevec.controller.sync.changelog import ChangeLog
from kubevec.controller.sync.shared_records import CapabilityWriter
from kubevec.core.errors import BackendError, EmbedderError, InvalidRecord
from kubevec.inference.change_records import ChangeRecord, Stored, change_record
from kubevec.inference.documents import CAPABILITIES, COLLECTIONS, INDEXED_FIELDS, INSTANCES, Collection, Document
from kubevec.inference.identity import CORE, parse_instance_id
from kubevec.inference.providers.embedders.base import Embedder

logger = logging.getLogger(__name__)

MIN_BACKOFF: Final = 0.5
#: How old start-up's snapshot may be for the first resync to use it instead of reading the store again.
PREPARED_SNAPSHOT_SECONDS: Final = 60.0
#: How many built documents may wait for the writer before the resync stops building more (:meth:`SyncEngine.room`).
RESYNC_WINDOW: Final = 2000


Snapshot = dict[Collection, dict[str, StoredHashes]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class WritePlan:
    """What one batch needs, decided from hashes alone (see :meth:`SyncEngine._plan`)."""

    skipped: int  # same content hash: nothing to write
    reuse: list[Document]  # same text (or a stored record without a text hash): fetch its vector
    embed: list[Document]  # new, or the text changed


@dataclasses.dataclass(frozen=True, kw_only=True)
class Reconciled:
    """What one :meth:`SyncEngine.reconcile` queued, and what it kept because it was not seen."""

    upserts: int
    deletes: int
    kept: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class Pending:
    collection: Collection
    id: str
    document: Document | None  # None: delete
    received: float  # monotonic time the triggering event arrived
    trace: SpanContext | None = None  # the event's span, linked from the flush that writes it
    #: Its place in the order of intake (set by the queue): what :meth:`SyncEngine.wait_written` waits for.
    seq: int = 0


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
    ) -> None:
        self.store = store
        #: Where each instance change is recorded (None: no history). Quiet while the first sync of an
        #: empty store writes everything: that is an index being built, not a cluster changing.
        self.history = history
        self._history_quiet = False
        self._resynced = False
        #: This controller's cluster name: the resync and purges touch only documents it wrote (None: all).
        self.cluster = cluster
        #: Capabilities are stored as this cluster's parts of records several clusters share (``query/fleet.py``):
        #: the engine plans them by resource (``plural.group``) and its part's hash, the writer does the rest.
        self.fleet = CapabilityWriter(
            store=store, collection=collection_names[CAPABILITIES], embedder=embedder, cluster=cluster or "default"
        )
        self.embedder = embedder
        self.metrics = metrics
        self._names = dict(collection_names)
        self.debounce = debounce
        self.batch_size = batch_size
        self.max_backoff = max_backoff
        self._known: dict[Collection, dict[str, StoredHashes]] = {c: {} for c in COLLECTIONS}
        self._queue: OrderedDict[tuple[Collection, str], Pending] = OrderedDict()
        #: Popped from the queue, being written now: as good as queued for the resync's decisions.
        self._inflight: set[tuple[Collection, str]] = set()
        self._lock = asyncio.Lock()  # serialises store writes: flushes, purges, resync decisions
        self._degraded = False
        self._last_error: str | None = None
        self._public_error: str | None = None
        #: The gate (builder fingerprint) that judged the stored change records (None: unknown), and the
        #: current one: when they differ, the records are judged again after the next resync.
        self.history_judged_by: str | None = None
        self.history_gate = ""
        self.active = True  # False on a standby peer: events queue up, nothing is written
        self.last_flush: float | None = None
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._written = asyncio.Event()  # set after each batch, written or not: what :meth:`room` waits for
        self._running = False  # the flush loop runs (without it nothing would drain a queue to wait on)
        self._seq = 0  # the last place in the order of intake given out
        self._written_seq = 0  # every item up to this place has been written (or replaced by a later one)
        self._backoff = MIN_BACKOFF
        self._prepared: tuple[float, Snapshot] | None = None

    # -- read-only views ----------------------------------------------------------------------------

    @property
    def names(self) -> dict[Collection, str]:
        """The physical collection of each logical one (the active generation's, see ``sync/migrate.py``)."""
        return self._names

    @names.setter
    def names(self, names: Mapping[Collection, str]) -> None:
        """Switch collections (a migration): the capability writer writes where the engine does."""
        self._names = dict(names)
        self.fleet.collection = self._names[CAPABILITIES]

    @property
    def known(self) -> Mapping[Collection, Mapping[str, StoredHashes]]:
        """The (id -> hashes) believed stored, per collection (a read-only view)."""
        return {c: MappingProxyType(ids) for c, ids in self._known.items()}

    @property
    def queue(self) -> Mapping[tuple[Collection, str], Pending]:
        """What waits to be written, oldest first (a read-only view)."""
        return MappingProxyType(self._queue)

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
        if self.history is not None and not any(self._ours(h) for h in snapshot[INSTANCES].values()):
            self._history_quiet = True
            logger.info("Recording no changes until the first sync of this cluster is written collection=changes")
        self._prepared = (time.monotonic(), snapshot) if self.active else None
        self._clear_degraded()

    def prepared_snapshot(self) -> Snapshot | None:
        """Start-up's snapshot, once, if it is recent and this replica is the active one: the first
        resync's snapshot without reading every stored hash again (4.5 s at 20,000 documents while
        kopf starts its watches). Older is as safe as fresh for the resync's decisions (it was taken
        before any listing, and what was written since shows in the known hashes); a standby's is
        never used (another replica wrote the store meanwhile)."""
        prepared, self._prepared = self._prepared, None
        if prepared is None or not self.active or time.monotonic() - prepared[0] > PREPARED_SNAPSHOT_SECONDS:
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
                self._known = {c: dict(loaded[c]) for c in COLLECTIONS}
                self._count_documents()
                return {c: dict(loaded[c]) for c in COLLECTIONS}
            snapshot: Snapshot = {}
            for collection in COLLECTIONS:
                name = self.names[collection]
                if collection == CAPABILITIES:
                    snapshot[collection] = await self.fleet.snapshot()
                else:
                    snapshot[collection] = {i: h async for i, h in self.store.iter_hashes(name, page_size=1000)}
            self._known = {c: dict(ids) for c, ids in snapshot.items()}
        self._count_documents()
        return snapshot

    async def save_snapshot(self, path: Path) -> bool:
        """At a stop, after the final flush: what the store holds now, for the next start (``snapshots.py``).

        Only when this engine wrote everything it had and knows the store exactly (active, nothing
        queued or failing).
        """
        if not self.active or self._queue or self._inflight or self._degraded:
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
                received=received or time.monotonic(),
                trace=_current_span_context(),
            )
        )

    def submit_delete(self, collection: Collection, document_id: str, *, received: float | None = None) -> None:
        self._put(
            Pending(
                collection=collection,
                id=document_id,
                document=None,
                received=received or time.monotonic(),
                trace=_current_span_context(),
            )
        )

    def set_active(self, active: bool) -> None:
        """Leader election outcome: a standby only queues; becoming active flushes what queued up."""
        self.active = active
        if active:
            self._wakeup.set()
        else:
            self._prepared = None
            self._written.set()  # a resync waiting for room goes on: a standby writes nothing

    def pending(self, collection: Collection, document_id: str) -> bool:
        key = (collection, document_id)
        return key in self._queue or key in self._inflight

    def _put(self, item: Pending) -> None:
        key = (item.collection, item.id)
        self._seq += 1
        item = dataclasses.replace(item, seq=self._seq)
        self._queue.pop(key, None)  # last state wins, and moves to the back (the queue stays in seq order)
        self._queue[key] = item
        self.metrics.queue_depth.set(len(self._queue))
        self._idle.clear()
        self._wakeup.set()

    async def purge_resource(self, *, group: str, kind: str, keep_version: str | None = None) -> None:
        """Delete every instance of one kind (its CRD is gone), or every one not at ``keep_version`` (its
        CRD moved to that version), in the store and in the queue."""

        def purged(document_id: str) -> bool:
            parsed = parse_instance_id(document_id)
            return (
                parsed is not None and (parsed.group, parsed.kind) == (group, kind) and parsed.version != keep_version
            )

        async with self._lock:
            for key in [k for k, p in self._queue.items() if k[0] == "instances" and purged(p.id)]:
                del self._queue[key]
            where: list[Filter] = [Eq("group", group or CORE), Eq("kind", kind)]
            if keep_version is not None:
                where.append(Ne("version", keep_version))
            if self.cluster is not None:
                where.append(Eq("cluster", self.cluster))
            await self.store.delete_where(self.names["instances"], And(tuple(where)))
            known = self._known["instances"]
            for document_id in [i for i, h in known.items() if purged(i) and self._ours(h)]:
                del known[document_id]
        self._count_documents()

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
            self._written.set()

    async def _flush_forever(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            if not self._queue:
                self._idle.set()
                continue
            if not self.active:
                continue  # a standby keeps the latest state of each document, writes nothing
            oldest = next(iter(self._queue.values())).received
            deadline = oldest + self.debounce
            while len(self._queue) < self.batch_size and time.monotonic() < deadline:
                try:
                    await asyncio.wait_for(self._wakeup.wait(), timeout=max(0.0, deadline - time.monotonic()))
                    self._wakeup.clear()
                except TimeoutError:
                    break
            ok = await self.flush()
            if not ok:
                await asyncio.sleep(self._backoff)
                self._backoff = min(self._backoff * 2, self.max_backoff)
            if self._queue:
                self._wakeup.set()
            else:
                self._idle.set()
                if self._resynced and self._history_quiet:
                    self._history_quiet = False
                    logger.info("Recording changes from now on collection=changes")

    async def room(self, *, window: int = RESYNC_WINDOW) -> None:
        """Wait while more than ``window`` documents wait to be written by this (active) engine.

        The resync calls it after each page it builds, so it stays at most about a window ahead of
        the writer: a 100,000-object first sync held 80,000 built documents in a queue before. A store
        that is down holds the resync here instead of the memory; a standby peer, which writes
        nothing, never waits.
        """
        while self.active and self._running and len(self._queue) > window:
            self._written.clear()
            self._wakeup.set()  # a full batch is there: no debounce to wait out
            await self._written.wait()

    async def wait_written(self) -> None:
        """Until everything queued before this call is written (what came after may still wait).

        What readiness waits for after a resync: on a cluster that never stops changing the queue is
        never empty, so waiting for :meth:`wait_idle` there could last as long as the changes do.
        """
        target = self._seq
        while self._written_seq < target and (self._queue or self._inflight):
            self._written.clear()
            self._wakeup.set()
            await self._written.wait()

    async def wait_idle(self) -> None:
        """Until the queue is empty and the last flush finished (readiness, tests, shutdown)."""
        await self._idle.wait()

    async def flush(self) -> bool:
        """Flush everything queued, batch by batch; False (and the batch re-queued) on a failure."""
        while self._queue:
            async with self._lock:
                batch = [self._queue.popitem(last=False)[1] for _ in range(min(self.batch_size, len(self._queue)))]
                self._inflight = {(item.collection, item.id) for item in batch}
                self.metrics.queue_depth.set(len(self._queue))
                links = [Link(item.trace) for item in batch if item.trace is not None]
                try:
                    with tracer().start_as_current_span(
                        "kubevec.flush", links=links, attributes={"kubevec.documents": len(batch)}
                    ):
                        await self._write(batch)
                    self._written_seq = max(self._written_seq, *(item.seq for item in batch))
                    if not self._queue:
                        self._written_seq = self._seq  # nothing left: everything given out is written
                except (BackendError, EmbedderError) as exc:
                    self._requeue(batch)
                    self._set_degraded(exc)
                    return False
                except asyncio.CancelledError:
                    self._requeue(batch)  # shutting down mid-write: the final flush writes it again
                    raise
                finally:
                    self._inflight = set()
                    self._written.set()
            self._backoff = MIN_BACKOFF
            self._clear_degraded()
            self.last_flush = time.time()
        return True

    def _requeue(self, batch: Iterable[Pending]) -> None:
        for item in reversed(list(batch)):
            key = (item.collection, item.id)
            if key not in self._queue:  # a newer state arrived meanwhile: it wins
                self._queue[key] = item
                self._queue.move_to_end(key, last=False)
        self.metrics.queue_depth.set(len(self._queue))

    def _set_degraded(self, exc: Exception, *, stage: str | None = None) -> None:
        stage = stage or ("store" if isinstance(exc, BackendError) else "embedder")
        self.metrics.errors.labels(stage=stage).inc()
        if stage == "embedder":
            reason = getattr(exc, "reason", "error")
            self.metrics.embed_errors.labels(provider=self.metrics.provider, reason=reason).inc()
        self.metrics.degraded.set(1)
        message = f"{type(exc).__name__}: {exc}"
        if not self._degraded or message != self._last_error:
            logger.error("Failed to sync, will retry stage=%s backoff=%.1fs error=%s", stage, self._backoff, message)
        self._degraded = True
        self._last_error = message
        self._public_error = exc.public(provider=self.metrics.provider) if isinstance(exc, EmbedderError) else message

    def _clear_degraded(self) -> None:
        if self._degraded:
            logger.info("Recovered from a store or embedder failure")
        self._degraded = False
        self.metrics.degraded.set(0)

    async def _write(self, batch: list[Pending]) -> None:
        now = time.monotonic()
        for collection in COLLECTIONS:
            items = [p for p in batch if p.collection == collection]
            if not items:
                continue
            upserts = [p for p in items if p.document is not None]
            deletes = [p.id for p in items if p.document is None]
            if collection == CAPABILITIES:
                await self._write_capabilities([p.document for p in upserts if p.document], deletes)
            else:
                await self._write_instances(collection, [p.document for p in upserts if p.document], deletes)
            for item in items:
                self.metrics.event_to_store.observe(max(0.0, now - item.received))
        self._count_documents()

    async def _write_capabilities(self, documents: list[Document], deletes: list[str]) -> None:
        """This cluster's parts of the shared capability records (see ``kubevec.inference.fleet``)."""
        known = self._known[CAPABILITIES]
        changed = [d for d in documents if (stored := known.get(d.id)) is None or stored.content_hash != d.content_hash]
        unchanged = len(documents) - len(changed)
        if unchanged:
            self.metrics.skipped.labels(collection=CAPABILITIES, reason="unchanged").inc(unchanged)
        if not changed and not deletes:
            return
        with tracer().start_as_current_span(
            "kubevec.upsert", attributes={"kubevec.collection": CAPABILITIES, "kubevec.documents": len(changed)}
        ):
            try:
                result = await self.fleet.write(upserts=changed, deletes=deletes)
            except InvalidRecord as exc:  # a contract bug, not an outage: do not retry forever
                self.metrics.errors.labels(stage="store_record").inc()
                logger.error("Dropped invalid records collection=%s error=%s", CAPABILITIES, exc)
                return
        for resource, hashes in result.known.items():
            if hashes is None:
                known.pop(resource, None)
            else:
                known[resource] = hashes
        if result.embedded:
            self.metrics.embeddings.labels(collection=CAPABILITIES).inc(result.embedded)
        if result.reused:
            self.metrics.skipped.labels(collection=CAPABILITIES, reason="vector_reused").inc(result.reused)
        if result.skipped:
            self.metrics.skipped.labels(collection=CAPABILITIES, reason="unchanged").inc(result.skipped)
        if result.upserted:
            self.metrics.upserts.labels(collection=CAPABILITIES).inc(result.upserted)
        if result.deleted:
            self.metrics.deletes.labels(collection=CAPABILITIES).inc(result.deleted)
        if result.upserted or result.deleted:
            logger.info(
                "Upserted documents collection=%s count=%d embedded=%d reused=%d skipped=%d deleted=%d",
                CAPABILITIES,
                result.upserted,
                result.embedded,
                result.reused,
                unchanged + result.skipped,
                result.deleted,
            )

    def resynced(self) -> None:
        """A full resync has queued everything: once that is written, changes are recorded."""
        self._resynced = True
        if not self._queue and not self._inflight:
            self._history_quiet = False

    async def prune_history(self) -> None:
        """Retention of the change history; a failure is logged (the next resync tries again)."""
        if self.history is None or not self.active:
            return
        try:
            if self.history_gate and self.history_judged_by != self.history_gate:  # an older gate wrote them
                await self.history.rejudge()
                self.history_judged_by = self.history_gate
            await self.history.prune()
        except (BackendError, EmbedderError) as exc:
            logger.warning("Failed to prune the change history error=%s", exc)

    async def _write_instances(self, collection: Collection, documents: list[Document], deletes: list[str]) -> None:
        plan = self._plan(collection, documents) if documents else None
        if self.history is not None and not self._history_quiet and collection == INSTANCES:
            # before the documents: a failed history write re-queues the batch with nothing written yet
            try:
                await self.history.write(await self._changes(collection, plan, deletes))
            except InvalidRecord as exc:  # a contract bug: the documents are written all the same
                self.metrics.errors.labels(stage="history_record").inc()
                logger.error("Dropped invalid change records collection=changes error=%s", exc)
        if plan is not None:
            await self._apply(collection, plan)
        if deletes:
            with tracer().start_as_current_span(
                "kubevec.delete", attributes={"kubevec.collection": collection, "kubevec.documents": len(deletes)}
            ):
                await self.store.delete(self.names[collection], deletes)
            for document_id in deletes:
                self._known[collection].pop(document_id, None)
            self.metrics.deletes.labels(collection=collection).inc(len(deletes))
            logger.info("Deleted documents collection=%s count=%d", collection, len(deletes))

    async def _changes(self, collection: Collection, plan: WritePlan | None, deletes: list[str]) -> list[ChangeRecord]:
        """One record per object this batch creates, changes (as an agent would see it) or deletes."""
        known = self._known[collection]
        written = [*plan.embed, *plan.reuse] if plan is not None else []
        replaced = [d.id for d in written if d.id in known] + [i for i in deletes if i in known]
        stored: dict[str, Stored] = {}
        if replaced:
            records = await self.store.get(self.names[collection], replaced)
            stored = {r.id: Stored(text=r.text, metadata=r.metadata) for r in records}
        now = time.time()
        found = [
            change_record(
                object_id=d.id, before=stored.get(d.id), after=Stored(text=d.text, metadata=d.metadata), at=now
            )
            for d in written
        ]
        found += [change_record(object_id=i, before=stored[i], after=None, at=now) for i in deletes if i in stored]
        return [record for record in found if record is not None]

    def _plan(self, collection: Collection, documents: list[Document]) -> WritePlan:
        """Sort documents by what they need, from the known hashes alone (no store read, no embedding)."""
        known = self._known[collection]
        skipped = 0
        reuse: list[Document] = []
        embed: list[Document] = []
        for document in documents:
            stored = known.get(document.id)
            if stored is None:
                embed.append(document)
            elif stored.content_hash == document.content_hash:
                skipped += 1
            elif stored.text_hash in (document.text_hash, ""):  # "": stored before text hashes; _apply checks the text
                reuse.append(document)
            else:
                embed.append(document)
        return WritePlan(skipped=skipped, reuse=reuse, embed=embed)

    async def _apply(self, collection: Collection, plan: WritePlan) -> None:
        """Fetch the vectors to re-use, embed the rest in one call, upsert all, remember the new hashes."""
        name = self.names[collection]
        if plan.skipped:
            self.metrics.skipped.labels(collection=collection, reason="unchanged").inc(plan.skipped)
        vectors: dict[str, list[float]] = {}
        if plan.reuse:
            by_id = {d.id: d for d in plan.reuse}
            for record in await self.store.get(name, list(by_id), include_vectors=True):
                if record.vector and record.text == by_id[record.id].text:
                    vectors[record.id] = record.vector
        reused = len(vectors)
        to_embed = plan.embed + [d for d in plan.reuse if d.id not in vectors]  # gone or changed meanwhile
        if to_embed:
            unique_texts = list(dict.fromkeys(d.text for d in to_embed))
            started = time.perf_counter()
            with tracer().start_as_current_span(
                "kubevec.embed", attributes={"kubevec.collection": collection, "kubevec.texts": len(unique_texts)}
            ):
                embedded = await self.embedder.embed_documents(unique_texts)
            self.metrics.embed_seconds.labels(provider=self.metrics.provider).observe(time.perf_counter() - started)
            self.metrics.embeddings.labels(collection=collection).inc(len(unique_texts))
            by_text = dict(zip(unique_texts, embedded, strict=True))
            vectors.update({d.id: by_text[d.text] for d in to_embed})
        if reused:
            self.metrics.skipped.labels(collection=collection, reason="vector_reused").inc(reused)
        changed = plan.embed + plan.reuse
        if not changed:
            return
        records = [Record(id=d.id, vector=vectors[d.id], text=d.text, metadata=d.metadata) for d in changed]
        try:
            with tracer().start_as_current_span(
                "kubevec.upsert",
                attributes={
                    "kubevec.collection": collection,
                    "kubevec.documents": len(records),
                    "kubevec.embedded": len(to_embed),
                    "kubevec.reused": reused,
                    "kubevec.skipped": plan.skipped,
                },
            ):
                await self.store.upsert(name, records)
        except InvalidRecord as exc:  # a contract bug, not an outage: do not retry forever
            self.metrics.errors.labels(stage="store_record").inc()
            logger.error("Dropped invalid records collection=%s error=%s", collection, exc)
            return
        known = self._known[collection]
        for d in changed:
            known[d.id] = StoredHashes(d.content_hash, d.text_hash, d.built_from, d.cluster)
        self.metrics.upserts.labels(collection=collection).inc(len(records))
        logger.info(
            "Upserted documents collection=%s count=%d embedded=%d reused=%d skipped=%d",
            collection,
            len(records),
            len(to_embed),
            reused,
            plan.skipped,
        )

    def _count_documents(self) -> None:
        for collection in COLLECTIONS:
            self.metrics.documents.labels(collection=collection).set(len(self._known[collection]))


def _current_span_context() -> SpanContext | None:
    context = trace.get_current_span().get_span_context()
    return context if context.is_valid else None
