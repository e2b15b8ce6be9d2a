"""One batch into the store: planned from the known hashes, embedding only what changed.

The writer owns the map of what is believed stored (id -> hashes, per collection): seeded from
the store by the engine's snapshot, and updated by every write, so a restart with an unchanged
cluster embeds nothing. Instances are planned here (``planner.py``): vectors of unchanged texts are
fetched and re-used, the rest embedded in one call. Capabilities are this cluster's parts of records
several clusters share (``shared_records.py`` plans and writes them).

A store or embedder error propagates (the engine puts the batch back and retries); an invalid
record is a contract bug, not an outage: it is counted and dropped, never retried forever.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kubevec.backends import Record, StoredHashes, VectorStore
from kubevec.controller.runtime.metrics import Metrics
from kubevec.controller.runtime.tracing import tracer
from kubevec.controller.sync.history import HistoryFeed
from kubevec.controller.sync.planner import WritePlan, plan
from kubevec.controller.sync.queue import Pending
from kubevec.controller.sync.shared_records import CapabilityWriter
from kubevec.core.clock import Clock
from kubevec.core.errors import InvalidRecord
from kubevec.inference.documents import CAPABILITIES, COLLECTIONS, INSTANCES, Collection, Document
from kubevec.inference.providers.embedders.base import Embedder

logger = logging.getLogger(__name__)

Known = dict[Collection, dict[str, StoredHashes]]


class BatchWriter:
    """Writes batches to the collections ``names`` points at, keeping :attr:`known` in step."""

    def __init__(
        self,
        *,
        store: VectorStore,
        embedder: Embedder,
        metrics: Metrics,
        names: dict[Collection, str],
        fleet: CapabilityWriter,
        history: HistoryFeed,
        clock: Clock,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.metrics = metrics
        #: The physical collection of each logical one (the engine switches it on a migration).
        self.names = names
        self.fleet = fleet
        self.history = history
        self.clock = clock
        #: The (id -> hashes) believed stored, per collection.
        self.known: Known = {c: {} for c in COLLECTIONS}

    async def write(self, batch: Sequence[Pending]) -> None:
        now = self.clock.monotonic()
        for collection in COLLECTIONS:
            items = [p for p in batch if p.collection == collection]
            if not items:
                continue
            upserts = [p.document for p in items if p.document is not None]
            deletes = [p.id for p in items if p.document is None]
            if collection == CAPABILITIES:
                await self._write_capabilities(upserts, deletes)
            else:
                await self._write_instances(collection, upserts, deletes)
            for item in items:
                self.metrics.event_to_store.observe(max(0.0, now - item.received))
        self.count_documents()

    def count_documents(self) -> None:
        for collection in COLLECTIONS:
            self.metrics.documents.labels(collection=collection).set(len(self.known[collection]))

    async def _write_capabilities(self, documents: list[Document], deletes: list[str]) -> None:
        """This cluster's parts of the shared capability records (see ``kubevec.inference.fleet``)."""
        known = self.known[CAPABILITIES]
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

    async def _write_instances(self, collection: Collection, documents: list[Document], deletes: list[str]) -> None:
        known = self.known[collection]
        planned = plan(known, documents) if documents else None
        if collection == INSTANCES and self.history.recording:
            # before the documents: a failed history write re-queues the batch with nothing written yet
            await self.history.record(name=self.names[collection], known=known, plan=planned, deletes=deletes)
        if planned is not None:
            await self._apply(collection, planned)
        if deletes:
            with tracer().start_as_current_span(
                "kubevec.delete", attributes={"kubevec.collection": collection, "kubevec.documents": len(deletes)}
            ):
                await self.store.delete(self.names[collection], deletes)
            for document_id in deletes:
                known.pop(document_id, None)
            self.metrics.deletes.labels(collection=collection).inc(len(deletes))
            logger.info("Deleted documents collection=%s count=%d", collection, len(deletes))

    async def _apply(self, collection: Collection, planned: WritePlan) -> None:
        """Fetch the vectors to re-use, embed the rest in one call, upsert all, remember the new hashes."""
        name = self.names[collection]
        if planned.skipped:
            self.metrics.skipped.labels(collection=collection, reason="unchanged").inc(planned.skipped)
        vectors: dict[str, list[float]] = {}
        if planned.reuse:
            by_id = {d.id: d for d in planned.reuse}
            for record in await self.store.get(name, list(by_id), include_vectors=True):
                if record.vector and record.text == by_id[record.id].text:
                    vectors[record.id] = record.vector
        reused = len(vectors)
        to_embed = planned.embed + [d for d in planned.reuse if d.id not in vectors]  # gone or changed meanwhile
        if to_embed:
            unique_texts = list(dict.fromkeys(d.text for d in to_embed))
            started = self.clock.monotonic()
            with tracer().start_as_current_span(
                "kubevec.embed", attributes={"kubevec.collection": collection, "kubevec.texts": len(unique_texts)}
            ):
                embedded = await self.embedder.embed_documents(unique_texts)
            seconds = self.clock.monotonic() - started
            self.metrics.embed_seconds.labels(provider=self.metrics.provider).observe(seconds)
            self.metrics.embeddings.labels(collection=collection).inc(len(unique_texts))
            by_text = dict(zip(unique_texts, embedded, strict=True))
            vectors.update({d.id: by_text[d.text] for d in to_embed})
        if reused:
            self.metrics.skipped.labels(collection=collection, reason="vector_reused").inc(reused)
        changed = planned.embed + planned.reuse
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
                    "kubevec.skipped": planned.skipped,
                },
            ):
                await self.store.upsert(name, records)
        except InvalidRecord as exc:  # a contract bug, not an outage: do not retry forever
            self.metrics.errors.labels(stage="store_record").inc()
            logger.error("Dropped invalid records collection=%s error=%s", collection, exc)
            return
        known = self.known[collection]
        for d in changed:
            known[d.id] = StoredHashes(d.content_hash, d.text_hash, d.built_from, d.cluster)
        self.metrics.upserts.labels(collection=collection).inc(len(records))
        logger.info(
            "Upserted documents collection=%s count=%d embedded=%d reused=%d skipped=%d",
            collection,
            len(records),
            len(to_embed),
            reused,
            planned.skipped,
        )
