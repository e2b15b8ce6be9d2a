"""``get_document``'s reader: one document by its id (a capability also by its resource name)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubevec.backends.filters import And, Eq, Filter
from kubevec.core import fields
from kubevec.core.errors import CollectionNotFound
from kubevec.inference.documents import CAPABILITIES
from kubevec.inference.fleet import is_shared, parts_of, project
from kubevec.inference.identity import parse_instance_id
from kubevec.query.answers import Result, make_result
from kubevec.query.request import check_cluster
from kubevec.query.scope import scope_clusters, within_clusters
from kubevec.query.sources import Sources
from kubevec.query.views import View


async def get_document(
    sources: Sources,
    collection: str,
    id: str,
    *,
    cluster: str | None = None,
    clusters: frozenset[str] | None = None,
) -> Result | None:
    """One document by id; a capability also by its resource name (``certificates.cert-manager.io``), as
    ``cluster`` serves it (without: the record most clusters share), read as that cluster's."""
    name = await sources.name(collection)
    store = sources.store
    records = await store.get(name, [id])
    if not records and collection == CAPABILITIES and not is_shared(id):
        scope: Filter = Eq("resource", id) if cluster is None else And((Eq("resource", id), Eq("cluster", cluster)))
        candidates = [r async for r in store.iter_records(name, filter=scope, page_size=100)]
        if clusters is not None:  # the record the caller's clusters serve, not one only others do
            candidates = [r for r in candidates if within_clusters(r.metadata, clusters) is not None]
        records = sorted(candidates, key=lambda r: (-len(parts_of(r.metadata)), r.id))[:1]
    if not records:
        return None
    record = records[0]
    metadata: Mapping[str, Any] | None = record.metadata
    if collection == CAPABILITIES:
        metadata = within_clusters(record.metadata, clusters)
        if metadata is None or (clusters is not None and cluster is not None and cluster not in clusters):
            return None
        metadata = project(metadata, cluster=cluster)
    assert metadata is not None
    return make_result(record.id, 1.0, record.text, metadata, kind="id")


async def find_document(
    sources: Sources,
    id: str,
    view: View | None,
    *,
    collection: str | None = None,
    cluster: str | None = None,
) -> tuple[Result, str] | None:
    """The document and its collection: the one named, else the one the id's shape points to, then the other.

    Instance ids are ``cluster/namespace/group/version/kind/name``; capability ids ``plural.group``.
    With ``cluster``, a document another cluster's controller wrote does not count; with ``view``,
    one the caller may not see is not there.
    """
    check_cluster(cluster)

    def counts(result: Result | None, where: str) -> bool:
        if result is None or (cluster is not None and fields.CLUSTER.raw(result.metadata) != cluster):
            return False
        return view is None or view.allows(where, metadata=result.metadata, text=result.text)

    if collection is not None:
        result = await get_document(sources, collection, id, cluster=cluster, clusters=scope_clusters(view, collection))
        return (result, collection) if result is not None and counts(result, collection) else None
    first = "instances" if parse_instance_id(id) is not None else "capabilities"
    for where in (first, "capabilities" if first == "instances" else "instances"):
        if where not in sources.active.names:
            continue
        try:
            result = await get_document(sources, where, id, cluster=cluster, clusters=scope_clusters(view, where))
        except CollectionNotFound:
            continue  # a store indexed by `kubevec index crds` has no instances collection
        if result is not None and counts(result, where):
            return result, where
    return None
