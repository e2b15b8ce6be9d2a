"""``kubevec forget-cluster``: remove a decommissioned cluster's documents and its parts of shared ones."""

from __future__ import annotations

import dataclasses
import logging

from kubevec.backends import Record, VectorStore
from kubevec.backends.filters import Eq
from kubevec.backends.scans import records_of
from kubevec.core import fields
from kubevec.core.errors import CollectionNotFound
from kubevec.inference.fleet import is_shared, parts_of, resource_of, share

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Forgotten:
    """What ``kubevec forget-cluster`` removed (or would remove, on a dry run)."""

    instances: int
    capabilities_deleted: int  # records only this cluster had a part of
    capabilities_kept: int  # shared records it left (other clusters' parts stay, vectors kept)
    status: int


async def forget_cluster(
    *, store: VectorStore, capabilities: str, instances: str, status: str, cluster: str, dry_run: bool
) -> Forgotten:
    """Remove one cluster's documents and its parts of shared records; re-embeds nothing."""
    deleted: list[str] = []
    kept: list[Record] = []
    async for record in records_of(store, capabilities):
        parts = parts_of(record.metadata)
        if not is_shared(record.id):
            if fields.CLUSTER.raw(record.metadata) == cluster:
                deleted.append(record.id)
            continue
        if all(p.cluster != cluster for p in parts):
            continue
        rest = [p for p in parts if p.cluster != cluster]
        if not rest:
            deleted.append(record.id)
            continue
        kept.append(record)
    try:
        objects = await store.count(instances, Eq("cluster", cluster))
    except CollectionNotFound:
        objects = 0
    reports = [r.id async for r in records_of(store, status) if fields.CLUSTER.raw(r.metadata) == cluster]
    if not dry_run:
        if kept:
            vectors = {
                r.id: r.vector for r in await store.get(capabilities, [r.id for r in kept], include_vectors=True)
            }
            records = []
            for record in kept:
                rest = [p for p in parts_of(record.metadata) if p.cluster != cluster]
                document = share(resource=resource_of(record.id), text=record.text, base=record.metadata, parts=rest)
                records.append(
                    Record(id=document.id, vector=vectors[record.id], text=document.text, metadata=document.metadata)
                )
            await store.upsert(capabilities, records)
        if deleted:
            await store.delete(capabilities, deleted)
        if objects:
            await store.delete_where(instances, Eq("cluster", cluster))
        if reports:
            await store.delete(status, reports)
        logger.info(
            "Forgot a cluster cluster=%s instances=%d capabilities_deleted=%d capabilities_kept=%d",
            cluster,
            objects,
            len(deleted),
            len(kept),
        )
    return Forgotten(
        instances=objects, capabilities_deleted=len(deleted), capabilities_kept=len(kept), status=len(reports)
    )
