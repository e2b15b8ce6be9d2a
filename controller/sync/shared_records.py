"""A cluster's parts of the shared capability records: how the controller writes capabilities.

:class:`CapabilityWriter` turns a cluster's own capability documents (id ``plural.group``) into its
parts of the shared records (``kubevec.inference.fleet``): the sync engine and ``kubevec index crds``
write capabilities through it, so both share records the same way. It reads the records of the types
in a batch before writing them (capability writes are rare and few), so a part another cluster's
controller added a moment ago is kept; two controllers writing the same record in the same instant can
still lose one part, which that cluster's next resync puts back.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Final

from kubevec.backends import Record, StoredHashes, VectorStore
from kubevec.backends.filters import MAX_VALUES, In
from kubevec.core.fields import CLUSTER, TEXT_HASH
from kubevec.inference.documents import Document
from kubevec.inference.fleet import Part, is_shared, part_of, parts_of, resource_of, share, shared_id
from kubevec.inference.providers.embedders.base import Embedder

logger = logging.getLogger(__name__)

#: A stored hash no document has: the part is written again (a record from before sharing, or a
#: cluster found in two records of one type after a race).
REWRITE: Final = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class FleetWrite:
    """What one :meth:`CapabilityWriter.write` did; ``known`` is the cluster's parts as now stored."""

    upserted: int
    deleted: int
    embedded: int
    reused: int
    skipped: int
    known: dict[str, StoredHashes | None]  # resource -> its part's hashes (None: no part any more)


class CapabilityWriter:
    """Writes one cluster's capability documents as its parts of the shared records of one collection."""

    def __init__(self, *, store: VectorStore, collection: str, embedder: Embedder, cluster: str) -> None:
        self.store = store
        self.collection = collection
        self.embedder = embedder
        self.cluster = cluster

    async def snapshot(self) -> dict[str, StoredHashes]:
        """The cluster's parts as stored, keyed by resource: what its resync compares built documents with.

        A record from before sharing that this cluster wrote (or one without a cluster) counts as a
        part that is not current, so the next resync moves it into a shared record (re-using its vector).
        """
        out: dict[str, StoredHashes] = {}
        async for record in self.store.iter_records(self.collection, page_size=1000):
            resource = resource_of(record.id)
            text = TEXT_HASH.of(record.metadata)
            if not is_shared(record.id):
                if CLUSTER.of(record.metadata) in (self.cluster, ""):
                    out[resource] = StoredHashes(REWRITE, text, "", self.cluster)
                continue
            for part in parts_of(record.metadata):
                if part.cluster == self.cluster:
                    twice = resource in out
                    out[resource] = StoredHashes(
                        REWRITE if twice else part.content_hash, text, "" if twice else part.built_from, self.cluster
                    )
        return out

    async def write(self, *, upserts: Sequence[Document], deletes: Sequence[str]) -> FleetWrite:
        """Make the cluster's parts what ``upserts`` say, and remove its parts of ``deletes`` (resources)."""
        own: dict[str, Document | None] = {resource: None for resource in deletes}
        own.update({document.id: document for document in upserts})
        current = await self._records(sorted(own))
        vectors_by_text = {TEXT_HASH.of(r.metadata): r.vector for r in current.values() if r.vector}
        changed: dict[str, tuple[Document, list[float] | None]] = {}
        gone: set[str] = set()
        skipped = 0
        for resource, document in own.items():
            target = None
            if document is not None:
                target = _target(document)
            for record in (r for r in current.values() if resource_of(r.id) == resource and r.id != target):
                if not is_shared(record.id):
                    if CLUSTER.of(record.metadata) in (self.cluster, ""):
                        gone.add(record.id)  # this cluster's record from before sharing: replaced
                    continue
                parts = parts_of(record.metadata)
                if all(p.cluster != self.cluster for p in parts):
                    continue
                rest = [p for p in parts if p.cluster != self.cluster]
                if rest:
                    base = dict(record.metadata)
                    changed[record.id] = (
                        share(resource=resource, text=record.text, base=base, parts=rest),
                        record.vector,
                    )
                else:
                    gone.add(record.id)
            if document is None or target is None:
                continue
            part = part_of(document)
            existing = current.get(target)
            others: list[Part] = []
            if existing is not None:
                parts = parts_of(existing.metadata)
                if part in parts:
                    skipped += 1
                    continue
                others = [p for p in parts if p.cluster != part.cluster]
            shared = share(resource=resource, text=document.text, base=document.metadata, parts=[*others, part])
            vector = existing.vector if existing is not None and existing.vector else None
            changed[target] = (shared, vector or vectors_by_text.get(document.text_hash))
        embedded = await self._embed(changed)
        reused = sum(1 for _, vector in changed.values() if vector) - embedded
        if changed:
            await self.store.upsert(
                self.collection,
                [Record(id=d.id, vector=v or [], text=d.text, metadata=d.metadata) for d, v in changed.values()],
            )
        if gone - set(changed):
            await self.store.delete(self.collection, sorted(gone - set(changed)))
        known: dict[str, StoredHashes | None] = {resource: None for resource in deletes}
        for document in upserts:
            known[document.id] = StoredHashes(
                document.content_hash, document.text_hash, document.built_from, self.cluster
            )
        return FleetWrite(
            upserted=len(changed),
            deleted=len(gone - set(changed)),
            embedded=embedded,
            reused=max(0, reused),
            skipped=skipped,
            known=known,
        )

    async def _records(self, resources: list[str]) -> dict[str, Record]:
        """Every stored record (with its vector) of these resources, of every cluster."""
        ids: list[str] = []
        for start in range(0, len(resources), MAX_VALUES):
            chunk = tuple(resources[start : start + MAX_VALUES])
            ids += [i async for i, _ in self.store.iter_ids(self.collection, filter=In("resource", chunk))]
        if not ids:
            return {}
        return {r.id: r for r in await self.store.get(self.collection, ids, include_vectors=True)}

    async def _embed(self, changed: dict[str, tuple[Document, list[float] | None]]) -> int:
        """Fill in the vectors no stored record of the same text had; returns how many texts were embedded."""
        missing = [record_id for record_id, (_, vector) in changed.items() if not vector]
        if not missing:
            return 0
        texts = list(dict.fromkeys(changed[i][0].text for i in missing))
        vectors = dict(zip(texts, await self.embedder.embed_documents(texts), strict=True))
        for record_id in missing:
            document = changed[record_id][0]
            changed[record_id] = (document, vectors[document.text])
        return len(texts)


def _target(document: Document) -> str:
    return shared_id(document.id, document.text_hash)
