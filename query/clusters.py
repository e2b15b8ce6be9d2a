"""The clusters one store holds documents of (``kubevec clusters``): counts, last resync, version."""

from __future__ import annotations

import dataclasses

from kubevec.backends import VectorStore
from kubevec.backends.scans import records_of
from kubevec.core import fields
from kubevec.core.errors import CollectionNotFound
from kubevec.inference.fleet import parts_of


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClusterSummary:
    """One cluster a store holds documents of (``kubevec clusters``)."""

    name: str
    instances: int
    capabilities: int  # records it has a part of
    shared: int  # of those, records other clusters have a part of too
    last_resync: str  # from its controller's status record ("" when none: `index crds`, or never reported)
    reported_at: str
    version: str
    ready: bool | None


async def list_clusters(*, store: VectorStore, capabilities: str, instances: str, status: str) -> list[ClusterSummary]:
    """Every cluster with a document or a status record in the store, with counts (one scan of each collection)."""
    parts: dict[str, list[int]] = {}  # cluster -> [capabilities, shared]
    async for record in records_of(store, capabilities):
        members = [p.cluster for p in parts_of(record.metadata)] or [fields.CLUSTER.of(record.metadata)]
        for member in members:
            counts = parts.setdefault(member, [0, 0])
            counts[0] += 1
            counts[1] += len(members) > 1
    objects: dict[str, int] = {}
    try:
        async for _, hashes in store.iter_hashes(instances, page_size=1000):
            objects[hashes.cluster] = objects.get(hashes.cluster, 0) + 1
    except CollectionNotFound:
        pass
    reports = {str(fields.CLUSTER.raw(r.metadata)): r async for r in records_of(store, status)}
    out = []
    for name in sorted(set(parts) | set(objects) | set(reports)):
        report = reports[name].metadata if name in reports else {}
        counts = parts.get(name, [0, 0])
        out.append(
            ClusterSummary(
                name=name,
                instances=objects.get(name, 0),
                capabilities=counts[0],
                shared=counts[1],
                last_resync=str(report.get("last_full_resync_time", "")),
                reported_at=str(report.get("reported_at", "")),
                version=str(report.get("version", "")),
                ready=bool(report["ready"]) if "ready" in report else None,
            )
        )
    return out
