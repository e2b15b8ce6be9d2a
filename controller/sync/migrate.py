"""``kubevec migrate``: move the store to another embedding model without a moment of empty or mixed results.

The next generation's collections (see ``backends/generations.py``) are filled from the texts and
payloads already stored: no cluster access, no LLM call, only the new model's embeddings, in
batches, with progress. A run that stops half-way resumes: records already copied with the same
content hash are skipped. When every collection holds what the old one holds (records deleted
meanwhile are removed from the copy), readers are switched by one pointer write, then the old
generation is dropped. Readers that still hold the old names re-resolve once and retry.

Run it with the controller stopped (or let the controller do it at start-up with
``KUBEVEC_SYNC__MIGRATE=true``): a controller of the old configuration would keep writing to the
old generation. Whatever changed in the cluster meanwhile is caught by the next resync.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping
from typing import TextIO

from kubevec.backends import Record, VectorStore
from kubevec.backends.generations import Generation, current_generation, write_active
from kubevec.core import fields
from kubevec.inference.documents import INDEXED_FIELDS
from kubevec.inference.providers.config import EmbedderSettings
from kubevec.inference.providers.embedders.base import Embedder

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Migration:
    """What a run did: ``generation`` is active afterwards; ``embedded`` counts new vectors."""

    previous: Generation | None
    generation: Generation | None
    embedded: int = 0
    skipped: int = 0
    removed: int = 0

    @property
    def changed(self) -> bool:
        return self.previous != self.generation


async def migrate(
    *,
    store: VectorStore,
    embedder: Embedder,
    settings: EmbedderSettings,
    bases: Mapping[str, str],
    pointer: str,
    batch_size: int = 64,
    progress: TextIO | None = None,
) -> Migration:
    """Move every collection in ``bases`` (logical -> base name) to ``embedder``; a no-op when already there."""
    current = await current_generation(store, pointer=pointer, bases=list(bases.values()))
    if current is None:
        logger.info("Nothing to migrate: the store holds no collections yet")
        return Migration(previous=None, generation=None)
    if current.embedder == embedder.name and current.dimension == embedder.dimension:
        logger.info("Nothing to migrate: generation=%d already uses embedder=%s", current.number, embedder.name)
        return Migration(previous=current, generation=current)
    target = Generation(
        number=current.number + 1,
        embedder=embedder.name,
        dimension=embedder.dimension,
        provider=settings.provider,
        model=settings.model,
    )
    logger.info(
        "Migrating the store from_generation=%d from_embedder=%s to_generation=%d to_embedder=%s",
        current.number,
        current.embedder,
        target.number,
        target.embedder,
    )
    embedded = skipped = removed = 0
    for logical, base in bases.items():
        old, new = current.physical(base), target.physical(base)
        if await store.collection_info(old) is None:
            continue
        await store.ensure_collection(new, dimension=embedder.dimension, embedder=embedder.name, indexed=INDEXED_FIELDS)
        copied = {record_id: hashes.content_hash async for record_id, hashes in store.iter_hashes(new)}
        total, done, started = await store.count(old), 0, time.monotonic()
        seen: set[str] = set()
        batch: list[Record] = []

        async def flush(batch: list[Record], collection: str) -> int:
            if not batch:
                return 0
            vectors = await embedder.embed_documents([r.text for r in batch])
            await store.upsert(
                collection,
                [dataclasses.replace(r, vector=v) for r, v in zip(batch, vectors, strict=True)],
            )
            return len(batch)

        async for record in store.iter_records(old, page_size=max(batch_size, 100)):
            seen.add(record.id)
            done += 1
            if copied.get(record.id) == fields.CONTENT_HASH.raw(record.metadata):
                skipped += 1
            else:
                batch.append(record)
                if len(batch) >= batch_size:
                    embedded += await flush(batch, new)
                    batch = []
                    _progress(progress, logical, done=done, total=total, started=started)
        embedded += await flush(batch, new)
        _progress(progress, logical, done=done, total=total, started=started)
        gone = [record_id for record_id in copied if record_id not in seen]
        if gone:  # deleted from the old generation after an interrupted run copied them
            await store.delete(new, gone)
            removed += len(gone)
        logger.info("Migrated collection=%s to=%s records=%d", old, new, done)
    await write_active(store, pointer=pointer, generation=target)
    logger.info("Switched readers generation=%d embedder=%s", target.number, target.embedder)
    for base in bases.values():
        old = current.physical(base)
        if await store.collection_info(old) is not None:
            await store.drop_collection(old)
            logger.info("Dropped collection=%s of generation=%d", old, current.number)
    return Migration(previous=current, generation=target, embedded=embedded, skipped=skipped, removed=removed)


def _progress(out: TextIO | None, collection: str, *, done: int, total: int, started: float) -> None:
    if out is None:
        return
    rate = done / max(time.monotonic() - started, 1e-6)
    out.write(f"\rMigrating {collection}: {done}/{total} records ({rate:.0f}/s)")
    if done >= total:
        out.write("\n")
    out.flush()
