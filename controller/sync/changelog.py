"""The change history's writer: records batched per flush, embedded in one call (or not at all), pruned
by age and count after each resync. What a record says is decided in ``kubevec.inference.change_records``."""

from __future__ import annotations

import logging
import math
import time

from kubevec.backends import Record, VectorStore
from kubevec.backends.filters import And, Eq, Lt
from kubevec.controller.runtime.metrics import Metrics
from kubevec.core import fields
from kubevec.inference.change_records import CHANGE_FIELDS, CHANGES, ChangeRecord, rejudged
from kubevec.inference.providers.embedders.base import Embedder

logger = logging.getLogger(__name__)


class ChangeLog:
    """One cluster's records in the ``changes`` collection.

    With ``embed`` off the summaries are stored with one constant vector: nothing is embedded, and
    readers find changes by time, filters and words (``kubevec changes`` knows from the settings).
    """

    def __init__(
        self,
        *,
        store: VectorStore,
        collection: str,
        embedder: Embedder,
        metrics: Metrics,
        cluster: str,
        embed: bool = True,
        max_age_seconds: float = 7 * 86400,
        max_records: int = 100_000,
    ) -> None:
        self.store = store
        self.collection = collection
        self.embedder = embedder
        self.metrics = metrics
        self.cluster = cluster
        self.embed = embed
        self.max_age_seconds = max_age_seconds
        self.max_records = max_records

    async def prepare(self) -> None:
        await self.store.ensure_collection(
            self.collection, dimension=self.embedder.dimension, embedder=self.embedder.name, indexed=CHANGE_FIELDS
        )

    async def write(self, records: list[ChangeRecord]) -> None:
        """Store ``records`` (ids are idempotent: a retried flush writes the same ones again)."""
        if not records:
            return
        if self.embed:
            texts = list(dict.fromkeys(r.text for r in records))
            vectors = dict(zip(texts, await self.embedder.embed_documents(texts), strict=True))
            self.metrics.embeddings.labels(collection=CHANGES).inc(len(texts))
        else:
            constant = [1.0 / math.sqrt(self.embedder.dimension)] * self.embedder.dimension
            vectors = {r.text: constant for r in records}
        await self.store.upsert(
            self.collection,
            [Record(id=r.id, vector=vectors[r.text], text=r.text, metadata=r.metadata) for r in records],
        )
        for record in records:
            self.metrics.changes.labels(change=str(record.metadata["change"])).inc()
        logger.info("Recorded changes collection=%s count=%d", CHANGES, len(records))

    async def rejudge(self) -> int:
        """Rewrite this cluster's records the current gate would not write as they are (an older gate's).

        Judged again: the summary after its head and every payload string
        (:func:`kubevec.inference.change_records.rejudged`). Only rewritten summaries are embedded; the
        others are not touched. Once per process (the engine asks after its first resync).
        """
        changed: list[Record] = []
        async for record in self.store.iter_records(self.collection, filter=Eq("cluster", self.cluster), page_size=500):
            again = rejudged(record.text, record.metadata)
            if again is not None:
                changed.append(Record(id=record.id, vector=[], text=again[0], metadata=again[1]))
        for start in range(0, len(changed), 256):
            batch = changed[start : start + 256]
            if self.embed:
                vectors = await self.embedder.embed_documents([r.text for r in batch])
                self.metrics.embeddings.labels(collection=CHANGES).inc(len(batch))
            else:
                vectors = [[1.0 / math.sqrt(self.embedder.dimension)] * self.embedder.dimension] * len(batch)
            batch = [
                Record(id=r.id, vector=v, text=r.text, metadata=r.metadata) for r, v in zip(batch, vectors, strict=True)
            ]
            await self.store.upsert(self.collection, batch)
        if changed:
            logger.info(
                "Rewrote change records the current gate judges otherwise collection=%s count=%d", CHANGES, len(changed)
            )
        return len(changed)

    async def prune(self, *, now: float | None = None) -> int:
        """Remove this cluster's records older than the maximum age, then the oldest beyond the maximum count."""
        now = time.time() if now is None else now
        mine = Eq("cluster", self.cluster)
        before = await self.store.count(self.collection, mine)
        await self.store.delete_where(self.collection, And((mine, Lt("time", now - self.max_age_seconds))))
        left = await self.store.count(self.collection, mine)
        if left > self.max_records:
            stamped = [
                (float(str(fields.TIME.raw(r.metadata, 0))), r.id)
                async for r in self.store.iter_records(self.collection, filter=mine, page_size=1000)
            ]
            oldest = [record_id for _, record_id in sorted(stamped)[: left - self.max_records]]
            for start in range(0, len(oldest), 1000):
                await self.store.delete(self.collection, oldest[start : start + 1000])
            left -= len(oldest)
        pruned = before - left
        if pruned:
            self.metrics.changes_pruned.inc(pruned)
            logger.info("Pruned the change history collection=%s removed=%d kept=%d", CHANGES, pruned, left)
        return pruned
