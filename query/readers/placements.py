"""Where this cluster's instance documents live (namespace, resource): what access reviews ask about."""

from __future__ import annotations

from kubevec.backends.filters import Eq
from kubevec.inference.documents import INSTANCES
from kubevec.query.placements import Placement, placement_of
from kubevec.query.sources import Sources


async def placements(sources: Sources, cluster: str) -> set[Placement]:
    """Every (namespace, resource) pair of ``cluster``'s instance documents, read for every caller at once."""
    found: set[Placement] = set()
    name = await sources.name(INSTANCES)
    async for record in sources.store.iter_records(name, filter=Eq("cluster", cluster), page_size=1000):
        placement = placement_of(record.metadata)
        if placement is not None:
            found.add(placement)
    return found
