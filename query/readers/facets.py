"""``list_facets``'s reader: distinct values of a metadata field with their counts, of visible documents."""

from __future__ import annotations

from kubevec.backends.filters import Eq, Filter
from kubevec.core import fields
from kubevec.query.request import check_cluster
from kubevec.query.scope import admit, within_clusters
from kubevec.query.sources import Sources
from kubevec.query.views import View


async def facets(
    sources: Sources, collection: str, field: str, view: View | None, *, limit: int = 100, cluster: str | None = None
) -> dict[str, int]:
    """Values of ``field`` (a list counts each element), most frequent first, at most ``limit`` of them."""
    check_cluster(cluster)
    name = await sources.name(collection)
    counts: dict[str, int] = {}
    scope: Filter | None = Eq("cluster", cluster) if cluster else None
    admitted = admit(view, collection, cluster=cluster, conditions=scope)
    if admitted is None:
        return counts
    async for record in sources.store.iter_records(name, filter=admitted.filter, page_size=1000):
        metadata = within_clusters(record.metadata, admitted.clusters)
        if metadata is None:
            continue
        value = fields.value(metadata, field)
        for item in value if isinstance(value, list) else [value] if value is not None else []:
            counts[str(item)] = counts.get(str(item), 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])
